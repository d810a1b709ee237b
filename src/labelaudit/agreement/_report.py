"""One call that measures agreement, aggregates labels and bounds the gold standard's noise."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.agreement._aggregation import Aggregation, _plain, _records
from labelaudit.agreement._alpha import Level, krippendorff_alpha
from labelaudit.agreement._annotations import (
    Annotations,
    DroppedAnnotationsWarning,
    _is_missing,
    _label_kind,
    clean_label,
    format_items,
    to_annotations,
)
from labelaudit.agreement._gold import ChanceMethod, GoldStandard, gold_standard
from labelaudit.agreement._kappa import cohen_kappa, fleiss_kappa, per_item_agreement
from labelaudit.agreement._latent import Method, aggregate

__all__ = ["AgreementReport", "Estimate", "agreement_report", "bootstrap_ci"]


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap confidence interval (NaN bounds when not bootstrapped)."""

    name: str
    value: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict:
        return {k: _plain(v) for k, v in self.__dict__.items()}


def bootstrap_ci(
    n_units: int,
    statistic: Callable[[np.ndarray], float],
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    random_state: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(indices)`` over units resampled with
    replacement.

    Replicates where the statistic is undefined (NaN) are dropped; the interval is NaN when
    fewer than 10 remain.

    Examples
    --------
    >>> x = np.arange(100.0)
    >>> lo, hi = bootstrap_ci(100, lambda idx: x[idx].mean(), n_bootstrap=200)
    >>> bool(lo < 49.5 < hi)
    True
    """
    if n_bootstrap <= 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(random_state)
    reps = np.array(
        [statistic(rng.integers(0, n_units, n_units)) for _ in range(int(n_bootstrap))],
        dtype=float,
    )
    reps = reps[~np.isnan(reps)]
    if len(reps) < 10:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(reps, [tail, 1 - tail])
    return float(lo), float(hi)


@dataclass(frozen=True)
class AgreementReport:
    """Agreement statistics, aggregated labels, per-annotator quality and the gold subset.

    Attributes
    ----------
    n_items, n_annotations : int
    n_annotators : int or None
        None when the annotations carry no annotator ids.
    classes : tuple
    annotations_per_item : tuple of (min, mean, max)
    statistics : tuple of Estimate
        ``observed_agreement``, ``chance_agreement`` (P_E), ``fleiss_kappa``,
        ``krippendorff_alpha``, ``cohen_kappa`` (exactly two annotators),
        ``unanimous_share``, and ``aggregate_accuracy`` (against gold, when given).
    item_agreement : ndarray of shape (n_items,)
        :math:`P_{A_i}`, the share of agreeing annotator pairs per item.
    aggregation : Aggregation
    gold : GoldStandard
        The agreed subset and its noise bound.
    annotator_table : DataFrame
        One row per annotator: ``annotator, n_labels, agreement_with_majority`` (with the
        majority of the other annotators of the item, ties skipped), ``quality`` (from the
        aggregation method) and, with gold, ``gold_accuracy, n_gold``.
    gold_labels : ndarray of shape (n_items,) or None
        The reference labels given, None where an item has none.
    confidence, n_bootstrap : float, int
    """

    n_items: int
    n_annotations: int
    n_annotators: int | None
    classes: tuple
    annotations_per_item: tuple
    statistics: tuple
    item_agreement: np.ndarray
    aggregation: Aggregation
    gold: GoldStandard
    annotator_table: pd.DataFrame
    gold_labels: np.ndarray | None
    confidence: float
    n_bootstrap: int

    def statistic(self, name: str) -> Estimate:
        """The estimate called ``name``."""
        for est in self.statistics:
            if est.name == name:
                return est
        raise KeyError(name)

    def to_frame(self) -> pd.DataFrame:
        """The statistics: ``statistic, value, ci_low, ci_high``."""
        return pd.DataFrame(
            [(e.name, e.value, e.ci_low, e.ci_high) for e in self.statistics],
            columns=["statistic", "value", "ci_low", "ci_high"],
        )

    def items_frame(self) -> pd.DataFrame:
        """One row per item: the aggregation, its agreement and whether it is in the gold set."""
        frame = self.aggregation.to_frame()
        frame.insert(3, "agreement", self.item_agreement)
        in_gold = pd.Index(self.gold.items)
        frame["agreed"] = pd.Index(self.aggregation.items).isin(in_gold)
        if self.gold_labels is not None:
            frame["gold"] = self.gold_labels
        return frame

    def to_dict(self) -> dict:
        """JSON-ready summary (no per-item rows)."""
        return {
            "n_items": self.n_items,
            "n_annotations": self.n_annotations,
            "n_annotators": self.n_annotators,
            "classes": [_plain(c) for c in self.classes],
            "annotations_per_item": {
                "min": self.annotations_per_item[0],
                "mean": self.annotations_per_item[1],
                "max": self.annotations_per_item[2],
            },
            "confidence": self.confidence,
            "n_bootstrap": self.n_bootstrap,
            "statistics": {e.name: e.to_dict() for e in self.statistics},
            "aggregation": {
                "method": self.aggregation.method,
                "tied_items": int(self.aggregation.tied.sum()),
            },
            "gold_standard": self.gold.summary(),
            "annotators": _records(self.annotator_table),
        }


def _gold_array(gold: Mapping | pd.Series, ann: Annotations) -> np.ndarray:
    series = gold if isinstance(gold, pd.Series) else pd.Series(dict(gold), dtype=object)
    lookup = {k: v for k, v in series.items() if not _is_missing(v)}
    out = np.array([clean_label(lookup[i]) if i in lookup else None for i in ann.items],
                   dtype=object)
    known = [v for v in out if v is not None]
    if not known:
        raise InvalidInputError(
            "none of the gold labels belongs to an annotated item; check that the gold ids "
            "match the item ids"
        )
    kinds = {_label_kind(v) for v in known}
    ann_kind = _label_kind(ann.classes[0])
    if kinds != {ann_kind}:
        raise InvalidInputError(
            f"gold labels are {sorted(kinds)} but annotations are {ann_kind}; convert one "
            "column so both use the same type"
        )
    return out


def _loo_majority_agreement(ann: Annotations, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per annotator: share of labels equal to the unique majority of the item's others."""
    others = counts[ann.item_codes].astype(float)
    others[np.arange(len(ann.label_codes)), ann.label_codes] -= 1
    top = others.max(axis=1)
    unique = ((others == top[:, None]).sum(axis=1) == 1) & (others.sum(axis=1) > 0)
    agree = (others[np.arange(len(ann.label_codes)), ann.label_codes] == top) & unique
    n_annot = len(ann.annotators)  # type: ignore[arg-type]
    used = np.bincount(ann.annotator_codes[unique], minlength=n_annot).astype(float)
    hits = np.bincount(ann.annotator_codes[agree], minlength=n_annot).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(used > 0, hits / np.maximum(used, 1), np.nan), used


def agreement_report(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    gold: Mapping | pd.Series | None = None,
    method: Method = "majority_vote",
    ties: Literal["random", "first", "abstain", "error"] = "random",
    min_share: float = 1.0,
    confidence: float = 0.95,
    p_chance: float | None = None,
    p_method: ChanceMethod = "annotators",
    level: Level = "nominal",
    n_bootstrap: int = 1000,
    drop_single: bool = False,
    random_state: int | None = 0,
) -> AgreementReport:
    """Measure agreement, aggregate the labels and bound the noise of the agreed subset.

    Parameters
    ----------
    annotations : DataFrame
        Long format (``item, annotator, label``; the annotator column is optional).
    item, annotator, label : str, optional
        Column names, found among the usual aliases when not given.
    gold : mapping or Series, optional
        Reference labels by item id for some or all items: annotator accuracy on them and
        the accuracy of the aggregated labels.
    method : {"majority_vote", "dawid_skene", "glad", "mace"}, default "majority_vote"
    ties : {"random", "first", "abstain", "error"}, default "random"
        Tie policy of majority vote.
    min_share : float, default 1.0
        Agreement an item needs to enter the gold standard (1.0 = unanimous).
    confidence : float, default 0.95
        Of the bootstrap intervals and of the noise bound.
    p_chance : float, optional
        Chance agreement on a hard item; estimated (paper's footnote 3) when not given.
    p_method : {"annotators", "pooled"}, default "annotators"
    level : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        For Krippendorff's alpha (numeric labels are the category values).
    n_bootstrap : int, default 1000
        Bootstrap replicates over items; 0 for no intervals.
    drop_single : bool, default False
        Drop items with fewer than 2 annotations instead of raising (with a
        :class:`DroppedAnnotationsWarning` that counts them).
    random_state : int or None, default 0

    Returns
    -------
    AgreementReport

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4], "annotator": list("abababab"),
    ...                    "label": ["x", "x", "y", "y", "x", "y", "y", "y"]})
    >>> rep = agreement_report(df, n_bootstrap=0)
    >>> round(rep.statistic("observed_agreement").value, 2), rep.statistic("cohen_kappa").value
    (0.75, 0.5)
    """
    if not (0 < confidence < 1):
        raise InvalidParameterError(f"confidence must be in (0, 1), got {confidence}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)) or (
        n_bootstrap < 0
    ):
        raise InvalidParameterError(f"n_bootstrap must be a whole number >= 0, got {n_bootstrap}")
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    counts = ann.counts()
    n_ann = counts.sum(axis=1)
    few = np.flatnonzero(n_ann < 2)
    if len(few):
        if not drop_single:
            raise InvalidInputError(
                f"agreement needs at least 2 annotations per item; fewer in "
                f"{format_items(ann.items[few].tolist())} (drop them, or pass "
                "drop_single=True / --drop-single)"
            )
        frame = ann.to_frame()
        frame = frame[frame["item"].isin(pd.Index(ann.items[n_ann >= 2]))]
        if frame.empty:
            raise InvalidInputError(
                f"none of the {ann.n_items} items has 2 or more annotations: nothing to measure")
        warnings.warn(DroppedAnnotationsWarning(
            f"dropped {len(few)} of {ann.n_items} items with fewer than 2 annotations "
            f"({format_items(ann.items[few].tolist())})"), stacklevel=2)
        if ann.annotators is None:
            frame = frame.drop(columns="annotator")
        ann = to_annotations(frame, item="item", label="label",
                             annotator="annotator" if ann.annotators is not None else None)
        counts = ann.counts()
        n_ann = counts.sum(axis=1)

    values: list[float] | None = None
    if level != "nominal":
        if _label_kind(ann.classes[0]) != "number":
            raise InvalidParameterError(
                f"level={level!r} needs numeric labels; these labels are strings"
            )
        values = [float(c) for c in ann.classes]

    def est(name: str, fn: Callable[[np.ndarray], float], n_units: int) -> Estimate:
        value = fn(np.arange(n_units))
        lo, hi = (math.nan, math.nan)
        if n_units > 1:
            lo, hi = bootstrap_ci(n_units, fn, n_bootstrap=int(n_bootstrap),
                                  confidence=confidence, random_state=random_state)
        return Estimate(name, float(value), lo, hi)

    pa_i = per_item_agreement(counts)

    def p_e(idx: np.ndarray) -> float:
        p_j = counts[idx].sum(axis=0) / n_ann[idx].sum()
        return float((p_j**2).sum())

    stats = [
        est("observed_agreement", lambda idx: float(pa_i[idx].mean()), ann.n_items),
        est("chance_agreement", p_e, ann.n_items),
        est("fleiss_kappa", lambda idx: fleiss_kappa(counts[idx]), ann.n_items),
        est(
            "krippendorff_alpha",
            lambda idx: krippendorff_alpha(counts[idx], level=level, values=values),
            ann.n_items,
        ),
    ]
    if ann.annotators is not None and len(ann.annotators) == 2:
        both = pd.DataFrame(
            {"i": ann.item_codes, "a": ann.annotator_codes, "l": ann.label_codes}
        ).pivot(index="i", columns="a", values="l").dropna()
        if len(both) > 0:
            la, lb = both[0].to_numpy(int), both[1].to_numpy(int)
            stats.append(est("cohen_kappa", lambda idx: cohen_kappa(la[idx], lb[idx]), len(la)))
    unanimous = counts.max(axis=1) == n_ann
    stats.append(est("unanimous_share", lambda idx: float(unanimous[idx].mean()), ann.n_items))

    agg = aggregate(ann, method=method, ties=ties, random_state=random_state)
    gold_std = gold_standard(
        ann, min_share=min_share, confidence=confidence, p_chance=p_chance, p_method=p_method
    )
    gold_arr = _gold_array(gold, ann) if gold is not None else None
    if gold_arr is not None:
        has = np.array([g is not None for g in gold_arr])
        correct = np.array([a == g for a, g in zip(agg.labels, gold_arr, strict=True)])
        stats.append(
            est(
                "aggregate_accuracy",
                lambda idx: float(correct[has][idx].mean()),
                int(has.sum()),
            )
        )

    table = pd.DataFrame()
    if ann.annotators is not None:
        loo, _ = _loo_majority_agreement(ann, counts)
        table = pd.DataFrame(
            {
                "annotator": ann.annotators,
                "n_labels": np.bincount(ann.annotator_codes, minlength=len(ann.annotators)),
                "agreement_with_majority": loo,
                "quality": agg.annotator_quality,
            }
        )
        if gold_arr is not None:
            ref = gold_arr[ann.item_codes]
            has_ref = np.array([r is not None for r in ref])
            classes = np.asarray(ann.classes, dtype=object)
            hit = has_ref & np.array(
                [r is not None and classes[c] == r
                 for c, r in zip(ann.label_codes, ref, strict=True)]
            )
            n_gold = np.bincount(ann.annotator_codes[has_ref], minlength=len(ann.annotators))
            n_hit = np.bincount(ann.annotator_codes[hit], minlength=len(ann.annotators))
            with np.errstate(invalid="ignore", divide="ignore"):
                table["gold_accuracy"] = np.where(n_gold > 0, n_hit / np.maximum(n_gold, 1),
                                                  np.nan)
            table["n_gold"] = n_gold

    return AgreementReport(
        n_items=ann.n_items,
        n_annotations=int(n_ann.sum()),
        n_annotators=None if ann.annotators is None else len(ann.annotators),
        classes=ann.classes,
        annotations_per_item=(int(n_ann.min()), float(n_ann.mean()), int(n_ann.max())),
        statistics=tuple(stats),
        item_agreement=pa_i,
        aggregation=agg,
        gold=gold_std,
        annotator_table=table,
        gold_labels=gold_arr,
        confidence=float(confidence),
        n_bootstrap=int(n_bootstrap),
    )
