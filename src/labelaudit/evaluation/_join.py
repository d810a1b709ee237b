"""Join a scan output with a truth table by id: the known errors and the rankings to measure.

The scan output lists items with their score columns (lower = more suspect); the truth
marks which labels are wrong, either directly (an ``is_error`` column, blank for items
nobody verified) or through the correct label (a ``true_label`` column, compared with the
given label). Ids are matched as text (:func:`labelaudit.io.text_keys`, white space around
them dropped), so ``7``, ``7.0`` and ``"7"`` name the same item.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
)
from labelaudit.evaluation._label_sets import (
    check_label_set_columns,
    class_metrics,
    is_label_set_output,
    label_set_key,
    label_set_truth,
)
from labelaudit.io import LABEL_SET_TYPES, check_separator, holds_label_sets, text_keys

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ScoreDirectionWarning", "TruthJoin", "join_truth", "read_source"]

TruthFrom = Literal["is_error", "true_label"]
# The score columns labelaudit writes, by which way they point: lower = more suspect (also
# every ``score_*`` column), higher = more suspect.
LOWER_IS_SUSPECT = frozenset({"rank", "given_prob", "score", "label_quality", "label_score",
                              "dynamics_aum", "dynamics_confidence"})
HIGHER_IS_SUSPECT = frozenset({"loss"})


class ScoreDirectionWarning(LabelAuditWarning):
    """A score column that labelaudit does not write was read as lower = more suspect."""


_TRUE = {"true", "t", "yes", "y", "1", "1.0"}
_FALSE = {"false", "f", "no", "n", "0", "0.0"}


@dataclass(frozen=True)
class TruthJoin:
    """A scan output and its truth aligned item by item.

    Attributes
    ----------
    ids : list of shape (n_items,)
        Normalised ids: the scan output's, then (``partial_ranking``) the truth's others.
    is_error : ndarray of float, shape (n_items,)
        1 for a wrong label, 0 for a right one, NaN for an unverified item.
    scores : dict of str to ndarray of shape (n_items,)
        Method name to its scores (lower = more suspect); items the scan output does not
        list rank after every listed item, tied.
    truth_from : {"is_error", "true_label"}
        Which kind of truth column was read.
    n_missing_truth : int
        Ids of the scan output that the truth does not list.
    """

    ids: list[object]
    is_error: np.ndarray
    scores: dict[str, np.ndarray]
    truth_from: TruthFrom
    n_missing_truth: int
    classes: pd.DataFrame | None = None


def read_source(data: pd.DataFrame | str | Path, what: str) -> tuple[pd.DataFrame, str]:
    """A table and the name messages give it: the path as given, or ``what`` for a frame."""
    import pandas as pd
    if isinstance(data, pd.DataFrame):
        return data, what
    from labelaudit.io import read_table

    return read_table(data), str(data)


def plain(value: object) -> object:
    """A value as the user wrote it: numpy scalars as Python values, 68.0 as 68."""
    if hasattr(value, "item") and hasattr(value, "dtype"):
        value = value.item()  # type: ignore[union-attr]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _key(value: object) -> str:
    """A label as text, so that 7, 7.0 and "7" agree across file formats; a label
    set (a list) as its sorted labels joined by ``|``, so that the same set in another
    order is the same label."""
    if isinstance(value, LABEL_SET_TYPES):
        return "|".join(sorted(_key(v) for v in value))
    return str(plain(value)).strip()


def _is_missing(value: object) -> bool:
    import pandas as pd
    if isinstance(value, LABEL_SET_TYPES):
        return False  # a label set, perhaps the empty one
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def _require(frame: pd.DataFrame, columns: Sequence[str], name: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"{name}: no column {', '.join(map(repr, missing))}; it has "
            f"{', '.join(map(repr, map(str, frame.columns[:15])))}")


class _Ids:
    """Ids as the tables spell them, for messages: ``ids 68, 70`` or ``id 'item3'``."""

    def __init__(self) -> None:
        self.spelled: dict[str, object] = {}

    def keys(self, frame: pd.DataFrame, column: str, name: str) -> list[str]:
        """The normalised, unique ids of ``column``: as text, the way every table's ids
        are matched (:func:`labelaudit.io.text_keys`), white space around them dropped."""
        values = frame[column].tolist()
        blank = [i for i, v in enumerate(values) if _is_missing(v)]
        if blank:
            raise InvalidInputError(f"{name}: column {column!r} is blank in {format_rows(blank)}")
        keys = text_keys(frame[column], strip=True).tolist()
        for k, v in zip(keys, values, strict=True):
            self.spelled.setdefault(k, plain(v))
        seen: set[str] = set()
        repeated = sorted({k for k in keys if k in seen or seen.add(k)})  # type: ignore[func-returns-value]
        if repeated:
            raise InvalidInputError(
                f"{name}: duplicate ids in column {column!r}: {self.show(repeated)}; "
                "each item must appear once")
        return keys

    def show(self, keys: Sequence[str]) -> str:
        return "id" + format_rows([self.spelled.get(k, k) for k in keys])[3:]


def _truth_column(truth: pd.DataFrame, is_error: str | None, true_label: str | None,
                  name: str) -> tuple[TruthFrom, str]:
    if is_error:
        return "is_error", is_error
    if true_label:
        return "true_label", true_label
    for kind in ("is_error", "true_label"):
        if kind in truth.columns:
            return kind, kind  # type: ignore[return-value]
    raise InvalidInputError(
        f"{name}: no is_error or true_label column; name the truth column with "
        "is_error=COLUMN or true_label=COLUMN")


def _score_columns(frame: pd.DataFrame, wanted: str | Sequence[str] | None,
                   name: str) -> dict[str, str]:
    """Method name -> score column: ``score_<method>`` columns (or ``rank``) unless named."""
    if wanted:
        columns = _columns(wanted)
        _require(frame, columns, name)
    else:
        columns = [c for c in frame.columns if str(c).startswith("score_")]
        if not columns and "rank" in frame.columns:
            columns = ["rank"]
        if not columns:
            raise InvalidInputError(
                f"{name}: no score_* or rank column to evaluate; name the columns with "
                "scores=COLUMNS (lower = more suspect)")
    return {(c[len("score_"):] if c.startswith("score_") else c): c for c in columns}


def _columns(value: str | Sequence[str] | None) -> list[str]:
    """Column names given as a list or as comma-separated text."""
    if not value:
        return []
    return ([c.strip() for c in value.split(",") if c.strip()] if isinstance(value, str)
            else [str(c) for c in value])


def _reversed_columns(methods: dict[str, str],
                      higher_is_suspect: str | Sequence[str] | None) -> set[str]:
    """The score columns where higher = more suspect (turned round to be measured):
    those named in ``higher_is_suspect``, and labelaudit's own (:data:`HIGHER_IS_SUSPECT`);
    a column labelaudit does not write is read as lower = more suspect, with a
    :class:`ScoreDirectionWarning`."""
    named = _columns(higher_is_suspect)
    columns = list(methods.values())
    unknown = [c for c in named if c not in columns]
    if unknown:
        raise InvalidParameterError(
            f"higher_is_suspect={','.join(unknown)} names no score column evaluated "
            f"({', '.join(columns)}); name the columns of scores= whose higher values are "
            "more suspect", param=("higher_is_suspect", "scores"))
    others = [c for c in columns if c not in named and c not in LOWER_IS_SUSPECT
              and c not in HIGHER_IS_SUSPECT and not str(c).startswith("score_")]
    if others:
        warnings.warn(ScoreDirectionWarning(
            f"scores={','.join(others)}: not one of labelaudit's score columns, so read as "
            "lower = more suspect; if higher values are more suspect, pass "
            f"higher_is_suspect={','.join(others)}"), stacklevel=4)
    return set(named) | {c for c in columns if c in HIGHER_IS_SUSPECT}


def _flags(values: list[object], ids: list[str], column: str, name: str,
           spelled: _Ids) -> np.ndarray:
    """``is_error`` values as 1/0/NaN: true/false, yes/no, 1/0, blank for unverified."""
    out = np.full(len(values), np.nan)
    bad = []
    for i, value in enumerate(values):
        text = "" if _is_missing(value) else str(value).strip().lower()
        if isinstance(value, bool) or text in _TRUE | _FALSE:
            out[i] = 1.0 if (value is True or text in _TRUE) else 0.0
        elif text:
            bad.append(ids[i])
    if bad:
        raise InvalidInputError(
            f"{name}: column {column!r} must be true/false (or 1/0, blank for unverified); "
            f"other values at {spelled.show(bad)}")
    return out


def _examples(values: list[object], limit: int = 3) -> str:
    """The first distinct values and their Python types: ``0, 1; int``."""
    distinct = list({repr(v): v for v in (
        [str(x) for x in v] if isinstance(v, LABEL_SET_TYPES) else plain(v)
        for v in values)}.values())
    shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in distinct[:limit])
    kinds = " and ".join(sorted({type(v).__name__ for v in distinct}))
    return shown + (", ..." if len(distinct) > limit else "") + f"; {kinds}"


@dataclass(frozen=True)
class _Tables:
    """The two tables, their names for messages and the aligned ids."""

    issues: pd.DataFrame
    truth: pd.DataFrame
    issues_name: str
    truth_name: str
    ids: list[str]
    n_listed: int  # the first n_listed ids are the scan output's rows, in order
    truth_row: dict[str, int]
    spelled: _Ids


def _label_sep(issues: pd.DataFrame, truth: pd.DataFrame, label: str, column: str,
               label_sep: str | None) -> str | None:
    """The separator of label sets written as text when the labels compared are label sets
    (``label_sep`` given, a multi-label scan's output, or a column of lists): ``label_sep``,
    else ``|`` as the scan writes them; None for single labels."""
    if label_sep is not None:
        return check_separator(label_sep)
    sets = (is_label_set_output(issues) or holds_label_sets(issues[label])
            or holds_label_sets(truth[column]))
    return "|" if sets else None


def _errors_from_labels(t: _Tables, column: str, label: str, sep: str | None) -> np.ndarray:
    """1 where the given label differs from the true one, NaN where the truth is blank.

    With ``sep``, labels are label sets, compared as sets (:func:`label_set_key`: in any
    order, lists or text joined by ``sep``); a blank cell of text is then the empty set,
    and only a missing value in a column of lists is blank."""
    true = t.truth[column].tolist()
    pairs: list[tuple[int, object, object]] = []  # (position, given label, true label)
    if t.n_listed < len(t.ids) and label not in t.truth.columns:
        raise InvalidInputError(
            f"partial_ranking=True with true_label={column!r} needs the given label of "
            f"unlisted items: add a {label!r} column to {t.truth_name}")

    def blank_in(values: pd.Series):  # how a column of these labels says "no label"
        return _is_missing if sep is None or label_set_truth(values) else (lambda _: False)

    true_blank = blank_in(t.truth[column])
    for i, k in enumerate(t.ids):
        row = t.truth_row.get(k)
        if row is None or true_blank(true[row]):
            continue
        given = t.issues[label].iat[i] if i < t.n_listed else t.truth[label].iat[row]
        pairs.append((i, given, true[row]))
    given_blank = blank_in(t.issues[label])
    unlisted_blank = blank_in(t.truth[label]) if t.n_listed < len(t.ids) else given_blank
    blank = [i for i, given, _ in pairs
             if (given_blank if i < t.n_listed else unlisted_blank)(given)]
    if blank:
        listed = blank[0] < t.n_listed  # blank in the scan output, else in the truth
        same = [t.ids[i] for i in blank if (i < t.n_listed) == listed]
        raise InvalidInputError(
            f"{t.issues_name if listed else t.truth_name}: column {label!r} is blank at "
            f"{t.spelled.show(same)}; every verified item needs its given label")

    def key(value: object) -> object:
        return _key(value) if sep is None else label_set_key(value, sep)

    def names(keys: set) -> set:  # the labels, or with label sets the classes
        return keys if sep is None else {n for each in keys for n in each}

    given_keys, true_keys = {key(g) for _, g, _ in pairs}, {key(v) for _, _, v in pairs}
    if pairs and names(given_keys) and names(true_keys) and not (
            names(given_keys) & names(true_keys)):
        raise InvalidInputError(
            f"the given labels (label={label!r} of {t.issues_name}: "
            f"{_examples([g for _, g, _ in pairs])}) and the true labels "
            f"(true_label={column!r} of {t.truth_name}: {_examples([v for _, _, v in pairs])}) "
            "share no value, so every item would count as an error; write both columns with "
            "the same label values (both class names or both class numbers)")
    out = np.full(len(t.ids), np.nan)
    for i, given, true_value in pairs:
        out[i] = float(key(given) != key(true_value))
    return out


def _scores(t: _Tables, methods: dict[str, str], higher: set[str]) -> dict[str, np.ndarray]:
    """Each method's scores, lower = more suspect (the columns in ``higher`` negated)."""
    scores = {}
    for method, column in methods.items():
        try:
            values = t.issues[column].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"{t.issues_name}: score column {column!r} is not numeric") from None
        blank = np.flatnonzero(~np.isfinite(values))
        if blank.size:
            raise InvalidInputError(
                f"{t.issues_name}: score column {column!r} is blank or not finite at "
                f"{t.spelled.show([t.ids[i] for i in blank])}")
        if column in higher:
            values = -values
        last = values.max() + 1.0 if values.size else 0.0
        scores[method] = np.r_[values, np.full(len(t.ids) - t.n_listed, last)]
    return scores


