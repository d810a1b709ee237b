"""Model selection on clean, noisy and corrected validation data (Chong, Hong & Manning 2022,
Table 4): the sweep of configurations, the label versions of every split, and the result."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect import ensemble_pred_probs, label_quality_scores, suggest_labels
from labelaudit.io import (
    ResultFiles,
    TextDataset,
    check_distinct_files,
    encode_labels,
    prepare_text_dataset,
    read_table,
    require_columns,
    warn_overlap,
)
from labelaudit.models import (
    Engine,
    check_fits,
    default_progress,
    make_scorer,
    member_pred_probs,
    progress_bar,
    ray_session,
    run_tasks,
)
from labelaudit.noise import noisy_labels, parse_noise

if TYPE_CHECKING:
    import pandas as pd

    Table: TypeAlias = pd.DataFrame | str | Path


_C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
_NGRAMS = ((1, 1), (1, 2))
_MIN_DF = (1, 2, 3)


@dataclass(frozen=True)
class ModelConfig:
    """One model of the sweep: a :func:`labelaudit.models.make_scorer` name and its options.

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


#: The scorers ``select`` sweeps over on a CPU (fine-tuning sweeps need a GPU): each one's
#: grid of configurations.
SWEEP_SCORERS: dict[str, Callable[[], list[ModelConfig]]] = {
    "tfidf": lambda: [ModelConfig("tfidf", {"C": c, "ngram_range": ngram, "min_df": min_df})
                      for ngram in _NGRAMS for min_df in _MIN_DF for c in _C_GRID],
    "embed": lambda: [ModelConfig("embed", {"C": c}) for c in _C_GRID],
}


def sweep_configs(n_configs: int, *, scorers: Sequence[str] = ("tfidf",),
                  random_state: int | None = 0) -> list[ModelConfig]:
    """``n_configs`` configurations drawn without replacement from the grid of ``scorers``
    (TF-IDF + logistic regression: 7 values of C, n-grams 1 or 1-2, min_df 1 to 3; embeddings:
    the same C), in grid order; the whole grid when it asks for all.

    >>> [c.name for c in sweep_configs(2, scorers=["embed"], random_state=0)]
    ['embed C=10', 'embed C=30']
    """
    unknown = [s for s in scorers if s not in SWEEP_SCORERS]
    if unknown or not scorers:
        raise InvalidParameterError(
            f"scorers must be some of {', '.join(SWEEP_SCORERS)}; got {list(scorers)!r}")
    grid = [c for s in dict.fromkeys(scorers) for c in SWEEP_SCORERS[s]()]
    if isinstance(n_configs, bool) or not isinstance(n_configs, (int, np.integer)) \
            or not 1 <= n_configs <= len(grid):
        raise InvalidParameterError(
            f"n_configs must be an integer from 1 to {len(grid)} (the size of the grid of "
            f"{', '.join(dict.fromkeys(scorers))}); got {n_configs!r}", param="n_configs")
    if n_configs == len(grid):
        return grid
    chosen = np.random.default_rng(random_state).choice(len(grid), n_configs, replace=False)
    return [grid[i] for i in np.sort(chosen)]


def _fit_config(shared: tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, int,
                             dict[str, Any]], _slot: Any, config: ModelConfig) -> np.ndarray:
    """One configuration of the sweep (a task of :func:`run_tasks`): its accuracies."""
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
    on_fit: Callable[[], None] | None = None, workers: int = 1, engine: Engine = "local",
) -> np.ndarray:
    """Accuracy of every configuration, fitted on ``train`` with ``train_labels``, on each
    label version (clean, noisy, corrected) of ``val`` and ``test``: shape (n_configs, 6).
    ``features`` caches each scorer family's prepared features across calls."""
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
                     engine=engine, workers=workers, on_result=None if on_fit is None
                     else lambda *_: on_fit())
    return np.array(rows).reshape(len(configs), 6)


