"""Label aggregation of crowd annotations: majority vote with an explicit tie policy, the
latent-class models Dawid-Skene, GLAD and MACE through crowd-kit, their one result type, and
:data:`AGGREGATION_METHODS`, the one list of methods, which :func:`aggregate` dispatches on.

Every method takes ``annotations`` in long format, one row per annotation (``item,
annotator, label``; crowd-kit's ``task, worker, label`` work too; missing labels are
ignored), with ``item``, ``annotator`` and ``label`` naming its columns (found among the
usual aliases when not given); the latent-class models need the annotator column.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, MissingExtraError
from labelaudit._validation import check_choice
from labelaudit.agreement._text import _records
from labelaudit.io import Annotations, format_items, to_annotations

if TYPE_CHECKING:
    import pandas as pd

Method = Literal["majority", "dawid-skene", "glad", "mace"]
TiePolicy = Literal["random", "first", "abstain", "error"]
_TIES = ("random", "first", "abstain", "error")


@dataclass(frozen=True)
class Aggregation:
    """Aggregated labels of crowd-annotated items.

    Attributes
    ----------
    method : str
        The function that aggregated: ``"majority_vote"``, ``"dawid_skene"``, ``"glad"`` or
        ``"mace"``.
    items : ndarray of shape (n_items,)
        Item ids, in order of first appearance in the annotations.
    labels : ndarray of shape (n_items,)
        The aggregated label (a user value); None where a tie was left unresolved
        (``ties="abstain"``).
    classes : tuple
        The categories, sorted; columns of ``probs``.
    probs : ndarray of shape (n_items, n_classes)
        Vote shares (majority vote) or posterior probabilities (the latent-class models).
    support : ndarray of shape (n_items,)
        ``probs`` of the chosen label (0 where abstained).
    n_annotations : ndarray of shape (n_items,)
        Number of annotations of each item.
    tied : ndarray of shape (n_items,)
        True where two or more categories had the top score.
    annotators : ndarray of shape (n_annotators,) or None
        Annotator ids; None when the annotations had none.
    annotator_quality : ndarray of shape (n_annotators,) or None
        Per-annotator quality: agreement with the aggregated label (majority vote), the
        diagonal-weighted accuracy of the confusion matrix (Dawid-Skene), the ability
        ``alpha`` (GLAD) or the competence (MACE).
    """

    method: str
    items: np.ndarray
    labels: np.ndarray
    classes: tuple
    probs: np.ndarray
    support: np.ndarray
    n_annotations: np.ndarray
    tied: np.ndarray
    annotators: np.ndarray | None = None
    annotator_quality: np.ndarray | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per item: ``item, label, support, n_annotations, tied, prob_<class>...``."""
        import pandas as pd
        frame = pd.DataFrame({
            "item": self.items, "label": self.labels, "support": self.support,
            "n_annotations": self.n_annotations, "tied": self.tied})
        for j, cls in enumerate(self.classes):
            frame[f"prob_{cls}"] = self.probs[:, j]
        return frame

    def annotators_frame(self) -> pd.DataFrame:
        """One row per annotator: ``annotator, quality`` (empty without annotator ids)."""
        import pandas as pd
        if self.annotators is None or self.annotator_quality is None:
            return pd.DataFrame({"annotator": [], "quality": []})
        return pd.DataFrame({"annotator": self.annotators, "quality": self.annotator_quality})

    def to_dict(self) -> dict:
        """JSON-ready dict: the method, classes, per-item rows and per-annotator quality."""
        return {
            "method": self.method, "classes": list(self.classes),
            "items": _records(self.to_frame()), "annotators": _records(self.annotators_frame())}

    def as_series(self) -> pd.Series:
        """The aggregated labels as a Series indexed by item id."""
        import pandas as pd
        return pd.Series(self.labels, index=pd.Index(self.items, name="item"), name="label")


