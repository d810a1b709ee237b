"""Checks of a scan output table before the report trusts it: unique ids, a given and a
suggested label on every row, probabilities in [0, 1], and ranks that number the items
once each in the order of a score column.

A scan writes all of these right; a table that breaks one was edited or damaged, and the
report refuses it with one line naming the column, the first offending row (counted from
1 after the header) and the fix."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, plain_value

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["check_scan_table"]

PROBABILITY_COLUMNS = ("given_prob", "suggested_prob")
LABEL_COLUMNS = ("label", "suggested_label")
_SLACK = 1e-6  # rounding in a weighted mean of probabilities; such values are clipped
_FIX = "re-run `labelaudit scan --out` rather than editing its output"


def _row(frame: pd.DataFrame, position: int) -> str:
    """``row 5 (id 'd3')``: the table's row counted from 1, and its id."""
    return f"row {position + 1} (id {plain_value(frame['id'].iloc[position])!r})"


def _rows(positions: np.ndarray) -> str:
    """``rows 3 and 10``: the first few of several rows, counted from 1."""
    shown = [str(int(r) + 1) for r in positions[:5]]
    return f"rows {', '.join(shown[:-1])} and {shown[-1]}"


def _more(n: int, what: str) -> str:
    return f" ({n:,} {what} in all)" if n > 1 else ""


def check_scan_table(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """The table with its probability (and rank) columns as numbers, or an
    :class:`~labelaudit._errors.InvalidInputError` on the first problem found.

    Examples
    --------
    >>> frame = pd.DataFrame({"id": ["a", "b"], "given_prob": [0.2, 41.0],
    ...                       "suggested_prob": [0.7, 0.1]})
    >>> check_scan_table(frame, "issues.csv")
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidInputError: issues.csv: column 'given_prob' must hold \
probabilities in [0, 1]; row 2 (id 'b') has 41.0; re-run `labelaudit scan --out` rather \
than editing its output
    """
    frame = frame.copy()
    _check_ids(frame, where)
    for column in LABEL_COLUMNS:
        _check_labels(frame, column, where)
    for column in PROBABILITY_COLUMNS:
        frame[column] = _probabilities(frame, column, where)
    if "rank" in frame.columns:
        frame["rank"] = _ranks(frame, where)
        _check_rank_order(frame, where)
    return frame


def _check_ids(frame: pd.DataFrame, where: str) -> None:
    ids = frame["id"]
    repeated = (ids.duplicated(keep=False) & ids.notna()).to_numpy()
    if not repeated.any():
        return
    first = int(np.flatnonzero(repeated)[0])
    rows = np.flatnonzero(repeated & (ids == ids.iloc[first]).to_numpy())
    n_ids = int(ids[repeated].nunique())
    raise InvalidInputError(
        f"{where}: column 'id' must name each item once; id "
        f"{plain_value(ids.iloc[first])!r} is on {_rows(rows)}{_more(n_ids, 'repeated ids')}; "
        f"{_FIX}")


def _check_labels(frame: pd.DataFrame, column: str, where: str) -> None:
    """Every row has a label in ``column`` (the given one, or the one the scan suggests)."""
    if column not in frame.columns:
        return
    values = frame[column]
    blank = (values.isna() | (values.astype(str).str.strip() == "")).to_numpy()
    if blank.any():
        first = int(np.flatnonzero(blank)[0])
        raise InvalidInputError(
            f"{where}: column {column!r} must hold a label on every row (one of the "
            f"classes); {_row(frame, first)} is blank{_more(int(blank.sum()), 'rows')}; "
            f"{_FIX}")


def _probabilities(frame: pd.DataFrame, column: str, where: str) -> np.ndarray:
    import pandas as pd
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    blank = np.isnan(values)
    bad = blank | (values < -_SLACK) | (values > 1 + _SLACK)
    if not bad.any():
        return np.clip(values, 0.0, 1.0)
    first = int(np.flatnonzero(bad)[0])
    shown = raw.iloc[first]
    has = ("is blank" if pd.isna(shown) else f"has {plain_value(shown)!r}" if blank[first]
           else f"has {plain_value(values[first])!r}")
    raise InvalidInputError(
        f"{where}: column {column!r} must hold probabilities in [0, 1]; "
        f"{_row(frame, first)} {has}{_more(int(bad.sum()), 'rows')}; {_FIX}")


def _ranks(frame: pd.DataFrame, where: str) -> np.ndarray:
    import pandas as pd
    n = len(frame)
    raw = frame["rank"]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        bad = np.isnan(values) | (values != np.round(values)) | (values < 1) | (values > n)
    expected = f"column 'rank' must number the rows 1 to {n:,}, each once"
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        shown = raw.iloc[first]
        has = "is blank" if pd.isna(shown) else f"has {plain_value(shown)!r}"
        raise InvalidInputError(f"{where}: {expected}; {_row(frame, first)} {has}"
                                f"{_more(int(bad.sum()), 'rows')}; {_FIX}")
    ranks = values.astype(np.int64)
    seen = pd.Series(ranks).duplicated(keep=False).to_numpy()
    if seen.any():
        first = int(np.flatnonzero(seen)[0])
        rows = np.flatnonzero(ranks == ranks[first])
        raise InvalidInputError(
            f"{where}: {expected}; rank {ranks[first]} is on {_rows(rows)}"
            f"{_more(len(np.unique(ranks[seen])), 'repeated ranks')}; {_FIX}")
    return ranks


def _check_rank_order(frame: pd.DataFrame, where: str) -> None:
    """Ranks follow the scan's ranking: some ``score_*`` column (lower = more suspect)
    never decreases from rank 1 on. Tables without score columns are not checked."""
    import pandas as pd
    columns = [c for c in frame.columns if str(c).startswith("score_")]
    order = np.argsort(frame["rank"].to_numpy(), kind="stable")
    worst: tuple[int, str, int] | None = None
    for column in columns:
        scores = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)[order]
        if np.isnan(scores).any():
            continue
        falls = np.flatnonzero(np.diff(scores) < 0)
        if not len(falls):
            return
        if worst is None or len(falls) < worst[0]:
            worst = (len(falls), str(column), int(falls[0]) + 1)
    if worst is None:
        return
    _, column, at = worst
    scores = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)[order]
    low, high = (f"{v:.6g}" for v in (scores[at], scores[at - 1]))
    if low == high:  # too close for six digits
        low, high = repr(float(scores[at])), repr(float(scores[at - 1]))
    raise InvalidInputError(
        f"{where}: column 'rank' does not follow the scan's ranking: no score column "
        f"(lower = more suspect) grows with the rank; in the closest, {column!r}, rank "
        f"{at + 1} at {_row(frame, int(order[at]))} scores {low}, below rank {at}'s {high}; "
        f"{_FIX}")
