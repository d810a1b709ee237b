"""Sections of a text or sentence-pair report: summary, classes, probabilities, top issues."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import numpy as np

from labelaudit.report._html import (
    Html,
    cell,
    details_text,
    esc,
    fmt_count,
    fmt_num,
    fmt_share,
    table,
)
from labelaudit.report._load import TextAudit
from labelaudit.report._plots import confusion_heatmap, probability_histogram_svg
from labelaudit.report._stats import (
    class_table,
    confusion_matrix,
    issue_count,
    probability_histogram,
    top_confused,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["classes_section", "issues_section", "probability_section", "summary_section"]

MAX_HEATMAP_CLASSES = 30
_KNOWN = {"id", "text", "text_pair", "label", "suggested_label", "suggested_prob", "given_prob",
          "loss", "rank", "consensus_label", "flagged", "model_agrees", "is_near_duplicate",
          "near_duplicate_id", "is_outlier", "outlier_score"}
_TASKS = {"text": "text classification", "pairs": "sentence-pair classification",
          "tokens": "token tagging"}


def fact(key: str, value: str, sub: str = "") -> str:
    """One box of the summary grid (``value`` and ``sub`` are HTML, ``key`` text)."""
    return (f'<div class="fact"><div class="k">{esc(key)}</div><div class="v">{value}</div>'
            f'<div class="s">{sub}</div></div>')


def label_text(value: object) -> str:
    """A label or id as the user wrote it (``3``, not ``3.0`` or ``np.int64(3)``)."""
    from labelaudit.evaluation import plain

    return str(plain(value))


def _threshold(rule: str | None) -> float | None:
    match = re.search(r"probability < ([0-9.eE+-]+)", rule or "")
    return float(match[1]) if match else None


def _score_methods(frame: pd.DataFrame) -> list[str]:
    return [c[len("score_"):] for c in frame.columns if str(c).startswith("score_")]


def summary_section(audit: TextAudit) -> str:
    """Items, classes, flagged and by what rule, the error estimates, the model's accuracy,
    the chance-level banner and the scorers."""
    frame = audit.frame
    n = len(frame)
    n_flagged = int(frame["flagged"].sum())
    errors, undecided = _error_estimate(audit)
    rule = esc(audit.flag_rule) if audit.flag_rule else _guess_rule(frame, n_flagged)
    facts = [
        fact("items", fmt_count(n), f"{fmt_count(len(audit.classes))} classes · "
             f"{esc(_TASKS.get(audit.task, audit.task))}"),
        fact("flagged", f'<span class="flag">{fmt_count(n_flagged)}</span> '
             f"({fmt_share(n_flagged, n)})", rule),
    ]
    more = (f"; {fmt_count(undecided)} more the file's two top probabilities cannot decide"
            if undecided else "")
    facts.append(fact("estimated label errors (confident learning)",
                      f'<span id="error-estimate">{fmt_count(errors)}</span>',
                      f"{fmt_share(errors, n)} of the items · cleanlab's num_label_issues"
                      f"{more}"))
    facts.append(fact("out-of-sample accuracy", f"{audit.accuracy:.3f}",
                      f"always the most common class: {audit.majority_rate:.3f}"))
    if audit.mode:
        facts.append(fact("mode", esc(audit.mode),
                          f"ranked by {esc(audit.rank_by)}" if audit.rank_by else ""))
    elif audit.rank_by is None and "rank" in frame.columns:
        methods = _score_methods(frame)
        facts.append(fact("ranking methods", fmt_count(len(methods)),
                          esc(", ".join(methods)) or "rank column only"))
    parts = [f'<div class="facts">{"".join(facts)}</div>']
    if audit.near_chance:
        parts.append(
            '<div class="banner" role="alert" id="chance-warning"><b>The model is at chance '
            f"level.</b> Its out-of-sample accuracy ({audit.accuracy:.3f}) is within 0.05 of "
            f"always predicting the most common class ({audit.majority_rate:.3f}): it has not "
            "learned this task, so the ranking is close to random, many flags are the model's "
            "mistakes rather than label errors, and the error estimates are unreliable. Use a "
            "stronger scorer, a real training split (<code>--score</code>), or more data.</div>")
    parts.append(
        '<p class="note" id="error-estimate-note">The estimated label errors are confident '
        "learning's count (Northcutt, Jiang &amp; Chuang 2021): an item counts when the "
        "model's most probable label is another class and its probability of that class "
        "reaches the class's threshold, the mean probability the model gives that class on "
        "the items labelled with it. The thresholds calibrate the count on this data, so it "
        "does not take the model's probabilities at face value; it assumes they are "
        "out-of-sample and that how often a label is wrong depends on the true class, not "
        "on the item (class-conditional noise). It is a point estimate, without an "
        "interval, and misses errors the model repeats with confidence.</p>")
    parts.append(_members(audit))
    return "\n".join(parts)


def _error_estimate(audit: TextAudit) -> tuple[int, int]:
    """Confident learning's count and the items the scan output cannot decide: cleanlab's
    own count when the scan result is known, else from the output's two top
    probabilities (the same count, up to the undecided items)."""
    if audit.n_issues_estimate is not None:
        return audit.n_issues_estimate, 0
    count = issue_count(audit.frame, audit.classes)
    return count.n_issues, count.n_undecided


def _guess_rule(frame: pd.DataFrame, n_flagged: int) -> str:
    """What the flags of a scan output look like, since the file does not say the rule."""
    if not n_flagged:
        return "none flagged"
    flagged = frame["flagged"].to_numpy(dtype=bool)
    if flagged[:n_flagged].all():
        return f"the top {n_flagged:,} by rank (rule not recorded in the file)"
    p = frame["given_prob"].to_numpy(dtype=float)
    if len(p) > n_flagged and p[flagged].max() < p[~flagged].min():
        return (f"given-label probability ≤ {p[flagged].max():.3g} (rule not recorded in the "
                "file)")
    return "rule not recorded in the file"


def _fixed(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _members(audit: TextAudit) -> str:
    if not audit.members:
        losses = [m[len("loss_"):] for m in _score_methods(audit.frame) if m.startswith("loss_")]
        if not losses:
            return ""
        return (f'<p class="note">First scorer (from the score columns): {esc(losses[0])}. '
                "Weights, temperatures and per-scorer accuracy are known when the report is "
                "made from the scan result itself (<code>scan --report-out</code>).</p>")
    rows = [(m.name, cell(_fixed(m.weight), cls="num"), cell(_fixed(m.temperature), cls="num"),
             cell(fmt_num(m.accuracy), cls="num"),
             cell("–" if m.seconds is None else f"{m.seconds:,.1f}", cls="num"))
            for m in audit.members]
    text = ("<h3>Scorers</h3>" + table(
        ["scorer", "ensemble weight", "temperature", "out-of-sample accuracy", "seconds"],
        rows, numeric=[False, True, True, True, True]))
    if audit.screened:
        text += "".join(f'<p class="note">Skipped {esc(k)}: ensemble weight {v:.3f} on the '
                        "screening sample (below 0.05).</p>" for k, v in audit.screened.items())
    if audit.seconds is not None:
        text += f'<p class="note">Scan time: {audit.seconds:,.1f} s.</p>'
    return text


def classes_section(audit: TextAudit) -> str:
    """Per-class counts and flagged shares, and the confusion heat map."""
    frame = audit.frame
    classes = class_table(frame, audit.classes)
    rows = [(cell(label_text(r["class"])), cell(fmt_count(r["n"]), sort=r["n"], cls="num"),
             cell(fmt_share(r["n"], len(frame)), sort=r["share"], cls="num"),
             cell(fmt_count(r["flagged"]), sort=r["flagged"], cls="num"),
             cell(fmt_share(r["flagged"], r["n"]), sort=_sortable(r["flagged_share"]), cls="num"),
             cell(fmt_num(r["model_agrees"]), sort=_sortable(r["model_agrees"]), cls="num"),
             cell("" if r["top_suggestion"] is None else
                  f"{label_text(r['top_suggestion'])} ({r['n_top_suggestion']:,})"))
            for r in classes.to_dict(orient="records")]
    parts = ['<div class="scroll">' + table(
        ["class", "items", "share", "flagged", "flagged share", "model agrees",
         "most common suggestion"], rows, cls="grid sortable",
        sortable=["text", "num", "num", "num", "num", "num", "text"],
        numeric=[False, True, True, True, True, True, False]) + "</div>",
        '<p class="note">"Model agrees" is the share of the class\'s items whose most probable '
        "label (out of sample) is the given one; the suggestion is counted over the items "
        "where the model prefers another label.</p>"]
    matrix = confusion_matrix(frame, audit.classes)
    n_off = int(matrix.to_numpy().sum())
    if n_off == 0:
        parts.append("<p>The model prefers the given label for every item: no confusions.</p>")
        return "\n".join(parts)
    shown = top_confused(matrix, MAX_HEATMAP_CLASSES)
    sub = matrix.loc[shown, shown]
    note = (f"all {len(shown)} classes" if len(shown) == len(matrix) else
            f"the {len(shown)} of {len(matrix)} classes with the most confusions, the "
            "classes of the largest confusions side by side "
            f"({int(sub.to_numpy().sum()):,} of the {n_off:,} items)")
    parts.append(
        f"<h3>Which classes are mistaken for which</h3><p class=\"note\">Rows: given label; "
        f"columns: the label the model prefers, over the {n_off:,} items where it prefers "
        f"another label than the given one; {note}. The hatched diagonal is empty by "
        "construction.</p>")
    svg = confusion_heatmap(sub.to_numpy(), [label_text(c) for c in shown], prefix="heat")
    parts.append(f'<div class="plot wide" id="confusion">{svg}</div>')
    pairs = matrix.stack()
    pairs = pairs[pairs > 0].sort_values(ascending=False, kind="stable").head(15)
    parts.append("<h3>Most frequent confusions</h3>" + table(
        ["given", "suggested", "items", "share of the given class"],
        [(label_text(g), label_text(s), cell(fmt_count(v), cls="num"),
          cell(fmt_share(v, int((frame["label"] == g).sum())), cls="num"))
         for (g, s), v in pairs.items()], numeric=[False, False, True, True]))
    return "\n".join(parts)


def _sortable(value: float) -> object:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else value


def probability_section(audit: TextAudit) -> str:
    """Histogram of the given label's probability, flagged items apart."""
    frame = audit.frame
    edges, hit, rest = probability_histogram(frame["given_prob"].to_numpy(),
                                             frame["flagged"].to_numpy(dtype=bool))
    svg = probability_histogram_svg(edges, hit, rest, threshold=_threshold(audit.flag_rule),
                                    prefix="hist")
    flagged = frame.loc[frame["flagged"].to_numpy(dtype=bool), "given_prob"]
    others = frame.loc[~frame["flagged"].to_numpy(dtype=bool), "given_prob"]
    return (f'<div class="plot" id="probabilities">{svg}</div><p class="note">Median '
            f"probability of the given label: {fmt_num(flagged.median())} for the "
            f"{fmt_count(len(flagged))} flagged items, {fmt_num(others.median())} for the "
            f"{fmt_count(len(others))} others. Labels the model finds unlikely sit on the "
            "left.</p>")


