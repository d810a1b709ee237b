"""The sections of a text or sentence-pair report (summary, classes, probabilities, data map,
Datalab issues, top issues) and the numbers behind them, all read from the scan output."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.detect import IssueCount, count_label_issues
from labelaudit.io import text_keys
from labelaudit.report._evidence import Evidence, cell_evidence, evidence_block
from labelaudit.report._html import (
    cell,
    confusion_heatmap,
    data_map,
    details_text,
    esc,
    fact,
    filter_row,
    filters,
    fmt_count,
    fmt_num,
    fmt_share,
    issues_table,
    label_text,
    probability_histogram_svg,
    table,
)
from labelaudit.report._load import TextAudit

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

MAX_HEATMAP_CLASSES = 30
MAX_POINTS = 5000  # points of the data map drawn at most (flagged first): the page stays small
MAX_PAIRS = 100
TASKS = {"text": "text classification", "pairs": "sentence-pair classification",
         "tokens": "token tagging", "label sets": "multi-label classification"}
_KNOWN = {"id", "text", "text_pair", "label", "suggested_label", "suggested_prob", "given_prob",
          "loss", "rank", "consensus_label", "flagged", "evidence", "model_agrees",
          "is_near_duplicate", "near_duplicate_id", "is_outlier", "outlier_score"}

_COLUMNS = ("dynamics_confidence", "dynamics_variability")


def issue_count(frame: pd.DataFrame, classes: list[Any]) -> IssueCount:
    """Confident learning's count of label errors from a scan output's two top probabilities.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"label": ["a", "a", "a", "b", "b", "b"],
    ...                       "suggested_label": ["b", "b", "b", "a", "a", "a"],
    ...                       "given_prob": [0.9, 0.8, 0.2, 0.7, 0.9, 0.8],
    ...                       "suggested_prob": [0.1, 0.2, 0.8, 0.3, 0.1, 0.2]})
    >>> issue_count(frame, ["a", "b"]).n_issues
    1
    """
    import pandas as pd

    labels = pd.Categorical(frame["label"], categories=classes).codes
    suggested = pd.Categorical(frame["suggested_label"], categories=classes).codes
    return count_label_issues(labels, frame["given_prob"].to_numpy(dtype=float), suggested,
                              frame["suggested_prob"].to_numpy(dtype=float),
                              n_classes=len(classes))


def confusion_matrix(frame: pd.DataFrame, classes: list[Any]) -> pd.DataFrame:
    """Given label (rows) against ``suggested_label`` (columns) where ``model_agrees`` is false
    (the diagonal is empty; agreement is counted in :func:`class_table`).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"label": ["a", "a", "b", "b"],
    ...                       "suggested_label": ["b", "b", "a", "a"],
    ...                       "model_agrees": [False, False, True, False]})
    >>> confusion_matrix(frame, ["a", "b"]).to_numpy().tolist()
    [[0, 2], [1, 0]]
    """
    import pandas as pd
    off = frame.loc[~frame["model_agrees"].to_numpy(dtype=bool)]
    matrix = pd.crosstab(off["label"], off["suggested_label"])
    matrix = matrix.reindex(index=classes, columns=classes, fill_value=0).fillna(0).astype(int)
    matrix.index.name, matrix.columns.name = "given", "suggested"
    return matrix


def top_confused(matrix: pd.DataFrame, n: int) -> list[Any]:
    """At most ``n`` classes for a heat map: all if few, else those of the largest confusion pairs
    (a pair's two side by side), then those with the most confusions in all.

    >>> import pandas as pd
    >>> m = pd.DataFrame([[0, 5, 0], [0, 0, 1], [2, 0, 0]], index=list("abc"), columns=list("abc"))
    >>> top_confused(m, 2)
    ['a', 'b']
    """
    if len(matrix) <= n:
        return list(matrix.index)
    counts = matrix.to_numpy()
    rows, cols = np.nonzero(counts)
    order = np.argsort(-counts[rows, cols], kind="stable")
    chosen: dict[int, None] = {}
    for i, j in zip(rows[order].tolist(), cols[order].tolist(), strict=True):
        if len(chosen) + (i not in chosen) + (j not in chosen) > n:
            break
        chosen.update(dict.fromkeys([i, j]))
    totals = counts.sum(axis=1) + counts.sum(axis=0)
    for k in np.argsort(-totals, kind="stable").tolist():
        if len(chosen) >= n:
            break
        chosen.setdefault(k, None)
    return [matrix.index[i] for i in chosen]


def class_table(frame: pd.DataFrame, classes: list[Any]) -> pd.DataFrame:
    """One row per class: ``class, n, share, flagged, flagged_share, model_agrees`` (share of
    the class's items whose most probable label is the given one), ``top_suggestion`` and
    ``n_top_suggestion`` (among the items where the model prefers another label).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"label": ["a", "a", "b"], "suggested_label": ["b", "b", "a"],
    ...                       "flagged": [True, False, False],
    ...                       "model_agrees": [False, True, True]})
    >>> class_table(frame, ["a", "b"])[["class", "n", "flagged", "model_agrees"]]
      class  n  flagged  model_agrees
    0     a  2        1           0.5
    1     b  1        0           1.0
    """
    import pandas as pd
    rows = []
    grouped = {key: part for key, part in frame.groupby("label", sort=False)}
    total = max(len(frame), 1)
    for c in classes:
        part = grouped.get(c)
        if part is None or not len(part):
            rows.append((c, 0, 0.0, 0, math.nan, math.nan, None, 0))
            continue
        flagged = int(part["flagged"].sum())
        off = part.loc[~part["model_agrees"].to_numpy(dtype=bool), "suggested_label"]
        counts = off.value_counts()
        top = counts.index[0] if len(counts) else None
        rows.append((c, len(part), len(part) / total, flagged, flagged / len(part),
                     float(part["model_agrees"].mean()), top,
                     int(counts.iloc[0]) if len(counts) else 0))
    return pd.DataFrame(rows, columns=["class", "n", "share", "flagged", "flagged_share",
                                       "model_agrees", "top_suggestion", "n_top_suggestion"])


def probability_histogram(given_prob: np.ndarray, flagged: np.ndarray, *, bins: int = 20
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bin edges over [0, 1] and the counts of flagged and of other items in each bin.

    >>> edges, hit, rest = probability_histogram(np.array([0.01, 0.5, 0.99]),
    ...                                          np.array([True, False, False]), bins=2)
    >>> edges.tolist(), hit.tolist(), rest.tolist()
    ([0.0, 0.5, 1.0], [1, 0], [0, 2])
    """
    edges = np.linspace(0.0, 1.0, bins + 1)
    p = np.clip(np.asarray(given_prob, dtype=float), 0.0, 1.0)
    flagged = np.asarray(flagged, dtype=bool)
    hit = np.histogram(p[flagged], bins=edges)[0]
    rest = np.histogram(p[~flagged], bins=edges)[0]
    return edges, hit, rest


