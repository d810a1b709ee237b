"""Scorers by name (:data:`SCORERS`, the one list of them), and the default out-of-sample
probabilities used across labelaudit."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect import Probs, TopKProbs, ensemble_pred_probs, given_probs, mean_probs
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer, WordCollector
from labelaudit.models._dynamics import DynamicsScorer, mean_epoch_probs, recording
from labelaudit.models._embed import EmbedScorer, KnnScorer
from labelaudit.models._finetune import FinetuneScorer
from labelaudit.models._folds import (
    DEFAULT_FOLDS,
    Engine,
    FoldStore,
    FoldWarning,
    crossfit_pred_probs,
    fit_score_pred_probs,
    make_folds,
)
from labelaudit.models._tfidf import CharTfidfScorer, TfidfScorer

#: The scorers by name (``scorers=``, ``--scorers``), in the order users see them: each
#: one's class. A new scorer is a :class:`Scorer` subclass and one line here.
SCORERS: dict[str, type[Scorer]] = {
    "tfidf": TfidfScorer, "embed": EmbedScorer, "finetune": FinetuneScorer,
    "tfidf-char": CharTfidfScorer, "knn": KnnScorer, "dynamics": DynamicsScorer}
#: The members when the user names none.
DEFAULT_SCORERS: tuple[str, ...] = ("tfidf", "tfidf-char")


def make_scorer(name: str, **options: Any) -> Scorer:
    """A scorer by its :data:`SCORERS` name; options it does not know are ignored, so one
    set (``model=...``) serves every member of an ensemble.

    Examples
    --------
    >>> make_scorer("tfidf").name
    'tfidf'
    """
    if name not in SCORERS:
        raise InvalidParameterError(f"unknown scorer {name!r}; choose from {', '.join(SCORERS)}")
    cls = SCORERS[name]
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in options.items() if k in accepted and v is not None})


@dataclass(frozen=True)
class MemberProbs:
    """Out-of-sample ``probs`` per scorer and repeat (``"tfidf"``, ``"tfidf#1"``...), the
    folds used, ``seconds`` per member (encoding included), each ``dynamics`` member's
    held-out ``epoch_logits`` (n_epochs, n_samples, n_classes), keyed as ``probs``, and
    (``explain=True``) the ``words`` of the first member that explains its predictions, and
    the first ``embed`` member's ``embeddings`` of the scored items."""

    probs: dict[str, Probs]
    n_folds: int
    seconds: dict[str, float] = field(default_factory=dict)
    epoch_logits: dict[str, np.ndarray] = field(default_factory=dict)
    words: WordCollector | None = None
    embeddings: np.ndarray | None = None

    def per_scorer(self) -> dict[str, Probs]:
        """Each scorer's repeats averaged, as FME averages seeds."""
        runs: dict[str, list[Probs]] = {}
        for key, probs in self.probs.items():
            runs.setdefault(key.split("#")[0], []).append(probs)
        return {name: mean_probs(r) for name, r in runs.items()}


def member_keys(scorers: Sequence[str | Scorer]) -> list[str]:
    """Each member's report name: the scorer's, or ``name[model]`` when two share a name."""
    names = [s if isinstance(s, str) else str(getattr(s, "name", type(s).__name__))
             for s in scorers]
    keys = []
    for scorer, name in zip(scorers, names, strict=True):
        if names.count(name) > 1 and not isinstance(scorer, str):
            model = getattr(scorer, "model", None)
            keys.append(f"{name}[{model if model is not None else 'default'}]")
        else:
            keys.append(name)
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise InvalidParameterError(f"the ensemble names a member twice: {twice}; give "
                                    "each its own model or options")
    return keys


def _with_seed(scorer: str | Scorer, state: int | None, options: dict[str, Any]) -> Scorer:
    """A fresh scorer for one repeat, with ``random_state`` set."""
    if isinstance(scorer, str):
        return make_scorer(scorer, **{**options, "random_state": state})
    fresh = scorer.clone()
    if state is not None and dataclasses.is_dataclass(fresh) and any(
            f.name == "random_state" for f in dataclasses.fields(fresh)):
        fresh = dataclasses.replace(fresh, random_state=state)
    return fresh


_SWEEP_LR = (1e-5, 2e-5, 3e-5, 5e-5)
_SWEEP_EPOCHS = (2, 3, 4)