def majority_vote(
    annotations: pd.DataFrame | Annotations, *, item: str | None = None,
    annotator: str | None = None, label: str | None = None, ties: TiePolicy = "random",
    random_state: int | None = 0) -> Aggregation:
    """Aggregate crowd labels by the most frequent label of each item.

    Parameters
    ----------
    ties : {"random", "first", "abstain", "error"}, default "random"
        What to do when several categories share the most votes: pick one of them at random
        (seeded by ``random_state``), pick the first in sorted category order, leave the item
        without a label (None), or raise :class:`InvalidInputError` naming the tied items.
        Tied items are flagged in ``Aggregation.tied`` whatever the policy.
    random_state : int or None, default 0
        Seed for ``ties="random"``.

    Returns
    -------
    Aggregation
        ``probs`` holds each item's vote shares; ``annotator_quality`` each annotator's share
        of labels equal to the aggregated label (over items that have one).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2], "annotator": ["a", "b", "c", "a", "b"],
    ...                    "label": ["pos", "pos", "neg", "neg", "pos"]})
    >>> res = majority_vote(df, ties="abstain")
    >>> res.labels.tolist(), res.tied.tolist()
    (['pos', None], [False, True])
    >>> majority_vote(df, ties="first").labels.tolist()
    ['pos', 'neg']
    """
    check_choice(ties, "ties", _TIES)
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    counts = ann.counts()
    n_ann = counts.sum(axis=1)
    empty = np.flatnonzero(n_ann == 0)
    if len(empty):
        raise InvalidInputError(
            f"no annotation to vote on in {format_items(ann.items[empty].tolist())}; "
            "drop them or label them"
        )
    top = counts.max(axis=1, keepdims=True)
    is_top = counts == top
    tied = is_top.sum(axis=1) > 1
    if ties == "error" and tied.any():
        raise InvalidInputError(
            f"tied votes on {format_items(ann.items[tied].tolist())}; choose another "
            "tie policy (random, first, abstain) or collect more labels"
        )
    winner = is_top.argmax(axis=1)
    if ties == "random" and tied.any():
        rng = np.random.default_rng(random_state)
        for i in np.flatnonzero(tied):
            winner[i] = rng.choice(np.flatnonzero(is_top[i]))
    probs = counts / n_ann[:, None]
    classes = np.asarray(ann.classes, dtype=object)
    labels = classes[winner].astype(object)
    support = probs[np.arange(len(winner)), winner]
    decided = np.ones(len(winner), dtype=bool)
    if ties == "abstain":
        labels[tied] = None
        support = np.where(tied, 0.0, support)
        decided = ~tied
    quality = None
    if ann.annotators is not None:  # each annotator's share of labels equal to the winner
        mask = decided[ann.item_codes]
        hits = (ann.label_codes == winner[ann.item_codes]) & mask
        total = np.bincount(ann.annotator_codes[mask], minlength=len(ann.annotators))
        good = np.bincount(ann.annotator_codes[hits], minlength=len(ann.annotators))
        with np.errstate(invalid="ignore", divide="ignore"):
            quality = np.where(total > 0, good / np.maximum(total, 1), np.nan)
    return Aggregation(
        method="majority_vote", items=ann.items, labels=labels, classes=ann.classes, probs=probs,
        support=support, n_annotations=n_ann, tied=tied, annotators=ann.annotators,
        annotator_quality=quality)


def _result(
    method: str, ann: Annotations, probas: pd.DataFrame, quality: np.ndarray) -> Aggregation:
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
        method=method, items=ann.items,
        labels=np.asarray(ann.classes, dtype=object)[winner].astype(object), classes=ann.classes,
        probs=probs, support=probs[np.arange(ann.n_items), winner], n_annotations=n_ann, tied=tied,
        annotators=ann.annotators, annotator_quality=quality)


