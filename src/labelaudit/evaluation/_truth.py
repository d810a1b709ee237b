"""Validate the truth (``is_error``) and a ranking (``scores``) given to a detection metric."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._validation import check_choice, check_int, shown

__all__ = [
    "Unknown",
    "Truth",
    "check_truth",
    "check_both_classes",
    "check_k",
    "check_n_errors",
    "rank_from_ids",
    "shown",
]

Unknown = Literal["exclude", "clean"]
_UNKNOWN_VALUES = ("exclude", "clean")


@dataclass(frozen=True)
class Truth:
    """A validated ranking problem: boolean truth and finite scores, NaN items resolved."""

    is_error: np.ndarray  # bool, (n_items,)
    scores: np.ndarray  # float, (n_items,), lower = more suspect
    n_unknown: int
    unknown: Unknown | None

    @property
    def n_items(self) -> int:
        return int(self.is_error.size)

    @property
    def n_errors(self) -> int:
        return int(self.is_error.sum())


def _truth_as_float(is_error: ArrayLike) -> np.ndarray:
    """Return ``is_error`` as floats 0/1/NaN, or raise naming the offending rows."""
    import pandas as pd
    if isinstance(is_error, (str, bytes)) or np.ndim(is_error) != 1:
        raise InvalidInputError(
            f"is_error must be a 1-d array of booleans, got {type(is_error).__name__} "
            f"with {np.ndim(is_error)} dimensions"
        )
    raw = np.asarray(is_error)
    if raw.dtype.kind in "biuf":  # fast path: bool, int or float arrays
        values = raw.astype(float)
    else:
        objects = np.asarray(is_error, dtype=object)
        values = np.full(objects.size, np.nan)
        for i, value in enumerate(objects):
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
                continue
            if isinstance(value, (bool, np.bool_, numbers.Real)):
                values[i] = float(value)
            else:
                values[i] = 0.5  # rejected below
    bad = ~(np.isnan(values) | (values == 0.0) | (values == 1.0))
    if bad.any():
        raise InvalidInputError(
            "is_error must hold True/False (or 1/0, NaN for unverified items); found other "
            f"values in {format_rows(np.flatnonzero(bad))}"
        )
    return values


def check_unknown(unknown: object) -> Unknown | None:
    """Validate the ``unknown`` option."""
    if unknown is None:
        return None
    return check_choice(unknown, "unknown", _UNKNOWN_VALUES)  # type: ignore[return-value]


def check_truth(
    is_error: ArrayLike,
    scores: ArrayLike | None = None,
    *,
    unknown: object = None,
    name: str = "scores",
) -> Truth:
    """Validate ``is_error`` (and ``scores``), resolving NaN truth by ``unknown``.

    ``is_error`` is boolean, 0/1, or float with NaN (or None) for unverified items. When any
    item is unverified, ``unknown`` must say what to do with it: ``"exclude"`` drops it from
    the ranking, ``"clean"`` counts it as a correctly labelled item.
    """
    unknown = check_unknown(unknown)
    truth = _truth_as_float(is_error)
    n = truth.size
    if scores is None:
        values = np.zeros(n)
    else:
        try:
            values = np.asarray(scores, dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(f"{name} must be numbers (lower = more suspect)") from None
        if values.ndim != 1:
            raise InvalidInputError(f"{name} must be one-dimensional, got shape {values.shape}")
        if values.size != n:
            raise InvalidInputError(
                f"is_error has {n} items but {name} has {values.size}; they must be aligned"
            )
        bad = ~np.isfinite(values)
        if bad.any():
            raise InvalidInputError(
                f"{name} must be finite; NaN or infinite values in "
                f"{format_rows(np.flatnonzero(bad))}"
            )
    missing = np.isnan(truth)
    n_unknown = int(missing.sum())
    if n_unknown:
        if unknown is None:
            raise InvalidParameterError(
                f"is_error is NaN (unverified) for {n_unknown} of {n} items "
                f"({format_rows(np.flatnonzero(missing))}); pass unknown='exclude' to leave them "
                "out or unknown='clean' to count them as clean"
            )
        if unknown == "exclude":
            truth, values = truth[~missing], values[~missing]
        else:
            truth = np.where(missing, 0.0, truth)
    if truth.size == 0:
        raise InvalidInputError("no verified items to evaluate")
    return Truth(is_error=truth.astype(bool), scores=values, n_unknown=n_unknown, unknown=unknown)


def check_both_classes(truth: Truth, lead: str) -> None:
    """Raise unless the truth has both errors and clean items.

    The message is ``lead`` followed by what is missing, e.g. ``"ROC AUC is undefined:"``.
    """
    if truth.n_errors == 0 or truth.n_errors == truth.n_items:
        kind = "no errors" if truth.n_errors == 0 else "no clean items"
        raise InvalidInputError(f"{lead} the truth has {kind} among its {truth.n_items} items")


def check_k(k: object, *, name: str = "k") -> int:
    """Validate a positive integer cut-off (:func:`labelaudit._validation.check_int`, worded
    as the metrics have always said it)."""
    try:
        return check_int(k, name, minimum=1)
    except InvalidParameterError:
        raise InvalidParameterError(f"{name} must be a positive integer, got {shown(k)}") from None


def check_n_errors(n_errors: object, observed: int) -> int | None:
    """Validate an estimated total number of errors (None keeps the observed count)."""
    if n_errors is None:
        return None
    n_errors = check_k(n_errors, name="n_errors")
    if n_errors < observed:
        raise InvalidParameterError(
            f"n_errors ({n_errors}) is smaller than the {observed} errors marked in is_error"
        )
    return n_errors


def rank_from_ids(ranked_ids: Sequence[object], all_ids: Sequence[object]) -> np.ndarray:
    """Turn a ranked list of ids into scores aligned with ``all_ids`` (lower = more suspect).

    The i-th id of ``ranked_ids`` gets score ``i``; every id of ``all_ids`` that is not
    ranked gets ``len(ranked_ids)``, so the unranked items tie after all ranked ones (and
    the metrics treat them as one tie group, see :func:`precision_at_k`).

    Parameters
    ----------
    ranked_ids : sequence of shape (n_ranked,)
        Ids in order of suspicion, most suspect first (e.g. a detector's flagged list).
    all_ids : sequence of shape (n_items,)
        Every item's id, in the order of ``is_error``.

    Returns
    -------
    scores : ndarray of shape (n_items,)

    Examples
    --------
    >>> rank_from_ids(["c", "a"], ["a", "b", "c", "d"]).tolist()
    [1.0, 2.0, 0.0, 2.0]
    """
    all_list = list(all_ids)
    ranked_list = list(ranked_ids)
    position: dict[object, int] = {}
    duplicated = []
    for i, item in enumerate(all_list):
        if item in position:
            duplicated.append(item)
        position[item] = i
    if duplicated:
        raise InvalidInputError(f"all_ids has duplicate ids: {format_rows(duplicated)}")
    seen: set[object] = set()
    repeated = [r for r in ranked_list if r in seen or seen.add(r)]  # type: ignore[func-returns-value]
    if repeated:
        raise InvalidInputError(f"ranked_ids lists some ids twice: {format_rows(repeated)}")
    unknown_ids = [r for r in ranked_list if r not in position]
    if unknown_ids:
        raise InvalidInputError(
            f"ranked_ids has ids that are not in all_ids: {format_rows(unknown_ids)}"
        )
    scores = np.full(len(all_list), float(len(ranked_list)))
    for rank, item in enumerate(ranked_list):
        scores[position[item]] = float(rank)
    return scores
