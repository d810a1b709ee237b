"""Write a corrected copy of a dataset from review verdicts (``labelaudit review apply``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._validation import check_choice
from labelaudit.io import read_table, text_keys, write_table
from labelaudit.review._protocol import (
    CORRECTABLE,
    NON_AGREEMENT,
    NONE_OF_THESE,
    PENDING,
    VERDICTS,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AppliedVerdicts", "apply_verdicts", "apply_verdicts_file"]

PROVENANCE_COLUMNS = ["review_original_label", "review_verdict", "review_votes", "review_action"]


def _coerce(value: Any, column: pd.Series) -> Any:
    """Give a majority label the type of the dataset's label column."""
    import pandas as pd
    if pd.api.types.is_integer_dtype(column.dtype) or pd.api.types.is_float_dtype(column.dtype):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"the verdicts relabel an item to {value!r}, but the dataset's labels are numbers"
            ) from None
        return int(number) if pd.api.types.is_integer_dtype(column.dtype) else number
    if pd.api.types.is_bool_dtype(column.dtype):
        return str(value).strip().lower() in ("true", "1")
    return value if isinstance(value, str) else str(value)


def _key(values: pd.Series) -> pd.Series:
    """Ids compared by their text (:func:`labelaudit.io.text_keys`: ``3.0`` -> ``"3"``),
    so that an id 68 of one file is the id ``"68"`` of another, and ``"068"`` stays itself."""
    import pandas as pd
    return pd.Series(text_keys(values), index=values.index)


def apply_verdicts(
    data: pd.DataFrame,
    verdicts: pd.DataFrame,
    *,
    label: str = "label",
    id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    row_numbers: bool = False,
    non_agreement: Literal["flag", "drop", "keep"] = "flag",
) -> pd.DataFrame:
    """Return a corrected copy of ``data``: Correctable items relabelled, with provenance.

    Parameters
    ----------
    data : DataFrame
        The dataset that was scanned.
    verdicts : DataFrame
        The output of ``review results``: ``id, verdict, majority_label`` (and ``votes``).
    label : str, default="label"
        The label column of ``data``.
    id : str, optional
        The id column of ``data``. By default the rule ``scan`` follows: the column named
        ``id`` when ``data`` has one, else the row number (0-based).
    row_numbers : bool, default=False
        Use row numbers (0-based) as ids even when ``data`` has an ``id`` column.
    non_agreement : {"flag", "drop", "keep"}, default="flag"
        What to do with Non-Agreement items (and Correctable items whose majority is
        ``none of these``, which have no label to take): keep them with
        ``review_action="flagged"``, drop them, or keep them silently
        (``review_action="kept"``).

    Returns
    -------
    DataFrame
        ``data`` with the label column corrected and four provenance columns:
        ``review_original_label``, ``review_verdict`` (empty for unreviewed rows),
        ``review_votes`` and ``review_action`` (``relabelled``, ``flagged``, ``kept``,
        ``confirmed`` for Non-Errors, ``pending``; empty for unreviewed rows). Dropped rows
        are left out. ``data`` itself is not changed.

    Examples
    --------
    >>> data = pd.DataFrame({"id": [1, 2, 3], "text": ["x", "y", "z"], "label": ["a", "a", "b"]})
    >>> verdicts = pd.DataFrame({"id": [1, 2, 3], "verdict": ["Correctable", "Non-Error",
    ...     "Non-Agreement"], "majority_label": ["b", "a", None], "votes": ["b:3", "a:5", ""]})
    >>> out = apply_verdicts(data, verdicts, non_agreement="drop")
    >>> out[["id", "label", "review_original_label", "review_action"]].to_dict("list")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'id': [1, 2], 'label': ['b', 'a'], 'review_original_label': ['a', 'a'],
     'review_action': ['relabelled', 'confirmed']}
    """
    import pandas as pd
    check_choice(non_agreement, "non_agreement", ("flag", "drop", "keep"))
    id = _id_column(data, verdicts, label=label, id=id, row_numbers=row_numbers)  # noqa: A001
    data_keys, by_key = _keyed(data, verdicts, id)
    out = data.copy()
    original = out[label].copy()
    labels = out[label].astype(object).copy()
    verdict_col, votes_col, action = (pd.Series("", index=out.index, dtype=object)
                                      for _ in range(3))
    drop = np.zeros(len(out), dtype=bool)
    for position, (row_index, key) in enumerate(data_keys.items()):
        if key not in by_key.index:
            continue
        row = by_key.loc[key]
        verdict_col[row_index] = row["verdict"]
        votes = row.get("votes", "")
        votes_col[row_index] = "" if pd.isna(votes) else str(votes)
        action[row_index] = _action(row["verdict"], row["majority_label"], non_agreement)
        if action[row_index] == "relabelled":
            labels[row_index] = _coerce(row["majority_label"], original)
        drop[position] = action[row_index] == "dropped"
    out[label] = labels
    try:
        out[label] = out[label].astype(original.dtype)
    except (TypeError, ValueError):
        pass
    out = out.assign(review_original_label=original, review_verdict=verdict_col,
                     review_votes=votes_col, review_action=action)
    return out.loc[~drop].reset_index(drop=True)