def _threshold(rule: str | None) -> float | None:
    match = re.search(r"probability < ([0-9.eE+-]+)", rule or "")
    return float(match[1]) if match else None


def _score_methods(frame: pd.DataFrame) -> list[str]:
    return [c[len("score_"):] for c in frame.columns if str(c).startswith("score_")]


def summary_section(audit: TextAudit) -> str:
    """Items, classes, flags and rule, error estimates, accuracy, chance banner, scorers."""
    frame = audit.frame
    n = len(frame)
    n_flagged = int(frame["flagged"].sum())
    if audit.n_issues_estimate is not None:  # cleanlab's own count, from the scan result
        errors, undecided = audit.n_issues_estimate, 0
    else:  # the same count from the output's two top probabilities, up to undecided items
        count = issue_count(audit.frame, audit.classes)
        errors, undecided = count.n_issues, count.n_undecided
    rule = esc(audit.flag_rule) if audit.flag_rule else _guess_rule(frame, n_flagged)
    more = (f"; {fmt_count(undecided)} more the file's two top probabilities cannot decide"
            if undecided else "")
    facts = [
        fact("items", fmt_count(n), f"{fmt_count(len(audit.classes))} classes · "
             f"{esc(TASKS.get(audit.task, audit.task))}"),
        fact("flagged", f'<span class="flag">{fmt_count(n_flagged)}</span> '
             f"({fmt_share(n_flagged, n)})", rule),
        fact("estimated label errors (confident learning)",
             f'<span id="error-estimate">{fmt_count(errors)}</span>',
             f"{fmt_share(errors, n)} of the items · cleanlab's num_label_issues{more}"),
        fact("out-of-sample accuracy", f"{audit.accuracy:.3f}",
             f"always the most common class: {audit.majority_rate:.3f}")]
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


def has_dynamics(frame: pd.DataFrame) -> bool:
    """Whether the scan output carries the data map's two columns."""
    return all(c in frame.columns for c in _COLUMNS)


