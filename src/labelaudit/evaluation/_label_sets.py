"""Class-level metrics of a multi-label scan: for each class, how many of the items whose
membership the correction changed the scan named as missing or extra."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelaudit.io import (
    LABEL_SET_TYPES,
    check_label_set_members,
    holds_label_sets,
    label_set_names,
    text_keys,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["check_label_set_columns", "class_metrics", "is_label_set_output", "label_set_key",
           "label_set_truth"]

# The columns of a multi-label scan's output (LabelSetScanResult.to_frame) besides the id.
_OUTPUT_SETS = ("label", "suggested_label", "missing", "extra")


def is_label_set_output(frame: pd.DataFrame) -> bool:
    """Whether a table is a multi-label scan's output: its label columns hold label sets
    (lists, or text joined by a separator, ``|`` unless the scan was given another)."""
    return set(_OUTPUT_SETS) <= set(frame.columns)


def label_set_key(value: object, sep: str) -> frozenset[str]:
    """One label set as compared everywhere: its labels as text, white space trimmed, in no
    order, whatever the format (a list, or text joined by ``sep``); a blank cell of text is
    the empty set.

    Examples
    --------
    >>> label_set_key("tech|politics", "|") == label_set_key(["politics", " tech"], "|")
    True
    >>> label_set_key(float("nan"), "|")
    frozenset()
    """
    return frozenset(n for n in (str(v).strip() for v in label_set_names(value, sep)) if n)


def label_set_truth(values: pd.Series) -> bool:
    """Whether a missing value in this column of label sets is an unverified item (a column
    of lists, where the empty set is an empty list) rather than the empty set (text, where
    an empty set is a blank cell)."""
    return holds_label_sets(values)


def check_label_set_columns(frame: pd.DataFrame, columns: tuple[str, ...], *, id: str,  # noqa: A002
                            sep: str, where: str) -> None:
    """Refuse a label set in ``columns`` (those ``frame`` has) holding a null or blank
    member, which would otherwise be compared as a class named ``"None"``: io's one rule
    (:func:`labelaudit.io.check_label_set_members`), naming ``where`` and the items."""
    ids = frame[id].to_numpy(dtype=object)
    for column in dict.fromkeys(columns):
        if column in frame.columns:
            check_label_set_members(frame[column], column=column, ids=ids, sep=sep,
                                    where=where)


def _labels(value: object, sep: str) -> set[str]:
    return set(label_set_key(value, sep))


def class_metrics(issues: pd.DataFrame, truth: pd.DataFrame, *, id: str,  # noqa: A002
                  label: str, true_label: str, sep: str = "|") -> pd.DataFrame | None:
    """Per class, over the items both tables list with a true set: ``changed`` (items
    whose given and true sets differ on the class), ``named`` (items whose ``missing`` or
    ``extra`` names it), ``hits`` (both), ``precision`` and ``recall``; a last row ``all``
    counts every (item, class) pair. None when ``issues`` is not a multi-label scan output
    (no ``missing`` and ``extra`` columns). Sets are lists, or text joined by ``sep``; a
    set holding a null or blank member is refused (:func:`check_label_set_columns`). Ids
    are matched as text, as the item-level join matches them
    (:func:`labelaudit.io.text_keys`: ``7`` and ``7.0`` are one item).

    Examples
    --------
    >>> issues = pd.DataFrame({"id": [1, 2], "label": [["a"], ["b"]],
    ...                        "missing": [["b"], []], "extra": [[], []]})
    >>> truth = pd.DataFrame({"id": [1, 2], "true": [["a", "b"], ["a"]]})
    >>> class_metrics(issues, truth, id="id", label="label", true_label="true").to_dict("list")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'class': ['a', 'b', 'all'], 'changed': [1, 2, 3], 'named': [0, 1, 1], 'hits': [0, 1, 1],
     'precision': [nan, 1.0, 1.0], 'recall': [0.0, 0.5, 0.3333333333333333]}
    """
    import pandas as pd
    if not {"missing", "extra", label, id} <= set(issues.columns):
        return None
    check_label_set_columns(issues, (label, "missing", "extra"), id=id, sep=sep,
                            where="issues")
    check_label_set_columns(truth, (true_label,), id=id, sep=sep, where="truth")
    lists = label_set_truth(truth[true_label])
    true = {k: v for k, v in zip(text_keys(truth[id], strip=True), truth[true_label],
                                 strict=True)
            if isinstance(v, LABEL_SET_TYPES) or not lists or not pd.isna(v)}
    counts: dict[str, list[int]] = {}
    for key, given, missing, extra in zip(text_keys(issues[id], strip=True), issues[label],
                                          issues["missing"], issues["extra"], strict=True):
        if key not in true:
            continue
        given_set, true_set = _labels(given, sep), _labels(true[key], sep)
        named = _labels(missing, sep) | _labels(extra, sep)
        for name in given_set | true_set | named:
            row = counts.setdefault(name, [0, 0, 0])
            changed = (name in given_set) != (name in true_set)
            row[0] += changed
            row[1] += name in named
            row[2] += changed and name in named
    names = sorted(counts)
    table = np.array([counts[n] for n in names] or np.zeros((0, 3)), dtype=int).reshape(-1, 3)
    table = np.vstack([table, table.sum(axis=0)])
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({"class": [*names, "all"], "changed": table[:, 0].tolist(),
                             "named": table[:, 1].tolist(), "hits": table[:, 2].tolist(),
                             "precision": (table[:, 2] / table[:, 1]).tolist(),
                             "recall": (table[:, 2] / table[:, 0]).tolist()})
