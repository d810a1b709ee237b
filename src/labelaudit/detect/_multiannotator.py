"""CROWDLAB through cleanlab: combine a model's probabilities with several annotators' labels."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, format_rows
from labelaudit.detect._cleanlab import import_cleanlab
from labelaudit.detect._scores import check_pred_probs
from labelaudit.io import to_annotations

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class CrowdLab:
    """cleanlab's multi-annotator verdict, turned into a score for the given labels.

    Attributes
    ----------
    scores : ndarray of shape (n_samples,)
        CROWDLAB's consensus quality score, minus 2 where the consensus is not the given
        label (so every such item ranks first); lower = more suspect.
    consensus_labels, consensus_quality : ndarray of shape (n_samples,)
    annotator_agreement : ndarray of shape (n_samples,)
        Share of annotators who agree with the consensus.
    """

    scores: np.ndarray
    consensus_labels: np.ndarray
    consensus_quality: np.ndarray
    annotator_agreement: np.ndarray


def annotation_matrix(annotations: pd.Series, classes: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Per-item annotation lists as an (n_samples, n_annotators) array of class indices.

    :meth:`labelaudit.io.Annotations.to_matrix` of ``to_annotations(list(annotations),
    ids=ids, classes=classes)`` (cells: labels or ``{"worker": id, "label": value}``; NaN
    where missing), refusing items without annotations.

    Examples
    --------
    >>> import pandas as pd
    >>> cells = pd.Series([["a", "b"], ["b"]])
    >>> annotation_matrix(cells, np.array(["a", "b"]), np.arange(2)).tolist()
    [[0.0, 1.0], [1.0, nan]]
    >>> cells = pd.Series([[{"worker": "v", "label": "a"}], [{"worker": "w", "label": "b"}]])
    >>> annotation_matrix(cells, np.array(["a", "b"]), np.arange(2)).tolist()
    [[0.0, nan], [nan, 1.0]]
    """
    matrix = to_annotations(list(annotations), ids=ids, classes=classes).to_matrix()
    empty = np.isnan(matrix).all(axis=1)
    if empty.any():
        raise InvalidInputError(
            f"items without annotations in {format_rows(ids[empty])}; every item needs at "
            "least one annotation for the crowdlab method")
    return matrix


def crowdlab(labels: np.ndarray, pred_probs: np.ndarray,
             labels_multiannotator: np.ndarray) -> CrowdLab:
    """Score the given labels with CROWDLAB (cleanlab's ``get_label_quality_multiannotator``).

    CROWDLAB's consensus label per item weighs each annotator and the model by their
    estimated quality; a given label that differs from a confident consensus is the most
    suspect.

    Parameters
    ----------
    labels : ndarray of int, shape (n_samples,)
    pred_probs : ndarray of shape (n_samples, n_classes)
    labels_multiannotator : ndarray of shape (n_samples, n_annotators)
        Class indices, NaN where an annotator did not label an item.

    References
    ----------
    Goh, Tkachenko & Mueller (2022), CROWDLAB: Supervised learning to infer consensus
    labels and quality scores for data with multiple annotators.

    Examples
    --------
    >>> probs = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.2, 0.8]])
    >>> votes = np.array([[0, 0, 0], [1, 1, 0], [1, 1, 1], [1, 1, 1]], dtype=float)
    >>> result = crowdlab(np.array([0, 1, 0, 1]), probs, votes)
    >>> int(np.argmin(result.scores))
    2
    """
    import pandas as pd
    get_label_quality_multiannotator = import_cleanlab(
        "cleanlab.multiannotator").get_label_quality_multiannotator

    labels, pred_probs = check_pred_probs(labels, pred_probs)
    matrix = np.asarray(labels_multiannotator, dtype=float)
    if matrix.shape[0] != len(labels):
        raise InvalidInputError(
            f"annotations have {matrix.shape[0]} rows but there are {len(labels)} items")
    keep = ~np.isnan(matrix).all(axis=0)  # cleanlab refuses annotators without labels
    frame = pd.DataFrame(matrix[:, keep])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = get_label_quality_multiannotator(frame, pred_probs, verbose=False)
        except ValueError as exc:
            raise InvalidInputError(f"cleanlab's CROWDLAB refused the annotations: {exc}") from None
    quality = result["label_quality"]
    consensus = quality["consensus_label"].to_numpy(dtype=np.int64)
    score = quality["consensus_quality_score"].to_numpy(dtype=float)
    return CrowdLab(
        scores=np.where(consensus == labels, score, score - 2.0),
        consensus_labels=consensus,
        consensus_quality=score,
        annotator_agreement=quality["annotator_agreement"].to_numpy(dtype=float),
    )
