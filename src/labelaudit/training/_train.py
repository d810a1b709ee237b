"""``labelaudit.training.train``: fit a classifier with a learning-with-noisy-labels method, screen
the candidates (``method="auto"``), train on label sets, and say what was done."""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditWarning
from labelaudit._validation import check_choice, check_int, check_number
from labelaudit.io import (
    ResultFiles,
    TextDataset,
    check_label_set_classes,
    holds_label_sets,
    prepare_text_dataset,
    read_label_sets,
    text_keys,
)
from labelaudit.models import (
    EmbeddingInputs,
    LoopConfig,
    TextInputs,
    crossfit_pred_probs,
    make_folds,
    make_scorer,
    resolve_device,
    train_networks,
)
from labelaudit.scanning import ScanOptions, scan_label_sets
from labelaudit.training._filter import (
    FILTER_METHODS,
    NOISE_RATE_CAP,
    FilterPlan,
    noise_share,
    run_filter,
)
from labelaudit.training._methods import METHODS, make_method
from labelaudit.training._methods.base import MultiLabelBase
from labelaudit.training._methods.seal import SEAL
from labelaudit.training._metrics import evaluate_model
from labelaudit.training._model import BACKBONES, TrainedModel, embed, network_factory, read_frame

if TYPE_CHECKING:
    import pandas as pd

FILTER_MODES = ("drop", "relabel")
# Defaults per backbone: the head trains in seconds on CPU, fine-tuning as in the seed
# (NoisywikiHow: batch 64, learning rate 3e-5; fewer epochs than its 10 by default).
_DEFAULTS = {"head": {"epochs": 20, "learning_rate": 1e-3, "warmup": 0.0},
             "finetune": {"epochs": 4, "learning_rate": 3e-5, "warmup": 0.06}}
# Hidden units of a head network (the head backbone's, and a filter method's detector heads).
HIDDEN = 256
# Inverse regularisation of the estimate's logistic regression: a weakly regularised head
# overfits few items per class, and its overconfident probabilities inflate the estimate.
_ESTIMATE_C = 0.01
ESTIMATE_SOURCE = ("cleanlab's confident joint of cross-validated logistic regression on "
                   "the sentence embeddings")


class NoiseEstimateWarning(LabelAuditWarning):
    """The estimated share of wrong labels was above :data:`NOISE_RATE_CAP`: capped."""


def method_names() -> tuple[str, ...]:
    """Every training method: the LNL methods' hooks, then ``filter`` and its forms."""
    return (*METHODS, *FILTER_METHODS)


def check_methods(names: Sequence[str], what: str) -> list[str]:
    """``names`` as a list, each a training method (``what``: the noun an error uses)."""
    for name in names:
        if name not in method_names():
            raise InvalidParameterError(f"unknown {what} {name!r}; choose from "
                                        f"{', '.join(method_names())}")
    return list(names)


def _check_classes(labels: np.ndarray, classes: np.ndarray) -> None:
    """Refuse a class with a single training item: nothing can be learned from it."""
    counts = Counter(labels.tolist())
    single = [str(classes[k]) for k, n in sorted(counts.items()) if n == 1]
    if single:
        raise InvalidInputError(
            f"{len(single)} class{'es have' if len(single) > 1 else ' has'} a single "
            f"training item: {single[:10]}; drop or merge {'them' if len(single) > 1 else 'it'}"
            " (a class needs at least 2 items)")


def estimate_noise_rate(embeddings: np.ndarray, labels: np.ndarray, n_classes: int, *,
                        random_state: int | None = 0) -> float:
    """cleanlab's share of wrong labels (:func:`noise_share`) from cross-fitted, strongly
    regularised logistic regression on the embeddings; a weak model counts its own errors too,
    so :func:`train` caps it at :data:`NOISE_RATE_CAP`."""
    scorer = make_scorer("embed", C=_ESTIMATE_C)
    folds = make_folds(labels, n_folds=min(5, int(np.bincount(labels).min())),
                       random_state=random_state)
    probs = crossfit_pred_probs(scorer, embeddings, labels, folds, n_classes=n_classes)
    return noise_share(labels, probs)


