"""The model sweep of :func:`labelaudit.impact.select_models`: its configurations, and
their accuracy on every version of the validation and test splits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.io import TextDataset
from labelaudit.registry import SWEEP_SCORERS

__all__ = ["SWEEP_SCORERS", "ModelConfig", "sweep_accuracy", "sweep_configs"]

#: The scorers a sweep can draw from (fine-tuning is not part of the CPU sweep).

_C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
_NGRAMS = ((1, 1), (1, 2))
_MIN_DF = (1, 2, 3)


@dataclass(frozen=True)
class ModelConfig:
    """One model of the sweep: a scorer by name and its options.

    Attributes
    ----------
    scorer : str
        A name of :func:`labelaudit.models.make_scorer` (``"tfidf"`` or ``"embed"``).
    options : dict
        Keyword options of that scorer (``C``, ``ngram_range``, ``min_df``...).

    Examples
    --------
    >>> ModelConfig("tfidf", {"C": 1.0, "ngram_range": (1, 2), "min_df": 2}).name
    'tfidf C=1 ngram=1-2 min_df=2'
    """

    scorer: str
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """A short readable name, unique within a sweep."""
        parts = [self.scorer]
        for key, value in self.options.items():
            if key == "ngram_range":
                parts.append(f"ngram={value[0]}-{value[1]}")
            else:
                parts.append(f"{key}={value:g}" if isinstance(value, float) else
                             f"{key}={value}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The scorer and its options, as JSON-ready values."""
        return {"scorer": self.scorer, **{k: list(v) if isinstance(v, tuple) else v
                                          for k, v in self.options.items()}}


def _grid(scorer: str) -> list[ModelConfig]:
    if scorer == "tfidf":
        return [ModelConfig("tfidf", {"C": c, "ngram_range": ngram, "min_df": min_df})
                for ngram in _NGRAMS for min_df in _MIN_DF for c in _C_GRID]
    return [ModelConfig("embed", {"C": c}) for c in _C_GRID]


def sweep_configs(n_configs: int, *, scorers: Sequence[str] = ("tfidf",),
                  random_state: int | None = 0) -> list[ModelConfig]:
    """``n_configs`` configurations drawn without replacement from the grid of ``scorers``.

    The grid: TF-IDF + logistic regression over ``C`` in 0.1 ... 100 (7 values), word
    n-grams 1 or 1-2 and ``min_df`` 1, 2 or 3 (42 configurations); embeddings + logistic
    regression over the same ``C`` (7). Asking for the whole grid (more is an error)
    returns it in grid order; otherwise a random subset, in grid order.

    Examples
    --------
    >>> len(sweep_configs(42, scorers=["tfidf"]))
    42
    >>> [c.name for c in sweep_configs(2, scorers=["embed"], random_state=0)]
    ['embed C=10', 'embed C=30']
    """
    unknown = [s for s in scorers if s not in SWEEP_SCORERS]
    if unknown or not scorers:
        raise InvalidParameterError(
            f"scorers must be some of {', '.join(SWEEP_SCORERS)}; got {list(scorers)!r}")
    grid = [c for s in dict.fromkeys(scorers) for c in _grid(s)]
    if isinstance(n_configs, bool) or not isinstance(n_configs, (int, np.integer)) \
            or not 1 <= n_configs <= len(grid):
        raise InvalidParameterError(
            f"n_configs must be an integer from 1 to {len(grid)} (the size of the grid of "
            f"{', '.join(dict.fromkeys(scorers))}); got {n_configs!r}")
    if n_configs == len(grid):
        return grid
    chosen = np.random.default_rng(random_state).choice(len(grid), n_configs, replace=False)
    return [grid[i] for i in np.sort(chosen)]


def _fit_config(shared: tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, int,
                             dict[str, Any]], _slot: Any, config: ModelConfig) -> np.ndarray:
    """One configuration of the sweep (a task of :func:`run_tasks`): fitted on train,
    scored on each label version of validation and test."""
    from labelaudit.models import make_scorer

    features, train_labels, val_labels, test_labels, n_classes, options = shared
    x_train, x_val, x_test = features[config.scorer]
    model = make_scorer(config.scorer, **{**options, **config.options})
    model.fit(x_train, train_labels, n_classes=n_classes)
    val_pred = np.asarray(model.predict_proba(x_val)).argmax(axis=1)
    test_pred = np.asarray(model.predict_proba(x_test)).argmax(axis=1)
    return np.concatenate([(val_labels == val_pred[None, :]).mean(axis=1),
                           (test_labels == test_pred[None, :]).mean(axis=1)])


def sweep_accuracy(
    configs: Sequence[ModelConfig], train: TextDataset, train_labels: np.ndarray,
    val: TextDataset, val_labels: np.ndarray, test: TextDataset, test_labels: np.ndarray, *,
    scorer_options: dict[str, Any] | None = None, progress: bool = False,
    features: dict[str, tuple[Any, Any, Any]] | None = None,
    on_fit: Callable[[], None] | None = None, workers: int = 1,
) -> np.ndarray:
    """Fit every configuration on ``train`` with ``train_labels`` and score it on each
    label version of ``val`` and ``test`` (``*_labels`` of shape (3, n_samples): clean,
    noisy, corrected); ``workers`` processes fit them at once.

    ``features`` caches each scorer family's prepared features (train, val, test) across
    calls. Returns the accuracies, shape (n_configs, 6): validation clean, noisy,
    corrected, then test clean, noisy, corrected.
    """
    from labelaudit.models import make_scorer
    from labelaudit.models._tasks import run_tasks

    options = scorer_options or {}
    cache = {} if features is None else features
    for family in dict.fromkeys(config.scorer for config in configs):
        if family not in cache:
            base = make_scorer(family, **options)
            cache[family] = tuple(base.prepare(d, progress=progress)
                                  for d in (train, val, test))  # type: ignore[assignment]
    shared = ({c.scorer: cache[c.scorer] for c in configs}, train_labels, val_labels,
              test_labels, len(train.classes), options)
    rows = run_tasks(_fit_config, [(config,) for config in configs], shared=shared,
                     workers=workers, on_result=None if on_fit is None
                     else lambda *_: on_fit())
    return np.array(rows).reshape(len(configs), 6)
