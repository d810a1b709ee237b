"""Out-of-sample probabilities: stratified k-fold cross-fitting, or fit-on-train/score-on-test."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_values,
)
from labelaudit._validation import shown
from labelaudit.models._base import Scorer, take
from labelaudit.models._checkpoint import FoldStore, fold_key
from labelaudit.models._encoder import progress_bar
from labelaudit.models._tasks import Engine, run_tasks

DEFAULT_FOLDS = 5  # lowered to the smallest class's size when the caller gave no number


class FoldWarning(LabelAuditWarning):
    """Fewer folds were used than the default, because a class is too small."""


def check_fold_count(counts: np.ndarray, n_folds: int, names: Sequence[object]) -> None:
    """Refuse ``n_folds`` folds the caller asked for when it is above the size of the
    smallest class (``counts`` items per class, named ``names``).

    Examples
    --------
    >>> check_fold_count(np.array([8, 3]), 5, ["a", "b"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: asked for 5 folds, but the smallest class, ...
    """
    counts = np.asarray(counts)
    if not len(counts) or n_folds <= counts.min():
        return
    smallest = int(np.argmin(counts))
    raise InvalidParameterError(
        f"asked for {n_folds} folds, but the smallest class, {shown(list(names)[smallest])}, "
        f"has {int(counts[smallest])} items (of {int(counts.sum())}): every fold holds out "
        f"items of each class; use at most {int(counts.min())} folds")


def make_folds(labels: np.ndarray, *, n_folds: int | None = None,
               random_state: int | None = 0,
               classes: np.ndarray | Sequence[object] | None = None) -> np.ndarray:
    """Assign every item to a fold, stratified by label; returns fold ids (n_samples,).

    ``n_folds`` given is taken as asked: more folds than the smallest class has items is
    an :class:`InvalidParameterError`. ``None`` is :data:`DEFAULT_FOLDS`, lowered to the
    size of the smallest class with a :class:`FoldWarning`. A class with a single item
    cannot be held out and learned at the same time: that is an
    :class:`InvalidInputError`.

    Examples
    --------
    >>> folds = make_folds(np.array([0, 0, 1, 1, 0, 1]), n_folds=3)
    >>> sorted(np.bincount(folds).tolist())
    [2, 2, 2]
    """
    from sklearn.model_selection import StratifiedKFold

    exact = n_folds is not None
    n_folds = DEFAULT_FOLDS if n_folds is None else n_folds
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InvalidParameterError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    labels = np.asarray(labels)
    values, counts = np.unique(labels, return_counts=True)
    names = np.asarray(classes)[values] if classes is not None else values
    if counts.min() < 2:
        lonely = names[counts < 2].tolist()
        raise InvalidInputError(
            f"class{'es' if len(lonely) > 1 else ''} {format_values(lonely)} "
            f"ha{'ve' if len(lonely) > 1 else 's'} "
            "a single item: it cannot be held out and learned at once; "
            "drop or merge it, or score it against a separate training file with --score"
        )
    if exact:
        check_fold_count(counts, int(n_folds), names.tolist())
    folds_used = int(min(n_folds, counts.min()))
    if folds_used < n_folds:
        small = names[counts < n_folds].tolist()
        warnings.warn(
            f"class{'es' if len(small) > 1 else ''} {format_values(small)} "
            f"ha{'ve' if len(small) > 1 else 's'} "
            f"fewer than {n_folds} items; using {folds_used} folds",
            FoldWarning, stacklevel=2,
        )
    splitter = StratifiedKFold(n_splits=folds_used, shuffle=True, random_state=random_state)
    fold_ids = np.empty(len(labels), dtype=np.int64)
    for fold, (_, test) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
        fold_ids[test] = fold
    return fold_ids


def group_folds(
    groups: np.ndarray, *, n_folds: int = 5, sizes: np.ndarray | None = None,
    random_state: int | None = 0,
) -> np.ndarray:
    """Assign whole groups (documents) to folds, balancing the size per fold.

    Groups are taken in a random order (``random_state``), largest first, and each goes to
    the fold with the smallest load so far, so no group is ever split across folds.

    Parameters
    ----------
    groups : ndarray of shape (n_samples,)
        Group of each item (the document of each sentence).
    sizes : ndarray of shape (n_samples,), optional
        Weight of each item (tokens per sentence; default 1: balance items).

    Returns
    -------
    ndarray of int, shape (n_samples,): the fold of each item.

    Examples
    --------
    >>> folds = group_folds(np.array([0, 0, 1, 1, 2, 3]), n_folds=2)
    >>> bool(folds[0] == folds[1] and folds[2] == folds[3])
    True
    """
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InvalidParameterError(f"n_folds must be an integer of at least 2; got {n_folds!r}")
    groups = np.asarray(groups)
    names, inverse = np.unique(groups, return_inverse=True)
    if len(names) < n_folds:
        raise InvalidInputError(
            f"{len(names)} documents cannot fill {n_folds} folds without splitting one; "
            "use fewer folds or more data"
        )
    weight = np.bincount(inverse, weights=np.ones(len(groups)) if sizes is None else sizes)
    order = np.random.default_rng(random_state).permutation(len(names))
    # Largest groups first (stable within the random order) keeps folds even.
    order = order[np.argsort(-weight[order], kind="stable")]
    load = np.zeros(n_folds)
    fold_of_group = np.empty(len(names), dtype=np.int64)
    for g in order:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += weight[g]
    return fold_of_group[inverse]


def crossfit_pred_probs(
    scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray, *,
    n_classes: int, engine: Engine = "local", store: FoldStore | None = None,
    progress: bool = False,
) -> Any:
    """Out-of-sample probabilities: each fold is scored by a model fitted on the other
    folds only.

    ``features`` and ``labels`` hold one row per item (an array, or a list such as one
    array of tags per sentence); the result is what the scorer's
    :meth:`~Scorer.join_predictions` makes of the held-out predictions: an array
    (n_samples, n_classes) for text scorers, one array (n_tokens, n_classes) per sentence
    for token scorers.

    ``engine="ray"`` fits every fold as a Ray task (on the Ray this process is connected
    to: :func:`labelaudit.engine.ray_session`); locally the folds run one after another, or
    at once on the scorer's devices (:meth:`~Scorer.fold_devices`). ``store`` (of
    :func:`fold_checkpoints`) keeps each finished fold of a local run in turn, and takes
    the folds an earlier, interrupted run of the same cross-fit finished.
    """
    folds = np.unique(fold_ids)
    parts = []
    on_ray = engine == "ray" and len(folds) > 1
    devices = [] if on_ray else scorer.fold_devices()
    where = (" as Ray tasks" if on_ray else
             f" on {len(devices)} devices" if len(devices) > 1 else "")
    with progress_bar(len(folds), f"cross-fitting {len(folds)} folds ({scorer.name}){where}",
                      unit=" folds", enabled=progress) as bar:
        if on_ray:
            parts = _ray_folds(scorer, features, labels, fold_ids, n_classes=n_classes,
                               bar=bar)
            return scorer.join_predictions(parts, len(labels), n_classes=n_classes)
        if len(devices) > 1 and len(folds) > 1:
            parts = _parallel_folds(scorer, features, labels, fold_ids, devices,
                                    n_classes=n_classes, bar=bar)
            return scorer.join_predictions(parts, len(labels), n_classes=n_classes)
        key = fold_key(scorer, features, labels, fold_ids, n_classes) if store else ""
        for fold in folds:
            held_out = np.flatnonzero(fold_ids == fold)
            saved = store.load(key, fold) if store else None
            if saved is not None and np.array_equal(saved[0], held_out):
                parts.append(saved)  # finished by an earlier, interrupted run
                bar.update(1)
                continue
            train = np.flatnonzero(fold_ids != fold)
            model = scorer.clone().fit(take(features, train), take(labels, train),
                                       n_classes=n_classes)
            parts.append((held_out, model.predict_proba(take(features, held_out))))
            if store:
                store.save(key, fold, *parts[-1])
            bar.update(1)
    return scorer.join_predictions(parts, len(labels), n_classes=n_classes)


def _fit_fold(shared: tuple[Scorer, Any, Any, int], device: str | None, train: np.ndarray,
              held_out: np.ndarray) -> Any:
    """One fold (a task of :func:`run_tasks`): fit on ``train`` on ``device`` (this
    worker's, or the GPU Ray gave the task: it sets ``CUDA_VISIBLE_DEVICES``, so it is
    ``cuda:0`` inside the task) and predict ``held_out``."""
    scorer, features, labels, n_classes = shared
    model = scorer.on_device(device) if device is not None else scorer.clone()
    model.fit(take(features, train), take(labels, train), n_classes=n_classes)
    return model.predict_proba(take(features, held_out))


def _task_folds(scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray, *,
                n_classes: int, bar: Any, **where: Any) -> list[tuple[np.ndarray, Any]]:
    """Every fold a task of :func:`run_tasks` (``where``: its engine, slots, Ray
    resources); the held-out positions with their predictions, fold by fold."""
    tasks = [(np.flatnonzero(fold_ids != fold), np.flatnonzero(fold_ids == fold))
             for fold in np.unique(fold_ids)]
    probs = run_tasks(_fit_fold, tasks, shared=(scorer.clone(), features, labels, n_classes),
                      on_result=lambda *_: bar.update(1), **where)
    return [(held_out, p) for (_, held_out), p in zip(tasks, probs, strict=True)]


def _parallel_folds(scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray,
                    devices: Sequence[str], *, n_classes: int, bar: Any,
                    ) -> list[tuple[np.ndarray, Any]]:
    """Folds fitted at once, one worker process per device (see :func:`run_tasks`); each
    worker takes folds in turn, and a device never holds two."""
    return _task_folds(scorer, features, labels, fold_ids, n_classes=n_classes, bar=bar,
                       engine="local", slots=list(devices))


def ray_fold_resources(scorer: Scorer, cluster: dict[str, float]) -> dict[str, float]:
    """What one fold's Ray task asks for: one CPU, and one GPU for a scorer that trains
    on a GPU (:meth:`Scorer.fold_gpus`) when the cluster has GPUs.

    Examples
    --------
    >>> from labelaudit.models import TfidfScorer
    >>> ray_fold_resources(TfidfScorer(), {"CPU": 8.0, "GPU": 2.0})
    {'num_cpus': 1, 'num_gpus': 0}
    """
    gpus = 1 if scorer.fold_gpus() and cluster.get("GPU", 0) >= 1 else 0
    return {"num_cpus": 1, "num_gpus": gpus}


def _ray_folds(scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray, *,
               n_classes: int, bar: Any) -> list[tuple[np.ndarray, Any]]:
    """Every fold a Ray task (Ray schedules them over the cluster's CPUs and GPUs); the
    features and labels go to the object store once. A failing fold cancels the rest."""
    import ray

    resources = ray_fold_resources(scorer, ray.cluster_resources())
    return _task_folds(scorer, features, labels, fold_ids, n_classes=n_classes, bar=bar,
                       engine="ray", ray_resources=resources,
                       ray_slot="cuda:0" if resources["num_gpus"] else None)


def fit_score_pred_probs(
    scorer: Scorer, train_features: Any, train_labels: Any, score_features: Any, *,
    n_classes: int,
) -> Any:
    """Fit on one split and predict another (the test-set audit)."""
    model = scorer.clone().fit(train_features, train_labels, n_classes=n_classes)
    return scorer.join_predictions([(np.arange(len(score_features)),
                                     model.predict_proba(score_features))],
                                   len(score_features), n_classes=n_classes)