def _capped(estimate: float, *, source: str) -> float:
    """An estimated share of wrong labels, at most :data:`NOISE_RATE_CAP` (warned when above)."""
    if estimate <= NOISE_RATE_CAP:
        return estimate
    warnings.warn(NoiseEstimateWarning(
        f"{source} puts {estimate:.0%} of the labels wrong, more than {NOISE_RATE_CAP:.0%}: "
        "the model is too weak on this data to tell label errors from its own, so "
        f"{NOISE_RATE_CAP} is used; give noise_rate=RATE if you know the share",
        param="noise_rate"), stacklevel=3)
    return NOISE_RATE_CAP


@dataclass(frozen=True)
class TrainOptions:
    """Every option of :func:`train`, documented there, checked once as it is made; the steps
    of a training read them from here."""

    text: str = "text"
    label: str = "label"
    text_pair: str | None = None
    method: str = "base"
    backbone: Literal["head", "finetune"] = "head"
    model: str | None = None
    noise_rate: float | None = None
    filter: Literal["drop", "relabel"] | None = None
    filter_scorers: Sequence[str] = ("tfidf", "embed")
    filter_detector: str | None = None
    epochs: int | None = None
    batch_size: int = 64
    learning_rate: float | None = None
    hidden: int | None = None
    dropout: float = 0.1
    method_options: dict[str, Any] | None = None
    device: str | None = None
    cache_dir: str | Path | None = None
    random_state: int = 0
    label_sep: str | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        """Each rule once, before any work, its error naming the options (``param``)."""
        method, mode, detector = self.method, self.filter, self.filter_detector
        check_choice(method, "method", (*method_names(), "auto"))
        check_choice(self.backbone, "backbone", BACKBONES)
        if mode is not None:
            check_choice(mode, "filter", FILTER_MODES)
            if method != "filter":
                raise InvalidParameterError(
                    f"filter={mode!r} says what method='filter' does with flagged items; "
                    f"method={method!r} " + ("says it in its name" if method.startswith("filter")
                                             else "flags none: add method='filter'"),
                    param=("filter", "method"))
        if detector is not None and not method.startswith(("filter", "auto")):
            raise InvalidParameterError(f"filter_detector is the detector of a filter method; "
                                        f"method={method!r} detects nothing: drop it",
                                        param=("filter_detector", "method"))
        if method.startswith("filter"):
            FilterPlan.parse(method, detector=detector)
        check_int(self.random_state, "random_state", minimum=0)
        check_int(self.batch_size, "batch_size", minimum=1)
        for name, value in (("hidden", self.hidden), ("epochs", self.epochs)):
            if value is not None:
                check_int(value, name, minimum=0 if name == "hidden" else 1)
        if self.learning_rate is not None:
            check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        if self.device is not None:  # a missing GPU is one line now, not once texts are encoded
            resolve_device(self.device)
        rate = self.noise_rate
        if rate is not None and (not isinstance(rate, (int, float)) or not 0.0 <= rate < 1.0):
            raise InvalidParameterError(f"noise_rate must be in [0, 1); got {rate}",
                                        param="noise_rate")


