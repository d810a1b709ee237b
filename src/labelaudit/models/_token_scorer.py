"""Token scorers: the :class:`Scorer` interface for tagged sentences, and their
out-of-sample token probabilities through the shared cross-fitting loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._validation import check_int
from labelaudit.models._base import Scorer
from labelaudit.models._crossfit import crossfit_pred_probs, fit_score_pred_probs, group_folds

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.tokens import TokenDataset

__all__ = [
    "MAX_SEED",
    "TokenScorer",
    "as_token_scorer",
    "check_seed",
    "cross_val_token_probs",
    "fit_score_token_probs",
    "make_token_scorer",
]

MAX_SEED = 2**32 - 1  # the largest seed that numpy, torch and scikit-learn all take


def check_seed(random_state: object) -> int | None:
    """``None`` or an integer seed from 0 to ``2**32 - 1``."""
    if random_state is None:
        return None
    return check_int(random_state, "random_state", minimum=0, maximum=MAX_SEED)


class TokenScorer(Scorer):
    """A scorer of tagged sentences.

    ``prepare(dataset)`` maps a ``TokenDataset`` to one feature row per sentence,
    ``fit(features, labels, n_classes)`` takes one array of tag indices per sentence, and
    ``predict_proba(features)`` returns one ``(n_tokens, n_classes)`` array per sentence.
    """

    def join_predictions(self, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
                         n_classes: int) -> list[np.ndarray]:
        """One ``(n_tokens, n_classes)`` array per sentence, in sentence order."""
        out: list[np.ndarray] = [np.zeros((0, n_classes))] * n_samples
        for positions, probs in parts:
            for i, p in zip(positions, probs, strict=False):
                out[i] = np.asarray(p, dtype=float)
        return out


class _DuckTokenScorer(TokenScorer):
    """Any object with ``prepare``/``fit``/``predict_proba`` as a :class:`TokenScorer`;
    it is refitted in place on every fold."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.name = str(getattr(scorer, "name", type(scorer).__name__))

    def prepare(self, data: Any, *, progress: bool = False) -> Any:
        return self.scorer.prepare(data)

    def fit(self, features: Any, labels: Any, n_classes: int) -> _DuckTokenScorer:
        self.scorer.fit(features, labels, n_classes)
        return self

    def predict_proba(self, features: Any) -> Any:
        return self.scorer.predict_proba(features)

    def clone(self) -> _DuckTokenScorer:
        return self


def as_token_scorer(scorer: Any) -> Scorer:
    """``scorer`` itself when it is a :class:`Scorer`, else wrapped as one."""
    return scorer if isinstance(scorer, Scorer) else _DuckTokenScorer(scorer)


def make_token_scorer(name: str = "encoder", **options: Any) -> Scorer:
    """A token scorer by name (:data:`labelaudit.registry.TOKEN_SCORERS`): ``"encoder"``
    (frozen encoder + head) or ``"finetune"``.

    Examples
    --------
    >>> make_token_scorer("encoder", head="crf").head
    'crf'
    """
    from labelaudit.registry import TOKEN_SCORERS

    return TOKEN_SCORERS.load(name)(**options)


def cross_val_token_probs(
    dataset: TokenDataset,
    scorer: Any,
    *,
    classes: Sequence[str],
    n_folds: int = 5,
    random_state: int | None = 0,
    progress: bool = False,
) -> list[np.ndarray]:
    """Out-of-sample probabilities for every token, each fold fitted on the other folds.

    Folds come from :func:`labelaudit.models.group_folds` over the documents
    (``-DOCSTART-``; each sentence is its own document when the file has none), balanced by
    tokens, through the same loop as text (:func:`crossfit_pred_probs`).

    Returns
    -------
    list of ndarray, one ``(n_tokens, n_classes)`` array per sentence.
    """
    from labelaudit.tokens._spans import encode_tags

    scorer = as_token_scorer(scorer)
    labels = encode_tags(dataset, classes)
    sizes = np.array([len(t) for t in dataset.tokens])
    # Folds first: a fold count the documents cannot fill fails before any encoding.
    folds = group_folds(dataset.documents, n_folds=n_folds, sizes=sizes,
                        random_state=random_state)
    features = scorer.prepare(dataset, progress=progress)
    return crossfit_pred_probs(scorer, features, labels, folds, n_classes=len(classes),
                               progress=progress)


def fit_score_token_probs(
    train: TokenDataset,
    test: TokenDataset,
    scorer: Any,
    *,
    classes: Sequence[str],
) -> list[np.ndarray]:
    """Fit ``scorer`` on ``train`` and predict every token of ``test``."""
    from labelaudit.tokens._spans import encode_tags

    scorer = as_token_scorer(scorer)
    labels = encode_tags(train, classes)
    return fit_score_pred_probs(scorer, scorer.prepare(train), labels, scorer.prepare(test),
                                n_classes=len(classes))