def sweep_scorers(base: Scorer, n_configs: int, *, random_state: int | None = 0,
                  ) -> list[Scorer]:
    """``n_configs`` distinct copies of a fine-tuning scorer, learning rate, epochs and seed
    drawn from the FME grid of Chong et al. (2022, appendix D: 1e-5..5e-5, 2-4 epochs)."""
    rng = np.random.default_rng(random_state)
    grid = list(itertools.product(_SWEEP_LR, _SWEEP_EPOCHS, range(max(1, n_configs))))
    picks = rng.choice(len(grid), size=min(n_configs, len(grid)), replace=False)
    return [dataclasses.replace(base, learning_rate=grid[i][0], epochs=grid[i][1],  # type: ignore[type-var]
                                random_state=int(grid[i][2])) for i in sorted(picks)]


def keep_best(probs: dict[str, Probs], labels: np.ndarray, keep: int) -> list[str]:
    """The ``keep`` members with the lowest out-of-sample log loss (as Chong et al. select)."""
    loss = {k: float(-np.mean(np.log(np.clip(given_probs(labels, p), 1e-12, 1))))
            for k, p in probs.items()}
    return sorted(loss, key=lambda k: (loss[k], k))[:keep]


def member_pred_probs(
    train: TextDataset, target: TextDataset | None = None, *,
    scorers: Sequence[str | Scorer] = DEFAULT_SCORERS, n_folds: int | None = None,
    n_seeds: int = 1, random_state: int | None = 0, progress: bool = False, sweep: int = 0,
    keep: int | None = None, engine: Engine = "local", store: FoldStore | None = None,
    explain: bool = False, top_classes: int | None = None, **options: Any,
) -> MemberProbs:
    """Out-of-sample probabilities of each scorer (a name made with ``options``, or a
    :class:`Scorer`) and seed repeat: cross-fitted on the same folds of ``train``, or fitted
    on ``train`` to score ``target``. With ``sweep``, each ``finetune`` member runs
    :func:`sweep_scorers` configurations and the ``keep`` best stay as its repeats (FME).
    ``explain``: keep what explains the ranking (:attr:`MemberProbs.words`, ``embeddings``).
    ``top_classes``: keep each item's ``top_classes`` likeliest classes
    (:class:`~labelaudit.detect.TopKProbs`, the scored items' labels needed) instead of
    dense rows (None; a dynamics member's are made sparse after its epochs are averaged)."""
    if train.labels is None:
        raise InvalidInputError("the dataset has no labels to cross-fit on")
    _check_before_encoding(train, target, scorers, n_folds=n_folds, random_state=random_state,
                           engine=engine, **options)
    n_classes = len(train.classes)
    members: dict[str, Probs] = {}
    folds_used = DEFAULT_FOLDS if n_folds is None else n_folds
    if sweep:
        return _swept(train, target, scorers, n_folds=n_folds, random_state=random_state,
                      progress=progress, sweep=sweep, keep=keep, engine=engine, store=store,
                      explain=explain, top_classes=top_classes, **options)
    seconds: dict[str, float] = {}
    epoch_logits: dict[str, np.ndarray] = {}
    words: WordCollector | None = None
    embeddings = None
    scored = train if target is None else target
    for key, given in zip(member_keys(scorers), scorers, strict=True):
        started = time.perf_counter()
        scorer = make_scorer(given, **options) if isinstance(given, str) else given
        train_features = scorer.prepare(train, progress=progress)
        target_features = None if target is None else scorer.prepare(target, progress=progress)
        if explain and embeddings is None and isinstance(scorer, EmbedScorer):
            embeddings = np.asarray(train_features if target_features is None
                                    else target_features)
        explaining = explain and words is None and scorer.explains
        if explaining:
            words = WordCollector(len(scored.ids), key)
        for seed in range(n_seeds):
            state = None if random_state is None else random_state + seed
            # a configured object keeps its own seed in the first repeat
            seeded = _with_seed(given, None if seed == 0 and not isinstance(given, str)
                                else state, options)
            name = key if seed == 0 else f"{key}#{seed}"
            recorded = isinstance(seeded, DynamicsScorer)
            if isinstance(seeded, DynamicsScorer):  # predicts every epoch's held-out logits
                seeded = recording(seeded)
            said = words if explaining and seed == 0 else None
            top_k = None if recorded or scored.labels is None else top_classes
            if target_features is not None:
                out = fit_score_pred_probs(seeded, train_features, train.labels,
                                           target_features, n_classes=n_classes,
                                           score_labels=scored.labels, words=said,
                                           top_k=top_k)
            else:
                folds = make_folds(train.labels, n_folds=n_folds, random_state=state,
                                   classes=train.classes)
                folds_used = int(folds.max()) + 1
                out = crossfit_pred_probs(seeded, train_features, train.labels, folds,
                                          n_classes=n_classes, engine=engine, store=store,
                                          progress=progress, words=said, top_k=top_k)
            if recorded:
                epoch_logits[name], out = out, mean_epoch_probs(out)
                if top_classes is not None and scored.labels is not None:
                    out = TopKProbs.from_dense(out, scored.labels, k=top_classes)
            members[name] = out
        seconds[key] = time.perf_counter() - started
    return MemberProbs(members, folds_used, seconds, epoch_logits, words, embeddings)


