"""Training dynamics of a softmax regression: the data map's confidence and variability
(Swayamdipta et al. 2020) and the area under the margin (Pleiss et al. 2020)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit._html_table import result_html
from labelaudit._validation import check_choice, check_int, check_number
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer
from labelaudit.models._embed import EmbedScorer
from labelaudit.models._tfidf import TfidfScorer

if TYPE_CHECKING:
    import pandas as pd


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.asarray(logits, dtype=np.float64)
    shifted = shifted - shifted.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def mean_epoch_probs(epoch_logits: np.ndarray) -> np.ndarray:
    """The softmax of every epoch's logits averaged over epochs: ``(n_epochs, n_samples,
    n_classes)`` in, ``(n_samples, n_classes)`` out.

    Examples
    --------
    >>> mean_epoch_probs(np.array([[[0.0, 0.0]], [[np.log(3), 0.0]]])).tolist()
    [[0.625, 0.375]]
    """
    return _softmax(epoch_logits).mean(axis=0)


@dataclass(frozen=True)
class TrainingDynamics:
    """Per-item statistics over training epochs (:func:`training_dynamics`): ``aum`` is the
    label-quality score (lower = more suspect); ``confidence``, ``variability``, the data map."""

    aum: np.ndarray
    confidence: np.ndarray
    variability: np.ndarray
    n_epochs: int

    @property
    def scores(self) -> np.ndarray:
        """Label-quality scores, lower = more suspect: the AUM."""
        return self.aum

    @property
    def order(self) -> np.ndarray:
        """Item positions, most suspect (lowest AUM) first, stable for ties."""
        return np.argsort(self.aum, kind="stable")

    def to_frame(self) -> pd.DataFrame:
        """One row per item, in item order: ``aum, confidence, variability``."""
        import pandas as pd
        return pd.DataFrame({"aum": self.aum, "confidence": self.confidence,
                             "variability": self.variability})

    def _repr_html_(self) -> str:
        """The per-item statistics in a notebook, in item order."""
        return result_html(self, header=f"{len(self.aum):,} items over {self.n_epochs} epochs")


def training_dynamics(labels: np.ndarray, epoch_logits: np.ndarray) -> TrainingDynamics:
    """Confidence, variability and area under the margin of each item's given label, from
    ``epoch_logits`` (n_epochs, n_samples, n_classes; runs may be stacked on the first axis).

    AUM (Pleiss et al. 2020): the mean over epochs of the given label's logit minus the
    largest other logit. Confidence and variability (Swayamdipta et al. 2020, eqs. 1-2): the
    mean and population standard deviation over epochs of the given label's probability.
    Both papers track training items; labelaudit passes held-out items' logits, so no item's
    statistics come from a model that saw its label.

    Examples
    --------
    Two epochs, one item labelled 0: margins 2 and -1, so the AUM is 0.5.

    >>> logits = np.array([[[2.0, 0.0]], [[0.0, 1.0]]])
    >>> found = training_dynamics(np.array([0]), logits)
    >>> float(found.aum[0]), round(float(found.confidence[0]), 3)
    (0.5, 0.575)
    """
    logits = np.asarray(epoch_logits, dtype=np.float64)
    labels = np.asarray(labels)
    if logits.ndim != 3 or logits.shape[0] < 1 or logits.shape[2] < 2:
        raise InvalidInputError(
            "epoch_logits must have shape (n_epochs, n_samples, n_classes) with at least one "
            f"epoch and two classes; got shape {logits.shape}")
    n_classes = logits.shape[2]
    if labels.shape != (logits.shape[1],) or not np.issubdtype(labels.dtype, np.integer):
        raise InvalidInputError(
            f"labels must be {logits.shape[1]} integer class indices, one per item of "
            f"epoch_logits; got shape {labels.shape} ({labels.dtype})")
    bad = np.flatnonzero((labels < 0) | (labels >= n_classes))
    if len(bad):
        raise InvalidInputError(f"labels must be in [0, {n_classes - 1}]; rows "
                                f"{bad[:5].tolist()} are not")
    rows = np.arange(len(labels))
    given = logits[:, rows, labels]
    others = logits.copy()
    others[:, rows, labels] = -np.inf
    probs = _softmax(logits)[:, rows, labels]
    return TrainingDynamics(aum=(given - others.max(axis=2)).mean(axis=0),
                            confidence=probs.mean(axis=0), variability=probs.std(axis=0),
                            n_epochs=int(logits.shape[0]))


_BETA1, _BETA2 = 0.9, 0.999  # Adam's moment decays


def _columns_used(block: Any) -> tuple[Any, Any]:
    """The columns a batch of sparse rows has values in, and the batch on those columns
    alone (all columns and the batch itself for dense rows)."""
    if not hasattr(block, "indptr"):
        return slice(None), block
    import scipy.sparse as sp

    used, inverse = np.unique(block.indices, return_inverse=True)
    compact = sp.csr_matrix((block.data, inverse.ravel(), block.indptr),
                            shape=(block.shape[0], len(used)))
    return used, compact


def _adam(param: np.ndarray, grad: np.ndarray, m: np.ndarray, v: np.ndarray, where: Any,
          rate: float) -> np.ndarray:
    """One Adam step of the rows ``where`` of a parameter (``param`` holds those rows)."""
    m[where] = _BETA1 * m[where] + (1 - _BETA1) * grad
    v[where] = _BETA2 * v[where] + (1 - _BETA2) * grad * grad
    return (param - rate * m[where] / (np.sqrt(v[where]) + 1e-8)).astype(param.dtype)


@dataclass(eq=False, kw_only=True)
class DynamicsScorer(Scorer):
    """A softmax regression trained for a few epochs, whose predictions after every epoch
    give each held-out item's training dynamics (:func:`training_dynamics`).

    The features are the ``tfidf`` member's (fitted per fold) or the ``embed`` member's
    (standardised per fold). The regression starts at zero and is trained by minibatch Adam
    on the mean cross-entropy plus ``alpha / 2 * ||w||^2``; on TF-IDF, Adam is lazy (a step
    moves only its batch's n-grams, as ``LazyAdam``). :meth:`predict_proba` is the mean
    softmax over epochs; :meth:`epoch_logits` gives every epoch's.

    Parameters
    ----------
    features : {"tfidf", "embed"}
    epochs, learning_rate, batch_size : Adam's epochs (all recorded), step size and batch.
    alpha : L2 penalty on the weights.
    max_features : largest TF-IDF vocabulary. Every epoch's float32 weights are kept:
        a fitted fold holds ``epochs * n_features * n_classes * 4`` bytes.
    model, pair_mode, cache_dir : embedding options, as in :class:`EmbedScorer`.
    random_state : seeds the order of the items in each epoch.

    References
    ----------
    Pleiss, Zhang, Elenberg & Weinberger (2020), Identifying Mislabeled Data using the
    Area Under the Margin Ranking, NeurIPS. Swayamdipta et al. (2020), Dataset
    Cartography: Mapping and Diagnosing Datasets with Training Dynamics, EMNLP.

    Examples
    --------
    >>> texts = ["good film", "great film", "bad film", "awful film"] * 3
    >>> labels = np.array([1, 1, 0, 0] * 3)
    >>> data = TextDataset(np.arange(12), texts, None, labels, np.array([0, 1]))
    >>> scorer = DynamicsScorer(epochs=3)
    >>> features = scorer.prepare(data)
    >>> fitted = scorer.fit(features, labels, n_classes=2)
    >>> fitted.epoch_logits(features[:2]).shape, fitted.predict_proba(features[:2]).argmax(1)
    ((3, 2, 2), array([1, 1]))
    """

    name = "dynamics"

    features: Literal["tfidf", "embed"] = "tfidf"
    epochs: int = 10
    learning_rate: float = 0.05
    batch_size: int = 32
    alpha: float = 1e-4
    max_features: int | None = 50_000
    model: str | None = None
    pair_mode: Literal["features", "joint"] = "features"
    cache_dir: str | Path | None = None
    random_state: int | None = 0

    def _featurizer(self) -> Scorer:
        check_choice(self.features, "features", ("tfidf", "embed"))
        if self.features == "embed":
            return EmbedScorer(model=self.model, pair_mode=self.pair_mode,
                               cache_dir=self.cache_dir)
        return TfidfScorer(max_features=self.max_features)

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        return self._featurizer().prepare(data, progress=progress)

    def _design(self, features: Any, *, fit: bool) -> Any:
        """The model's input rows: TF-IDF (sparse) or standardised embeddings."""
        if self.features != "embed":
            if fit:
                self.vectorizer_ = TfidfScorer(max_features=self.max_features)
            return self.vectorizer_._transform(features, fit=fit)
        matrix = np.asarray(features, dtype=np.float32)
        if fit:
            self.mean_ = matrix.mean(axis=0)
            self.scale_ = np.where((s := matrix.std(axis=0)) > 0, s, 1.0).astype(np.float32)
        return (matrix - self.mean_) / self.scale_

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> DynamicsScorer:
        epochs = check_int(self.epochs, "epochs", minimum=1)
        batch = check_int(self.batch_size, "batch_size", minimum=1)
        step = check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        alpha = check_number(self.alpha, "alpha", low=0.0)
        matrix = self._design(features, fit=True)
        y = np.asarray(labels, dtype=int)
        rng = np.random.default_rng(self.random_state)
        weights = np.zeros((matrix.shape[1], n_classes), dtype=np.float32)
        bias = np.zeros(n_classes, dtype=np.float32)
        moments = [np.zeros_like(p) for p in (weights, weights, bias, bias)]  # Adam m, v
        self.snapshots_: list[tuple[np.ndarray, np.ndarray]] = []
        t = 0
        for _ in range(epochs):
            order = rng.permutation(len(y))
            for start in range(0, len(y), batch):
                rows = order[start:start + batch]
                used, block = _columns_used(matrix[rows])
                w = weights[used]
                error = _softmax(block @ w + bias)
                error[np.arange(len(rows)), y[rows]] -= 1.0
                error /= len(rows)
                t += 1
                rate = step * np.sqrt(1 - _BETA2**t) / (1 - _BETA1**t)
                grad = np.asarray(block.T @ error, dtype=np.float32) + alpha * w
                weights[used] = _adam(w, grad, moments[0], moments[1], used, rate)
                bias[:] = _adam(bias, error.sum(axis=0), moments[2], moments[3],
                                slice(None), rate)
            self.snapshots_.append((weights.copy(), bias.copy()))
        self.n_classes_ = n_classes
        return self

    def epoch_logits(self, features: Any) -> np.ndarray:
        """Logits after every epoch, shape (n_epochs, n_samples, n_classes)."""
        matrix = self._design(features, fit=False)
        return np.stack([np.asarray(matrix @ w + b, dtype=np.float64)
                         for w, b in self.snapshots_])

    def epoch_probs(self, features: Any) -> np.ndarray:
        """Probabilities after every epoch, shape (n_epochs, n_samples, n_classes)."""
        return _softmax(self.epoch_logits(features))

    def predict_proba(self, features: Any) -> np.ndarray:
        """The mean over epochs of the softmax, shape (n_samples, n_classes)."""
        return mean_epoch_probs(self.epoch_logits(features))


@dataclass(eq=False, kw_only=True)
class DynamicsRecorder(DynamicsScorer):
    """A :class:`DynamicsScorer` whose :meth:`predict_proba` returns every epoch's logits,
    (n_samples, n_epochs, n_classes), so any fold executor carries them like probabilities;
    joined as (n_epochs, n_samples, n_classes) for :func:`mean_epoch_probs`."""

    def predict_proba(self, features: Any) -> np.ndarray:
        return np.moveaxis(self.epoch_logits(features), 0, 1)

    def join_predictions(self, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
                         n_classes: int) -> np.ndarray:
        n_epochs = int(np.asarray(parts[0][1]).shape[1]) if parts else 0
        joined = np.full((n_samples, n_epochs, n_classes), np.nan)
        for positions, logits in parts:
            joined[positions] = logits
        return np.moveaxis(joined, 1, 0)


def recording(scorer: DynamicsScorer) -> DynamicsRecorder:
    """The :class:`DynamicsRecorder` with the options of ``scorer`` (unfitted).

    Examples
    --------
    >>> recording(DynamicsScorer(epochs=4)).epochs
    4
    """
    return DynamicsRecorder(**{f.name: getattr(scorer, f.name)
                               for f in dataclasses.fields(scorer)})
