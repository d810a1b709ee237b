"""Reading what ``scan`` ranks: the data (and a split to score), the user's probabilities and
the annotators' votes, all checked before any model work."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeAlias

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.io import (
    CLASS_NAMES,
    TextDataset,
    align_pred_probs,
    prepare_text_dataset,
    read_data,
    read_pred_probs,
    require_columns,
    warn_overlap,
)
from labelaudit.scanning._options import id_column

if TYPE_CHECKING:  # pragma: no cover
    import datasets
    import pandas as pd

    Data: TypeAlias = pd.DataFrame | str | Path | datasets.Dataset | datasets.DatasetDict
    Probs: TypeAlias = np.ndarray | pd.DataFrame | str | Path

__all__ = ["Inputs", "SCORE_SPLIT_WHY", "extra_columns", "read_inputs"]

# Why ``score`` must be other items than ``data``, the end of the refusal and the warning.
SCORE_SPLIT_WHY = ("the scored items are ranked by models fitted on all of the data, so "
                   "those in both look right by construction; give a split of other items, "
                   "or drop score= to cross-fit the data")


def extra_columns(frame: pd.DataFrame, used: list[str | None]) -> pd.DataFrame | None:
    """The input's columns scan does not read, aligned with its items (None if none)."""
    rest = frame.drop(columns=[c for c in dict.fromkeys(used) if c is not None])
    return rest.reset_index(drop=True) if len(rest.columns) else None


class Inputs(NamedTuple):
    train: TextDataset
    target: TextDataset | None  # the scored split; None: cross-fit
    votes: np.ndarray | None  # the annotators' votes of the scored items
    frame: pd.DataFrame  # the scored table
    id_column: str | None  # its id column
    probs: np.ndarray | None  # the user's pred_probs, columns in train.classes order


def read_inputs(
    data: Data, score: Data | None, *, text: str, label: str, text_pair: str | None,
    id: str | None, annotations: str | None, split: str | None,  # noqa: A002
    pred_probs: Probs | None, classes: Sequence[object] | None,
) -> Inputs:
    """The data, the user's probabilities and the annotators' votes, all checked before
    any model work."""
    from labelaudit.detect import annotation_matrix

    scored_frame = train_frame = read_data(data, split=split)
    train = prepare_text_dataset(train_frame, text=text, label=label, text_pair=text_pair,
                                 id=id_column(train_frame, id))
    target = probs = None
    if score is not None:
        scored_frame = read_data(score, what="score")
        target = prepare_text_dataset(scored_frame, text=text, label=label,
                                      text_pair=text_pair, id=id_column(scored_frame, id),
                                      classes=train.classes, min_classes=1)
        warn_overlap(("training", train.item_keys()), ("scored", target.item_keys()),
                     why=SCORE_SPLIT_WHY)
    if pred_probs is not None:
        path = isinstance(pred_probs, (str, Path))
        given = (read_pred_probs(pred_probs) if isinstance(pred_probs, (str, Path))
                 else pred_probs)
        try:
            probs, train = align_pred_probs(given, train, classes=classes,
                                            default_classes=train_frame.attrs.get(
                                                CLASS_NAMES, {}).get(label),
                                            id=id_column(train_frame, id))
        except InvalidInputError as exc:
            if not path:
                raise
            raise InvalidInputError(f"{pred_probs}: {exc}") from None
    votes = None
    if annotations is not None:
        require_columns(scored_frame, [annotations])
        ids = (target if target is not None else train).ids
        votes = annotation_matrix(scored_frame[annotations], train.classes, ids)
    return Inputs(train, target, votes, scored_frame, id_column(scored_frame, id), probs)
