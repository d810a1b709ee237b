"""Why a token issue is flagged: the tokens around it, how often the same surface form carries
each tag across the data, and other sentences where it carries the suggested tag. One index
of surface forms per scan (:func:`surface_index`), then a look-up per issue
(:func:`issue_evidence`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from labelaudit.tokens._schemes import Span, spans_from_tags

if TYPE_CHECKING:  # the issues' view (format_issue_table) imports this module
    from labelaudit.tokens._dataset import TokenDataset
    from labelaudit.tokens._issues import TokenIssue

Form = tuple[str, ...]
# (dataset number, sentence index, start, end) of one occurrence of a form
Occurrence = tuple[int, int, int, int]

_EXAMPLES = 3
_CANDIDATES = 500  # occurrences compared per issue, so a very common form stays cheap
_CONTEXT = 8  # tokens shown on each side of a flagged span
_SNIPPET = 5  # and of an example's occurrence


def _form(tokens: Sequence[str]) -> Form:
    return tuple(t.lower() for t in tokens)


@dataclass(frozen=True)
class SurfaceIndex:
    """Where each surface form (a case-insensitive token sequence) carries each tag.

    Attributes
    ----------
    datasets : list of TokenDataset
        The indexed data (training data first when a scan scores another file).
    occurrences : dict
        ``occurrences[form][tag]``: ``(dataset, sentence, start, end)`` of each occurrence of
        ``form`` tagged ``tag`` (an entity type, ``O`` for untagged tokens, or a plain tag),
        in data order.
    """

    datasets: list[TokenDataset]
    occurrences: dict[Form, dict[str, list[Occurrence]]]

    def counts(self, form: Form) -> dict[str, int]:
        """How often ``form`` carries each tag, most frequent first."""
        found = self.occurrences.get(form, {})
        return dict(sorted(((tag, len(x)) for tag, x in found.items()),
                           key=lambda item: (-item[1], item[0])))


def surface_index(datasets: Sequence[TokenDataset], *,
                  forms: Sequence[Form] = ()) -> SurfaceIndex:
    """Index every entity (every token, for plain tags) of ``datasets`` by its surface form,
    and the untagged occurrences of those forms and of ``forms`` (the forms a scan's issues
    ask about), longest first and never overlapping an entity.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> ds = make_token_dataset([["Bank", "of", "America"], ["bank", "of", "america", "rose"]],
    ...                         [["B-ORG", "I-ORG", "I-ORG"], ["B-LOC", "I-LOC", "I-LOC", "O"]])
    >>> surface_index([ds]).counts(("bank", "of", "america"))
    {'LOC': 1, 'ORG': 1}
    """
    occurrences: dict[Form, dict[str, list[Occurrence]]] = defaultdict(lambda: defaultdict(list))
    spans = all(ds.scheme != "plain" for ds in datasets)
    for d, ds in enumerate(datasets):
        for i, (toks, tags) in enumerate(zip(ds.tokens, ds.iob2_tags, strict=True)):
            found = ([(s.start, s.end, s.type) for s in spans_from_tags(tags)] if spans
                     else [(t, t + 1, tag) for t, tag in enumerate(tags)])
            for a, b, kind in found:
                occurrences[_form(toks[a:b])][kind].append((d, i, a, b))
    if spans:
        known = set(occurrences) | {tuple(f) for f in forms}
        lengths = sorted({len(f) for f in known}, reverse=True)
        for d, ds in enumerate(datasets):
            for i, (toks, tags) in enumerate(zip(ds.tokens, ds.iob2_tags, strict=True)):
                lower = _form(toks)
                taken = [t != "O" for t in tags]
                for n in lengths:
                    for a in range(len(toks) - n + 1):
                        if not any(taken[a:a + n]) and lower[a:a + n] in known:
                            occurrences[lower[a:a + n]]["O"].append((d, i, a, a + n))
                            taken[a:a + n] = [True] * n
    return SurfaceIndex(list(datasets), {f: dict(tags) for f, tags in occurrences.items()})


def window(tokens: Sequence[str], start: int, end: int, width: int) -> str:
    """Tokens ``start:end`` marked ``[[...]]`` with ``width`` tokens on each side.

    >>> window("the Bank of America said on Monday".split(), 1, 4, 2)
    'the [[Bank of America]] said on …'
    """
    lo, hi = max(0, start - width), min(len(tokens), end + width)
    words = [*tokens[lo:start], "[[" + " ".join(tokens[start:end]) + "]]", *tokens[end:hi]]
    return ("… " if lo > 0 else "") + " ".join(words) + (" …" if hi < len(tokens) else "")


def _tags(spans: Sequence[Span]) -> str:
    return " + ".join(s.type for s in spans) or "O"


def _explained(issue: TokenIssue) -> tuple[int, int, str]:
    """The span whose surface form the evidence is about, and the tag it is to carry: the
    (longest) suggested entity, else the (longest) given one with ``O``, else the region."""
    if issue.suggested:
        s = max(issue.suggested, key=lambda x: (x.end - x.start, -x.start))
        return s.start, s.end, s.type
    if issue.given:
        s = max(issue.given, key=lambda x: (x.end - x.start, -x.start))
        return s.start, s.end, "O"
    return issue.start, issue.end, "O"


def issue_forms(datasets: Sequence[TokenDataset], issues: Sequence[Sequence[TokenIssue]]
                ) -> set[Form]:
    """The surface forms the ``issues`` of the last of ``datasets`` ask about."""
    tokens = datasets[-1].tokens
    return {_form(tokens[i][a:b]) for i, found in enumerate(issues) for a, b, _ in
            map(_explained, found)}


def issue_evidence(index: SurfaceIndex, sentence: int, issue: TokenIssue) -> dict[str, Any]:
    """The evidence of ``issue`` in sentence ``sentence`` of the last indexed dataset (the
    audited one): ``context`` (the tokens around it, the region marked ``[[...]]``),
    ``toward`` and ``against`` (the suggested and the given tags of the region, ``O`` for
    none), ``form`` (the tokens whose surface form is looked up: the suggested entity, else
    the given one), ``same_form_counts`` (how often that form carries each tag across the
    data, most frequent first) and ``examples``: up to 3 other sentences where the form
    carries the suggested tag (``id``, ``snippet``, ``tag``; ``"in": "training"`` for a
    sentence of the training file), those sharing the most words with this sentence first.

    Examples
    --------
    >>> from labelaudit.tokens import Span, TokenIssue, make_token_dataset
    >>> ds = make_token_dataset(
    ...     [["Rome", "won"], ["In", "Rome", "today"], ["Rome", "lost", "again"]],
    ...     [["B-ORG", "O"], ["O", "B-LOC", "O"], ["B-LOC", "O", "O"]])
    >>> issue = TokenIssue("wrong-type", 0, 1, 0.1, (Span(0, 1, "ORG"),), (Span(0, 1, "LOC"),))
    >>> evidence = issue_evidence(surface_index([ds]), 0, issue)
    >>> evidence["same_form_counts"], [x["id"] for x in evidence["examples"]]
    ({'LOC': 2, 'ORG': 1}, [1, 2])
    >>> format_evidence(evidence)
    '"Rome": LOC 2, ORG 1 | like LOC: #1 "In [[Rome]] today", #2 "[[Rome]] lost again"'
    """
    audited = len(index.datasets) - 1
    ds = index.datasets[audited]
    tokens = ds.tokens[sentence]
    a, b, tag = _explained(issue)
    form = _form(tokens[a:b])
    given = ds.iob2_tags[sentence][issue.start:issue.end]
    against = (_tags(issue.given) if issue.given or all(t == "O" for t in given)
               else " + ".join(dict.fromkeys(given)))
    own = set(_form(tokens))
    seen: set[tuple[int, int]] = {(audited, sentence)}
    candidates: list[tuple[float, int, int, int, int, int]] = []
    for d, i, start, end in index.occurrences.get(form, {}).get(tag, [])[:_CANDIDATES]:
        if (d, i) in seen:
            continue
        seen.add((d, i))
        words = set(_form(index.datasets[d].tokens[i]))
        candidates.append((-len(own & words) / len(own | words), len(candidates), d, i, start,
                           end))
    examples = []
    for _, _, d, i, start, end in sorted(candidates)[:_EXAMPLES]:
        other = index.datasets[d]
        example = {"id": other.ids[i], "snippet": window(other.tokens[i], start, end, _SNIPPET),
                   "tag": tag}
        examples.append(example | ({"in": "training"} if d != audited else {}))
    return {"context": window(tokens, issue.start, issue.end, _CONTEXT),
            "toward": _tags(issue.suggested), "against": against,
            "form": " ".join(tokens[a:b]), "same_form_counts": index.counts(form),
            "examples": examples}


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def format_evidence(evidence: object) -> str:
    """The evidence of a token issue as one short line (what CSV and TSV outputs hold):
    ``"form": TAG n, TAG n | like TAG: #id "snippet", ...``; a string is returned as it is,
    no evidence (None, NaN) as ``""``. Takes the dict as JSON lines, Parquet (lists as
    arrays, absent tags as None) or Python hold it."""
    if _missing(evidence):
        return ""
    if isinstance(evidence, str):
        return evidence
    if not isinstance(evidence, dict):
        return str(evidence)
    counts = evidence.get("same_form_counts") or {}
    counts = sorted(((tag, int(n)) for tag, n in counts.items() if not _missing(n)),
                    key=lambda item: (-item[1], item[0]))
    shown = ", ".join(f"{tag} {n}" for tag, n in counts)
    parts = [f'"{evidence.get("form", "")}": {shown or "not found as one span"}']
    examples = [] if _missing(evidence.get("examples")) else list(evidence["examples"])
    if examples:
        where = ", ".join(
            f'#{x["id"]}{" (training)" if x.get("in") == "training" else ""} "{x["snippet"]}"'
            for x in examples)
        parts.append(f"like {examples[0].get('tag', evidence.get('toward'))}: {where}")
    return " | ".join(parts)
