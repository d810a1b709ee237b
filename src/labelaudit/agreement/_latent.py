"""Latent-class label aggregation through crowd-kit: Dawid-Skene, GLAD and MACE."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, MissingExtraError
from labelaudit._validation import check_choice
from labelaudit.agreement._aggregation import Aggregation
from labelaudit.io import Annotations, to_annotations

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["aggregate", "dawid_skene", "glad", "mace"]

Method = Literal["majority_vote", "dawid_skene", "glad", "mace"]
METHODS = ("majority_vote", "dawid_skene", "glad", "mace")


def _crowdkit_frame(ann: Annotations) -> pd.DataFrame:
    import pandas as pd
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


def _fit(annotations: pd.DataFrame | Annotations, columns: tuple[str | None, ...],
         make_model: Callable[[Any], Any]) -> tuple[Annotations, Any, pd.DataFrame]:
    """Validate the annotations, then fit ``make_model(crowdkit.aggregation)`` on them
    without its convergence and pandas warnings; returns them, the model and its input."""
    item, annotator, label = columns
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    n_ann = np.bincount(ann.item_codes, minlength=ann.n_items)
    if (n_ann == 0).any():
        raise InvalidInputError(
            f"{int((n_ann == 0).sum())} items have no annotation; drop them before aggregating")
    frame = _crowdkit_frame(ann)
    model = make_model(_import_crowdkit())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(frame)
    return ann, model, frame


def dawid_skene(annotations: pd.DataFrame | Annotations, *, item: str | None = None,
                annotator: str | None = None, label: str | None = None, n_iter: int = 100,
                tol: float = 1e-5) -> Aggregation:
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
    ann, model, _ = _fit(annotations, (item, annotator, label),
                         lambda agg: agg.DawidSkene(n_iter=n_iter, tol=tol))
    errors = model.errors_  # index (worker, observed label), columns true label
    priors = model.priors_
    quality = np.full(ann.n_annotators, np.nan)
    for w in range(len(quality)):
        acc = 0.0
        for c in priors.index:
            try:
                acc += float(priors[c]) * float(errors.loc[(w, c), c])
            except KeyError:
                continue
        quality[w] = acc
    return _result("dawid_skene", ann, model.probas_, quality)


def glad(annotations: pd.DataFrame | Annotations, *, item: str | None = None,
         annotator: str | None = None, label: str | None = None, n_iter: int = 100,
         tol: float = 1e-5) -> Aggregation:
    """Aggregate with GLAD (annotator ability and item difficulty).

    Parameters are those of :func:`dawid_skene` (``n_iter, tol`` of crowd-kit's ``GLAD``).

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
    >>> votes = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": list("abcabc"),
    ...                       "label": [0, 0, 1, 1, 1, 1]})
    >>> glad(votes).labels.tolist()
    [0, 1]
    """
    ann, model, _ = _fit(annotations, (item, annotator, label),
                         lambda agg: agg.GLAD(n_iter=n_iter, tol=tol))
    alphas = model.alphas_
    quality = np.array(
        [float(alphas.get(w, np.nan)) for w in range(ann.n_annotators)]
    )
    return _result("glad", ann, model.probas_, quality)


def mace(annotations: pd.DataFrame | Annotations, *, item: str | None = None,
         annotator: str | None = None, label: str | None = None, n_restarts: int = 10,
         n_iter: int = 50, random_state: int = 0) -> Aggregation:
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
    >>> crowd = pd.DataFrame({"item_id": ["q", "q", "q", "r", "r", "r"],
    ...                       "annotator_id": [1, 2, 3, 1, 2, 3], "label": list("ppnnnn")})
    >>> mace(crowd, n_restarts=1).labels.tolist()
    ['p', 'n']
    """
    import pandas as pd
    ann, model, frame = _fit(
        annotations, (item, annotator, label),
        lambda agg: agg.MACE(n_restarts=n_restarts, n_iter=n_iter, random_state=random_state))
    _, worker_names = pd.factorize(frame["worker"])  # crowd-kit's worker order
    quality = np.full(ann.n_annotators, np.nan)
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

    check_choice(method, "method", METHODS)
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    if method == "majority_vote":
        return majority_vote(ann, ties=ties, random_state=random_state)
    if method == "dawid_skene":
        return dawid_skene(ann)
    if method == "glad":
        return glad(ann)
    return mace(ann, random_state=0 if random_state is None else int(random_state))
