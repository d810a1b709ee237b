"""Token issues: those a model's suggestion raises, those rules raise without a model, and
plain-text views of them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.tokens._dataset import TokenDataset
from labelaudit.tokens._evidence import format_evidence
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
            return s.to_dict() | ({} if tokens is None
                                  else {"text": " ".join(tokens[s.start : s.end])})

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
    """How much the model prefers the given tags of tokens ``start:end`` to the suggested
    ones: ``p_g / (p_g + p_s)`` with ``p_g = prod_t p(given_t)`` and ``p_s = prod_t
    p(suggested_t)`` (tokens independent); 0.5 when the model cannot tell them apart."""
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
    """One typed issue (see :class:`TokenIssue`) per group of overlapping given and
    suggested entities (IOB2) that differ, scored by :func:`region_score` over the group."""
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
    """For plain tags (no spans): one ``wrong-tag`` issue per token whose suggestion differs."""
    issues = []
    for t, (g, s) in enumerate(zip(given_tags, suggested_tags, strict=False)):
        if g != s:
            score = region_score(pred_probs, classes, given_tags, suggested_tags, t, t + 1)
            issues.append(TokenIssue("wrong-tag", t, t + 1, score, (Span(t, t + 1, g),),
                                     (Span(t, t + 1, s),), "model", f"{g} -> {s}"))
    return issues


def invalid_sequence_issues(tags: Sequence[str], *, scheme: Scheme) -> list[TokenIssue]:
    """One ``invalid-sequence`` issue (score 0) per tag that cannot follow its predecessor,
    suggesting the entity conlleval would read (an ``I-X`` after ``O`` opens one)."""
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
    """``counts[surface]``: how often each type tags a string (entity surface forms, or
    single tokens for plain tags) across the data, as :func:`tag_consistency` counts."""

    counts: dict[Surface, Counter]
    spans: bool = True

    def share(self, surface: Surface, kind: str) -> float:
        """Fraction of the occurrences of ``surface`` tagged ``kind`` (1.0 if unseen)."""
        c = self.counts.get(tuple(surface))
        return c[kind] / sum(c.values()) if c else 1.0

    def to_frame(self, *, min_count: int = 2) -> pd.DataFrame:
        """Strings tagged in more than one way, most inconsistent first."""
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
    """Count how each entity string (each token, for plain tags) is tagged across ``datasets``:
    once for its type per given entity, once for ``O`` per untagged occurrence of its tokens."""
    counts: dict[Surface, Counter] = defaultdict(Counter)
    spans = all(ds.scheme != "plain" for ds in datasets)
    sentences = [pair for ds in datasets for pair in zip(ds.tokens, ds.iob2_tags, strict=True)]
    for toks, tags in sentences:
        for a, b, kind in _tagged(tags, spans=spans):
            counts[tuple(toks[a:b])][kind] += 1
    if spans:
        known = set(counts)
        lengths = sorted({len(k) for k in known})
        for toks, tags in sentences:
            for a, b in _unlabelled_matches(toks, tags, known, lengths):
                counts[tuple(toks[a:b])]["O"] += 1
    return TagConsistency(dict(counts), spans=spans)


def _tagged(tags: Sequence[str], *, spans: bool) -> list[tuple[int, int, str]]:
    """``(start, end, type)`` of each entity of IOB2 tags, or of each token's plain tag."""
    if spans:
        return [(s.start, s.end, s.type) for s in spans_from_tags(tags)]
    return [(i, i + 1, tag) for i, tag in enumerate(tags)]


def consistency_issues(dataset: TokenDataset, consistency: TagConsistency, *, min_count: int = 3,
                       max_share: float = 0.34) -> list[list[TokenIssue]]:
    """Per sentence, ``inconsistent-tag`` issues: an entity (a token, for plain tags) or an
    untagged occurrence of a string that is an entity elsewhere, whose string occurs at least
    ``min_count`` times in ``consistency``, at most ``max_share`` of them tagged like this one
    and another type the majority. Scored by that share; the suggestion is the majority.

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
        candidates = _tagged(tags, spans=consistency.spans)
        if consistency.spans:
            candidates += [(a, b, "O") for a, b in _unlabelled_matches(toks, tags, known, lengths)]
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


def mark_sentence(tokens: Sequence[str], regions: Sequence[tuple[int, int, str]], *,
                  context: int = 12) -> str:
    """The sentence with each region written ``[tokens]{note}``, cut to ``context`` words
    around the marked regions."""
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
    given, suggested = (" + ".join(s["type"] for s in issue[k]) or "O"
                        for k in ("given", "suggested"))
    return f"{given}->{suggested}"


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
        said = ""
        for i in issues:
            text = " ".join(tokens[i["start"] : i["end"]])
            lines.append(f"    {i['kind']:<17} {float(i['score']):<9.3g} {i['source']:<5}  "
                         f"{text}: {i['detail']}")
            why = format_evidence(i.get("evidence"))
            if why and why != said:  # the span's evidence once, under its first issue
                lines.append(f"      why: {why}")
            said = why or said
    return "\n".join(lines)


def issues_to_frame(records: Sequence[dict]) -> pd.DataFrame:
    """One row per issue: ``id, rank, sentence_score, kind, source, start, end, text, given,
    suggested, score, detail``, then ``evidence`` where the issues carry it, most suspect
    issue first."""
    import pandas as pd
    rows = []
    evidence = any("evidence" in i for r in records for i in r.get("issues", []))
    for r in records:
        for i in r.get("issues", []):
            spans = {side: " ".join(f"{s['type']}[{s['start']}:{s['end']}]" for s in i[side])
                     for side in ("given", "suggested")}
            rows.append({
                "id": r["id"], "rank": r.get("rank"), "sentence_score": r["score"],
                "kind": i["kind"], "source": i["source"], "start": i["start"], "end": i["end"],
                "text": " ".join(r["tokens"][i["start"] : i["end"]]), **spans,
                "score": i["score"], "detail": i["detail"]}
                        | ({"evidence": i.get("evidence")} if evidence else {}))
    frame = pd.DataFrame(rows, columns=["id", "rank", "sentence_score", "kind", "source",
                                        "start", "end", "text", "given", "suggested", "score",
                                        "detail"] + (["evidence"] if evidence else []))
    return frame.sort_values(["score", "rank"], kind="stable", ignore_index=True)