@dataclass(frozen=True)
class LabelVersions:
    """The clean, noisy and corrected labels of one split (rows of ``labels``, indices
    into the training classes), and the items the scan ``relabelled``."""

    labels: np.ndarray
    relabelled: np.ndarray

    @property
    def n_noisy(self) -> int:
        """Items whose noisy label differs from the clean one."""
        return int((self.labels[1] != self.labels[0]).sum())

    @property
    def n_fixed(self) -> int:
        """Relabelled items whose corrected label is the clean one."""
        return int((self.relabelled & (self.labels[2] == self.labels[0])).sum())


def label_versions(train: TextDataset, data: TextDataset, noisy: np.ndarray, *,
                   scorers: Sequence[str], random_state: int,
                   options: dict[str, Any] | None = None) -> LabelVersions:
    """Clean, noisy, and corrected: the noisy split scanned as :func:`labelaudit.scan`
    with ``score=`` and its default ``ensemble`` ranking would (computed here so the scorers
    take ``options``), its top Err % relabelled to the suggested label, Err % the share of
    labels that differ from the clean ones. ``train.labels`` are the noisy training labels.
    """
    assert data.labels is not None
    clean = data.labels
    n_relabel = int((noisy != clean).sum())
    relabelled = np.zeros(len(noisy), dtype=bool)
    corrected = noisy.copy()
    if n_relabel:
        run = member_pred_probs(train, data, scorers=list(scorers), random_state=random_state,
                                **(options or {}))
        pred_probs = ensemble_pred_probs(list(run.per_scorer().values()), noisy).pred_probs
        scores = label_quality_scores(noisy, pred_probs, method="loss")
        top = np.argsort(scores, kind="stable")[:n_relabel]
        suggested, _ = suggest_labels(noisy, pred_probs)
        relabelled[top] = True
        corrected[top] = suggested[top]
    return LabelVersions(np.stack([clean, noisy, corrected]), relabelled)


#: The validation (and test) versions, in the order of the accuracy columns.
VERSIONS: tuple[str, ...] = ("clean", "noisy", "corrected")
#: The six splits every configuration is scored on.
SPLITS: tuple[str, ...] = tuple(f"{s}_{v}" for s in ("val", "test") for v in VERSIONS)


