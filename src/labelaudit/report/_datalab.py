"""The Datalab section: near-duplicates (those with different labels above all), outliers,
and the dataset-level non-IID finding, from the issue columns a scan output may carry."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from labelaudit.report._html import cell, details_text, esc, fmt_count, fmt_num, fmt_share, table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["conflicting_duplicates", "datalab_section", "has_datalab"]

MAX_PAIRS = 100


def has_datalab(frame: pd.DataFrame) -> bool:
    """Whether the scan output carries any Datalab issue column."""
    return any(c in frame.columns for c in ("is_near_duplicate", "is_outlier")) or any(
        str(c).startswith("non_iid") for c in frame.columns)


def id_keys(ids: pd.Series) -> list[str | None]:
    """Ids as text keys (``7``, ``7.0`` and ``"7"`` agree), None for a blank one."""
    import pandas as pd
    if pd.api.types.is_integer_dtype(ids.dtype) and not ids.isna().any():
        return ids.astype(str).tolist()
    return [_key(v) for v in ids]


def _key(value: object) -> str | None:
    from labelaudit.evaluation import plain

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(plain(value)).strip()
    return text or None


def conflicting_duplicates(frame: pd.DataFrame) -> pd.DataFrame:
    """Pairs of near-duplicates whose given labels differ, each pair once: ``id, label,
    text, other_id, other_label, other_text`` (the more suspect item first).

    Examples
    --------
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
    keys = id_keys(frame["id"])
    position = {k: i for i, k in enumerate(keys) if k is not None}
    marked = (frame["is_near_duplicate"].to_numpy(dtype=bool)
              if "is_near_duplicate" in frame.columns else np.ones(len(frame), dtype=bool))
    labels = frame["label"].astype(str).to_numpy()
    texts = frame["text"].to_numpy(dtype=object) if "text" in frame.columns else [""] * len(frame)
    others = frame["near_duplicate_id"].to_numpy(dtype=object)
    seen: set[tuple[int, int]] = set()
    rows = []
    for i in np.flatnonzero(marked).tolist():
        j = position.get(_key(others[i]) or "")
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
    """Counts of each issue type, the near-duplicate pairs with different labels, the
    most outlying items and the non-IID finding."""
    n = len(frame)
    flagged = frame["flagged"].to_numpy(dtype=bool)
    rows = []
    if "is_near_duplicate" in frame.columns:
        dup = frame["is_near_duplicate"].to_numpy(dtype=bool)
        rows.append(("near-duplicate", cell(fmt_count(dup.sum()), cls="num"),
                     cell(fmt_share(dup.sum(), n), cls="num"),
                     cell(fmt_count((dup & flagged).sum()), cls="num")))
    if "is_outlier" in frame.columns:
        out = frame["is_outlier"].to_numpy(dtype=bool)
        rows.append(("outlier", cell(fmt_count(out.sum()), cls="num"),
                     cell(fmt_share(out.sum(), n), cls="num"),
                     cell(fmt_count((out & flagged).sum()), cls="num")))
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
