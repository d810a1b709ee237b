"""Rule-based token issues that need no model: invalid tag sequences and inconsistent tags."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labelaudit._errors import InvalidParameterError
from labelaudit.tokens._dataset import TokenDataset
from labelaudit.tokens._issues import TokenIssue
from labelaudit.tokens._schemes import (
    Scheme,
    Span,
    convert_tags,
    invalid_transitions,
    spans_from_tags,
    split_tag,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "TagConsistency",
    "consistency_issues",
    "invalid_sequence_issues",
    "tag_consistency",
]


def invalid_sequence_issues(tags: Sequence[str], *, scheme: Scheme) -> list[TokenIssue]:
    """One ``invalid-sequence`` issue (score 0) per tag that cannot follow its predecessor.

    The suggested entity is how conlleval would read the sequence (an ``I-X`` after ``O``
    opens an entity), so a fix is one click away.

    Examples
    --------
    >>> [(i.start, i.detail) for i in invalid_sequence_issues(["O", "I-PER"], scheme="iob2")]
    [(1, 'I-PER after O (read as B-PER)')]
    """
    found = invalid_transitions(tags, scheme=scheme)
    if not found:
        return []
    iob2 = convert_tags(tags, source=scheme, target="iob2")
    issues = []
    for i, reason in found:
        prefix, kind = split_tag(iob2[i])
        end = i + 1
        while end < len(iob2) and iob2[end] == f"I-{kind}":
            end += 1
        issues.append(TokenIssue(
            "invalid-sequence", i, end, 0.0, (), (Span(i, end, kind),) if kind else (),
            "rule", f"{reason} (read as {iob2[i]})",
        ))
    return issues


Surface = tuple[str, ...]


@dataclass(frozen=True)
class TagConsistency:
    """How each token string is tagged across the data.

    For span schemes the strings are the surface forms of the given entities (one or more
    tokens) and the types are entity types, plus ``O`` for every occurrence of the same
    tokens outside any entity; for plain tags the strings are single tokens and the types
    their tags. ``counts[surface]`` maps each type to its number of occurrences.
    """

    counts: dict[Surface, Counter]
    spans: bool = True

    def share(self, surface: Surface, kind: str) -> float:
        """Fraction of the occurrences of ``surface`` tagged ``kind`` (1.0 if unseen)."""
        c = self.counts.get(tuple(surface))
        return c[kind] / sum(c.values()) if c else 1.0

    def to_frame(self, *, min_count: int = 2) -> pd.DataFrame:
        """Strings tagged in more than one way, most inconsistent first.

        Columns: ``text, n, majority, majority_share, counts``.
        """
        import pandas as pd
        rows = []
        for surface, c in self.counts.items():
            n = sum(c.values())
            if len(c) > 1 and n >= min_count:
                kind, top = c.most_common(1)[0]
                rows.append((" ".join(surface), n, kind, top / n, dict(c.most_common())))
        frame = pd.DataFrame(rows, columns=["text", "n", "majority", "majority_share", "counts"])
        return frame.sort_values(["majority_share", "n"], ascending=[True, False],
                                 ignore_index=True)


def _unlabelled_matches(tokens: Sequence[str], tags: Sequence[str], known: set[Surface],
                        lengths: Sequence[int]) -> list[tuple[int, int]]:
    """Longest-first, non-overlapping occurrences of known strings among ``O`` tokens."""
    found: list[tuple[int, int]] = []
    taken = [False] * len(tokens)
    for n in sorted(set(lengths), reverse=True):
        for i in range(len(tokens) - n + 1):
            if any(taken[i : i + n]) or any(t != "O" for t in tags[i : i + n]):
                continue
            if tuple(tokens[i : i + n]) in known:
                found.append((i, i + n))
                for j in range(i, i + n):
                    taken[j] = True
    return sorted(found)


def tag_consistency(datasets: Sequence[TokenDataset]) -> TagConsistency:
    """Count how each entity string (each token, for plain tags) is tagged across ``datasets``.

    Every given entity counts once for its type; every occurrence of the same tokens where
    all of them are tagged ``O`` counts once for ``O``.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> ds = make_token_dataset([["New", "York", "and", "York"], ["New", "York"]],
    ...                         [["B-LOC", "I-LOC", "O", "B-LOC"], ["O", "O"]])
    >>> counts = tag_consistency([ds]).counts
    >>> dict(counts[("New", "York")]), dict(counts[("York",)])
    ({'LOC': 1, 'O': 1}, {'LOC': 1})
    """
    counts: dict[Surface, Counter] = defaultdict(Counter)
    spans = all(ds.scheme != "plain" for ds in datasets)
    if not spans:
        for ds in datasets:
            for toks, tags in zip(ds.tokens, ds.iob2_tags, strict=True):
                for token, tag in zip(toks, tags, strict=True):
                    counts[(token,)][tag] += 1
        return TagConsistency(dict(counts), spans=False)
    for ds in datasets:
        for toks, tags in zip(ds.tokens, ds.iob2_tags, strict=True):
            for span in spans_from_tags(tags):
                counts[tuple(toks[span.start : span.end])][span.type] += 1
    known = set(counts)
    lengths = sorted({len(k) for k in known})
    for ds in datasets:
        for toks, tags in zip(ds.tokens, ds.iob2_tags, strict=True):
            for a, b in _unlabelled_matches(toks, tags, known, lengths):
                counts[tuple(toks[a:b])]["O"] += 1
    return TagConsistency(dict(counts), spans=True)


def consistency_issues(
    dataset: TokenDataset,
    consistency: TagConsistency,
    *,
    min_count: int = 3,
    max_share: float = 0.34,
) -> list[list[TokenIssue]]:
    """``inconsistent-tag`` issues: strings tagged here in a way that is rare elsewhere.

    An entity (or, for plain tags, a token), or an untagged occurrence of a string that is an
    entity elsewhere, is an issue when the string occurs at least ``min_count`` times in
    the reference counts, the share of occurrences tagged like this one is at most
    ``max_share``, and another type is the majority. The score is that share (lower = more
    suspect); the suggestion is the majority type (no entity if the majority is ``O``).

    Returns
    -------
    list (one per sentence of ``dataset``) of lists of :class:`TokenIssue`.

    References
    ----------
    Zeng et al. (2021), Validating Label Consistency in NER Data Annotation: "Label
    inconsistency between multiple subsets of data annotation (e.g., training set and test
    set ...) is an indicator of label mistakes." With ``scan_tokens(train, score=test)`` the
    counts span both files, so a test entity typed unlike its training occurrences is shown.
    """
    if not 0 < max_share < 1:
        raise InvalidParameterError(f"max_share must lie in (0, 1); got {max_share!r}")
    known = set(consistency.counts)
    lengths = sorted({len(k) for k in known})
    out: list[list[TokenIssue]] = []
    for toks, tags in zip(dataset.tokens, dataset.iob2_tags, strict=True):
        if not consistency.spans:
            candidates = [(i, i + 1, tag) for i, tag in enumerate(tags)]
        else:
            candidates = [(s.start, s.end, s.type) for s in spans_from_tags(tags)]
            candidates += [(a, b, "O") for a, b in _unlabelled_matches(toks, tags, known,
                                                                         lengths)]
        issues = []
        for a, b, kind in sorted(candidates):
            surface = tuple(toks[a:b])
            c = consistency.counts.get(surface)
            if not c or sum(c.values()) < min_count:
                continue
            share = consistency.share(surface, kind)
            majority, top = c.most_common(1)[0]
            if share > max_share or majority == kind:
                continue
            n = sum(c.values())
            given = (Span(a, b, kind),) if kind != "O" else ()
            suggested = (Span(a, b, majority),) if majority != "O" else ()
            text = " ".join(surface)
            issues.append(TokenIssue(
                "inconsistent-tag", a, b, share, given, suggested, "rule",
                f"{text!r} is {kind} in {c[kind]} of {n} occurrences, {majority} in {top}",
            ))
        out.append(issues)
    return out