def _action(verdict: str, majority: Any, non_agreement: str) -> str:
    """What ``apply`` does with an item: relabelled, flagged, dropped, kept, pending or
    confirmed."""
    import pandas as pd
    if verdict == CORRECTABLE and not pd.isna(majority) and str(majority) != NONE_OF_THESE:
        return "relabelled"
    if verdict in (NON_AGREEMENT, CORRECTABLE):
        return {"flag": "flagged", "drop": "dropped", "keep": "kept"}[non_agreement]
    return "pending" if verdict == PENDING else "confirmed"


def _id_column(data: pd.DataFrame, verdicts: pd.DataFrame, *, label: str, id: str | None,  # noqa: A002
               row_numbers: bool) -> str | None:
    """The dataset's id column (None: row numbers), after checking both tables' columns."""
    missing = [c for c in ("id", "verdict", "majority_label") if c not in verdicts.columns]
    if missing:
        raise InvalidInputError(
            f"the verdicts file lacks {missing}; use the output of `labelaudit review results`"
        )
    if row_numbers:
        if id is not None:
            raise InvalidParameterError("give an id column or row_numbers=True, not both")
    elif id is None and "id" in data.columns:
        id = "id"  # noqa: A001 - scan's rule: a column named id, else row numbers
    needed = [label] + ([id] if id is not None else [])
    absent = [c for c in needed if c not in data.columns]
    if absent:
        raise InvalidInputError(
            f"the dataset lacks column{'s' if len(absent) > 1 else ''} {absent}; it has "
            f"{list(map(str, data.columns[:12]))}" + ("" if id is None or id in data.columns
                                                      else "; pass the right --id or --no-id"))
    clash = [c for c in PROVENANCE_COLUMNS if c in data.columns]
    if clash:
        raise InvalidInputError(
            f"the dataset already has {clash}: it looks corrected already; apply to the original"
        )
    bad = ~verdicts["verdict"].isin([*VERDICTS, PENDING])
    if bad.any():
        raise InvalidInputError(
            f"unknown verdicts {sorted(set(verdicts['verdict'][bad].astype(str)))} in "
            f"{format_rows(verdicts['id'][bad].tolist())}"
        )
    return id


def _keyed(data: pd.DataFrame, verdicts: pd.DataFrame, id: str | None,  # noqa: A002
           ) -> tuple[pd.Series, pd.DataFrame]:
    """The dataset's ids as text, and the verdicts indexed by the same text."""
    import pandas as pd
    data_keys = _key(data[id]) if id is not None else pd.Series(
        [str(i) for i in range(len(data))], index=data.index)
    if data_keys.duplicated().any():
        raise InvalidInputError(
            f"the dataset has duplicate ids: {format_rows(data_keys[data_keys.duplicated()])}"
        )
    verdict_keys = _key(verdicts["id"])
    if verdict_keys.duplicated().any():
        raise InvalidInputError(
            f"the verdicts file has duplicate ids: "
            f"{format_rows(verdict_keys[verdict_keys.duplicated()].tolist())}"
        )
    unknown = ~verdict_keys.isin(set(data_keys))
    if unknown.any():
        raise InvalidInputError(
            f"the verdicts name ids the dataset does not have: "
            f"{format_rows(verdict_keys[unknown].tolist())}; is this the dataset that was "
            "scanned, with the same --id?" + ("" if id is not None else
                                              " (the ids here are row numbers, 0-based)")
        )
    return data_keys, verdicts.assign(_key=verdict_keys.to_numpy()).set_index("_key")


@dataclass(frozen=True)
class AppliedVerdicts:
    """What :func:`apply_verdicts_file` did: the file written, its table, the rows dropped."""

    path: Path
    corrected: pd.DataFrame
    n_dropped: int

    def to_frame(self) -> pd.DataFrame:
        """The corrected table, as written (see :func:`apply_verdicts`)."""
        return self.corrected

    def action_counts(self) -> dict[str, int]:
        """Rows per ``review_action``: relabelled, flagged, kept, confirmed, pending."""
        actions = self.corrected["review_action"].value_counts()
        return {a: int(actions.get(a, 0))
                for a in ("relabelled", "flagged", "kept", "confirmed", "pending")}

    def __str__(self) -> str:
        n = self.action_counts()
        return (f"wrote {self.path}: {n['relabelled']} relabelled, {n['flagged']} flagged, "
                f"{self.n_dropped} dropped, {n['confirmed']} confirmed, "
                f"{len(self.corrected)} rows")


def apply_verdicts_file(data: str | Path, verdicts: str | Path, out: str | Path, *,
                        label: str = "label", id: str | None = None,  # noqa: A002
                        row_numbers: bool = False,
                        non_agreement: Literal["flag", "drop", "keep"] = "flag",
                        ) -> AppliedVerdicts:
    """Read a dataset and the verdicts of ``review results``, write the corrected copy.

    The options are those of :func:`apply_verdicts`. ``out`` is written atomically (its
    suffix picks the format) and may not be one of the inputs: the dataset is never
    changed in place.

    Returns
    -------
    AppliedVerdicts
    """
    target = Path(out)
    for source in (data, verdicts):
        if target.exists() and Path(source).exists() and \
                target.resolve() == Path(source).resolve():
            raise InvalidParameterError(
                f"out {target} is an input file; apply never writes in place, choose a new file"
            )
    frame = read_table(data)
    corrected = apply_verdicts(frame, read_table(verdicts), label=label, id=id,
                               row_numbers=row_numbers, non_agreement=non_agreement)
    write_table(corrected, target)
    return AppliedVerdicts(path=target, corrected=corrected,
                           n_dropped=len(frame) - len(corrected))