@dataclass(frozen=True)
class SelectionResult(ResultFiles):
    """Accuracy of every configuration on ``SPLITS``, (n_seeds, n_configs, 6); per repeat and
    split, the labels noised, relabelled by the scan and relabelled back (``n_fixed``)."""

    configs: tuple[ModelConfig, ...]
    accuracy: np.ndarray
    seeds: np.ndarray
    noise: str
    n_items: np.ndarray
    n_noisy: np.ndarray
    n_relabelled: np.ndarray
    n_fixed: np.ndarray
    seconds: float

    def selected(self, validation: str) -> np.ndarray:
        """Per repeat, the configuration ``validation`` (a version) selects: the first best."""
        return self.accuracy[:, :, VERSIONS.index(validation)].argmax(axis=1)

    def to_frame(self) -> pd.DataFrame:
        """One row per repeat and validation version: ``seed, validation, config,
        val_accuracy, true_accuracy, measurable_accuracy, rank`` (rank 1 = the sweep's
        best true accuracy; ties share the better rank)."""
        import pandas as pd
        rows = []
        for v, version in enumerate(VERSIONS):
            chosen = self.selected(version)
            for s, seed in enumerate(self.seeds.tolist()):
                acc = self.accuracy[s]
                true = acc[chosen[s], 3]
                rows.append({
                    "seed": seed, "validation": version, "config": self.configs[chosen[s]].name,
                    "val_accuracy": acc[chosen[s], v], "true_accuracy": true,
                    "measurable_accuracy": acc[chosen[s], 3 + v],
                    "rank": int(1 + (acc[:, 3] > true).sum())})
        return pd.DataFrame(rows)

    def summary_frame(self) -> pd.DataFrame:
        """Mean and standard deviation over repeats of the true and measurable accuracy
        and the rank of the selected model, one row per validation version."""
        import pandas as pd
        frame = self.to_frame()
        grouped = frame.groupby("validation", sort=False)[
            ["true_accuracy", "measurable_accuracy", "rank"]]
        mean, std = grouped.mean(), grouped.std(ddof=0)
        out = pd.DataFrame({"validation": list(VERSIONS)})
        for column in ("true_accuracy", "measurable_accuracy", "rank"):
            out[f"{column}_mean"] = mean.loc[list(VERSIONS), column].to_numpy()
            out[f"{column}_std"] = std.loc[list(VERSIONS), column].to_numpy()
        return out

    def to_dict(self) -> dict[str, Any]:
        """The document ``labelaudit select --out x.json`` writes."""
        summary = self.summary_frame().set_index("validation")
        return {
            "noise": self.noise,
            "seeds": self.seeds.tolist(),
            "n_items": dict(zip(("train", "val", "test"), self.n_items.tolist(), strict=True)),
            "configs": [c.to_dict() | {"name": c.name} for c in self.configs],
            "splits": list(SPLITS),
            "accuracy": np.round(self.accuracy, 6).tolist(),
            "labels": [
                {"seed": seed, **{split: {"n_noisy": int(self.n_noisy[s, j]),
                                          "n_relabelled": int(self.n_relabelled[s, j]),
                                          "n_fixed": int(self.n_fixed[s, j])}
                                  for j, split in enumerate(("train", "val", "test"))}}
                for s, seed in enumerate(self.seeds.tolist())],
            "selection": self.to_frame().to_dict(orient="records"),
            "summary": {v: {k: float(x) for k, x in summary.loc[v].items()} for v in VERSIONS},
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        """The seed's Table 4 for this sweep: per validation version, the true and
        measurable accuracy of the selected model and its rank, mean ± sd over repeats."""
        table = self.summary_frame()
        n_seeds, n_configs = self.accuracy.shape[:2]
        best = self.accuracy[:, :, 3].max(axis=1).mean()
        lines = [f"model selection under {self.noise} noise: {n_configs} configurations, "
                 f"{n_seeds} seed{'s' if n_seeds > 1 else ''}; best true accuracy in the "
                 f"sweep {best:.4f}",
                 f"{'validation':<11} {'true acc':>17} {'measurable acc':>17} {'rank':>13}"]
        for row in table.itertuples(index=False):
            lines.append(
                f"{row.validation:<11} {row.true_accuracy_mean:>8.4f} ± {row.true_accuracy_std:.4f}"
                f" {row.measurable_accuracy_mean:>8.4f} ± {row.measurable_accuracy_std:.4f}"
                f" {row.rank_mean:>6.1f} ± {row.rank_std:.1f}")
        val = self.n_noisy[:, 1].mean(), self.n_relabelled[:, 1].mean(), self.n_fixed[:, 1].mean()
        lines.append(f"validation: {val[0]:.0f} of {self.n_items[1]} labels noised; the scan "
                     f"relabelled {val[1]:.0f}, {val[2]:.0f} of them back to the clean label "
                     f"(mean over seeds); {self.seconds:.1f} s")
        return "\n".join(lines)


# TF-IDF's solver in the sweep and the scan, at any number of classes: newton-cg to tol 1e-4,
# what select was measured with (the scan's own default switches to adagrad above 20 classes).
_TFIDF_SOLVER = {"solver": "newton-cg", "tol": 1e-4}


def _check_options(noise: str | None, noisy_label: str | None, seeds: int,
                   configs: Sequence[ModelConfig] | None, n_configs: int,
                   scorers: Sequence[str], random_state: int | None
                   ) -> tuple[tuple[str, float] | None, list[ModelConfig]]:
    if (noise is None) == (noisy_label is None):
        raise InvalidParameterError("give exactly one of noise (e.g. 'uniform:0.05') and "
                                    "noisy_label (a column of already noised labels)")
    spec = parse_noise(noise) if noise is not None else None
    if isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or seeds < 1:
        raise InvalidParameterError(f"seeds must be an integer of at least 1; got {seeds!r}")
    if configs is None:
        return spec, sweep_configs(n_configs, scorers=scorers, random_state=random_state)
    chosen = list(configs)
    bad = [c for c in chosen if not isinstance(c, ModelConfig) or c.scorer not in SWEEP_SCORERS]
    if not chosen or bad:
        raise InvalidParameterError(
            f"configs must be ModelConfig objects with a scorer in {', '.join(SWEEP_SCORERS)}; "
            f"got {bad[:3] if bad else 'none'}")
    return spec, chosen


def _datasets(frames: list[pd.DataFrame], *, text: str, label: str, text_pair: str | None,
              noisy_label: str | None) -> list[TextDataset]:
    data: list[TextDataset] = []
    for name, frame in zip(("train", "val", "test"), frames, strict=True):
        try:
            data.append(prepare_text_dataset(
                frame, text=text, label=label, text_pair=text_pair,
                classes=data[0].classes if data else None, min_classes=1 if data else 2))
            if noisy_label is not None:
                encode_labels(*_noisy_column(frame, noisy_label), classes=data[0].classes)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{name}: {exc}") from None
    return data


def _warn_overlap(data: list[TextDataset]) -> None:
    """Warn when validation or test items are training items (or test items validation
    items): selection and accuracy on seen items flatter every model."""
    keys = [d.item_keys() for d in data]
    why = "the models have seen them, so {} accuracy flatters the models that memorise; " \
        "drop them from the {} set"
    warn_overlap(("training", keys[0]), ("validation", keys[1]),
                 why=why.format("validation", "validation"))
    warn_overlap(("training", keys[0]), ("test", keys[2]), why=why.format("test", "test"))
    warn_overlap(("validation", keys[1]), ("test", keys[2]), why="the model selected on "
                 "them is measured on them again; drop them from the test set")


def _noisy_column(frame: pd.DataFrame, column: str) -> tuple[pd.Series, np.ndarray]:
    require_columns(frame, [column])
    return frame[column], np.arange(len(frame))


def select_models(
    train: Table, val: Table, test: Table, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, noise: str | None = "uniform:0.05",
    noisy_label: str | None = None, n_configs: int = 40,
    configs: Sequence[ModelConfig] | None = None, seeds: int = 3,
    scorers: Sequence[str] = ("tfidf",), random_state: int | None = 0,
    model: str | None = None, cache_dir: str | Path | None = None,
    workers: int = 1, engine: Engine = "local", ray_address: str | None = None,
    progress: bool | None = None) -> SelectionResult:
    """Which model clean, noisy and corrected validation data select, and how good it is.

    Every split is noised; validation and test come clean, noisy and corrected (scanned with
    ``scorers``, top Err % relabelled). A sweep trained on noisy train labels is scored on all
    six; each validation version selects its best, with *true* accuracy on clean test,
    *measurable* on the matching test version, *rank* 1 + configurations truly better.

    Parameters
    ----------
    train, val, test : DataFrame or path
        Tables with the clean labels in ``label`` and the texts in ``text`` (``text_pair``).
    noise : str or None, default "uniform:0.05"
        ``method:rate``, a method of :data:`labelaudit.noise.NOISE_METHODS` that needs only
        labels and texts, and the share of labels to noise in every split.
    noisy_label : str, optional
        Instead of ``noise``: a column of already noised labels in every table.
    n_configs, configs : int or sequence of ModelConfig
        Configurations drawn by :func:`sweep_configs` (default 40), or an explicit sweep.
    seeds : int, default 3
        Repeats with different noise and scan folds; the sweep is the same in all.
    scorers : sequence of {"tfidf", "embed"}
        The scorer families of the sweep, and the scan's ensemble members.
    random_state : int or None
        Seeds the sweep's draw and every repeat.
    model, cache_dir : str, optional
        Encoder and embedding cache of the ``embed`` scorer.
    workers, engine, ray_address, progress
        As for :func:`labelaudit.consistency_check.consistency` (``progress`` default: on,
        bars on a terminal, lines elsewhere).

    Returns
    -------
    SelectionResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 7 ("End-to-end noising") and Table 4.

    Examples
    --------
    >>> import pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> words = {"sport": "match goal team", "food": "pasta sauce cook"}
    >>> rows = [(f"{words[c]} w{rng.integers(50)}", c) for c in ["sport", "food"] * 30]
    >>> frame = pd.DataFrame(rows, columns=["text", "label"])
    >>> result = select_models(frame[:30], frame[30:45], frame[45:], noise="uniform:0.2",
    ...                        n_configs=3, seeds=1)
    >>> result.to_frame()["validation"].tolist()
    ['clean', 'noisy', 'corrected']
    """
    import pandas as pd

    started = time.perf_counter()
    spec, sweep = _check_options(noise, noisy_label, seeds, configs, n_configs, scorers,
                                 random_state)
    check_fits(workers, engine, ray_address)
    check_distinct_files([("train", train), ("val", val), ("test", test)],
                         why="models are trained on train, selected on val and measured on "
                         "test, so each needs items of its own")
    frames = [x.reset_index(drop=True) if isinstance(x, pd.DataFrame) else read_table(x)
              for x in (train, val, test)]
    data = _datasets(frames, text=text, label=label, text_pair=text_pair,
                     noisy_label=noisy_label)
    _warn_overlap(data)
    states = np.random.default_rng(random_state).integers(0, 2**31 - 1, size=(seeds, 4))
    show = default_progress() if progress is None else progress
    options: dict[str, Any] = {"model": model, "cache_dir": cache_dir, **_TFIDF_SOLVER}
    features: dict[str, Any] = {}
    accuracy = np.zeros((seeds, len(sweep), len(SPLITS)))
    counts = np.zeros((3, seeds, 3), dtype=np.int64)  # noised, relabelled, fixed
    with progress_bar(seeds * (len(sweep) + 2), f"select: {len(sweep)} models x {seeds} "
                      "seeds", unit=" steps", enabled=show) as bar:
        for s in range(seeds):
            versions = _versions(frames, data, spec, noisy_label, states[s], text=text,
                                 label=label, text_pair=text_pair, scorers=scorers,
                                 options=options, on_scan=lambda: bar.update(1))
            for j, v in enumerate(versions):
                counts[:, s, j] = (v.n_noisy, int(v.relabelled.sum()), v.n_fixed)
            with ray_session(engine, ray_address):
                accuracy[s] = sweep_accuracy(
                    sweep, data[0], versions[0].labels[1], data[1], versions[1].labels,
                    data[2], versions[2].labels, scorer_options=options, progress=show,
                    features=features, on_fit=lambda: bar.update(1), workers=workers,
                    engine=engine)
    return SelectionResult(
        configs=tuple(sweep), accuracy=accuracy, seeds=np.arange(seeds),
        noise=noise if noise is not None else f"given ({noisy_label})",
        n_items=np.array([len(d) for d in data]), n_noisy=counts[0], n_relabelled=counts[1],
        n_fixed=counts[2], seconds=time.perf_counter() - started)


def _versions(frames: list[pd.DataFrame], data: list[TextDataset],
              spec: tuple[str, float] | None, noisy_label: str | None, states: np.ndarray, *,
              text: str, label: str, text_pair: str | None, scorers: Sequence[str],
              options: dict[str, Any], on_scan: Callable[[], None]) -> list[LabelVersions]:
    """The label versions of train (never corrected), validation and test for one repeat."""
    classes = data[0].classes
    out = []
    for j, (frame, split) in enumerate(zip(frames, data, strict=True)):
        assert split.labels is not None
        if spec is not None:
            noisy = noisy_labels(frame, label=label, method=spec[0], rate=spec[1],
                                 classes=classes, text=text, text_pair=text_pair,
                                 random_state=int(states[j]),
                                 options={k: v for k, v in options.items()
                                          if v is not None and k not in _TFIDF_SOLVER})
        else:
            assert noisy_label is not None
            noisy = encode_labels(*_noisy_column(frame, noisy_label), classes=classes)[0]
        if j == 0:
            noisy_train = TextDataset(split.ids, split.texts, split.text_pairs, noisy, classes)
            out.append(LabelVersions(np.stack([split.labels, noisy, noisy]),
                                     np.zeros(len(noisy), dtype=bool)))
            continue
        out.append(label_versions(noisy_train, split, noisy, scorers=scorers,
                                  random_state=int(states[3]), options=options))
        on_scan()
    return out
