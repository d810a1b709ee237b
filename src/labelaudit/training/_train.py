"""``labelaudit.train``: fit a classifier with a learning-with-noisy-labels method, and
measure it on a clean evaluation set."""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditWarning
from labelaudit._validation import check_choice, check_int, check_number
from labelaudit.training._filter import NOISE_RATE_CAP, noise_share
from labelaudit.training._model import TrainedModel

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FILTER_MODES", "NoiseEstimateWarning", "estimate_noise_rate", "method_names", "train"]

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
    """Every training method: the LNL methods, and ``filter``."""
    from labelaudit.registry import LNL_METHODS

    return LNL_METHODS.names()


def _read(data: pd.DataFrame | str | Path) -> pd.DataFrame:
    import pandas as pd

    from labelaudit.io import read_table

    return data if isinstance(data, pd.DataFrame) else read_table(data)


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
    """cleanlab's estimate of the share of wrong labels (:func:`noise_share`) from
    cross-fitted, strongly regularised logistic regression on the embeddings.

    The estimate is only as good as the model: when the model is weak (many classes, few
    items each), it counts the model's errors too; :func:`train` caps it at
    :data:`NOISE_RATE_CAP`.
    """
    from labelaudit.models import make_scorer
    from labelaudit.models._crossfit import crossfit_pred_probs, make_folds

    scorer = make_scorer("embed", C=_ESTIMATE_C)
    folds = make_folds(labels, n_folds=min(5, int(np.bincount(labels).min())),
                       random_state=random_state)
    probs = crossfit_pred_probs(scorer, embeddings, labels, folds, n_classes=n_classes)
    return noise_share(labels, probs)


def _capped(estimate: float, *, source: str) -> float:
    """An estimated share of wrong labels, at most :data:`NOISE_RATE_CAP` (with a
    :class:`NoiseEstimateWarning` when it was above)."""
    if estimate <= NOISE_RATE_CAP:
        return estimate
    warnings.warn(NoiseEstimateWarning(
        f"{source} puts {estimate:.0%} of the labels wrong, more than {NOISE_RATE_CAP:.0%}: "
        "the model is too weak on this data to tell label errors from its own, so "
        f"{NOISE_RATE_CAP} is used; give noise_rate=RATE if you know the share"),
        stacklevel=3)
    return NOISE_RATE_CAP


