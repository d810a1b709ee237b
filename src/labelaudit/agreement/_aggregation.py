"""Aggregation of crowd labels: majority vote and, through crowd-kit, Dawid-Skene, GLAD and
MACE. Each takes long annotations (``item, annotator, label`` or aliases; ``item``,
``annotator``, ``label`` name the columns); the latent-class models need annotator ids."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, MissingExtraError
from labelaudit._html_table import result_html
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
    """Aggregated labels of crowd-annotated items, in order of first appearance.

    ``labels`` is None where a tie was left unresolved (``ties="abstain"``); ``probs`` (columns
    ``classes``, sorted) are vote shares or the latent-class models' posteriors, ``support``
    those of the chosen label; ``annotator_quality`` is agreement with the aggregated label
    (majority vote), accuracy under the model (Dawid-Skene), ability (GLAD) or competence
    (MACE); ``annotators`` is None when the annotations have no annotator ids.
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

    def _repr_html_(self) -> str:
        """The aggregated labels in a notebook, one row per item."""
        return result_html(self, header=f"{self.method}: {len(self.items):,} items")

    def annotators_frame(self) -> pd.DataFrame:
        """One row per annotator: ``annotator, quality`` (empty without annotator ids)."""
        import pandas as pd
        if self.annotators is None or self.annotator_quality is None:
            return pd.DataFrame({"annotator": [], "quality": []})
        return pd.DataFrame({"annotator": self.annotators, "quality": self.annotator_quality})

    def to_dict(self) -> dict:
        """JSON-ready: the method, classes, per-item rows and per-annotator quality."""
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

    ``ties``: pick at random (``random_state``), the first class, None, or raise; ``tied``
    flags ties whatever the policy. ``annotator_quality``: share of labels equal to the result.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2], "annotator": ["a", "b", "c", "a", "b"],
    ...                    "label": ["pos", "pos", "neg", "neg", "pos"]})
    >>> res = majority_vote(df, ties="abstain")
    >>> res.labels.tolist(), res.tied.tolist()
    (['pos', None], [False, True])
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
    """Validate the annotations and fit ``make_model(crowdkit.aggregation)`` on them, silently."""
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
    """Aggregate with Dawid-Skene (per-annotator confusion matrices, EM; Dawid & Skene 1979);
    ``annotator_quality`` is :math:`\\sum_c \\pi_c\\, P(\\text{label}=c \\mid \\text{true}=c)`.

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
    """Aggregate with GLAD (annotator ability, item difficulty; Whitehill et al. 2009);
    ``annotator_quality`` is the ability ``alpha`` (0 is guessing, negative adversarial).

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
    """Aggregate with MACE (an annotator knows the label or spams; Hovy et al. 2013);
    ``annotator_quality`` is the posterior probability of answering from knowledge.

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
