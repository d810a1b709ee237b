"""Latent-class label aggregation through crowd-kit: Dawid-Skene, GLAD and MACE."""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError, MissingExtraError
from labelaudit.agreement._aggregation import Aggregation
from labelaudit.agreement._annotations import Annotations, to_annotations

__all__ = ["aggregate", "dawid_skene", "glad", "mace"]

Method = Literal["majority_vote", "dawid_skene", "glad", "mace"]
METHODS = ("majority_vote", "dawid_skene", "glad", "mace")


def _crowdkit_frame(ann: Annotations) -> pd.DataFrame:
    if ann.annotators is None:
        raise InvalidInputError(
            "Dawid-Skene, GLAD and MACE model each annotator, so they need annotator ids; "
            "give an annotator column (or {'worker': id, 'label': value} objects), or use "
            "majority vote"
        )
    return pd.DataFrame(
        {"task": ann.item_codes, "worker": ann.annotator_codes, "label": ann.label_codes}
    )


def _import_crowdkit():
    try:
        import crowdkit.aggregation as agg
    except ImportError as exc:  # pragma: no cover - crowd-kit is a core dependency
        raise MissingExtraError("crowd-kit", "agreement") from exc
    return agg


def _result(
    method: str, ann: Annotations, probas: pd.DataFrame, quality: np.ndarray
) -> Aggregation:
    probs = np.zeros((ann.n_items, ann.n_classes))
    cols = [int(c) for c in probas.columns]
    rows = [int(r) for r in probas.index]
    probs[np.ix_(rows, cols)] = probas.to_numpy(dtype=float)
    probs = probs / np.maximum(probs.sum(axis=1, keepdims=True), 1e-300)
    winner = probs.argmax(axis=1)
    top = probs.max(axis=1, keepdims=True)
    tied = (np.isclose(probs, top, rtol=0, atol=1e-12)).sum(axis=1) > 1
    n_ann = np.bincount(ann.item_codes, minlength=ann.n_items)
    return Aggregation(
        method=method,
        items=ann.items,
        labels=np.asarray(ann.classes, dtype=object)[winner].astype(object),
        classes=ann.classes,
        probs=probs,
        support=probs[np.arange(ann.n_items), winner],
        n_annotations=n_ann,
        tied=tied,
        annotators=ann.annotators,
        annotator_quality=quality,
    )


def _check_items(ann: Annotations) -> None:
    n_ann = np.bincount(ann.item_codes, minlength=ann.n_items)
    if (n_ann == 0).any():
        raise InvalidInputError(
            f"{int((n_ann == 0).sum())} items have no annotation; drop them before aggregating"
        )


def _prepare(
    annotations: pd.DataFrame | Annotations,
    item: str | None,
    annotator: str | None,
    label: str | None,
):
    """Validate the annotations for a crowd-kit model; return them and ``crowdkit.aggregation``."""
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    _check_items(ann)
    return ann, _import_crowdkit()


