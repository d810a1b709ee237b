"""Detect-then-train: the ``filter[-relabel][-iterate][+METHOD]`` methods of
:func:`labelaudit.training.train`, whose ``method`` says what each step does. The detector's
probabilities are out-of-sample (cross-fitted over at most 5 stratified folds); the flagged
items are the high-loss component of a two-component mixture of their losses, at most
:data:`NOISE_RATE_CAP` of them (:func:`clean_labels` says why not cleanlab's count)."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditWarning
from labelaudit.detect import import_cleanlab, suggest_labels
from labelaudit.models import (
    EmbeddingInputs,
    LoopConfig,
    Scorer,
    crossfit_pred_probs,
    head_factory,
    make_folds,
    predict_proba,
    train_networks,
)
from labelaudit.scanning import ScanResult, scan
from labelaudit.training._methods import METHODS, make_method

if TYPE_CHECKING:
    import pandas as pd

    from labelaudit.training._train import TrainOptions

# The filter methods offered by name: `filter`, a step of `train` itself, and its
# detect-then-train forms, each read by FilterPlan.parse (the grammar allows a few more).
FILTER_METHODS: tuple[str, ...] = (
    "filter", "filter-relabel", "filter-iterate", "filter+seal", "filter+co-teaching",
    "filter+mixup", "filter-relabel+seal", "filter-relabel-iterate+seal")
# The detectors of a filter method: the scan, or a head trained with one of these methods
# (co-teaching and CNLCU need a noise rate before any is estimated, so they are not offered).
FILTER_DETECTORS: tuple[str, ...] = ("scan", "seal", "base", "mixup")
# The most an estimated share of wrong labels is taken to be: beyond it, the estimate counts
# the model's own errors more than label errors (a weak model's confident joint is 1 -
# its accuracy), and co-teaching's small-loss trick needs the clean items in the majority.
NOISE_RATE_CAP = 0.5
# An estimated share of wrong labels at or above this says the labels carry no signal.
NO_SIGNAL_RATE = 0.9
_RELABEL_METHODS = ("base", "seal")
_HEAD_TRAINING: dict[str, Any] = {"epochs": 20, "batch_size": 64, "learning_rate": 1e-3}


class FilterWarning(LabelAuditWarning):
    """``filter`` dropped (or relabelled) more items than the estimated share of wrong
    labels."""


def noise_share(labels: np.ndarray, pred_probs: np.ndarray) -> float:
    """cleanlab's share of wrong labels, at most 0.95: 1 - the trace of the calibrated confident
    joint (Northcutt et al. 2021, equation 3) of out-of-sample ``pred_probs``."""
    joint = import_cleanlab("cleanlab.count").estimate_joint(labels, pred_probs)
    return float(np.clip(1.0 - np.trace(joint), 0.0, 0.95))


@dataclass(frozen=True)
class FilterPlan:
    """The steps a ``filter`` method name stands for (see :func:`labelaudit.training.train`)."""

    relabel: bool = False
    rounds: int = 1
    then: str = "base"
    detector: str = "seal"

    @classmethod
    def parse(cls, name: str, *, detector: str | None = None) -> FilterPlan:
        head, _, then = str(name).partition("+")
        steps = head.split("-")
        if steps[0] != "filter" or len(set(steps[1:])) != len(steps[1:]) \
                or not set(steps[1:]) <= {"relabel", "iterate"}:
            raise InvalidParameterError(
                f"unknown filter method {name!r}: filter[-relabel][-iterate][+METHOD], "
                f"e.g. {', '.join(FILTER_METHODS[1:4])}")
        then = then or "base"
        if then not in METHODS:
            raise InvalidParameterError(f"{name!r}: {then!r} is not a training method; after "
                                        f"'+' give one of {', '.join(METHODS)}")
        relabel = "relabel" in steps
        if relabel and then not in _RELABEL_METHODS:
            raise InvalidParameterError(
                f"{name!r}: a relabelled item trains on a soft label, which "
                f"{' and '.join(_RELABEL_METHODS)} take and {then} does not; use "
                f"filter+{then} (drop the flagged items) or filter-relabel+seal")
        plain = name == "filter"
        chosen = detector or ("scan" if plain else "seal")
        if chosen not in FILTER_DETECTORS:
            raise InvalidParameterError(f"filter_detector must be one of "
                                        f"{', '.join(FILTER_DETECTORS)}; got {chosen!r}")
        return cls(relabel=relabel, rounds=2 if "iterate" in steps else 1, then=then,
                   detector=chosen)


class HeadScorer(Scorer):
    """The detector of the ``filter`` methods: a head network over sentence embeddings
    trained with an LNL method. Rows labelled ``-1`` (dropped by an earlier round) are scored
    but not trained on."""

    name = "head"

    def __init__(self, method: str = "seal", *, hidden: int = 256, dropout: float = 0.1,
                 device: str | None = None, random_state: int = 0) -> None:
        self.method = method
        self.hidden = hidden
        self.dropout = dropout
        self.device = device
        self.random_state = random_state

    def prepare(self, data: Any, *, progress: bool = False) -> Any:
        raise NotImplementedError("HeadScorer is fitted on embeddings the caller computed")

    def fit(self, features: Any, labels: Any, *, n_classes: int) -> HeadScorer:
        labels = np.asarray(labels)
        used = labels >= 0
        config = LoopConfig(**_HEAD_TRAINING, device=self.device, random_state=self.random_state)
        networks, _ = train_networks(
            head_factory(int(np.shape(features)[1]), n_classes, hidden=self.hidden,
                         dropout=self.dropout),
            EmbeddingInputs(np.asarray(features)[used]), labels[used], n_classes,
            make_method(self.method), config)
        self.network_ = networks[0]
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        return predict_proba(self.network_, EmbeddingInputs(np.asarray(features)))


# The last detections of this process: filter methods run on the same data and seed (the
# methods of one train-bench cell, a screen's candidates, a benchmark's ablation rows)
# share their first round. At most this many bytes of probabilities are kept.
_DETECTIONS: dict[str, np.ndarray] = {}
_KEEP_BYTES = 512 * 2**20


def _detection_key(vectors: np.ndarray, labels: np.ndarray, folds: np.ndarray,
                   scorer: HeadScorer, n_classes: int) -> str:
    digest = hashlib.sha256()
    for array in (np.ascontiguousarray(vectors), labels, folds):
        digest.update(str((array.shape, array.dtype)).encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(repr((scorer.method, scorer.hidden, scorer.dropout, scorer.device,
                        scorer.random_state, n_classes)).encode())
    return digest.hexdigest()


def detect(vectors: np.ndarray, labels: np.ndarray, n_classes: int, *, detector: str,
           trained: np.ndarray | None = None, settings: dict[str, Any], device: str | None = None,
           random_state: int = 0, progress: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
    """Out-of-sample probabilities of every item from ``detector`` heads cross-fitted over at
    most 5 stratified folds, trained on the ``trained`` items (default all), and how the folds
    cover the classes."""
    labels = np.asarray(labels)
    counts = np.bincount(labels, minlength=n_classes)
    present = counts[counts > 0]
    folds = make_folds(labels, n_folds=int(min(5, present.min())), random_state=random_state)
    fit_labels = labels.copy()
    if trained is not None:
        fit_labels[~np.asarray(trained, dtype=bool)] = -1
    # a class whose kept items leave a training part without it keeps all its items: the
    # heads must see every class in every training part
    restored = set()
    for fold in np.unique(folds):
        part = np.bincount(fit_labels[(folds != fold) & (fit_labels >= 0)], minlength=n_classes)
        restored |= set(np.flatnonzero((counts > 0) & (part == 0)).tolist())
    for k in restored:
        fit_labels[labels == k] = k
    smallest = min(int(np.bincount(fit_labels[(folds != fold) & (fit_labels >= 0)],
                                   minlength=n_classes)[counts > 0].min())
                   for fold in np.unique(folds))
    scorer = HeadScorer(detector, hidden=settings.get("hidden", 256),
                        dropout=settings.get("dropout", 0.1), device=device,
                        random_state=random_state)
    key = _detection_key(vectors, fit_labels, folds, scorer, n_classes)
    probs = _DETECTIONS.get(key)
    if probs is None:
        probs = crossfit_pred_probs(scorer, vectors, fit_labels, folds, n_classes=n_classes,
                                    progress=progress)
        _DETECTIONS[key] = probs
        while sum(p.nbytes for p in _DETECTIONS.values()) > _KEEP_BYTES:
            _DETECTIONS.pop(next(iter(_DETECTIONS)))
    return probs.copy(), {"filter_folds": int(len(np.unique(folds))),
                          "filter_smallest_class_per_fold": smallest,
                          "filter_classes_kept_whole": len(restored)}


def _check_signal(share: float) -> None:
    if share >= NO_SIGNAL_RATE:
        raise InvalidInputError(
            f"the detector estimates {share:.0%} of the labels wrong (cleanlab's confident "
            f"joint): at {NO_SIGNAL_RATE:.0%} or more the labels carry no signal to clean "
            "with; check the label column, or train with a method that does not filter")


def wrong_posterior(loss: np.ndarray, *, random_state: int = 0) -> np.ndarray:
    """Per item, the posterior that its label is wrong: the high-loss component of a
    two-component Gaussian mixture of the out-of-sample losses (DivideMix's label division,
    Li et al. 2020); all zeros for fewer than 10 items or equal losses."""
    from sklearn.mixture import GaussianMixture

    loss = np.asarray(loss, dtype=np.float64)
    if len(loss) < 10 or np.ptp(loss) <= 1e-12:
        return np.zeros(len(loss))
    mixture = GaussianMixture(2, random_state=random_state, reg_covar=5e-4, max_iter=200)
    mixture.fit(loss[:, None])
    high = int(np.argmax(mixture.means_.ravel()))
    posterior = mixture.predict_proba(loss[:, None])[:, high]
    # the mixture's tails may cross: a lower loss never gets a higher posterior
    order = np.argsort(loss, kind="stable")
    posterior[order] = np.maximum.accumulate(posterior[order])
    return posterior


def clean_labels(labels: np.ndarray, pred_probs: np.ndarray, *, relabel: bool, cap: float,
                 random_state: int = 0) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any]]:
    """The flag mask, the soft targets (rows summing to 1) when ``relabel`` else None, and
    the facts for the log. Flagged: the items whose :func:`wrong_posterior` ``w`` is above 0.5,
    at most ``cap`` of them (the highest losses); with ``relabel`` every item trains on
    ``(1 - w) * its given label + w * the detector's probabilities``.

    cleanlab's confident-joint share of wrong labels is only recorded, and refuses labels
    without signal (:data:`NO_SIGNAL_RATE`): with a weak detector (many classes, few items
    each) it counts the detector's errors too (NoisywikiHow: 0.60 at a true 0.20).
    """
    labels = np.asarray(labels)
    share = noise_share(labels, pred_probs)
    _check_signal(share)
    loss = -np.log(np.clip(pred_probs[np.arange(len(labels)), labels], 1e-12, None))
    wrong = wrong_posterior(loss, random_state=random_state)
    n_flagged = int(min((wrong > 0.5).sum(), round(cap * len(labels))))
    order = np.argsort(-loss, kind="stable")
    flagged = np.zeros(len(labels), dtype=bool)
    flagged[order[:n_flagged]] = True
    info: dict[str, Any] = {"filter_noise_share_cleanlab": share,
                            "filter_noise_share": float(wrong.mean()),
                            "flagged": n_flagged,
                            "filter_accuracy": float(np.mean(pred_probs.argmax(axis=1)
                                                             == labels))}
    if not relabel:
        return flagged, None, {**info, "filter": "drop", "dropped": n_flagged}
    probs = pred_probs / pred_probs.sum(axis=1, keepdims=True)
    targets = (1.0 - wrong)[:, None] * np.eye(pred_probs.shape[1])[labels] + wrong[:, None] * probs
    return flagged, targets, {**info, "filter": "relabel", "relabelled": n_flagged}


def _scan_filter(frame: pd.DataFrame, dataset: Any, o: TrainOptions, settings: dict) -> Cleaned:
    """Rows kept and their labels after a cross-fitted scan dropped or relabelled the flagged."""
    mode, scorers = o.filter or "drop", o.filter_scorers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        encodes = "embed" in scorers  # scan refuses an encoder no member takes
        result = scan(frame, text=o.text, label=o.label, text_pair=o.text_pair, scorers=scorers,
                      random_state=o.random_state,
                      model=settings.get("encoder") if encodes else None,
                      cache_dir=settings.get("cache_dir") if encodes else None,
                      progress=o.progress)
    assert isinstance(result, ScanResult)  # noqa: S101 - train reads one label per item
    flagged = np.asarray(result.flagged, dtype=bool)
    labels = np.asarray(dataset.labels).copy()
    share = (noise_share(result.labels, result.pred_probs)
             if isinstance(result.pred_probs, np.ndarray)  # many classes: CL's own count
             else result.n_issues_estimate / max(1, len(result.labels)))
    _check_signal(share)
    expected = min(share, NOISE_RATE_CAP)
    n_flagged, done = int(flagged.sum()), "dropped" if mode == "drop" else "relabelled"
    info = {"filter": mode, "flagged": n_flagged, done: n_flagged,
            "filter_scorers": list(scorers), "filter_noise_share": expected,
            "filter_accuracy": float(result.accuracy)}
    if n_flagged > expected * len(labels) + max(1.0, 0.01 * len(labels)):
        warnings.warn(FilterWarning(
            f"filter {done} {n_flagged} of {len(labels)} items ({n_flagged / len(labels):.0%}), "
            f"more than the estimated share of wrong labels ({expected:.0%}"
            f"{f', capped from {share:.0%}' if share > expected else ''}): the scan's model "
            f"(out-of-sample accuracy {result.accuracy:.2f}) flags its own errors too, so "
            "the model may end below method=base"), stacklevel=4)
    if mode == "relabel":
        # the scan read the same label column, so its classes are the dataset's
        suggested, _ = suggest_labels(result.labels, result.pred_probs)
        labels[flagged] = suggested[flagged]
        return Cleaned(np.arange(len(labels)), labels, None, info)
    keep = np.flatnonzero(~flagged)
    return Cleaned(keep, labels[keep], None, info)


@dataclass(frozen=True)
class Cleaned:
    """What a filter method trains on; ``targets``: the soft targets of ``-relabel``."""

    keep: np.ndarray
    labels: np.ndarray
    targets: np.ndarray | None
    info: dict[str, Any]


def run_filter(plan: FilterPlan, frame: pd.DataFrame, dataset: Any, o: TrainOptions, *,
               settings: dict[str, Any], vectors: Callable[[], np.ndarray]) -> Cleaned:
    """The detection and cleaning steps of ``plan`` (``vectors()``: the head's embeddings)."""
    if plan.detector == "scan":
        return _scan_filter(frame, dataset, o, settings)
    given = np.asarray(dataset.labels)
    n_classes = len(dataset.classes)
    embeddings = vectors()
    trained = None
    rounds = []
    for round_index in range(plan.rounds):
        probs, coverage = detect(embeddings, given, n_classes, detector=plan.detector,
                                 trained=trained, settings=settings, device=o.device,
                                 random_state=o.random_state, progress=o.progress)
        flagged, targets, info = clean_labels(given, probs, relabel=plan.relabel,
                                              cap=NOISE_RATE_CAP, random_state=o.random_state)
        rounds.append({"round": round_index + 1, "flagged": info["flagged"],
                       "noise_share": info["filter_noise_share"],
                       "noise_share_cleanlab": info["filter_noise_share_cleanlab"],
                       "detector_accuracy": info["filter_accuracy"]})
        trained = ~flagged
    info.update(coverage, filter_detector=plan.detector, filter_then=plan.then,
                filter_rounds=rounds)
    if targets is not None:
        labels = np.where(flagged, targets.argmax(axis=1), given)
        return Cleaned(np.arange(len(given)), labels, targets, info)
    keep = np.flatnonzero(~flagged)
    return Cleaned(keep, given[keep], None, info)