def _drawn(flagged: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Positions to draw: usable flagged items, then a fixed sample, ``MAX_POINTS`` in all."""
    hit = np.flatnonzero(usable & flagged)[:MAX_POINTS]
    rest = np.flatnonzero(usable & ~flagged)
    room = MAX_POINTS - len(hit)
    if len(rest) > room:
        rest = np.sort(np.random.default_rng(0).choice(rest, size=room, replace=False))
    return np.r_[hit, rest].astype(int)


def cartography_section(frame: pd.DataFrame) -> str:
    """The data map and the median statistics of flagged and other items."""
    import pandas as pd
    confidence = pd.to_numeric(frame["dynamics_confidence"], errors="coerce").to_numpy(float)
    variability = pd.to_numeric(frame["dynamics_variability"], errors="coerce").to_numpy(float)
    flagged = frame["flagged"].to_numpy(dtype=bool)
    usable = np.isfinite(confidence) & np.isfinite(variability)
    drawn = _drawn(flagged, usable)
    svg = data_map(variability[drawn], confidence[drawn], flagged[drawn], prefix="datamap")
    sampled = (f" A random sample of {fmt_count(len(drawn))} of the {fmt_count(usable.sum())} "
               "items is drawn, every flagged item among them." if len(drawn) < usable.sum()
               else "")
    columns = [("confidence", confidence), ("variability", variability)]
    if "dynamics_aum" in frame.columns:
        columns.insert(0, ("AUM", pd.to_numeric(frame["dynamics_aum"], errors="coerce")
                           .to_numpy(float)))
    rows = []
    for name, mask in (("flagged", flagged), ("not flagged", ~flagged)):
        medians = [np.nanmedian(v[mask]) if (mask & np.isfinite(v)).any() else None
                   for _, v in columns]
        rows.append((name, cell(fmt_count(mask.sum()), cls="num"),
                     *[cell(fmt_num(m) if m is not None else "–", cls="num") for m in medians]))
    summary = table(["items", "count", *[f"median {n}" for n, _ in columns]], rows,
                    numeric=[False, True, *[True] * len(columns)])
    note = (
        '<p class="note">Each point is an item: its confidence is the mean, over the epochs '
        "of the <code>dynamics</code> member's training, of the probability of its given "
        "label, and its variability the standard deviation of that probability "
        "(Swayamdipta et al. 2020). Easy items sit top left (high confidence, low "
        "variability), ambiguous ones to the right, and hard-to-learn ones bottom left, "
        "where label errors gather. The probabilities are those of held-out items (each "
        "fold's model, after every epoch), so no point comes from a model that saw its "
        "label. AUM is the mean margin of the given label's logit over the largest other "
        f"logit (Pleiss et al. 2020); lower is more suspect.{sampled}</p>")
    return f'<div class="plot" id="data-map">{svg}</div>{note}{summary}'


def has_datalab(frame: pd.DataFrame) -> bool:
    """Whether the scan output carries any Datalab issue column."""
    return any(c in frame.columns for c in ("is_near_duplicate", "is_outlier")) or any(
        str(c).startswith("non_iid") for c in frame.columns)


def conflicting_duplicates(frame: pd.DataFrame) -> pd.DataFrame:
    """Pairs of near-duplicates whose given labels differ, once each, the more suspect first.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": [1, 2, 3], "text": ["a", "a!", "b"],
    ...                       "label": ["x", "y", "x"], "is_near_duplicate": [True, True, False],
    ...                       "near_duplicate_id": [2, 1, None]})
    >>> conflicting_duplicates(frame)[["id", "other_id", "label", "other_label"]]
       id  other_id label other_label
    0   1         2     x           y
    """
    import pandas as pd
    columns = ["id", "label", "text", "other_id", "other_label", "other_text"]
    if "near_duplicate_id" not in frame.columns:
        return pd.DataFrame(columns=columns)
    position = {k: i for i, k in enumerate(text_keys(frame["id"], strip=True)) if k}
    marked = (frame["is_near_duplicate"].to_numpy(dtype=bool)
              if "is_near_duplicate" in frame.columns else np.ones(len(frame), dtype=bool))
    labels = frame["label"].astype(str).to_numpy()
    texts = frame["text"].to_numpy(dtype=object) if "text" in frame.columns else [""] * len(frame)
    others = text_keys(frame["near_duplicate_id"], strip=True)
    seen: set[tuple[int, int]] = set()
    rows = []
    for i in np.flatnonzero(marked).tolist():
        j = position.get(others[i])
        if j is None or j == i or labels[i] == labels[j]:
            continue
        pair = (min(i, j), max(i, j))
        if pair in seen:
            continue
        seen.add(pair)
        a, b = pair  # the frame is most suspect first
        rows.append((frame["id"].iloc[a], labels[a], texts[a], frame["id"].iloc[b], labels[b],
                     texts[b]))
    return pd.DataFrame(rows, columns=columns)


def datalab_section(frame: pd.DataFrame) -> str:
    """Issue counts, conflicting near-duplicates, the most outlying items, the non-IID finding."""
    n = len(frame)
    flagged = frame["flagged"].to_numpy(dtype=bool)
    rows = []
    for name, column in (("near-duplicate", "is_near_duplicate"), ("outlier", "is_outlier")):
        if column in frame.columns:
            hit = frame[column].to_numpy(dtype=bool)
            rows.append((name, cell(fmt_count(hit.sum()), cls="num"),
                         cell(fmt_share(hit.sum(), n), cls="num"),
                         cell(fmt_count((hit & flagged).sum()), cls="num")))
    parts = []
    if rows:
        parts.append(table(["issue type", "items", "share", "also flagged as a label error"],
                           rows, numeric=[False, True, True, True]))
    parts.append(_non_iid(frame))
    if "near_duplicate_id" in frame.columns:
        parts.append(_pairs(frame))
    if "is_outlier" in frame.columns and "outlier_score" in frame.columns:
        parts.append(_outliers(frame))
    return "\n".join(p for p in parts if p)


def _non_iid(frame: pd.DataFrame) -> str:
    columns = [c for c in frame.columns if str(c).startswith("non_iid")]
    if not columns:
        return ""
    values = []
    for c in columns:
        column = frame[c].dropna()
        value = column.iloc[0] if len(column) else None
        values.append(f"<b>{esc(c)}</b>: {esc(fmt_num(value) if value is not None else '–')}")
    return ('<p id="non-iid">Dataset-level finding (non-IID: whether the items look like '
            f"independent draws in the order given): {'; '.join(values)}.</p>")


def _pairs(frame: pd.DataFrame) -> str:
    pairs = conflicting_duplicates(frame)
    head = (f'<h3>Near-duplicates with different labels</h3><p id="duplicate-conflicts">'
            f"<b>{fmt_count(len(pairs))}</b> pairs of near-duplicate items carry different "
            "given labels. Two nearly identical texts should rarely have different labels, "
            "so each pair is a label-error signal of its own, independent of the model's "
            "probabilities: at least one label of a pair is likely wrong (or the task is "
            "ambiguous there).</p>")
    if not len(pairs):
        return head
    rows = [(str(r["id"]), str(r["label"]), cell(details_text(r["text"], preview=120), raw=True,
                                                  cls="text"),
             str(r["other_id"]), str(r["other_label"]),
             cell(details_text(r["other_text"], preview=120), raw=True, cls="text"))
            for _, r in pairs.head(MAX_PAIRS).iterrows()]
    more = (f'<p class="note">The first {MAX_PAIRS} of {len(pairs):,} pairs, most suspect '
            "first.</p>" if len(pairs) > MAX_PAIRS else "")
    return head + table(["id", "label", "text", "duplicate id", "its label", "its text"],
                        rows, cls="grid") + more


def _outliers(frame: pd.DataFrame) -> str:
    import pandas as pd
    out = frame.loc[frame["is_outlier"].to_numpy(dtype=bool)]
    if not len(out):
        return ""
    scores = pd.to_numeric(out["outlier_score"], errors="coerce")
    out = out.assign(_score=scores).sort_values("_score", kind="stable").head(20)
    rows = [(str(r["id"]), str(r["label"]), cell(fmt_num(r["_score"]), cls="num"),
             cell(details_text(r.get("text"), preview=120), raw=True, cls="text"))
            for _, r in out.iterrows()]
    return ("<h3>Outliers</h3><p class=\"note\">Items marked as outliers, lowest "
            "<code>outlier_score</code> first (Datalab's convention: lower is more "
            "atypical).</p>" + table(["id", "label", "outlier score", "text"], rows,
                                     numeric=[False, False, True, False]))


def _prob(value: float) -> str:
    """A probability with three decimals, or two significant digits below 0.001."""
    return f"{value:.3f}" if value >= 0.001 or value == 0 else f"{value:.1e}"


def _issue_tags(row: pd.Series, has: dict[str, bool]) -> str:
    tags = []
    if has["dup"] and bool(row.get("is_near_duplicate")):
        other = row.get("near_duplicate_id")
        shown = "" if other is None or (isinstance(other, float) and np.isnan(other)) else other
        of = f" of {esc(label_text(shown))}" if shown != "" else ""
        tags.append(f'<span class="tag dup">near-duplicate{of}</span>')
    if has["out"] and bool(row.get("is_outlier")):
        score = row.get("outlier_score")
        tags.append(f'<span class="tag out">outlier'
                    f'{" " + fmt_num(score) if score is not None else ""}</span>')
    return "".join(tags)


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
    evidence = _evidence_column(frame)
    headers = ["rank", "id", "text", "given", "p(given)", "suggested", "p(suggested)", "flagged"]
    numeric_ids = bool(len(frame)) and pd.to_numeric(frame["id"], errors="coerce").notna().all()
    kinds = ["num", "num" if numeric_ids else "text", "text", "text", "num", "text", "num",
             "text"]
    if evidence is not None:
        headers.insert(3, "evidence")
        kinds.insert(3, "")
    if "consensus_label" in frame.columns:
        headers.append("consensus")
        kinds.append("text")
    if datalab:
        headers.append("issue types")
        kinds.append("text")
    if extra:
        headers.append("other columns")
        kinds.append("")
    body = []
    for position, (_, row) in enumerate(frame.iterrows()):
        why = evidence[position] if evidence is not None else None
        text = details_text(row.get("text"), marks=why.terms("text") if why else ())
        if pair:
            text += ('<span class="pair">' + details_text(
                row.get("text_pair"), marks=why.terms("text_pair") if why else ()) + "</span>")
        flagged = bool(row["flagged"])
        cells = [cell(fmt_count(row["rank"]), sort=row["rank"], cls="num"),
                 cell(label_text(row["id"])),
                 cell(text, raw=True, cls="text"), cell(label_text(row["label"])),
                 cell(_prob(row["given_prob"]), sort=row["given_prob"], cls="num"),
                 cell(label_text(row["suggested_label"])),
                 cell(_prob(row["suggested_prob"]), sort=row["suggested_prob"], cls="num"),
                 cell("yes" if flagged else "", cls="flag" if flagged else None)]
        if evidence is not None:
            cells.insert(3, cell(evidence_block(why) if why else "", raw=True, cls="why"))
        if "consensus_label" in frame.columns:
            cells.append(cell(label_text(row["consensus_label"])))
        if datalab:
            cells.append(cell(_issue_tags(row, has), raw=True))
        if extra:
            cells.append(cell("<br>".join(f"<b>{esc(c)}</b>: {esc(str(row[c])[:200])}"
                                          for c in extra), raw=True))
        body.append(filter_row([label_text(row["label"])], cells))
    controls = filters("given label", frame["label"].map(label_text).value_counts(),
                       every="all classes", placeholder="text, id, label…")
    note = (f'<p class="note">The {fmt_count(len(frame))} most suspect of '
            f"{fmt_count(len(audit.frame))} items, most suspect first"
            + (f" (ranked by {esc(audit.rank_by)})" if audit.rank_by else "")
            + ". Click a column header to sort; long texts open on click.</p>")
    if evidence is not None:
        note += _evidence_note(audit.frame)
    return note + controls + issues_table(headers, kinds, body)


def _evidence_note(frame: pd.DataFrame) -> str:
    """What the evidence column shows, and how many items have a conflicting duplicate."""
    every = [e for e in map(cell_evidence, frame["evidence"].tolist()) if e is not None]
    duplicated = sum(bool(e.duplicate_of) or any(p.startswith("duplicate of") for p in e.parts)
                     for e in every)
    return (
        '<p class="note" id="evidence-note">Evidence, beside each flagged item\'s text: the '
        "words of the item that push the model most toward the suggested label and away from "
        "the given one (highlighted in the text; from a model that never saw the item, since "
        "each fold's model scores only the items it was not trained on), the most similar "
        "other items that carry the suggested label, and, in red, near-identical items "
        "(cosine ≥ 0.95 after normalising the text) that carry another label: "
        f'<b id="evidence-duplicates">{fmt_count(duplicated)}</b> of the '
        f"{fmt_count(len(every))} items with evidence have one.</p>")


def _evidence_column(frame: pd.DataFrame) -> list[Evidence | None] | None:
    """Each row's evidence, or None when the table has no evidence for any of these rows (an
    older scan, ``--no-evidence``): then the table has no evidence column at all."""
    if "evidence" not in frame.columns:
        return None
    evidence = [cell_evidence(value) for value in frame["evidence"].tolist()]
    return evidence if any(e is not None for e in evidence) else None