def _align(issues: pd.DataFrame, truth: pd.DataFrame, names: tuple[str, str], id: str,
           unknown: object, partial_ranking: bool) -> tuple[_Tables, int]:
    """Match the ids; returns the aligned tables and how many scan ids the truth lacks."""
    spelled = _Ids()
    issue_keys = spelled.keys(issues, id, names[0])
    truth_keys = spelled.keys(truth, id, names[1])
    truth_row = {k: i for i, k in enumerate(truth_keys)}
    listed = set(issue_keys)
    if not any(k in truth_row for k in issue_keys):
        raise InvalidInputError(
            f"no id of {names[0]} is in {names[1]} (column {id!r}); check the id column "
            f"(id={id!r}) and that both tables describe the same items")
    only_issues = [k for k in issue_keys if k not in truth_row]
    only_truth = [k for k in truth_keys if k not in listed]
    if only_issues and unknown is None:
        raise InvalidInputError(
            f"{len(only_issues)} ids of {names[0]} are not in {names[1]}: "
            f"{spelled.show(only_issues)}; pass unknown='exclude' or unknown='clean' to treat "
            "them as unverified")
    if only_truth and not partial_ranking:
        raise InvalidInputError(
            f"{len(only_truth)} ids of {names[1]} are not in {names[0]}: "
            f"{spelled.show(only_truth)}; pass partial_ranking=True if the scan output lists "
            "only its most suspect items")
    tables = _Tables(issues, truth, names[0], names[1], issue_keys + only_truth,
                     len(issue_keys), truth_row, spelled)
    return tables, len(only_issues)


