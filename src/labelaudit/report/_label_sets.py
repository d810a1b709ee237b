"""The report of a multi-label scan: the summary, per-class counts of the classes that look
missing or wrong, the known errors (evaluate, item and class level) and the most suspect
items with their given and suggested sets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.engine import first_rows
from labelaudit.evaluation import evaluate, is_label_set_output
from labelaudit.io import check_label_set_members, label_set_names, read_table
from labelaudit.report._html import (
    cell,
    details_text,
    esc,
    fact,
    fmt_count,
    fmt_num,
    fmt_share,
    table,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_SETS = ("label", "suggested_label", "missing", "extra")


def _is_label_set_output(frame: pd.DataFrame) -> bool:
    return is_label_set_output(frame) and {"rank", "flagged"} <= set(frame.columns)


def label_set_frame(source: object) -> pd.DataFrame | None:
    """A multi-label scan's output (result, table or file) with its sets as lists, else None;
    a set with a null or blank member is refused, not shown as a class "None"."""
    # a LabelSetScanResult, recognised by its fields (importing scan would close a cycle)
    import pandas as pd
    if hasattr(source, "label_sets") and hasattr(source, "to_frame"):
        frame = source.to_frame()  # type: ignore[union-attr]
    elif isinstance(source, pd.DataFrame):
        frame = source
    elif isinstance(source, (str, Path)) and Path(source).is_file():
        head = first_rows(Path(source), rows=50)  # cheap: other reports read their file once
        if head is None or not _is_label_set_output(head):
            return None
        frame = read_table(source)
    else:
        return None
    if not _is_label_set_output(frame):
        return None
    frame = frame.copy()
    where = str(source) if isinstance(source, (str, Path)) else "the scan output"
    ids = (frame["id"].to_numpy(dtype=object) if "id" in frame.columns
           else np.arange(1, len(frame) + 1))
    for column in _SETS:
        check_label_set_members(frame[column], column=column, ids=ids, sep="|", where=where)
        frame[column] = [label_set_names(v) for v in frame[column]]
    return frame.sort_values("rank", kind="stable").reset_index(drop=True)


def _counts(frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd
    names = sorted({c for column in _SETS for row in frame[column] for c in row})
    flagged = frame["flagged"].astype(bool).to_numpy()

    def count(column: str, rows: np.ndarray | None = None) -> list[int]:
        values = frame[column] if rows is None else frame[column][rows]
        return [int(sum(name in row for row in values)) for name in names]

    return pd.DataFrame({"class": names, "given": count("label"),
                         "suggested": count("suggested_label"), "missing": count("missing"),
                         "extra": count("extra"), "flagged_missing": count("missing", flagged),
                         "flagged_extra": count("extra", flagged)})


def _summary(frame: pd.DataFrame, counts: pd.DataFrame) -> str:
    n = len(frame)
    flagged = int(frame["flagged"].astype(bool).sum())
    differs = int(sum(bool(m or e) for m, e in zip(frame["missing"], frame["extra"],
                                                   strict=True)))
    empty = int(sum(not row for row in frame["label"]))
    facts = [fact("items", fmt_count(n), f"{fmt_count(len(counts))} classes · multi-label "
                  f"(label sets) · {fmt_count(empty)} with the empty set"),
             fact("flagged", f'<span class="flag">{fmt_count(flagged)}</span> '
                  f"({fmt_share(flagged, n)})", "the most suspect label sets"),
             fact("suggested set differs", fmt_count(differs),
                  f"{fmt_share(differs, n)} of the items: a class looks missing or wrong")]
    return (f'<div class="facts">{"".join(facts)}</div>'
            '<p class="note">Each item has a set of classes. A class looks <b>missing</b> '
            "when the model puts it in the item's set (probability 0.5 or more) and the given "
            "set lacks it, <b>extra</b> when the given set has it and the model does not.</p>")


def _classes(counts: pd.DataFrame) -> str:
    headers = ["class", "given", "suggested", "missing", "extra", "flagged: missing",
               "flagged: extra"]
    rows = [[row["class"], *(int(row[k]) for k in counts.columns[1:])]
            for _, row in counts.iterrows()]
    return table(headers, rows, cls="grid sortable", sortable=["text"] + ["num"] * 6,
                 numeric=[False] + [True] * 6)


def _truth(frame: pd.DataFrame, truth: Any, options: dict[str, Any]) -> tuple[str, dict]:
    result = evaluate(frame, truth, **options)
    ap = {m: float(r.average_precision) for m, r in result.reports.items()}
    rows = [[method, cell(fmt_num(ap[method]), cls="num"),
             cell(fmt_num(result.reports[method].precision_at_err), cls="num"),
             cell(fmt_num(result.reports[method].recall_at_err), cls="num")]
            for method in sorted(ap, key=lambda m: -np.nan_to_num(ap[m], nan=-1.0))]
    parts = [f"<p>{esc(result.summary().splitlines()[0])}.</p>",
             table(["method", "AP", "P@Err", "R@Err"], rows, cls="grid sortable",
                   sortable=["text", "num", "num", "num"], numeric=[False, True, True, True])]
    if result.classes is not None:
        classes = result.classes
        parts.append("<p>Per class: the items whose membership the truth changes, those the "
                     "scan names missing or extra, and the hits.</p>")
        parts.append(table(list(classes.columns), classes.to_numpy().tolist(),
                           cls="grid sortable", sortable=["text"] + ["num"] * 5,
                           numeric=[False] + [True] * 5))
    return "\n".join(parts), ap


def _rank_score(frame: pd.DataFrame) -> str | None:
    """The score column the items are ranked by: the first rising with ``rank``."""
    import pandas as pd
    scores = [c for c in frame.columns if c.startswith("score_")]
    for column in scores:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy()
        if np.all(np.diff(values) >= 0):
            return column
    return scores[0] if scores else None


def _issues(frame: pd.DataFrame, top: int) -> str:
    score = _rank_score(frame)
    headers = ["rank", "id", "text", "given set", "suggested set", "missing", "extra",
               *([score[6:]] if score else []), "flagged"]
    rows = []
    for _, row in frame.head(top).iterrows():
        rows.append([int(row["rank"]), str(row["id"]),
                     cell(details_text(row["text"]), raw=True),
                     *(", ".join(row[c]) or "∅" for c in _SETS),
                     *([cell(fmt_num(row[score]), sort=float(row[score]), cls="num")]
                       if score else []),
                     "yes" if bool(row["flagged"]) else ""])
    numeric = [True, False, False, False, False, False, False, *([True] if score else []),
               False]
    return table(headers, rows, cls="grid sortable",
                 sortable=["num", "text", "", "text", "text", "text", "text",
                           *(["num"] if score else []), "text"], numeric=numeric)


def label_set_sections(frame: pd.DataFrame, *, truth: Any, truth_options: dict[str, Any],
                       top: int) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """The sections of a multi-label scan's report and the page's metadata."""
    counts = _counts(frame)
    sections = [("summary", "Summary", _summary(frame, counts)),
                ("classes", "Classes", _classes(counts))]
    meta: dict[str, Any] = {"classes": counts["class"].tolist()[:1000], "multi_label": True}
    if truth is not None:
        part, ap = _truth(frame, truth, {k: v for k, v in truth_options.items()
                                          if v is not None})
        sections.append(("truth", "Against known errors", part))
        meta["average_precision"] = {k: (None if v != v else round(v, 6))
                                     for k, v in ap.items()}
    sections.append(("issues", "Top issues", _issues(frame, top)))
    return sections, meta