def _check_before_encoding(train: TextDataset, target: TextDataset | None,
                           scorers: Sequence[str | Scorer], *, n_folds: int | None,
                           random_state: int | None, engine: Engine, **options: Any) -> None:
    """Check first what would fail only after encoding every text: the folds and the
    scorers' devices."""
    if target is None and train.labels is not None:
        with warnings.catch_warnings():  # warned when the folds are made for real
            warnings.simplefilter("ignore", FoldWarning)
            make_folds(train.labels, n_folds=n_folds, random_state=random_state,
                       classes=train.classes)
    if engine != "ray":  # on Ray, each task uses the devices of its node
        for given in scorers:
            (make_scorer(given, **options) if isinstance(given, str) else given).fold_devices()


def _swept(train: TextDataset, target: TextDataset | None, scorers: Sequence[str | Scorer], *,
           n_folds: int | None, random_state: int | None, progress: bool, sweep: int,
           keep: int | None, engine: Engine, store: FoldStore | None, explain: bool,
           top_classes: int | None, **options: Any) -> MemberProbs:
    """Members, each fine-tuning one replaced by the best ``keep`` (default 3) of a sweep."""
    keep = min(3, sweep) if keep is None else keep
    if keep < 1 or keep > sweep:
        raise InvalidParameterError(f"keep must be between 1 and sweep={sweep}; got {keep}",
                                    param=("keep", "sweep"))
    keys = member_keys(scorers)
    tuned = [k for k, s in zip(keys, scorers, strict=True)
             if (s if isinstance(s, str) else getattr(s, "name", "")) == "finetune"]
    if not tuned:
        raise InvalidParameterError("sweep tunes the finetune scorer: add it to the scorers",
                                    param="sweep")
    members: dict[str, Probs] = {}
    seconds: dict[str, float] = {}
    epoch_logits: dict[str, np.ndarray] = {}
    words: WordCollector | None = None
    embeddings = None
    folds_used = DEFAULT_FOLDS if n_folds is None else n_folds
    for key, given in zip(keys, scorers, strict=True):
        started = time.perf_counter()
        if key not in tuned:
            run = member_pred_probs(train, target, scorers=[given], n_folds=n_folds,
                                    random_state=random_state, progress=progress,
                                    engine=engine, store=store,
                                    explain=explain and (words is None or embeddings is None),
                                    top_classes=top_classes, **options)
            words = words or run.words
            embeddings = embeddings if embeddings is not None else run.embeddings
            members[key] = run.probs[next(iter(run.probs))]
            if run.epoch_logits:  # a dynamics member's first (only) run
                epoch_logits[key] = next(iter(run.epoch_logits.values()))
            folds_used = run.n_folds
            seconds[key] = time.perf_counter() - started
            continue
        base = make_scorer("finetune", **options) if isinstance(given, str) else given
        swept: dict[str, Probs] = {}
        for c, config in enumerate(sweep_scorers(base, sweep, random_state=random_state)):
            # the same folds as every other member; each configuration keeps its own seed
            run = member_pred_probs(train, target, scorers=[config], n_folds=n_folds,
                                    random_state=random_state, progress=progress,
                                    engine=engine, store=store, top_classes=top_classes)
            swept[f"config{c}"] = run.probs[next(iter(run.probs))]
            folds_used = run.n_folds
        labels = (target if target is not None else train).labels
        assert labels is not None  # noqa: S101 - checked by the caller
        for i, name in enumerate(keep_best(swept, labels, keep)):
            members[key if i == 0 else f"{key}#{i}"] = swept[name]
        seconds[key] = time.perf_counter() - started
    return MemberProbs(members, folds_used, seconds, epoch_logits, words, embeddings)


def cross_val_pred_probs(
    data: TextDataset, *, scorers: Sequence[str] = DEFAULT_SCORERS, n_folds: int | None = None,
    random_state: int | None = 0, progress: bool = False, **options: Any,
) -> np.ndarray:
    """Out-of-sample probabilities (n_samples, n_classes): every member cross-fitted on the
    same folds, then weighted by :func:`labelaudit.detect.ensemble_pred_probs`, as
    :func:`labelaudit.scan` does."""
    members = member_pred_probs(data, scorers=scorers, n_folds=n_folds,
                                random_state=random_state, progress=progress, **options)
    probs = ensemble_pred_probs(list(members.per_scorer().values()), data.labels).pred_probs
    assert isinstance(probs, np.ndarray)  # noqa: S101 - no top_classes: dense rows
    return probs