def _fit_quietly(model, frame: pd.DataFrame) -> None:
    """Fit a crowd-kit model without its convergence and pandas warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(frame)


def dawid_skene(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    n_iter: int = 100,
    tol: float = 1e-5,
) -> Aggregation:
    """Aggregate with the Dawid-Skene model (per-annotator confusion matrices, EM).

    Parameters
    ----------
    annotations : DataFrame
        Long format with annotator ids.
    item, annotator, label : str, optional
        Column names (usual aliases when not given).
    n_iter, tol
        EM iterations and tolerance (crowd-kit's ``DawidSkene``).

    Returns
    -------
    Aggregation
        ``probs`` are posterior class probabilities; ``annotator_quality`` is each annotator's
        accuracy under the model, :math:`\\sum_c \\pi_c\\, P(\\text{label}=c \\mid \\text{true}=c)`.

    References
    ----------
    Dawid, A. P. and Skene, A. M. (1979). Maximum likelihood estimation of observer
    error-rates using the EM algorithm. Applied Statistics 28(1).

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "annotator": list("abcabc"),
    ...                    "label": ["x", "x", "y", "y", "y", "y"]})
    >>> dawid_skene(df).labels.tolist()
    ['x', 'y']
    """
    ann, agg = _prepare(annotations, item, annotator, label)
    model = agg.DawidSkene(n_iter=n_iter, tol=tol)
    _fit_quietly(model, _crowdkit_frame(ann))
    errors = model.errors_  # index (worker, observed label), columns true label
    priors = model.priors_
    quality = np.full(len(ann.annotators), np.nan)  # type: ignore[arg-type]
    for w in range(len(quality)):
        acc = 0.0
        for c in priors.index:
            try:
                acc += float(priors[c]) * float(errors.loc[(w, c), c])
            except KeyError:
                continue
        quality[w] = acc
    return _result("dawid_skene", ann, model.probas_, quality)


def glad(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    n_iter: int = 100,
    tol: float = 1e-5,
) -> Aggregation:
    """Aggregate with GLAD (annotator ability and item difficulty).

    Returns
    -------
    Aggregation
        ``annotator_quality`` is each annotator's ability ``alpha`` (higher is better; 0 is
        guessing, negative is adversarial).

    References
    ----------
    Whitehill, J. et al. (2009). Whose vote should count more: optimal integration of labels
    from labelers of unknown expertise. NIPS 22.

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "annotator": list("abcabc"),
    ...                    "label": ["x", "x", "y", "y", "y", "y"]})
    >>> glad(df).labels.tolist()
    ['x', 'y']
    """
    ann, agg = _prepare(annotations, item, annotator, label)
    model = agg.GLAD(n_iter=n_iter, tol=tol)
    _fit_quietly(model, _crowdkit_frame(ann))
    alphas = model.alphas_
    quality = np.array(
        [float(alphas.get(w, np.nan)) for w in range(len(ann.annotators))]  # type: ignore[arg-type]
    )
    return _result("glad", ann, model.probas_, quality)


def mace(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    n_restarts: int = 10,
    n_iter: int = 50,
    random_state: int = 0,
) -> Aggregation:
    """Aggregate with MACE (each annotator either knows the label or spams).

    Returns
    -------
    Aggregation
        ``annotator_quality`` is each annotator's competence, the posterior probability of
        answering from knowledge rather than spamming.

    References
    ----------
    Hovy, D. et al. (2013). Learning whom to trust with MACE. NAACL-HLT.

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "annotator": list("abcabc"),
    ...                    "label": ["x", "x", "y", "y", "y", "y"]})
    >>> mace(df, n_restarts=1).labels.tolist()
    ['x', 'y']
    """
    ann, agg = _prepare(annotations, item, annotator, label)
    frame = _crowdkit_frame(ann)
    model = agg.MACE(n_restarts=n_restarts, n_iter=n_iter, random_state=random_state)
    _fit_quietly(model, frame)
    _, worker_names = pd.factorize(frame["worker"])  # crowd-kit's worker order
    quality = np.full(len(ann.annotators), np.nan)  # type: ignore[arg-type]
    quality[np.asarray(worker_names, dtype=int)] = model.spamming_[:, 1]
    return _result("mace", ann, model.probas_, quality)


def aggregate(
    annotations: pd.DataFrame | Annotations,
    *,
    method: Method = "majority_vote",
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    ties: Literal["random", "first", "abstain", "error"] = "random",
    random_state: int | None = 0,
) -> Aggregation:
    """Aggregate crowd labels with any of the supported methods.

    ``ties`` applies to majority vote only; ``random_state`` to majority vote and MACE.

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 1], "annotator": list("abc"), "label": [0, 0, 1]})
    >>> aggregate(df, method="dawid_skene").labels.tolist()
    [0]
    """
    from labelaudit.agreement._majority import majority_vote

    if method not in METHODS:
        raise InvalidParameterError(f"method must be one of {list(METHODS)}, got {method!r}")
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    if method == "majority_vote":
        return majority_vote(ann, ties=ties, random_state=random_state)
    if method == "dawid_skene":
        return dawid_skene(ann)
    if method == "glad":
        return glad(ann)
    return mace(ann, random_state=0 if random_state is None else int(random_state))