def join_truth(issues: pd.DataFrame | str | Path, truth: pd.DataFrame | str | Path, *,
               id: str = "id", is_error: str | None = None, true_label: str | None = None,
               label: str = "label", scores: str | Sequence[str] | None = None,
               higher_is_suspect: str | Sequence[str] | None = None,
               label_sep: str | None = None, unknown: object = None,
               partial_ranking: bool = False) -> TruthJoin:
    """Align a scan output with its truth by id (see :func:`labelaudit.evaluation.evaluate`).

    Examples
    --------
    >>> issues = pd.DataFrame({"id": [1, 2, 3], "score_loss": [0.1, 0.5, 0.9]})
    >>> truth = pd.DataFrame({"id": ["3", "2", "1"], "is_error": ["no", "no", "yes"]})
    >>> joined = join_truth(issues, truth)
    >>> joined.ids, joined.is_error.tolist(), list(joined.scores)
    (['1', '2', '3'], [1.0, 0.0, 0.0], ['loss'])
    """
    issues_frame, issues_name = read_source(issues, "issues")
    truth_frame, truth_name = read_source(truth, "truth")
    _require(issues_frame, [id], issues_name)
    _require(truth_frame, [id], truth_name)
    kind, column = _truth_column(truth_frame, is_error, true_label, truth_name)
    _require(truth_frame, [column], truth_name)
    if kind == "true_label":
        _require(issues_frame, [label], issues_name)
    methods = _score_columns(issues_frame, scores, issues_name)
    higher = _reversed_columns(methods, higher_is_suspect)
    t, n_missing = _align(issues_frame, truth_frame, (issues_name, truth_name), id, unknown,
                          partial_ranking)
    sep = None
    if kind == "is_error":
        values = truth_frame[column].tolist()
        raw = [values[t.truth_row[k]] if k in t.truth_row else None for k in t.ids]
        errors = _flags(raw, t.ids, column, truth_name, t.spelled)
    else:
        sep = _label_sep(issues_frame, truth_frame, label, column, label_sep)
        if sep is not None:
            check_label_set_columns(issues_frame, (label, "missing", "extra"), id=id, sep=sep,
                                    where=issues_name)
            check_label_set_columns(truth_frame, (column, label), id=id, sep=sep,
                                    where=truth_name)
        errors = _errors_from_labels(t, column, label, sep)
    classes = (class_metrics(issues_frame, truth_frame, id=id, label=label, true_label=column,
                             sep=sep or "|") if kind == "true_label" else None)
    return TruthJoin(ids=list(t.ids), is_error=errors, scores=_scores(t, methods, higher),
                     truth_from=kind, n_missing_truth=n_missing, classes=classes)
