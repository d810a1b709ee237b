"""Token issues: the record of one suspect region, the issues a model's suggestion raises
(span issues, wrong plain tags), those rules raise without a model (invalid tag sequences,
inconsistent tags), and plain-text views of them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.tokens._dataset import TokenDataset
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

IssueKind = Literal["wrong-type", "wrong-boundary", "missing-entity", "spurious-entity",
                    "wrong-tag", "invalid-sequence", "inconsistent-tag"]
ISSUE_KINDS: tuple[str, ...] = get_args(IssueKind)


@dataclass(frozen=True)
class TokenIssue:
    """One suspect region of a sentence: tokens ``start`` to ``end - 1``.

    Attributes
    ----------
    kind : str
        ``wrong-type`` (same span, another type), ``wrong-boundary`` (overlapping spans that
        differ in extent), ``missing-entity`` (the model finds an entity where the data has
        none), ``spurious-entity`` (the data has an entity the model does not find),
        ``wrong-tag`` (plain tags: another tag), ``invalid-sequence`` and ``inconsistent-tag``
        (rules that need no model).
    score : float
        Label-quality score of the region's given tags; lower means more suspect.
    given, suggested : tuple of Span
        The entities in the region as given and as suggested.
    source : {"model", "rule"}
    detail : str
        A short human-readable explanation.
    """

    kind: IssueKind
    start: int
    end: int
    score: float
    given: tuple[Span, ...] = ()
    suggested: tuple[Span, ...] = ()
    source: Literal["model", "rule"] = "model"
    detail: str = ""

    def to_dict(self, tokens: Sequence[str] | None = None) -> dict[str, object]:
        def span(s: Span) -> dict[str, object]:
            out = s.to_dict()
            if tokens is not None:
                out["text"] = " ".join(tokens[s.start : s.end])
            return out

        record: dict[str, object] = {
            "kind": self.kind, "start": self.start, "end": self.end,
            "score": float(f"{float(self.score):.6g}"), "source": self.source,
            "given": [span(s) for s in self.given],
            "suggested": [span(s) for s in self.suggested], "detail": self.detail}
        if tokens is not None:
            record["text"] = " ".join(tokens[self.start : self.end])
        return record

    @classmethod
    def from_dict(cls, record: dict) -> TokenIssue:
        def spans(items) -> tuple[Span, ...]:
            return tuple(Span(int(s["start"]), int(s["end"]), str(s["type"])) for s in items or ())

        return cls(kind=record["kind"], start=int(record["start"]), end=int(record["end"]),
                   score=float(record["score"]), given=spans(record.get("given")),
                   suggested=spans(record.get("suggested")),
                   source=record.get("source", "model"), detail=record.get("detail", ""))


def region_score(pred_probs: np.ndarray, classes: Sequence[str], given: Sequence[str],
                 suggested: Sequence[str], start: int, end: int) -> float:
    """How much the model prefers the given tags of tokens ``start:end`` to the suggested ones.

    With token probabilities treated as independent, ``p_g = prod_t p(given_t)`` and
    ``p_s = prod_t p(suggested_t)``; the score is ``p_g / (p_g + p_s)``, in (0, 1), 0.5 when
    the model cannot tell them apart and lower when it prefers the suggestion.

    Examples
    --------
    >>> probs = np.array([[0.1, 0.9]])
    >>> round(region_score(probs, ("O", "B-LOC"), ["O"], ["B-LOC"], 0, 1), 3)
    0.1
    """
    index = {c: i for i, c in enumerate(classes)}
    rows = np.arange(start, end)
    p = np.clip(np.asarray(pred_probs, dtype=float)[rows], 1e-12, 1.0)
    log_given = np.log(p[np.arange(len(rows)), [index[t] for t in given[start:end]]]).sum()
    log_sugg = np.log(p[np.arange(len(rows)), [index[t] for t in suggested[start:end]]]).sum()
    return float(1.0 / (1.0 + np.exp(np.clip(log_sugg - log_given, -700, 700))))


def _components(given: list[Span], predicted: list[Span]) -> list[tuple[list[Span], list[Span]]]:
    """Groups of given and predicted spans connected by overlap, in sentence order."""
    items = [(s, 0) for s in given] + [(s, 1) for s in predicted]
    items.sort(key=lambda x: (x[0].start, x[0].end))
    groups: list[tuple[list[Span], list[Span], int]] = []
    for span, side in items:
        if groups and span.start < groups[-1][2]:
            g, p, end = groups[-1]
            groups[-1] = (g, p, max(end, span.end))
        else:
            groups.append(([], [], span.end))
        (groups[-1][0] if side == 0 else groups[-1][1]).append(span)
    return [(g, p) for g, p, _ in groups]


def span_issues(given_tags: Sequence[str], suggested_tags: Sequence[str], pred_probs: np.ndarray,
                classes: Sequence[str]) -> list[TokenIssue]:
    """Typed issues where the given entities and the suggested entities of a sentence differ.

    Every given entity and every suggested entity is a candidate. Overlapping ones are
    grouped; a group where both sides agree exactly is no issue. Otherwise the group is one
    issue of kind ``wrong-type`` (same extent, another type), ``wrong-boundary``
    (overlapping, different extent), ``missing-entity`` (only the model has an entity) or
    ``spurious-entity`` (only the data has one), scored by :func:`region_score` over the
    tokens of the group.

    Parameters
    ----------
    given_tags, suggested_tags : list of str
        IOB2 tags of one sentence, as given and as decoded from the model.
    pred_probs : ndarray of shape (n_tokens, n_classes)

    Examples
    --------
    >>> classes = ("O", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
    >>> probs = np.full((3, 5), 0.02); probs[[0, 1, 2], [0, 3, 0]] = 0.92
    >>> [i.kind for i in span_issues(["O", "B-LOC", "O"], ["O", "B-ORG", "O"], probs, classes)]
    ['wrong-type']
    """
    given = spans_from_tags(given_tags)
    predicted = spans_from_tags(suggested_tags)
    issues: list[TokenIssue] = []
    for g, p in _components(given, predicted):
        if sorted(g) == sorted(p):
            continue
        start = min(s.start for s in g + p)
        end = max(s.end for s in g + p)
        score = region_score(pred_probs, classes, given_tags, suggested_tags, start, end)
        kind: IssueKind
        if not p:
            kind = "spurious-entity"
            detail = ", ".join(f"{s.type} not found by the model" for s in g)
        elif not g:
            kind = "missing-entity"
            detail = ", ".join(f"model finds {s.type}" for s in p)
        elif len(g) == 1 and len(p) == 1 and (g[0].start, g[0].end) == (p[0].start, p[0].end):
            kind = "wrong-type"
            detail = f"{g[0].type} -> {p[0].type}"
        else:
            kind = "wrong-boundary"
            detail = f"{' + '.join(s.type for s in g)} -> {' + '.join(s.type for s in p)}"
        issues.append(TokenIssue(kind, start, end, score, tuple(g), tuple(p), "model", detail))
    return issues


def tag_issues(given_tags: Sequence[str], suggested_tags: Sequence[str], pred_probs: np.ndarray,
               classes: Sequence[str]) -> list[TokenIssue]:
    """For plain tags (no spans): one ``wrong-tag`` issue per token whose suggestion differs.

    Examples
    --------
    >>> probs = np.array([[0.8, 0.2], [0.3, 0.7]])
    >>> [(i.start, i.detail) for i in tag_issues(["NN", "NN"], ["NN", "VB"], probs, ("NN", "VB"))]
    [(1, 'NN -> VB')]
    """
    issues = []
    for t, (g, s) in enumerate(zip(given_tags, suggested_tags, strict=False)):
        if g != s:
            score = region_score(pred_probs, classes, given_tags, suggested_tags, t, t + 1)
            issues.append(TokenIssue("wrong-tag", t, t + 1, score, (Span(t, t + 1, g),),
                                     (Span(t, t + 1, s),), "model", f"{g} -> {s}"))
    return issues


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


def consistency_issues(dataset: TokenDataset, consistency: TagConsistency, *, min_count: int = 3,
                       max_share: float = 0.34) -> list[list[TokenIssue]]:
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


def _spans_text(spans: Sequence[dict]) -> str:
    return " + ".join(f"{s['type']}" for s in spans) or "O"


def mark_sentence(tokens: Sequence[str], regions: Sequence[tuple[int, int, str]], *,
                  context: int = 12) -> str:
    """The sentence with each region written ``[tokens]{note}``, cut to ``context`` words
    around the marked regions.

    Examples
    --------
    >>> mark_sentence(["He", "met", "John", "Smith"], [(2, 4, "O->PER")])
    'He met [John Smith]{O->PER}'
    """
    opens: dict[int, list[str]] = {}
    closes: dict[int, list[str]] = {}
    taken: list[tuple[int, int]] = []
    for start, end, note in regions:
        if any(start < b and a < end for a, b in taken):
            continue  # overlapping regions are listed below the sentence, not marked twice
        taken.append((start, end))
        opens.setdefault(start, []).append("[")
        closes.setdefault(end - 1, []).append(f"]{{{note}}}" if note else "]")
    words = []
    for i, tok in enumerate(tokens):
        words.append("".join(opens.get(i, [])) + tok + "".join(closes.get(i, [])))
    if not taken:
        return " ".join(words)
    lo = max(0, min(a for a, _ in taken) - context)
    hi = min(len(words), max(b for _, b in taken) + context)
    text = " ".join(words[lo:hi])
    return ("… " if lo > 0 else "") + text + (" …" if hi < len(words) else "")


def _note(issue: dict) -> str:
    if issue["kind"] == "invalid-sequence":
        return issue["detail"].split(" (")[0]
    return f"{_spans_text(issue['given'])}->{_spans_text(issue['suggested'])}"


def format_issue_table(records: Sequence[dict], *, top: int | None = 20) -> str:
    """Text view of the most suspect sentences: the sentence with suspect spans marked, then
    one line per issue (kind, score, source, detail).

    Examples
    --------
    >>> record = {"id": 7, "rank": 1, "score": 0.01, "tokens": ["Rome", "wins"],
    ...           "tags": ["B-ORG", "O"], "token_scores": [-4.6, -0.1],
    ...           "issues": [{"kind": "wrong-type", "start": 0, "end": 1, "score": 0.02,
    ...                       "source": "model", "given": [{"type": "ORG"}],
    ...                       "suggested": [{"type": "LOC"}], "detail": "ORG -> LOC"}]}
    >>> print(format_issue_table([record]))
    #1  sentence 7  score 0.01
        [Rome]{ORG->LOC} wins
        wrong-type        0.02      model  Rome: ORG -> LOC
    """
    lines: list[str] = []
    for record in records[: top if top is not None else len(records)]:
        tokens = record["tokens"]
        issues = record.get("issues", [])
        regions = [(i["start"], i["end"], _note(i)) for i in issues]
        if not regions and record.get("token_scores"):
            worst = min(range(len(tokens)), key=lambda t: record["token_scores"][t])
            regions = [(worst, worst + 1, f"{record['tags'][worst]}?")]
        lines.append(f"#{record.get('rank', '?')}  sentence {record['id']}  "
                     f"score {float(record['score']):.3g}")
        lines.append("    " + mark_sentence(tokens, regions))
        for i in issues:
            text = " ".join(tokens[i["start"] : i["end"]])
            lines.append(f"    {i['kind']:<17} {float(i['score']):<9.3g} {i['source']:<5}  "
                         f"{text}: {i['detail']}")
    return "\n".join(lines)


def issues_to_frame(records: Sequence[dict]) -> pd.DataFrame:
    """One row per issue: ``id, rank, sentence_score, kind, source, start, end, text, given,
    suggested, score, detail``, most suspect issue first."""
    import pandas as pd
    rows = []
    for r in records:
        for i in r.get("issues", []):
            rows.append({
                "id": r["id"], "rank": r.get("rank"), "sentence_score": r["score"],
                "kind": i["kind"], "source": i["source"], "start": i["start"], "end": i["end"],
                "text": " ".join(r["tokens"][i["start"] : i["end"]]),
                "given": " ".join(f"{s['type']}[{s['start']}:{s['end']}]" for s in i["given"]),
                "suggested": " ".join(f"{s['type']}[{s['start']}:{s['end']}]"
                                      for s in i["suggested"]),
                "score": i["score"], "detail": i["detail"],
            })
    columns = ["id", "rank", "sentence_score", "kind", "source", "start", "end", "text",
               "given", "suggested", "score", "detail"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values(["score", "rank"], kind="stable", ignore_index=True)
