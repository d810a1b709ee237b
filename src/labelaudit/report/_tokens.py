"""Sections of a token-scan report: issue types with counts, and the most suspect sentences
with the given and the suggested spans highlighted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labelaudit.report._html import (
    bar_chart,
    cell,
    esc,
    fact,
    filter_row,
    filters,
    fmt_count,
    fmt_num,
    fmt_share,
    issues_table,
    table,
)
from labelaudit.report._load import TokenAudit
from labelaudit.tokens import format_evidence, spans_from_tags

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

KIND_NOTES = {
    "wrong-type": "same span, another entity type",
    "wrong-boundary": "overlapping spans that differ in extent",
    "missing-entity": "the model finds an entity where the data has none",
    "spurious-entity": "the data has an entity the model does not find",
    "wrong-tag": "plain tags: another tag",
    "invalid-sequence": "rule: a tag sequence the scheme does not allow",
    "inconsistent-tag": "rule: the same text tagged differently elsewhere",
}
_PALETTE = 8


def token_summary_section(audit: TokenAudit) -> str:
    """Sentences, tokens, scheme, scorer and the sentences with issues."""
    n_issue_sentences = int(audit.issues["id"].nunique()) if len(audit.issues) else 0
    facts = [fact("sentences", fmt_count(audit.n_sentences),
                  "" if audit.n_tokens is None else f"{fmt_count(audit.n_tokens)} tokens"),
             fact("sentences with issues", f'<span class="flag">{fmt_count(n_issue_sentences)}'
                  f"</span> ({fmt_share(n_issue_sentences, audit.n_sentences)})",
                  f"{fmt_count(len(audit.issues))} issues in all"),
             fact("tagging scheme", esc((audit.scheme or "unknown").upper()), "token tagging")]
    if audit.scorer:
        facts.append(fact("scorer", esc(audit.scorer), "out-of-sample token probabilities"))
    note = ("" if audit.records is not None else
            '<p class="note">Made from the table of issues: write the scan as JSON lines '
            "(<code>scan-tokens --out FILE.jsonl</code>) to see whole sentences with their "
            "spans.</p>")
    return f'<div class="facts">{"".join(facts)}</div>{note}'


def token_issue_section(audit: TokenAudit) -> str:
    """Counts of each span issue type (issues and sentences), with a bar chart."""
    issues = audit.issues
    if not len(issues):
        return "<p>No issues found.</p>"
    counts = issues["kind"].value_counts()
    sentences = issues.groupby("kind")["id"].nunique()
    rows = [(kind, cell(fmt_count(n), cls="num"), cell(fmt_count(sentences[kind]), cls="num"),
             KIND_NOTES.get(str(kind), "")) for kind, n in counts.items()]
    svg = bar_chart({str(k): int(v) for k, v in counts.items()}, xlabel="issues", prefix="kinds")
    return (table(["issue type", "issues", "sentences", "meaning"], rows,
                  numeric=[False, True, True, False])
            + f'<div class="plot" id="issue-kinds">{svg}</div>')


def _types(records: Sequence[dict], scheme: str) -> dict[str, int]:
    seen: Counter[str] = Counter()
    for record in records:
        for tags in (record["tags"], record.get("suggested_tags") or record["tags"]):
            seen.update(s.type for s in spans_from_tags(tags, scheme=scheme))  # type: ignore[arg-type]
    return {t: i % _PALETTE for i, t in enumerate(sorted(seen))}


def mark_spans(tokens: Sequence[str], tags: Sequence[str], *, scheme: str,
               regions: Sequence[tuple[int, int]] = (), colours: dict[str, int] | None = None
               ) -> str:
    """The sentence as escaped HTML: entities as ``<mark>``, issue regions underlined.

    >>> html = mark_spans(["Rome", "<b>"], ["B-LOC", "O"], scheme="iob2", regions=[(0, 1)])
    >>> html.startswith('<mark class="ent e0 issue" title="LOC">Rome<sub>LOC</sub></mark>')
    True
    >>> html.endswith('<span class="tok">&lt;b&gt;</span>')
    True
    """
    colours = colours or {}
    in_region = [any(a <= i < b for a, b in regions) for i in range(len(tokens))]
    if scheme == "plain":
        spans = [(i, i + 1, str(t)) for i, t in enumerate(tags) if in_region[i]]
    else:
        spans = [(s.start, s.end, s.type) for s in
                 spans_from_tags(list(tags), scheme=scheme)]  # type: ignore[arg-type]
    starts = {a: (b, kind) for a, b, kind in spans}
    out, i = [], 0
    while i < len(tokens):
        if i in starts:
            end, kind = starts[i]
            hit = any(in_region[i:end])
            words = " ".join(esc(t) for t in tokens[i:end])
            out.append(f'<mark class="ent e{colours.get(kind, 0)}{" issue" if hit else ""}" '
                       f'title="{esc(kind)}">{words}<sub>{esc(kind)}</sub></mark>')
            i = max(end, i + 1)
            continue
        out.append(f'<span class="tok{" issue" if in_region[i] else ""}">{esc(tokens[i])}</span>')
        i += 1
    return " ".join(out)


def marked_snippet(snippet: str) -> str:
    """A snippet of evidence as escaped HTML, its ``[[...]]`` occurrence highlighted.

    >>> marked_snippet("in [[Rome <b>]] today")
    'in <mark class="ev">Rome &lt;b&gt;</mark> today'
    """
    before, sep, rest = snippet.partition("[[")
    inside, end, after = rest.partition("]]")
    if not sep or not end:
        return esc(snippet)
    return f'{esc(before)}<mark class="ev">{esc(inside)}</mark>{esc(after)}'


def evidence_html(evidence: object) -> str:
    """Why a span is flagged, as HTML: how often its text carries each tag across the data,
    then up to 3 sentences where it carries the suggested tag (empty without evidence)."""
    if not isinstance(evidence, dict):
        text = format_evidence(evidence)  # a CSV cell: the readable line as it is
        return f'<div class="evidence">{esc(text)}</div>' if text else ""
    counts = sorted(((str(t), int(n)) for t, n in (evidence.get("same_form_counts") or {})
                     .items() if n is not None and n == n), key=lambda item: (-item[1], item[0]))
    shown = (f'is tagged {", ".join(f"{t} {n}" for t, n in counts)} in the data' if counts
             else "is not found as one span in the data")
    found = evidence.get("examples")
    examples = [] if found is None else list(found)
    items = "".join(
        f'<li>#{esc(x["id"])}{" (training)" if x.get("in") == "training" else ""} '
        f'<span class="snip">{marked_snippet(str(x["snippet"]))}</span></li>' for x in examples)
    like = (f'; <span class="ev-like">where it is {esc(examples[0].get("tag"))}:</span>'
            f'<ol class="ev-nb">{items}</ol>' if examples else "")
    return (f'<div class="evidence"><span class="lab">why</span> “{esc(evidence.get("form"))}”'
            f" {esc(shown)}{like}</div>")


def _issue_lines(issues: Sequence[dict], tokens: Sequence[str]) -> str:
    lines, said = [], None
    for x in issues:
        given = " + ".join(str(s["type"]) for s in x.get("given", [])) or "O"
        suggested = " + ".join(str(s["type"]) for s in x.get("suggested", [])) or "O"
        text = " ".join(tokens[x["start"]: x["end"]])
        rule = ", rule" if x.get("source") == "rule" else ""
        why = evidence_html(x.get("evidence"))
        lines.append(f'<div><span class="tag kind">{esc(x["kind"])}</span> “{esc(text)}”: '
                     f'{esc(given)} → {esc(suggested)} <span class="muted">score '
                     f"{esc(fmt_num(x.get('score')))}{rule}</span>"
                     + (why if why != said else "") + "</div>")  # a span's evidence once
        said = why or said
    return "".join(lines)


def token_sentences_section(audit: TokenAudit, *, top: int) -> str:
    """The ``top`` most suspect sentences (or issues), filterable and sortable."""
    if audit.records is None:
        return _issue_rows(audit.issues, top=top)
    records = audit.records[:top]
    scheme = audit.scheme or "iob2"
    colours = _types(records, scheme)
    rows, kinds_seen = [], Counter[str]()
    for record in records:
        tokens, issues = record["tokens"], record.get("issues", [])
        regions = [(int(x["start"]), int(x["end"])) for x in issues]
        kinds = sorted({str(x["kind"]) for x in issues})
        kinds_seen.update(kinds)
        suggested = record.get("suggested_tags") or record["tags"]
        sentence = (
            '<div class="sent"><span class="row"><span class="lab">given</span>'
            f"{mark_spans(tokens, record['tags'], scheme=scheme, regions=regions, colours=colours)}"
            '</span><span class="row"><span class="lab">suggested</span>'
            f"{mark_spans(tokens, suggested, scheme=scheme, regions=regions, colours=colours)}"
            f"</span></div>{_issue_lines(issues, tokens)}")
        cells = [cell(fmt_count(record.get("rank", 0)), sort=record.get("rank"), cls="num"),
                 cell(str(record["id"])),
                 cell(fmt_num(record.get("score")), sort=record.get("score"), cls="num"),
                 cell("".join(f'<span class="tag kind">{esc(k)}</span>' for k in kinds),
                      raw=True),
                 cell(sentence, raw=True, cls="sentence")]
        rows.append(filter_row(kinds, cells))
    return (f'<p class="note">The {fmt_count(len(records))} most suspect of '
            f"{fmt_count(audit.n_sentences)} sentences (lowest worst-token probability "
            "first). Each sentence is shown twice: with the given tags and with the model's "
            "suggested tags; entities are coloured by type, issue regions are underlined or "
            "outlined in red.</p>"
            + filters("issue type", kinds_seen, every="all", placeholder="token, id…")
            + issues_table(["rank", "id", "score", "issues", "sentence"],
                           ["num", "text", "num", "text", ""], rows))


def _issue_rows(issues: pd.DataFrame, *, top: int) -> str:
    shown = issues.head(top)
    rows = []
    for _, r in shown.iterrows():
        cells = [cell(fmt_count(r["rank"]), sort=r["rank"], cls="num"), cell(str(r["id"])),
                 cell(str(r["kind"])), cell(str(r.get("text", ""))),
                 cell(str(r.get("given", ""))), cell(str(r.get("suggested", ""))),
                 cell(fmt_num(r.get("score")), sort=r.get("score"), cls="num"),
                 cell(str(r.get("detail", "")))]
        if "evidence" in shown:
            cells.append(cell(evidence_html(r["evidence"]), raw=True, cls="why"))
        rows.append(filter_row([str(r["kind"])], cells))
    counts = Counter(str(k) for k in shown["kind"])
    return (f'<p class="note">The {fmt_count(len(shown))} most suspect of '
            f"{fmt_count(len(issues))} issues.</p>" + filters("issue type", counts, every="all",
                                                         placeholder="token, id…")
            + issues_table(["rank", "id", "kind", "text", "given", "suggested", "score", "detail"]
                           + (["evidence"] if "evidence" in shown else []),
                           ["num", "text", "text", "text", "text", "text", "num", "text"]
                           + (["text"] if "evidence" in shown else []), rows))