def train(
    data: pd.DataFrame | str | Path, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, method: str = "base",
    backbone: Literal["head", "finetune"] = "head", model: str | None = None,
    noise_rate: float | None = None,
    filter: Literal["drop", "relabel"] | None = None,  # noqa: A002 - mirrors the CLI flag
    filter_scorers: Sequence[str] = ("tfidf", "embed"), filter_detector: str | None = None,
    epochs: int | None = None, batch_size: int = 64, learning_rate: float | None = None,
    hidden: int | None = None, dropout: float = 0.1,
    method_options: dict[str, Any] | None = None, device: str | None = None,
    cache_dir: str | Path | None = None, random_state: int = 0, label_sep: str | None = None,
    progress: bool = False,
) -> TrainedModel:
    """Train a text classifier with a learning-with-noisy-labels method.

    A label column of label sets (lists, or text joined by ``label_sep``) trains a
    multi-label model: ``base`` with one sigmoid per class and binary cross-entropy, or
    ``filter`` (a multi-label scan flags the items whose set looks wrong; ``filter="drop"``
    drops them, ``"relabel"`` gives them their suggested set); the other methods refuse.

    Parameters
    ----------
    data : DataFrame or path
        Training items: ``text`` (and ``text_pair``) and their possibly wrong ``label``.
    method : str
        ``base`` (cross-entropy), ``mixup``, ``data-parameters``, ``sr``, ``co-teaching``,
        ``cnlcu``, ``seal``; ``filter`` (a cross-fitted scan flags items, then ``base``) and
        ``filter[-relabel][-iterate][+METHOD]`` (docs/commands/train.md,
        "Detect-then-train"); or ``auto``:
        the winner of :func:`choose_method`'s screen on 3 held-out fifths of each class.
    backbone : {"head", "finetune"}
        ``head``: a small network over frozen sentence embeddings of ``model`` (default
        all-MiniLM-L6-v2, from the scan's embedding cache), seconds on a CPU; ``finetune``:
        the whole ``model`` fine-tuned as a sequence classifier (on a GPU when present).
    noise_rate : float, optional
        Share of wrong labels, in [0, 1), for co-teaching and CNLCU; when not given,
        cleanlab's estimate, at most :data:`NOISE_RATE_CAP` (else a
        :class:`NoiseEstimateWarning`). The log records the rate and its source.
    filter : {"drop", "relabel"}, optional
        What ``filter`` does with the flagged items (default drop), with ``filter_scorers``
        the scan's; a :class:`FilterWarning` says when it flags more than cleanlab estimates.
    filter_detector : {"scan", "seal", "base", "mixup"}, optional
        A filter method's detector: the scan (``filter``'s default) or a cross-fitted head
        trained with that method (the other filter methods' default: ``seal``).
    epochs, learning_rate : optional
        Defaults: 20 and 1e-3 for the head, 4 and 3e-5 (with 6 % warmup) for fine-tuning.
    hidden, dropout : head size (default :data:`HIDDEN`; 0: a linear head); with
        ``backbone="finetune"`` only the filter methods' detector heads.
    method_options : dict, optional
        Options of the method, e.g. ``{"alpha": 0.5}`` for mixup.

    Returns
    -------
    TrainedModel

    References
    ----------
    Wu et al. (2023), NoisywikiHow: A Benchmark for Learning with Real-world Noisy Labels
    in Natural Language Processing (the methods and their defaults, appendix tables).
    """
    return run_train(data, TrainOptions(**{k: v for k, v in locals().items() if k != "data"}))


