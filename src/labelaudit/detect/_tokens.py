"""Label-quality scores of tagged sentences: per token, and per sentence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_number
from labelaudit.detect._cleanlab import import_cleanlab
from labelaudit.detect._scores import label_quality_scores


def token_scores(
    labels: Sequence[np.ndarray], pred_probs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """``log p(given tag)`` of every token (:func:`label_quality_scores`, ``"loss"``), one
    array per sentence; lower = more suspect. ``labels``: one (n_tokens,) array per
    sentence; ``pred_probs``: one (n_tokens, n_classes) array per sentence.

    Examples
    --------
    >>> probs = [np.array([[0.9, 0.1], [0.5, 0.5]])]
    >>> [s.round(3).tolist() for s in token_scores([np.array([0, 1])], probs)]
    [[-0.105, -0.693]]
    """
    if not len(labels):
        return []
    lengths = [len(y) for y in labels]
    flat = label_quality_scores(
        np.concatenate([np.asarray(y, dtype=np.int64) for y in labels]),
        np.vstack([np.asarray(p, dtype=float) for p in pred_probs]), method="loss")
    return np.split(flat, np.cumsum(lengths)[:-1])


def sentence_scores(
    labels: Sequence[np.ndarray],
    pred_probs: Sequence[np.ndarray],
    *,
    method: Literal["min", "softmin"] = "min",
    temperature: float = 0.05,
) -> np.ndarray:
    """Sentence label-quality scores by cleanlab's token-classification ranking: ``min``,
    ``min_t p(y_t)``; ``softmin``, ``<s, softmax((1 - s) / temperature)>`` over the tokens'
    self-confidences ``s`` (``min`` as the temperature goes to 0).

    References
    ----------
    Wang & Mueller (2022), Detecting Label Errors in Token Classification Data
    (``cleanlab.token_classification.rank.get_label_quality_scores``).

    Examples
    --------
    >>> labels = [np.array([0, 0, 1]), np.array([0, 1])]
    >>> probs = [np.array([[0.9, 0.1], [0.7, 0.3], [0.05, 0.95]]),
    ...          np.array([[0.8, 0.2], [0.8, 0.2]])]
    >>> sentence_scores(labels, probs).tolist()
    [0.7, 0.2]
    """
    get_label_quality_scores = import_cleanlab(
        "cleanlab.token_classification.rank").get_label_quality_scores

    if method not in ("min", "softmin"):
        raise InvalidParameterError(f"unknown sentence score {method!r}; choose 'min' or 'softmin'")
    temperature = check_number(temperature, "temperature", low=0.0, low_open=True)
    scores, _ = get_label_quality_scores(
        [list(map(int, y)) for y in labels],
        [np.asarray(p, dtype=float) for p in pred_probs],
        token_score_method="self_confidence",
        sentence_score_method=method,
        sentence_score_kwargs={"temperature": temperature} if method == "softmin" else {},
    )
    return np.asarray(scores, dtype=float)
