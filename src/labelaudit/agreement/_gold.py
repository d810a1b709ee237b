"""The agreed subset of crowd-annotated items as a gold standard, with its noise bound."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit._validation import check_choice, check_number
from labelaudit.agreement._noise_model import NoiseBound, noise_bound
from labelaudit.agreement._text import _records, percent
from labelaudit.io import Annotations, ResultFiles, format_items, to_annotations

if TYPE_CHECKING:
    import pandas as pd

ChanceMethod = Literal["annotators", "pooled"]


def _check_share(min_share: object) -> float:
    """A strict majority at least: in (0.5, 1]."""
    return check_number(min_share, "min_share", low=0.5, high=1.0, low_open=True)


def _thresholds(n_ann: np.ndarray, share: float) -> np.ndarray:
    """Votes the top label needs on each item: ``ceil(share * k)``, at least a strict majority."""
    need = np.ceil(share * n_ann - 1e-9).astype(np.int64)
    return np.maximum(need, n_ann // 2 + 1)


def _checked_counts(ann: Annotations) -> np.ndarray:
    counts = ann.counts()
    n_ann = counts.sum(axis=1)
    few = np.flatnonzero(n_ann < 2)
    if len(few):
        raise InvalidInputError(
            f"agreement needs at least 2 annotations per item; fewer in "
            f"{format_items(ann.items[few].tolist())} (drop them, or use "
            "--drop-single on the command line)"
        )
    return counts


def agreed_items(counts: np.ndarray, *, min_share: float = 1.0) -> np.ndarray:
    """Boolean mask of items whose top label has at least ``min_share`` of the votes.

    >>> agreed_items(np.array([[3, 0], [2, 1], [0, 3]])).tolist()
    [True, False, True]
    """
    share = _check_share(min_share)
    counts = np.asarray(counts)
    return counts.max(axis=1) >= _thresholds(counts.sum(axis=1), share)


def _tail_at_least(q: np.ndarray, need: np.ndarray) -> np.ndarray:
    """P(sum of independent Bernoulli(q[i, :]) >= need[i]) for each row (Poisson binomial)."""
    n, k = q.shape
    dist = np.zeros((n, k + 1))
    dist[:, 0] = 1.0
    for j in range(k):
        pj = q[:, j : j + 1]
        shifted = np.zeros_like(dist)
        shifted[:, 1:] = dist[:, :-1]
        dist = dist * (1 - pj) + shifted * pj
    cum = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]  # cum[:, t] = P(X >= t)
    return cum[np.arange(n), np.minimum(need, k)]


def chance_agreement(
    annotations: pd.DataFrame | Annotations, *, item: str | None = None,
    annotator: str | None = None, label: str | None = None, min_share: float = 1.0,
    method: ChanceMethod = "annotators") -> float:
    """Estimate ``p``, the chance that annotators flipping coins agree on a hard item.

    The paper's footnote 3 estimates annotator ``j``'s coin :math:`q_{jc}` by the share of the
    disagreed items ``j`` put in category ``c``, and :math:`p = \\sum_c \\prod_j q_{jc}`;
    generalised here to crowds where each item has its own annotators ``S_i``:

    .. math:: p = \\frac{1}{n} \\sum_i \\sum_c
              P\\Big(\\sum_{j \\in S_i} \\mathrm{Bernoulli}(q_{jc}) \\ge t_i\\Big)

    with :math:`t_i = k_i` (unanimity) or ``ceil(min_share * k_i)``. ``method="pooled"``, no
    annotator ids, or no disagreed item of ``j`` use the pooled label shares on disagreed items.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3], "annotator": list("ababab"),
    ...                    "label": ["x", "x", "x", "y", "y", "x"]})
    >>> chance_agreement(df)
    0.5
    """
    check_choice(method, "method", ("annotators", "pooled"))
    share = _check_share(min_share)
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    counts = _checked_counts(ann)
    agreed = agreed_items(counts, min_share=share)
    on_disagreed = ~agreed[ann.item_codes]
    source = on_disagreed if on_disagreed.any() else np.ones_like(on_disagreed)
    pooled = np.bincount(ann.label_codes[source], minlength=ann.n_classes).astype(float)
    pooled /= pooled.sum()

    if ann.annotators is not None and method == "annotators":
        n_annot = len(ann.annotators)
        per = np.zeros((n_annot, ann.n_classes))
        np.add.at(per, (ann.annotator_codes[source], ann.label_codes[source]), 1.0)
        seen = per.sum(axis=1)
        q_annot = np.where(seen[:, None] > 0, per / np.maximum(seen, 1)[:, None], pooled)
        q_ann = q_annot[ann.annotator_codes]  # (n_annotations, n_classes)
    else:
        q_ann = np.broadcast_to(pooled, (len(ann.label_codes), ann.n_classes))

    n_ann = counts.sum(axis=1)
    need = _thresholds(n_ann, share)
    order = np.argsort(ann.item_codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(n_ann)])
    p_item = np.zeros(ann.n_items)
    for k in np.unique(n_ann):
        rows = np.flatnonzero(n_ann == k)
        # positions of each item's annotations in `order`, shape (n_rows, k)
        pos = order[starts[rows][:, None] + np.arange(k)[None, :]]
        for c in range(ann.n_classes):
            p_item[rows] += _tail_at_least(q_ann[pos, c], need[rows])
    return float(p_item.mean())


@dataclass(frozen=True)
class GoldStandard(ResultFiles):
    """The agreed items (``support``: share of their annotations with that label) at
    ``min_share``, the subset's noise bound and ``p_method`` (annotators, pooled or given)."""

    items: np.ndarray
    labels: np.ndarray
    support: np.ndarray
    n_annotations: np.ndarray
    min_share: float
    noise: NoiseBound
    p_method: str

    def to_frame(self) -> pd.DataFrame:
        """One row per agreed item: ``item, label, support, n_annotations``."""
        import pandas as pd
        return pd.DataFrame({
            "item": self.items, "label": self.labels, "support": self.support,
            "n_annotations": self.n_annotations})

    def noise_statement(self) -> dict:
        """The noise statement of the subset, JSON-ready (the ``--gold-out`` sidecar)."""
        return {
            "n_items": self.noise.n_items, "n_agreed": self.noise.n_agreed,
            "n_disagreed": self.noise.n_disagreed, "min_share": self.min_share,
            "p_chance": self.noise.p_chance, "p_method": self.p_method,
            "confidence": self.noise.confidence, "max_hard": self.noise.max_hard,
            "hidden_hard": self.noise.hidden_hard,
            "gamma": None if math.isnan(self.noise.gamma) else self.noise.gamma,
            "model": "Beigman Klebanov & Beigman (2009), equation 1, uniform prior"}

    def to_dict(self) -> dict:
        """:meth:`noise_statement` with the agreed items."""
        return {**self.noise_statement(), "items": _records(self.to_frame())}

    def summary(self) -> str:
        """The gold standard for a person: agreed items, chance agreement, noise bound."""
        gold = self.noise_statement()
        kind = "unanimous" if gold["min_share"] >= 1 else f"top label >= {gold['min_share']:g}"
        return "\n".join([
            f"gold standard ({kind}): {gold['n_agreed']} of {gold['n_items']} items "
            f"agreed, {gold['n_disagreed']} disagreed",
            f"  p, chance agreement on a hard item = {gold['p_chance']:.4g} "
            f"({gold['p_method']})",
            f"  noise bound gamma = {percent(gold['gamma'])} at "
            f"{100 * gold['confidence']:g}% confidence (up to {gold['hidden_hard']} hard "
            f"items among the {gold['n_agreed']} agreed)"])