def _prob(value: float) -> str:
    """A probability with three decimals, or two significant digits below 0.001."""
    return f"{value:.3f}" if value >= 0.001 or value == 0 else f"{value:.1e}"


def _issue_tags(row: pd.Series, has: dict[str, bool]) -> tuple[str, list[str]]:
    tags, kinds = [], []
    if has["dup"] and bool(row.get("is_near_duplicate")):
        other = row.get("near_duplicate_id")
        shown = "" if other is None or (isinstance(other, float) and np.isnan(other)) else other
        of = f" of {esc(label_text(shown))}" if shown != "" else ""
        tags.append(f'<span class="tag dup">near-duplicate{of}</span>')
        kinds.append("near-duplicate")
    if has["out"] and bool(row.get("is_outlier")):
        score = row.get("outlier_score")
        tags.append(f'<span class="tag out">outlier'
                    f'{" " + fmt_num(score) if score is not None else ""}</span>')
        kinds.append("outlier")
    return "".join(tags), kinds


def _extra_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in _KNOWN and not str(c).startswith("score_")
            and not str(c).startswith(("non_iid", "dynamics_"))][:6]


def issues_section(audit: TextAudit, *, top: int) -> str:
    """The ``top`` most suspect items, sortable and filterable by given label and text."""
    import pandas as pd
    frame = audit.frame.head(top)
    has = {"dup": "is_near_duplicate" in frame.columns, "out": "is_outlier" in frame.columns}
    datalab = has["dup"] or has["out"]
    extra = _extra_columns(frame)
    pair = "text_pair" in frame.columns
    headers = ["rank", "id", "text", "given", "p(given)", "suggested", "p(suggested)", "flagged"]
    numeric_ids = bool(len(frame)) and pd.to_numeric(frame["id"], errors="coerce").notna().all()
    kinds = ["num", "num" if numeric_ids else "text", "text", "text", "num", "text", "num",
             "text"]
    if "consensus_label" in frame.columns:
        headers.append("consensus")
        kinds.append("text")
    if datalab:
        headers.append("issue types")
        kinds.append("text")
    if extra:
        headers.append("other columns")
        kinds.append("")
    numeric = [k == "num" for k in kinds]
    body = []
    for _, row in frame.iterrows():
        text = details_text(row.get("text"))
        if pair:
            text += f'<span class="pair">{details_text(row.get("text_pair"))}</span>'
        flagged = bool(row["flagged"])
        cells = [cell(fmt_count(row["rank"]), sort=row["rank"], cls="num"),
                 cell(label_text(row["id"])),
                 cell(text, raw=True, cls="text"), cell(label_text(row["label"])),
                 cell(_prob(row["given_prob"]), sort=row["given_prob"], cls="num"),
                 cell(label_text(row["suggested_label"])),
                 cell(_prob(row["suggested_prob"]), sort=row["suggested_prob"], cls="num"),
                 cell("yes" if flagged else "", cls="flag" if flagged else None)]
        if "consensus_label" in frame.columns:
            cells.append(cell(label_text(row["consensus_label"])))
        if datalab:
            tags, _ = _issue_tags(row, has)
            cells.append(cell(tags, raw=True))
        if extra:
            cells.append(cell("<br>".join(f"<b>{esc(c)}</b>: {esc(str(row[c])[:200])}"
                                          for c in extra), raw=True))
        body.append(Html(f'<tr data-f="{esc(json.dumps([label_text(row["label"])]))}">'
                         + "".join(cells) + "</tr>"))
    labels = frame["label"].map(label_text).value_counts()
    options = "".join(f'<option value="{esc(c)}">{esc(c)} ({labels[c]:,})</option>'
                      for c in sorted(labels.index))
    controls = (
        '<div class="filters" data-for="issues-table"><label>given label '
        f'<select id="class-filter"><option value="">all classes</option>{options}</select>'
        '</label><label>search <input type="search" id="text-filter" '
        'placeholder="text, id, label…"></label><span class="count muted"></span></div>')
    note = (f'<p class="note">The {fmt_count(len(frame))} most suspect of '
            f"{fmt_count(len(audit.frame))} items, most suspect first"
            + (f" (ranked by {esc(audit.rank_by)})" if audit.rank_by else "")
            + ". Click a column header to sort; long texts open on click.</p>")
    html_table = _rows_table(headers, kinds, numeric, body)
    return note + controls + html_table


def _rows_table(headers: list[str], kinds: list[str], numeric: list[bool],
                body: list[Html]) -> str:
    heads = []
    for name, kind, num in zip(headers, kinds, numeric, strict=True):
        attrs = f' data-sort="{kind}" title="click to sort"' if kind else ""
        attrs += ' class="num"' if num else ""
        heads.append(f"<th{attrs}>{esc(name)}</th>")
    return (f'<table class="grid sortable" id="issues-table"><thead><tr>{"".join(heads)}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table>')
