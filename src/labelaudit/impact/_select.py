"""Model selection on clean, noisy and corrected validation data (end-to-end noising)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit.engine import check_fits, folds_on
from labelaudit.impact._select_result import SPLITS, VERSIONS, SelectionResult
from labelaudit.impact._select_splits import (
    LabelVersions,
    label_versions,
    noisy_labels,
    parse_noise,
)
from labelaudit.impact._select_sweep import (
    SWEEP_SCORERS,
    ModelConfig,
    sweep_accuracy,
    sweep_configs,
)
from labelaudit.io import (
    TextDataset,
    check_distinct_files,
    encode_labels,
    prepare_text_dataset,
    warn_overlap,
)

__all__ = ["SPLITS", "VERSIONS", "ModelConfig", "SelectionResult", "select_models",
           "sweep_configs"]

Table: TypeAlias = pd.DataFrame | str | Path

# TF-IDF's solver tolerance in the sweep and the scan: the scorer's default (1e-3) stops
# newton-cg before its first step when there are many classes (158 on NoisywikiHow).
_TFIDF_TOL = 1e-4


def _as_frame(data: Table) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data.reset_index(drop=True)
    from labelaudit.io import read_table

    return read_table(data)


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
    from labelaudit._errors import InvalidInputError

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
    """Warn when many validation or test items are training items (or test items are
    validation items): selection and accuracy on seen items flatter every model."""
    keys = [d.item_keys() for d in data]
    why = "the models have seen them, so {} accuracy flatters the models that memorise; " \
        "drop them from the {} set"
    warn_overlap(("training", keys[0]), ("validation", keys[1]),
                 why=why.format("validation", "validation"))
    warn_overlap(("training", keys[0]), ("test", keys[2]), why=why.format("test", "test"))
    warn_overlap(("validation", keys[1]), ("test", keys[2]), why="the model selected on "
                 "them is measured on them again; drop them from the test set")


def _noisy_column(frame: pd.DataFrame, column: str) -> tuple[pd.Series, np.ndarray]:
    from labelaudit.io import require_columns

    require_columns(frame, [column])
    return frame[column], np.arange(len(frame))


def select_models(
    train: Table, val: Table, test: Table, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, noise: str | None = "uniform:0.05",
    noisy_label: str | None = None, n_configs: int = 40,
    configs: Sequence[ModelConfig] | None = None, seeds: int = 3,
    scorers: Sequence[str] = ("tfidf",), random_state: int | None = 0,
    model: str | None = None, cache_dir: str | Path | None = None,
    workers: int = 1, engine: str = "local", ray_address: str | None = None,
    progress: bool | None = None,
) -> SelectionResult:
    """Which model clean, noisy and corrected validation data select, and how good it is.

    The end-to-end noising experiment of Chong, Hong & Manning (2022, Table 4). The
    training, validation and test labels are noised at the same rate; validation and test
    come in three versions: clean (as given), noisy, and corrected (the noisy split
    scanned by :func:`labelaudit.scan`, cross-fitted with ``scorers``, and its top Err %
    relabelled to the scan's suggested label, Err % being the share of labels noised).
    A sweep of model configurations is trained on the noisy training labels and scored
    on all six splits. Each validation version selects the configuration it scores
    highest (the first in sweep order on a tie); its *true* accuracy is on the clean
    test split, its *measurable* accuracy on the test version matching the validation
    version, and its *rank* is 1 + the number of configurations with a higher true
    accuracy.

    Parameters
    ----------
    train, val, test : DataFrame or path
        Tables with the clean labels (CSV, TSV, JSONL, JSON, Parquet).
    text, label, text_pair : str
        Column names.
    noise : str or None, default "uniform:0.05"
        ``method:rate``, a method of :data:`labelaudit.noise.NOISE_METHODS` (those that
        need only labels and texts) and the share of labels to noise in every split.
    noisy_label : str, optional
        Instead of ``noise``: a column of every table holding already noised labels
        (for example from ``labelaudit noise``, with ``label="clean_label"``).
    n_configs : int, default 40
        Configurations drawn from the grid of ``scorers`` (see :func:`sweep_configs`).
    configs : sequence of ModelConfig, optional
        An explicit sweep instead.
    seeds : int, default 3
        Repeats with different noise and scan folds; the sweep is the same in all.
    scorers : sequence of {"tfidf", "embed"}
        The scorer families of the sweep, and the scan's ensemble members.
    random_state : int or None
        Seeds the sweep's draw and every repeat.
    model, cache_dir : str, optional
        Encoder and embedding cache of the ``embed`` scorer (embeddings are computed once).
    workers : int, default 1
        Processes that fit the sweep's configurations at once.
    engine : {"local", "ray"}
        ``"ray"``: every configuration's fit a Ray task, on Ray started with every core or
        on the cluster at ``ray_address``. The result does not depend on the engine.
    progress : bool, optional
        A progress bar on stderr (default: on a terminal).

    Returns
    -------
    SelectionResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 7 ("End-to-end noising") and Table 4.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> words = {"sport": "match goal team", "food": "pasta sauce cook"}
    >>> rows = [(f"{words[c]} w{rng.integers(50)}", c) for c in ["sport", "food"] * 30]
    >>> frame = pd.DataFrame(rows, columns=["text", "label"])
    >>> result = select_models(frame[:30], frame[30:45], frame[45:], noise="uniform:0.2",
    ...                        n_configs=3, seeds=1)
    >>> result.to_frame()["validation"].tolist()
    ['clean', 'noisy', 'corrected']
    """
    from labelaudit.models._progress import default_progress, progress_bar

    started = time.perf_counter()
    spec, sweep = _check_options(noise, noisy_label, seeds, configs, n_configs, scorers,
                                 random_state)
    check_fits(workers, engine, ray_address)
    check_distinct_files([("train", train), ("val", val), ("test", test)],
                         why="models are trained on train, selected on val and measured on "
                         "test, so each needs items of its own")
    frames = [_as_frame(x) for x in (train, val, test)]
    data = _datasets(frames, text=text, label=label, text_pair=text_pair,
                     noisy_label=noisy_label)
    _warn_overlap(data)
    states = np.random.default_rng(random_state).integers(0, 2**31 - 1, size=(seeds, 4))
    show = default_progress() if progress is None else progress
    options: dict[str, Any] = {"model": model, "cache_dir": cache_dir, "tol": _TFIDF_TOL}
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
            with folds_on(engine, ray_address):
                accuracy[s] = sweep_accuracy(
                    sweep, data[0], versions[0].labels[1], data[1], versions[1].labels,
                    data[2], versions[2].labels, scorer_options=options, progress=show,
                    features=features, on_fit=lambda: bar.update(1), workers=workers)
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
                                          if v is not None and k != "tol"})
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