def gold_standard(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    min_share: float = 1.0,
    confidence: float = 0.95,
    p_chance: float | None = None,
    p_method: ChanceMethod = "annotators",
) -> GoldStandard:
    """Take the agreed items as a gold standard and bound the noise hidden in them.

    Items whose top label reaches ``min_share`` are agreed, the rest hard (Beigman Klebanov
    & Beigman 2009); :func:`noise_bound` gives the share ``gamma`` of hard items that may hide
    among the agreed at ``confidence`` (``alpha`` of equation 1). ``p_chance`` is ``p``, by
    default :func:`chance_agreement` with ``p_method``; other arguments as there.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4], "annotator": list("abababab"),
    ...                    "label": ["x", "x", "y", "y", "x", "y", "y", "y"]})
    >>> gold = gold_standard(df, p_chance=0.5)
    >>> gold.items.tolist(), gold.labels.tolist(), gold.noise.n_disagreed
    ([1, 2, 4], ['x', 'y', 'y'], 1)
    """
    share = _check_share(min_share)
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    counts = _checked_counts(ann)
    how: str
    if p_chance is None:
        p = chance_agreement(ann, min_share=share, method=p_method)
        how = p_method if ann.annotators is not None else "pooled"
    else:
        p, how = p_chance, "given"
    agreed = agreed_items(counts, min_share=share)
    bound = noise_bound(ann.n_items, int((~agreed).sum()), p, confidence=confidence)
    n_ann = counts.sum(axis=1)
    top = counts.argmax(axis=1)
    classes = np.asarray(ann.classes, dtype=object)
    return GoldStandard(
        items=ann.items[agreed], labels=classes[top[agreed]].astype(object),
        support=(counts.max(axis=1) / n_ann)[agreed], n_annotations=n_ann[agreed], min_share=share,
        noise=bound, p_method=how)