def train(
    data: pd.DataFrame | str | Path,
    *,
    text: str = "text",
    label: str = "label",
    text_pair: str | None = None,
    method: str = "base",
    backbone: Literal["head", "finetune"] = "head",
    model: str | None = None,
    noise_rate: float | None = None,
    filter: Literal["drop", "relabel"] | None = None,  # noqa: A002 - mirrors the CLI flag
    filter_scorers: Sequence[str] = ("tfidf", "embed"),
    filter_detector: str | None = None,
    epochs: int | None = None,
    batch_size: int = 64,
    learning_rate: float | None = None,
    hidden: int | None = None,
    dropout: float = 0.1,
    method_options: dict[str, Any] | None = None,
    device: str | None = None,
    cache_dir: str | Path | None = None,
    random_state: int = 0,
    label_sep: str | None = None,
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
        Training items with ``text`` (and ``text_pair``) and their possibly wrong
        ``label``.
    method : str
        ``base`` (cross-entropy), ``mixup``, ``data-parameters``, ``sr``, ``co-teaching``,
        ``cnlcu``, ``seal``; ``filter`` (ours: a cross-fitted scan, then ``base`` on the
        data with the flagged items dropped or relabelled, ``filter``) and the other
        detect-then-train methods ``filter[-relabel][-iterate][+METHOD]`` (see
        :mod:`labelaudit.training._filter`: a cross-fitted SEAL head detects, a two-component
        mixture of its out-of-sample losses says which labels are likely wrong,
        ``-relabel`` trains every item on a soft label instead of dropping the flagged ones,
        ``-iterate`` detects a second time with models trained on the kept items,
        ``+METHOD`` trains with METHOD on the result); or ``auto``: screen the candidates
        on 3 disjoint held-out fifths of each class of the given data, by mean accuracy on
        their (noisy) labels, and train the winner on everything
        (:func:`labelaudit.training.choose_method`).
    backbone : {"head", "finetune"}
        ``head``: a small network over frozen sentence embeddings of ``model`` (default
        all-MiniLM-L6-v2, from the scan's embedding cache), seconds on a CPU;
        ``finetune``: the whole ``model`` fine-tuned as a sequence classifier (a GPU when
        present).
    noise_rate : float, optional
        Share of wrong labels, in [0, 1), for co-teaching and CNLCU; estimated with
        cleanlab when not given (:func:`estimate_noise_rate`), at most
        :data:`NOISE_RATE_CAP` (a :class:`NoiseEstimateWarning` says when it was capped).
        The log records the rate used and its source.
    filter : {"drop", "relabel"}, optional
        What ``filter`` does with the flagged items (default drop); ``filter_scorers`` are
        the scan's. The log records how many were dropped (or relabelled); a
        :class:`FilterWarning` says when that is more than the share of wrong labels
        cleanlab estimates from the scan's probabilities (capped at
        :data:`NOISE_RATE_CAP`). The other filter methods say it in their name.
    filter_detector : {"scan", "seal", "base", "mixup"}, optional
        The detector of a filter method: the scan (``filter``'s default) or a head trained
        with that method, cross-fitted (the other filter methods' default: ``seal``).
    epochs, learning_rate : optional
        Defaults: 20 and 1e-3 for the head, 4 and 3e-5 (with 6 % warmup) for fine-tuning.
    hidden, dropout : head size (``hidden`` default :data:`HIDDEN`; ``hidden=0``: a linear
        head). With ``backbone="finetune"``, ``hidden`` sizes only the detector heads of
        the filter methods (a linear classifier tops the fine-tuned model).
    method_options : dict, optional
        Options of the method (e.g. ``{"alpha": 0.5}`` for mixup, ``{"n_rounds": 3}`` for
        SEAL).

    Returns
    -------
    TrainedModel

    References
    ----------
    Wu et al. (2023), NoisywikiHow: A Benchmark for Learning with Real-world Noisy Labels
    in Natural Language Processing (the methods and their defaults, appendix tables).
    """
    from labelaudit.io import holds_label_sets, prepare_text_dataset
    from labelaudit.models import EmbeddingInputs, LoopConfig, TextInputs, train_networks
    from labelaudit.training._backbones import BACKBONES, embed, network_factory
    from labelaudit.training._filter import FilterPlan, run_filter
    from labelaudit.training._label_sets import train_label_sets
    from labelaudit.training._methods import make_method
    from labelaudit.training._methods.seal import SEAL

    started = time.perf_counter()
    check_choice(method, "method", method_names())
    check_choice(backbone, "backbone", BACKBONES)
    if filter is not None:
        check_choice(filter, "filter", FILTER_MODES)
        if method != "filter":
            raise InvalidParameterError(
                f"filter={filter!r} says what method='filter' does with flagged items; "
                f"{method!r} " + ("says it in its name" if method.startswith("filter")
                                  else "flags none"))
    plan = (FilterPlan.parse(method, detector=filter_detector)
            if method.startswith("filter") else None)
    if filter_detector is not None and plan is None:
        raise InvalidParameterError(f"filter_detector is the detector of a filter method; "
                                    f"{method!r} detects nothing")
    check_int(random_state, "random_state", minimum=0)
    check_int(batch_size, "batch_size", minimum=1)
    hidden = check_int(HIDDEN if hidden is None else hidden, "hidden", minimum=0)
    if device is not None:  # a missing GPU is one line now, not once the texts are encoded
        from labelaudit.models import resolve_device

        resolve_device(device)
    if noise_rate is not None:
        if not isinstance(noise_rate, (int, float)) or not 0.0 <= noise_rate < 1.0:
            raise InvalidParameterError(f"noise_rate must be in [0, 1); got {noise_rate}",
                                        param="noise_rate")
    defaults = _DEFAULTS[backbone]
    epochs = check_int(epochs if epochs is not None else defaults["epochs"], "epochs",
                       minimum=1)
    learning_rate = check_number(learning_rate if learning_rate is not None
                                 else defaults["learning_rate"], "learning_rate",
                                 low=0.0, low_open=True)
    frame = _read(data)
    config = LoopConfig(epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
                        warmup=defaults["warmup"], device=device,
                        bf16=backbone == "finetune", random_state=random_state,
                        progress=progress)
    if label_sep is not None or (label in frame.columns and holds_label_sets(frame[label])):
        if noise_rate is not None or filter_detector is not None:
            raise InvalidParameterError("noise_rate and filter_detector go with one label per "
                                        "item; label sets train with base or filter")
        return train_label_sets(
            frame, text=text, label=label, text_pair=text_pair, label_sep=label_sep,
            method=method, filter_mode=filter, backbone=backbone,
            settings={"backbone": backbone, "encoder": model, "text": text,
                      "text_pair": text_pair, "hidden": hidden, "dropout": dropout,
                      "cache_dir": None if cache_dir is None else str(cache_dir)},
            config=config, random_state=random_state, progress=progress)
    dataset = prepare_text_dataset(frame, text=text, label=label, text_pair=text_pair)
    assert dataset.labels is not None  # noqa: S101 - label is given
    _check_classes(dataset.labels, dataset.classes)
    settings: dict[str, Any] = {
        "backbone": backbone, "encoder": model, "text": text, "text_pair": text_pair,
        "hidden": hidden, "dropout": dropout,
        "cache_dir": None if cache_dir is None else str(cache_dir)}
    log: dict[str, Any] = {"n_train": len(dataset), "random_state": random_state}
    if "clean_label" in frame.columns:  # as `labelaudit noise` writes: the rate achieved
        from labelaudit.io import text_keys

        log["achieved_noise_rate"] = float(np.mean(
            text_keys(frame["clean_label"]) != text_keys(frame[label])))
    keep, labels = np.arange(len(dataset)), np.asarray(dataset.labels)
    vectors = None
    if backbone == "head":  # the head's inputs, and the head detector's
        vectors = embed(dataset, settings, progress=progress)
        settings["dim"] = int(vectors.shape[1])
    targets = None
    if plan is not None:
        def detector_vectors() -> np.ndarray:
            return vectors if vectors is not None else embed(
                dataset, dict(settings, encoder=None), progress=progress)

        cleaned = run_filter(plan, frame, dataset, text=text, label=label,
                             text_pair=text_pair, mode=filter or "drop",
                             scorers=filter_scorers, settings=settings,
                             vectors=detector_vectors, device=device,
                             random_state=random_state, progress=progress)
        keep, labels, targets = cleaned.keep, cleaned.labels, cleaned.targets
        log.update(cleaned.info)
    if vectors is not None:
        inputs: Any = EmbeddingInputs(vectors[keep])
    else:
        inputs = TextInputs.from_dataset(dataset, settings).subset(keep)
    then = plan.then if plan is not None else method
    if then in ("co-teaching", "cnlcu") and noise_rate is None:
        if vectors is None:
            vectors = embed(dataset, dict(settings, encoder=None), progress=progress)
        raw = estimate_noise_rate(vectors[keep], labels, len(dataset.classes),
                                  random_state=random_state)
        noise_rate = _capped(raw, source=ESTIMATE_SOURCE)
        log.update(noise_rate_source=ESTIMATE_SOURCE + (
            f", {raw:.3f} capped at {NOISE_RATE_CAP}" if raw > noise_rate else ""),
            noise_rate_estimated=noise_rate, noise_rate_cleanlab=raw)
    elif then in ("co-teaching", "cnlcu"):
        log["noise_rate_source"] = "given"
    if targets is not None:  # -relabel: base or SEAL, round 0 on the soft labels
        hook: Any = SEAL(**{"n_rounds": 4 if then == "seal" else 1, **(method_options or {}),
                            "soft_targets": targets})
    else:
        hook = make_method(then, noise_rate=noise_rate, **(method_options or {}))
    networks, training = train_networks(network_factory(settings, len(dataset.classes)),
                                        inputs, labels, len(dataset.classes), hook, config)
    log.update(n_used=int(len(keep)), epochs=epochs, learning_rate=learning_rate,
               batch_size=batch_size, noise_rate=noise_rate, losses=list(training.losses),
               seconds=time.perf_counter() - started)
    return TrainedModel(classes=np.asarray(dataset.classes).astype(str).astype(object),
                        method=method, backbone=backbone, network=networks[0],
                        settings=settings, log=log)