def run_train(data: pd.DataFrame | str | Path, options: TrainOptions) -> TrainedModel:
    """:func:`train` with its options as one object (what ``labelaudit train`` builds from
    its flags, checked as it is made): ``auto``'s screen, label sets, or one label per item."""
    frame = read_frame(data)
    if options.method == "auto":
        screen = choose_method(frame, **vars(options))  # each candidate its method
        fitted = run_train(frame, _options_for(screen.winner, options))
        fitted.log["auto"] = screen.to_dict()  # the model's log holds the screen
        return fitted
    started, o = time.perf_counter(), options
    plan = FilterPlan.parse(o.method, detector=o.filter_detector) \
        if o.method.startswith("filter") else None
    defaults = _DEFAULTS[o.backbone]  # epochs and learning_rate are positive when given
    config = LoopConfig(epochs=int(o.epochs or defaults["epochs"]), batch_size=o.batch_size,
                        learning_rate=o.learning_rate or defaults["learning_rate"],
                        warmup=defaults["warmup"], device=o.device, progress=o.progress,
                        bf16=o.backbone == "finetune", random_state=o.random_state)
    settings: dict[str, Any] = {
        "backbone": o.backbone, "encoder": o.model, "text": o.text, "text_pair": o.text_pair,
        "hidden": HIDDEN if o.hidden is None else o.hidden, "dropout": o.dropout,
        "cache_dir": None if o.cache_dir is None else str(o.cache_dir)}
    if o.label_sep is not None or (o.label in frame.columns and holds_label_sets(frame[o.label])):
        if o.noise_rate is not None or o.filter_detector is not None:
            raise InvalidParameterError("noise_rate and filter_detector go with one label per "
                                        "item; label sets train with base or filter")
        return train_label_sets(frame, o, settings=settings, config=config)
    dataset = prepare_text_dataset(frame, text=o.text, label=o.label, text_pair=o.text_pair)
    assert dataset.labels is not None  # noqa: S101 - label is given
    _check_classes(dataset.labels, dataset.classes)
    log: dict[str, Any] = {"n_train": len(dataset), "random_state": o.random_state}
    if "clean_label" in frame.columns:  # as `labelaudit noise` writes: the rate achieved
        log["achieved_noise_rate"] = float(np.mean(
            text_keys(frame["clean_label"]) != text_keys(frame[o.label])))
    keep, labels = np.arange(len(dataset)), np.asarray(dataset.labels)
    vectors = None
    if o.backbone == "head":  # the head's inputs, and the head detector's
        vectors = embed(dataset, settings, progress=o.progress)
        settings["dim"] = int(vectors.shape[1])
    targets = None
    if plan is not None:
        def detector_vectors() -> np.ndarray:
            return vectors if vectors is not None else embed(
                dataset, dict(settings, encoder=None), progress=o.progress)

        cleaned = run_filter(plan, frame, dataset, o, settings=settings,
                             vectors=detector_vectors)
        keep, labels, targets = cleaned.keep, cleaned.labels, cleaned.targets
        log.update(cleaned.info)
    then, noise_rate = (plan.then if plan is not None else o.method), o.noise_rate
    if then in ("co-teaching", "cnlcu") and noise_rate is None:
        if vectors is None:
            vectors = embed(dataset, dict(settings, encoder=None), progress=o.progress)
        raw = estimate_noise_rate(vectors[keep], labels, len(dataset.classes),
                                  random_state=o.random_state)
        noise_rate = _capped(raw, source=ESTIMATE_SOURCE)
        log.update(noise_rate_source=ESTIMATE_SOURCE + (
            f", {raw:.3f} capped at {NOISE_RATE_CAP}" if raw > noise_rate else ""),
            noise_rate_estimated=noise_rate, noise_rate_cleanlab=raw)
    elif then in ("co-teaching", "cnlcu"):
        log["noise_rate_source"] = "given"
    if targets is not None:  # -relabel: base or SEAL, round 0 on the soft labels
        hook: Any = SEAL(**{"n_rounds": 4 if then == "seal" else 1, **(o.method_options or {}),
                            "soft_targets": targets})
    else:
        hook = make_method(then, noise_rate=noise_rate, **(o.method_options or {}))
    return _fit(dataset, vectors, keep, labels, hook, method=o.method, settings=settings,
                config=config, log=log, started=started, noise_rate=noise_rate)


def _fit(dataset: TextDataset, vectors: np.ndarray | None, keep: np.ndarray, labels: np.ndarray,
         hook: Any, *, method: str, settings: dict[str, Any], config: LoopConfig,
         log: dict[str, Any], started: float, **facts: Any) -> TrainedModel:
    """Train the network on the ``keep`` rows (their head ``vectors``, else their texts) and
    wrap it with its log, ``facts`` after the run's size."""
    inputs: Any = (EmbeddingInputs(vectors[keep]) if vectors is not None
                   else TextInputs.from_dataset(dataset, settings).subset(keep))
    n_classes = len(dataset.classes)
    networks, training = train_networks(network_factory(settings, n_classes), inputs, labels,
                                        n_classes, hook, config)
    log.update(n_used=int(len(keep)), epochs=config.epochs, learning_rate=config.learning_rate,
               batch_size=config.batch_size, **facts, losses=list(training.losses),
               seconds=time.perf_counter() - started)
    return TrainedModel(classes=np.asarray(dataset.classes).astype(str).astype(object),
                        method=method, backbone=settings["backbone"], network=networks[0],
                        settings=settings, log=log)


# The training methods that take label sets.
LABEL_SET_METHODS = ("base", "filter")


def check_label_set_method(method: str) -> None:
    """Refuse a method that does not train on label sets, naming those that do."""
    if method not in LABEL_SET_METHODS:
        takes = ("screens methods that take" if method == "auto" else "takes")
        raise InvalidParameterError(
            f"the label column holds label sets (multi-label), and method {method!r} {takes} "
            f"one label per item; for label sets: {' or '.join(LABEL_SET_METHODS)}")


