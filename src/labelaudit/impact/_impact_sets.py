"""The sets of seed 003, section 6 (benign B, correctable C, unknown U), read from a
corrected table, and model predictions aligned with it by id."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
    plain_value,
)
from labelaudit.io import (
    PROBABILITY_SUM_TOLERANCE,
    check_label_values,
    read_table,
    require_columns,
    text_keys,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ImpactSets", "PendingVerdictWarning", "align_predictions", "impact_sets"]

BENIGN, CORRECTABLE, UNKNOWN = 0, 1, 2
VERDICT_WORDS = ("Correctable", "Non-Agreement", "Non-Error", "Pending")
_TRUE = {"true", "1", "yes", "y", "t", "1.0"}
_FALSE = {"false", "0", "no", "n", "f", "0.0", "", "nan", "none"}
_LABEL_COLUMNS = ("predicted_label", "prediction", "pred", "predicted", "label")
_PROB_PREFIXES = ("prob_", "proba_", "p_", "score_")


class PendingVerdictWarning(LabelAuditWarning):
    """Flagged items still waiting for a verdict: counted as unknown (U)."""


@dataclass(frozen=True)
class ImpactSets:
    """A corrected table reduced to what the impact measures need.

    ``ids``, ``original`` and ``corrected`` are text (see :func:`text_keys`); ``sets`` holds
    0 (benign B), 1 (correctable C) or 2 (unknown U) per item.
    """

    ids: np.ndarray
    original: np.ndarray
    corrected: np.ndarray
    sets: np.ndarray
    label_set: tuple[str, ...]


def _flags(values: pd.Series, column: str) -> np.ndarray:
    """A flagged column (booleans, 0/1, true/false, yes/no; blank is false) as booleans."""
    import pandas as pd
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.to_numpy(dtype=bool)
    words = pd.Series(text_keys(values)).str.strip().str.lower()
    bad = ~words.isin(_TRUE | _FALSE)
    if bad.any():
        raise InvalidInputError(
            f"column {column!r} is not true/false: {sorted(set(words[bad]))[:5]} in "
            f"{format_rows(np.flatnonzero(bad.to_numpy()))}; use true/false or 1/0")
    return words.isin(_TRUE).to_numpy()


def _resolve_columns(frame: pd.DataFrame, label: str | None, corrected_label: str | None,
                     flagged: str | None, verdict: str | None,
                     ) -> tuple[str, str, str | None, str | None]:
    """Columns by the rule: a ``review apply`` output is recognised by its provenance
    columns; a plain table defaults to ``label``, ``corrected``, ``flagged``, ``verdict``."""
    applied = {"review_original_label", "review_verdict"} <= set(frame.columns)
    if applied:
        label = label or "review_original_label"
        corrected_label = corrected_label or "label"
        verdict = verdict or "review_verdict"
    else:
        label = label or "label"
        corrected_label = corrected_label or "corrected"
        if verdict is None and "verdict" in frame.columns:
            verdict = "verdict"
        if flagged is None and "flagged" in frame.columns:
            flagged = "flagged"
    if flagged is None and verdict is None:
        raise InvalidInputError(
            "cannot tell which items were flagged: the table has neither a 'flagged' nor a "
            "'verdict' column; name one with flagged=... or verdict=...")
    require_columns(frame, [c for c in (label, corrected_label, flagged, verdict) if c])
    return label, corrected_label, flagged, verdict


def impact_sets(frame: pd.DataFrame, *, id: str = "id",  # noqa: A002 - mirrors the CLI flag
                label: str | None = None, corrected_label: str | None = None,
                flagged: str | None = None, verdict: str | None = None,
                ) -> tuple[ImpactSets, int]:
    """Split a corrected table into B, C and U; returns the sets and the number of
    Pending (or flagged but unreviewed) items, which are counted in U."""
    import pandas as pd
    if len(frame) == 0:
        raise InvalidInputError("the corrected table has no rows")
    label, corrected_label, flagged, verdict = _resolve_columns(
        frame, label, corrected_label, flagged, verdict)
    require_columns(frame, [id])
    ids = text_keys(frame[id])
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        raise InvalidInputError(f"the corrected table has duplicate ids: "
                                f"{format_rows(ids[dup])}")
    for column in (label, corrected_label):
        check_label_values(frame[column], column=column, ids=ids)
    original = text_keys(frame[label])
    if (original == "").any():
        raise InvalidInputError(f"column {label!r} has missing labels in "
                                f"{format_rows(ids[original == ''])}")
    corrected = text_keys(frame[corrected_label])
    words = (text_keys(frame[verdict]) if verdict else np.full(len(frame), "", dtype=object))
    words = np.array([w.strip() for w in words], dtype=object)
    is_flagged = _flags(frame[flagged], flagged) if flagged else words != ""
    unknown_words = is_flagged & (words != "") & ~np.isin(words, VERDICT_WORDS)
    if unknown_words.any():
        raise InvalidInputError(
            f"column {verdict!r} has verdicts it does not know: "
            f"{sorted(set(words[unknown_words]))[:5]} in {format_rows(ids[unknown_words])}; "
            f"use {', '.join(VERDICT_WORDS)}")
    if not is_flagged.any():
        raise InvalidInputError(
            "no flagged items: every item is benign, so there is nothing to measure; give "
            "the table `review apply` writes, or name the flagged/verdict columns")
    differs = (corrected != "") & (corrected != original)
    if verdict:
        pending = is_flagged & np.isin(words, ("Pending", ""))
        correctable = is_flagged & (words == "Correctable") & differs
        benign = ~is_flagged | (words == "Non-Error")
    else:  # no verdicts: the corrected label says it all, blank is not reviewed yet
        pending = is_flagged & (corrected == "")
        correctable = is_flagged & differs
        benign = ~is_flagged | (is_flagged & (corrected == original))
    sets = np.full(len(frame), UNKNOWN, dtype=np.int8)
    sets[benign] = BENIGN
    sets[correctable] = CORRECTABLE
    corrected = np.where(sets == CORRECTABLE, corrected, original)
    label_set = tuple(sorted(set(original.tolist()) | set(corrected.tolist())))
    return ImpactSets(ids, original, corrected, sets, label_set), int(pending.sum())


def _check_probabilities(frame: pd.DataFrame, columns: list, id: str,  # noqa: A002
                         name: str) -> np.ndarray:
    """The probability columns as numbers; NaN, infinite, negative or above-1 values,
    and rows that do not sum to 1 (within :data:`PROBABILITY_SUM_TOLERANCE`), are refused, naming
    the first bad row."""
    try:
        probs = frame[columns].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"predictions {name}: the probability columns "
                                f"{list(map(str, columns))[:5]} are not all numbers") from None
    finite = np.isfinite(probs)
    sums = np.where(finite, probs, 0.0).sum(axis=1)
    bad = ~finite.all(axis=1) | (np.where(finite, probs, 0.0) < 0).any(axis=1) \
        | (np.where(finite, probs, 0.0) > 1 + 1e-6).any(axis=1) \
        | (np.abs(sums - 1.0) > PROBABILITY_SUM_TOLERANCE)
    if bad.any():
        rows = np.flatnonzero(bad)
        first = int(rows[0])
        what = ("a missing or infinite probability" if not finite[first].all()
                else "a negative probability" if (probs[first] < 0).any()
                else "a probability above 1" if (probs[first] > 1 + 1e-6).any()
                else f"probabilities summing to {sums[first]:.4g}, not 1 (within "
                f"{PROBABILITY_SUM_TOLERANCE:g})")
        values = ", ".join(f"{c}={v:g}" for c, v in zip(columns, probs[first], strict=True))
        more = f" ({len(rows) - 1} more rows too)" if len(rows) > 1 else ""
        key = plain_value(frame[id].iloc[first])
        raise InvalidInputError(
            f"predictions {name}: row {first} (0-based; id {key!r}) has "
            f"{what} ({values[:200]}){more}; give probabilities in [0, 1] (softmax outputs, "
            "not logits) for every class, or a predicted-label column")
    return probs


def _predicted_labels(frame: pd.DataFrame, id: str, label_set: tuple[str, ...],  # noqa: A002
                      name: str) -> np.ndarray:
    """Predicted labels from one prediction table: a label column, or one probability
    column per class (named by the class, optionally ``prob_<class>``), argmax taken."""
    others = [c for c in frame.columns if c != id]
    chosen = next((c for c in _LABEL_COLUMNS if c in others), None)
    if chosen is None and len(others) == 1:
        chosen = others[0]
    if chosen is not None:
        return text_keys(frame[chosen])
    classes = []
    for column in map(str, others):
        for prefix in _PROB_PREFIXES:
            if column.startswith(prefix) and column[len(prefix):] in label_set:
                column = column[len(prefix):]
        classes.append(column)
    unknown = [c for c in classes if c not in label_set]
    if unknown or not classes:
        raise InvalidInputError(
            f"predictions {name}: expected {id!r} and a predicted-label column "
            f"({', '.join(_LABEL_COLUMNS)}) or one probability column per class; columns "
            f"{unknown[:5]} are not classes of the label set {list(label_set)[:10]}")
    probs = _check_probabilities(frame, others, id, name)
    return np.asarray(classes, dtype=object)[np.argmax(probs, axis=1)]


def _count(n: int, noun: str) -> str:
    """``3 ids have`` / ``1 id has``; ``1 predicted id is`` / ``2 predicted ids are``."""
    verb = ("is", "are") if noun.startswith("predicted") else ("has", "have")
    return f"{n} {noun} {verb[0]}" if n == 1 else f"{n} {noun}s {verb[1]}"


def align_predictions(
    sets: ImpactSets,
    predictions: Mapping[str, pd.DataFrame | str | Path],
    *,
    id: str = "id",  # noqa: A002 - mirrors the CLI flag
) -> tuple[tuple[str, ...], np.ndarray]:
    """Predicted labels of every model, in the corrected table's row order.

    Returns ``(names, predicted)`` with ``predicted`` of shape (n_models, n_samples), text.
    """
    import pandas as pd
    if not predictions:
        raise InvalidParameterError("predictions is empty: give at least one model")
    index = pd.Index(sets.ids)
    known = np.asarray(sets.label_set, dtype=object)
    rows = []
    for name, source in predictions.items():
        frame = source if isinstance(source, pd.DataFrame) else read_table(source)
        if id not in frame.columns:
            raise InvalidInputError(f"predictions {name!r} have no id column {id!r}; their "
                                    f"columns are {list(map(str, frame.columns[:12]))}")
        keys = text_keys(frame[id])
        where = repr(name) if isinstance(source, pd.DataFrame) else f"{name!r} ({source})"
        labels = _predicted_labels(frame, id, sets.label_set, where)
        position = index.get_indexer(keys)
        extra = keys[position < 0]
        covered = np.zeros(len(index), dtype=bool)
        covered[position[position >= 0]] = True
        missing = sets.ids[~covered]
        if len(extra) or len(missing) or len(keys) != len(index):
            raise InvalidInputError(
                f"predictions {name!r} do not match the data's ids: "
                + "; ".join(part for part in (
                    f"{_count(len(missing), 'id')} no prediction "
                    f"({format_rows(missing)})" if len(missing) else "",
                    f"{_count(len(extra), 'predicted id')} not in the data "
                    f"({format_rows(extra)})" if len(extra) else "",
                    "some ids are predicted twice"
                    if pd.Series(keys).duplicated().any() else "") if part)
                + f"; predict every item of the corrected table, keyed by {id!r}")
        outside = ~np.isin(labels, known)
        if outside.any():
            raise InvalidInputError(
                f"predictions {name!r} have labels outside the label set "
                f"{list(sets.label_set)[:10]}: {sorted(set(labels[outside]))[:5]} for ids "
                f"{format_rows(keys[outside]).removeprefix('rows ').removeprefix('row ')}")
        aligned = np.empty(len(index), dtype=object)
        aligned[position] = labels
        rows.append(aligned)
    return tuple(map(str, predictions)), np.vstack(rows)