def _fit(annotations: pd.DataFrame | Annotations, columns: tuple[str | None, ...],
         make_model: Callable[[Any], Any]) -> tuple[Annotations, Any, pd.DataFrame]:
    """Validate the annotations, then fit ``make_model(crowdkit.aggregation)`` on them
    without its convergence and pandas warnings; returns them, the model and its input."""
    import pandas as pd
    try:
        import crowdkit.aggregation as crowdkit
    except ImportError as exc:  # pragma: no cover - crowd-kit is a core dependency
        raise MissingExtraError("crowd-kit", "agreement") from exc
    item, annotator, label = columns
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    n_ann = np.bincount(ann.item_codes, minlength=ann.n_items)
    if (n_ann == 0).any():
        raise InvalidInputError(
            f"{int((n_ann == 0).sum())} items have no annotation; drop them before aggregating")
    if ann.annotators is None:
        raise InvalidInputError(
            "Dawid-Skene, GLAD and MACE model each annotator, so they need annotator ids; "
            "give an annotator column (or {'worker': id, 'label': value} objects), or use "
            "majority vote")
    frame = pd.DataFrame(
        {"task": ann.item_codes, "worker": ann.annotator_codes, "label": ann.label_codes})
    model = make_model(crowdkit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(frame)
    return ann, model, frame


def dawid_skene(annotations: pd.DataFrame | Annotations, *, item: str | None = None,
                annotator: str | None = None, label: str | None = None, n_iter: int = 100,
                tol: float = 1e-5) -> Aggregation:
    """Aggregate with the Dawid-Skene model (per-annotator confusion matrices, EM;
    ``n_iter`` and ``tol`` of crowd-kit's ``DawidSkene``).

    ``probs`` are posterior class probabilities; ``annotator_quality`` is each annotator's
    accuracy under the model, :math:`\\sum_c \\pi_c\\, P(\\text{label}=c \\mid \\text{true}=c)`.

    References
    ----------
    Dawid, A. P. and Skene, A. M. (1979). Maximum likelihood estimation of observer
    error-rates using the EM algorithm. Applied Statistics 28(1).

    Examples
    --------
    >>> import pandas as pd
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
    """Aggregate with GLAD (annotator ability and item difficulty; ``n_iter`` and ``tol`` of
    crowd-kit's ``GLAD``). ``annotator_quality`` is each annotator's ability ``alpha`` (higher
    is better; 0 is guessing, negative is adversarial).

    References
    ----------
    Whitehill, J. et al. (2009). Whose vote should count more: optimal integration of labels
    from labelers of unknown expertise. NIPS 22.

    Examples
    --------
    >>> import pandas as pd
    >>> votes = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "worker": list("abcabc"),
    ...                       "label": [0, 0, 1, 1, 1, 1]})
    >>> glad(votes).labels.tolist()
    [0, 1]
    """
    ann, model, _ = _fit(annotations, (item, annotator, label),
                         lambda agg: agg.GLAD(n_iter=n_iter, tol=tol))
    alphas = model.alphas_
    quality = np.array([float(alphas.get(w, np.nan)) for w in range(ann.n_annotators)])
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
    >>> import pandas as pd
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
    annotations: pd.DataFrame | Annotations, *, method: Method = "majority",
    item: str | None = None, annotator: str | None = None, label: str | None = None,
    ties: TiePolicy = "random", random_state: int | None = 0) -> Aggregation:
    """Aggregate crowd labels with any method of :data:`AGGREGATION_METHODS`.

    ``ties`` applies to majority vote only; ``random_state`` to majority vote and MACE.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1], "annotator": list("abc"), "label": [0, 0, 1]})
    >>> aggregate(df, method="dawid-skene").labels.tolist()
    [0]
    """
    check_choice(method, "method", AGGREGATION_METHODS)
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    options: dict[str, dict[str, Any]] = {
        "majority": {"ties": ties, "random_state": random_state},
        "mace": {"random_state": 0 if random_state is None else int(random_state)}}
    return AGGREGATION_METHODS[method](ann, **options.get(method, {}))


#: The aggregation methods by the name ``labelaudit agreement --method`` takes.
AGGREGATION_METHODS: dict[str, Callable[..., Aggregation]] = {
    "majority": majority_vote, "dawid-skene": dawid_skene, "glad": glad, "mace": mace}