def train_label_sets(frame: pd.DataFrame, o: TrainOptions, *, settings: dict[str, Any],
                     config: LoopConfig) -> TrainedModel:
    """A multi-label :class:`TrainedModel` (per-class sigmoids), for :func:`train` on label sets."""
    started, random_state, label = time.perf_counter(), o.random_state, o.label
    check_label_set_method(o.method)
    base = prepare_text_dataset(frame, text=o.text, label=None, text_pair=o.text_pair)
    label_sets, classes = read_label_sets(frame[label], column=label, ids=base.ids,
                                          sep=o.label_sep)
    if len(classes) < 2:
        raise InvalidInputError(f"column {label!r} has {len(classes)} class in its label sets; "
                                "at least 2 are needed (one class is binary classification)")
    check_label_set_classes(label_sets, classes)
    log: dict[str, Any] = {"n_train": len(base), "random_state": random_state, "multi_label": True}
    keep = np.arange(len(base))
    if o.method == "filter":
        scanned = scan_label_sets(frame, ScanOptions(
            text=o.text, label=label, text_pair=o.text_pair, label_sep=o.label_sep,
            classes=list(classes), random_state=random_state, keep_columns=False,
            progress=o.progress))
        flagged = np.asarray(scanned.flagged)
        if (o.filter or "drop") == "drop":
            keep = np.flatnonzero(~flagged)
        else:
            label_sets = np.where(flagged[:, None], scanned.suggested_sets, label_sets)
        log.update(filter=o.filter or "drop", flagged=int(flagged.sum()),
                   filter_scorers=list(scanned.member_probs), filter_rule=scanned.flag_rule)
    settings = dict(settings, multi_label=True)
    dataset = TextDataset(base.ids, base.texts, base.text_pairs, label_sets, classes)
    vectors = None
    if settings["backbone"] == "head":
        vectors = embed(dataset, settings, progress=o.progress)
        settings["dim"] = int(vectors.shape[1])
    # the loop's labels are placeholders: the sets are the targets of MultiLabelBase's loss
    return _fit(dataset, vectors, keep, np.zeros(len(keep), dtype=np.int64),
                MultiLabelBase(label_sets[keep]), method=o.method, settings=settings,
                config=config, log=log, started=started)


# The methods --method auto screens: the strongest published ones on NoisywikiHow and
# 20news (benchmarks/results/train_noise.md), and our detect-then-train forms.
AUTO_CANDIDATES = ("base", "mixup", "co-teaching", "seal", "filter+seal", "filter-relabel+seal")
# The share of each class held out for the screen, and how many disjoint such parts it
# measures on (their mean decides: one part's noise alone cost up to 0.7 points of top-1 on
# NoisywikiHow, benchmarks/results/train_noise.md).
SCREEN_SHARE = 0.2
SCREEN_ROUNDS = 3
# The fewest items of a class the screen can hold out and still train on (see _held_out).
_SCREEN_MIN_CLASS = 3


@dataclass(frozen=True)
class Screen(ResultFiles):
    """The screen of ``--method auto``: per candidate, its accuracy on the held-out items' given
    labels (``noisy_top1``, the mean of ``round_1``, ``round_2``...), the winner and why;
    ``n_screen_train`` and ``n_screen_eval`` count the items of one round."""

    table: pd.DataFrame
    winner: str
    reason: str
    n_screen_train: int
    n_screen_eval: int
    rounds: int = 1

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def summary(self) -> str:
        shown = self.table.assign(**{
            column: [f"{v:.2%}" for v in self.table[column]]
            for column in self.table.columns if column == "noisy_top1"
            or column.startswith("round_")}, seconds=[f"{v:.1f}" for v in self.table["seconds"]])
        rounds = (f" in each of {self.rounds} rounds (disjoint held-out parts; the mean "
                  "decides)" if self.rounds > 1 else "")
        return (f"screened {len(self.table)} methods: trained on {self.n_screen_train} items, "
                f"measured on {self.n_screen_eval} held-out items' given labels{rounds}\n"
                + shown.to_string(index=False) + f"\nchose {self.winner}: {self.reason}")

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Screen:
        """A screen as :meth:`to_dict` wrote it (a model's log)."""
        import pandas as pd
        return cls(pd.DataFrame(doc["table"]), doc["winner"], doc["reason"],
                   int(doc["n_screen_train"]), int(doc["n_screen_eval"]),
                   int(doc.get("rounds", 1)))

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "reason": self.reason,
                "n_screen_train": self.n_screen_train, "n_screen_eval": self.n_screen_eval,
                "rounds": self.rounds, "table": self.table.to_dict(orient="records")}


def _options_for(method: str, options: TrainOptions) -> TrainOptions:
    """``options`` for ``method``, without the filter options it does not take
    (``filter_detector`` goes to the filter methods, ``filter`` to plain ``filter`` alone)."""
    return replace(options, method=method, filter=options.filter if method == "filter" else None,
                   filter_detector=options.filter_detector if method.startswith("filter")
                   else None)


def _held_out(labels: np.ndarray, classes: np.ndarray, share: float, rounds: int,
              random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``rounds`` (fit, held-out) row pairs whose held-out parts are disjoint stratified folds of
    ``round(1 / share)``. Every class needs :data:`_SCREEN_MIN_CLASS` items: a held-out part
    takes one of a class too small to split, and :func:`train` needs 2 in the rest."""
    from sklearn.model_selection import StratifiedKFold

    n_parts = max(int(round(1 / share)), 2)
    counts = np.bincount(labels, minlength=len(classes))
    few = [f"{classes[k]} ({counts[k]})"
           for k in np.flatnonzero((counts > 0) & (counts < _SCREEN_MIN_CLASS))]
    if few or len(labels) < n_parts:
        what = (f"{len(few)} class{'es have' if len(few) > 1 else ' has'} fewer: "
                f"{', '.join(few[:10])}" if few else
                f"the data has {len(labels)} items, fewer than the {n_parts} parts")
        raise InvalidInputError(
            f"--method auto screens the methods on held-out items of every class and trains "
            f"them on the rest, so every class needs at least {_SCREEN_MIN_CLASS} items; "
            f"{what}; add items, drop or merge small classes, or name a method")
    if rounds > n_parts:
        raise InvalidParameterError(
            f"rounds={rounds} disjoint held-out parts of share {share:g} do not fit in the "
            f"data: at most {n_parts}")
    folds = StratifiedKFold(n_splits=n_parts, shuffle=True, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class smaller than n_parts: in some parts only
        splits = list(folds.split(np.zeros(len(labels)), labels))
    return [(np.sort(fit), np.sort(held)) for fit, held in splits[:rounds]]


def choose_method(data: pd.DataFrame | str | Path, *, candidates: Sequence[str] | None = None,
                  share: float = SCREEN_SHARE, rounds: int = SCREEN_ROUNDS,
                  **options: Any) -> Screen:
    """Train every candidate on the rest of the data and measure its accuracy on a held-out
    ``share`` of each class's given (noisy) labels, in ``rounds`` disjoint rounds; the highest
    mean wins (ties: the earlier, simpler one). Noisy-label accuracy ranks methods as clean
    accuracy does under uniform and instance-dependent noise (``train_bench`` reports both).

    Parameters
    ----------
    candidates : sequence of str, optional
        Default :data:`AUTO_CANDIDATES`.
    rounds : int
        Held-out parts, at most ``round(1 / share)``; the screen costs ``rounds`` times one.
    options
        Options of :func:`labelaudit.training.train` (text, label, backbone, epochs...).
    """
    import pandas as pd

    names = check_methods(AUTO_CANDIDATES if candidates is None else candidates, "candidate")
    if len(names) < 1:
        raise InvalidParameterError("candidates is empty: give at least one method")
    share = check_number(share, "share", low=0.0, high=1.0, low_open=True, high_open=True)
    rounds = check_int(rounds, "rounds", minimum=1)
    frame = read_frame(data)
    o = TrainOptions(**options)
    if o.label_sep is not None or (o.label in frame.columns and holds_label_sets(frame[o.label])):
        check_label_set_method("auto")
    dataset = prepare_text_dataset(frame, text=o.text, label=o.label, text_pair=o.text_pair)
    assert dataset.labels is not None  # noqa: S101 - label is given
    parts = _held_out(np.asarray(dataset.labels), dataset.classes, share, rounds, o.random_state)
    scores = np.zeros((len(names), rounds))
    seconds = np.zeros(len(names))
    for r, (fit, held) in enumerate(parts):
        part, check = frame.iloc[fit].reset_index(drop=True), frame.iloc[held]
        for i, name in enumerate(names):
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = run_train(part, _options_for(name, o))
            scores[i, r] = evaluate_model(model, check, text=o.text, label=o.label,
                                          text_pair=o.text_pair).top1
            seconds[i] += time.perf_counter() - started
    table = pd.DataFrame({"method": names, "noisy_top1": scores.mean(axis=1)})
    if rounds > 1:
        for r in range(rounds):
            table[f"round_{r + 1}"] = scores[:, r]
    table["seconds"] = seconds
    best = int(np.argmax(table["noisy_top1"].to_numpy()))  # the first of equal ones
    winner = str(table["method"].iloc[best])
    order = table["noisy_top1"].sort_values(ascending=False, kind="stable")
    runner = (f"; next {table['method'].iloc[order.index[1]]} "
              f"{order.iloc[1]:.2%}" if len(order) > 1 else "")
    mean = "mean " if rounds > 1 else ""
    reason = (f"the highest {mean}accuracy on the held-out items' given labels "
              f"({table['noisy_top1'].iloc[best]:.2%}{runner}), the measure that ranks the "
              "methods as clean accuracy does under injected noise (train-bench)")
    return Screen(table, winner, reason, len(parts[0][0]), len(parts[0][1]), rounds)


# The training log's entries that the metrics file keeps.
_FACTS = ("flagged", "filter", "dropped", "relabelled", "filter_scorers", "filter_noise_share",
          "filter_noise_share_cleanlab", "filter_detector", "filter_then", "filter_rounds",
          "auto", "filter_accuracy", "noise_rate", "noise_rate_source", "noise_rate_estimated",
          "noise_rate_cleanlab", "achieved_noise_rate", "multi_label", "filter_rule")


def training_notes(model: TrainedModel) -> list[str]:
    """Lines for a person: ``--method auto``'s screen, the run, what filter dropped (or
    relabelled) and why, and the noise rate co-teaching or CNLCU used and its source."""
    record = model.log
    notes = [Screen.from_dict(record["auto"]).summary()] if "auto" in record else []
    notes.append(f"trained {model.method} ({model.backbone}) on {record['n_used']} of "
                 f"{record['n_train']} items in {record['seconds']:.1f} s")
    if record.get("multi_label") and "filter" in record:
        done = "dropped" if record["filter"] == "drop" else "gave their suggested set to"
        notes.append(f"filter: {done} {record['flagged']} of {record['n_train']} items whose "
                     f"label set a cross-fitted multi-label scan "
                     f"({', '.join(record['filter_scorers'])}) flags ({record['filter_rule']})")
    elif "filter" in record and "filter_scorers" in record:
        done = "dropped" if record["filter"] == "drop" else "relabelled"
        n, total = record["flagged"], record["n_train"]
        notes.append(
            f"filter: {done} {n} of {total} items ({n / max(total, 1):.1%}): those a "
            f"cross-fitted scan ({', '.join(record['filter_scorers'])}, out-of-sample "
            f"accuracy {record['filter_accuracy']:.3f}) flags as cleanlab's estimated number "
            f"of label errors; estimated share of wrong labels {record['filter_noise_share']:.1%}")
    elif "filter" in record:
        total = record["n_train"]
        for step in record["filter_rounds"]:
            notes.append(
                f"filter round {step['round']}: a cross-fitted {record['filter_detector']} "
                f"head ({record['filter_folds']} folds, every class in every training part) "
                f"estimates {step['noise_share']:.1%} of the labels wrong "
                f"(cleanlab's confident joint: {step['noise_share_cleanlab']:.1%}); flagged "
                f"{step['flagged']} of {total} ({step['flagged'] / max(total, 1):.1%})")
        notes.append(
            f"filter: {'dropped' if record['filter'] == 'drop' else 'soft-relabelled'} the "
            f"{record['flagged']} flagged items, then trained {record['filter_then']}")
    if "noise_rate_source" in record:
        notes.append(f"noise rate: {record['noise_rate']:.3f} ({record['noise_rate_source']}"
                     f"{' with --noise-rate' if record['noise_rate_source'] == 'given' else ''})")
    return notes


def training_facts(model: TrainedModel, **more: Any) -> dict[str, Any]:
    """Method, time, item counts and the training log's facts (:data:`_FACTS`: what filter
    dropped, the noise rate...), with ``more`` (the seed...) after the method."""
    facts = {"method": model.method, "backbone": model.backbone, **more,
             "train_seconds": model.log["seconds"], "n_train": model.log["n_train"],
             "n_used": model.log["n_used"]}
    return facts | {key: model.log[key] for key in _FACTS if key in model.log}
