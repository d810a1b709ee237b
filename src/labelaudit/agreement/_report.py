"""One call that measures agreement, aggregates labels and bounds the gold standard's noise:
the statistics with percentile bootstrap intervals over items, and per-annotator quality."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_fraction, check_int
from labelaudit.agreement._aggregation import Aggregation, Method, TiePolicy, aggregate
from labelaudit.agreement._coefficients import (
    Level,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    per_item_agreement,
)
from labelaudit.agreement._gold import ChanceMethod, GoldStandard, gold_standard
from labelaudit.agreement._text import _plain, _records, number, percent
from labelaudit.io import (
    Annotations,
    DroppedAnnotationsWarning,
    ResultFiles,
    clean_label,
    format_items,
    is_missing,
    label_kind,
    to_annotations,
)

if TYPE_CHECKING:
    import pandas as pd


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
    n_units: int, statistic: Callable[[np.ndarray], float], *, n_bootstrap: int = 1000,
    confidence: float = 0.95, random_state: int | None = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(indices)`` over resampled unit indices,
    as :func:`scipy.stats.bootstrap` gives it, except that NaN replicates (kappa on a resample
    of one label) are dropped, not NaN the interval; NaN when fewer than 10 remain.

    Examples
    --------
    >>> x = np.arange(100.0)
    >>> lo, hi = bootstrap_ci(100, lambda idx: x[idx].mean(), n_bootstrap=200)
    >>> bool(lo < 49.5 < hi)
    True
    """
    if n_bootstrap <= 0 or n_units < 2:
        return math.nan, math.nan
    from scipy.stats import bootstrap

    with warnings.catch_warnings():  # NaN replicates: scipy's degenerate-data warning
        warnings.simplefilter("ignore", RuntimeWarning)
        result = bootstrap((np.arange(n_units),), statistic, n_resamples=int(n_bootstrap),
                           vectorized=False, method="percentile", confidence_level=confidence,
                           random_state=np.random.default_rng(random_state))
    reps = np.asarray(result.bootstrap_distribution, dtype=float)
    reps = reps[~np.isnan(reps)]
    if len(reps) < 10:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(reps, [tail, 1 - tail])
    return float(lo), float(hi)


def gold_array(gold: Mapping | pd.Series, ann: Annotations) -> np.ndarray:
    """The reference label of each annotated item (None where it has none), checked to be
    of the annotations' label type."""
    import pandas as pd
    series = gold if isinstance(gold, pd.Series) else pd.Series(dict(gold), dtype=object)
    lookup = {k: v for k, v in series.items() if not is_missing(v)}
    out = np.array([clean_label(lookup[i]) if i in lookup else None for i in ann.items],
                   dtype=object)
    known = [v for v in out if v is not None]
    if not known:
        raise InvalidInputError(
            "none of the gold labels belongs to an annotated item; check that the gold ids "
            "match the item ids"
        )
    kinds = {label_kind(v) for v in known}
    ann_kind = label_kind(ann.classes[0])
    if kinds != {ann_kind}:
        raise InvalidInputError(
            f"gold labels are {sorted(kinds)} but annotations are {ann_kind}; convert one "
            "column so both use the same type"
        )
    return out


def _share(hits: np.ndarray, used: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(used > 0, hits / np.maximum(used, 1), np.nan)


def _loo_majority_agreement(ann: Annotations, counts: np.ndarray) -> np.ndarray:
    """Per annotator: share of labels equal to the unique majority of the item's others."""
    others = counts[ann.item_codes].astype(float)
    rows = np.arange(len(ann.label_codes))
    others[rows, ann.label_codes] -= 1
    top = others.max(axis=1)
    unique = ((others == top[:, None]).sum(axis=1) == 1) & (others.sum(axis=1) > 0)
    agree = (others[rows, ann.label_codes] == top) & unique
    n_annot = ann.n_annotators
    return _share(np.bincount(ann.annotator_codes[agree], minlength=n_annot).astype(float),
                  np.bincount(ann.annotator_codes[unique], minlength=n_annot).astype(float))


def annotator_table(ann: Annotations, counts: np.ndarray, agg: Aggregation,
                    gold: np.ndarray | None) -> pd.DataFrame:
    """One row per annotator: ``annotator, n_labels, agreement_with_majority`` (the
    majority of the item's other annotators, ties skipped), ``quality`` and, with gold,
    ``gold_accuracy, n_gold``; empty without annotator ids."""
    import pandas as pd
    if ann.annotators is None:
        return pd.DataFrame()
    n_annot = len(ann.annotators)
    table = pd.DataFrame({
        "annotator": ann.annotators,
        "n_labels": np.bincount(ann.annotator_codes, minlength=n_annot),
        "agreement_with_majority": _loo_majority_agreement(ann, counts),
        "quality": agg.annotator_quality})
    if gold is not None:
        ref = gold[ann.item_codes]
        has_ref = np.array([r is not None for r in ref])
        classes = np.asarray(ann.classes, dtype=object)
        hit = has_ref & np.array([r is not None and classes[c] == r
                                  for c, r in zip(ann.label_codes, ref, strict=True)])
        n_gold = np.bincount(ann.annotator_codes[has_ref], minlength=n_annot)
        table["gold_accuracy"] = _share(np.bincount(ann.annotator_codes[hit],
                                                    minlength=n_annot), n_gold)
        table["n_gold"] = n_gold
    return table


@dataclass(frozen=True)
class AgreementReport(ResultFiles):
    """Agreement statistics, aggregated labels, per-annotator quality and the gold subset.

    ``statistics`` are :class:`Estimate` s: ``observed_agreement``, ``chance_agreement``
    (P_E), ``fleiss_kappa``, ``krippendorff_alpha``, ``cohen_kappa`` (exactly two
    annotators), ``unanimous_share`` and ``aggregate_accuracy`` (with gold);
    ``item_agreement`` is :math:`P_{A_i}` per item; ``annotator_table`` one row per
    annotator (:func:`annotator_table`); ``gold_labels`` the reference labels given (None
    where an item has none); ``n_annotators`` None without annotator ids.
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
    ties: str = "random"

    def statistic(self, name: str) -> Estimate:
        """The estimate called ``name``."""
        for est in self.statistics:
            if est.name == name:
                return est
        raise KeyError(name)

    def to_frame(self) -> pd.DataFrame:
        """The statistics: ``statistic, value, ci_low, ci_high``."""
        import pandas as pd
        return pd.DataFrame(
            [(e.name, e.value, e.ci_low, e.ci_high) for e in self.statistics],
            columns=["statistic", "value", "ci_low", "ci_high"])

    def items_frame(self) -> pd.DataFrame:
        """One row per item: the aggregation, its agreement and whether it is in the gold set."""
        import pandas as pd
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
                "min": self.annotations_per_item[0], "mean": self.annotations_per_item[1],
                "max": self.annotations_per_item[2]},
            "confidence": self.confidence,
            "n_bootstrap": self.n_bootstrap,
            "statistics": {e.name: e.to_dict() for e in self.statistics},
            "aggregation": {
                "method": self.aggregation.method, "tied_items": int(self.aggregation.tied.sum())},
            "gold_standard": self.gold.noise_statement(),
            "annotators": _records(self.annotator_table),
        }

    def summary(self, *, source: str = "annotations", method: str | None = None) -> str:
        """The report for a person: counts, the statistics with their intervals, the
        aggregation, the gold standard and its noise bound, and the ten busiest annotators.

        ``source`` names the annotations in the first line; ``method`` the aggregation
        (default: its name, e.g. ``majority_vote``).
        """
        import pandas as pd
        per = self.annotations_per_item
        who = (f"{self.n_annotators} annotators" if self.n_annotators is not None
               else "annotators unknown")
        ci = f"{100 * self.confidence:g}% CI" if self.n_bootstrap else "CI"
        stats = pd.DataFrame(
            [(e.name, number(e.value),
              "" if math.isnan(e.ci_low) else f"[{e.ci_low:.3f}, {e.ci_high:.3f}]")
             for e in self.statistics], columns=["statistic", "value", ci])
        agg = self.aggregation
        ties = f" (ties: {self.ties})" if agg.method == "majority_vote" else ""
        lines = [
            f"{source}: {self.n_items} items, {self.n_annotations} annotations "
            f"({per[1]:.1f} per item, min {per[0]}, max {per[2]}), {who}, "
            f"classes {', '.join(map(str, self.classes))}", "",
            stats.to_string(index=False), "",
            f"aggregation: {method or agg.method}, {int(agg.tied.sum())} tied items{ties}",
            *self._gold_lines(), *self._annotator_lines()]
        return "\n".join(lines) + "\n"

    def _gold_lines(self) -> list[str]:
        import pandas as pd
        lines = self.gold.summary().split("\n")
        if self.gold_labels is None or not len(self.gold.items):
            return lines
        agreed = pd.Series(self.gold.labels, index=self.gold.items)
        in_gold = pd.Index(self.aggregation.items).isin(pd.Index(self.gold.items))
        pairs = [(a, r) for a, r in zip(
            agreed.reindex(self.aggregation.items[in_gold]).to_numpy(dtype=object),
            self.gold_labels[in_gold], strict=True) if r is not None]
        if pairs:
            wrong = sum(1 for a, r in pairs if a != r)
            lines.append(f"  against the reference labels: {wrong} of {len(pairs)} agreed items "
                         f"disagree ({percent(wrong / len(pairs))})")
        return lines

    def _annotator_lines(self) -> list[str]:
        table = self.annotator_table
        if not len(table):
            return []
        shown = table.sort_values(["n_labels", "annotator"], ascending=[False, True]).head(10)
        for col in ("agreement_with_majority", "quality", "gold_accuracy"):
            if col in shown:
                shown[col] = shown[col].map(number)
        more = f" (10 of {len(table)}, most labels first)" if len(table) > 10 else ""
        return ["", f"annotators{more}", shown.to_string(index=False)]


def agreement_report(
    annotations: pd.DataFrame | Annotations, *, item: str | None = None,
    annotator: str | None = None, label: str | None = None, gold: Mapping | pd.Series | None = None,
    method: Method = "majority", ties: TiePolicy = "random", min_share: float = 1.0,
    confidence: float = 0.95, p_chance: float | None = None, p_method: ChanceMethod = "annotators",
    level: Level = "nominal", n_bootstrap: int = 1000, drop_single: bool = False,
    random_state: int | None = 0) -> AgreementReport:
    """Measure agreement, aggregate the labels and bound the noise of the agreed subset.

    ``annotations`` (with ``item``, ``annotator``, ``label``) are as for :func:`aggregate`.

    Parameters
    ----------
    gold : mapping or Series, optional
        Reference labels by item id for some or all items: annotator accuracy on them and
        the accuracy of the aggregated labels.
    method, ties
        As :func:`aggregate`.
    min_share, p_chance, p_method
        As :func:`gold_standard`.
    confidence : float
        Of the bootstrap intervals and of the noise bound.
    level
        As :func:`krippendorff_alpha` (numeric labels are the category values).
    n_bootstrap : int
        Bootstrap replicates over items; 0 for no intervals.
    drop_single : bool
        Drop items with fewer than 2 annotations instead of raising (with a
        :class:`DroppedAnnotationsWarning` that counts them).
    random_state : int or None

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4], "annotator": list("abababab"),
    ...                    "label": ["x", "x", "y", "y", "x", "y", "y", "y"]})
    >>> rep = agreement_report(df, n_bootstrap=0)
    >>> round(rep.statistic("observed_agreement").value, 2), rep.statistic("cohen_kappa").value
    (0.75, 0.5)
    """
    check_fraction(confidence, "confidence", low_open=True, high_open=True)
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=0)
    ann = _drop_single(to_annotations(annotations, item=item, annotator=annotator, label=label),
                       drop_single)
    values: list[float] | None = None
    if level != "nominal":
        if label_kind(ann.classes[0]) != "number":
            raise InvalidParameterError(
                f"level={level!r} needs numeric labels; these labels are strings")
        values = [float(c) for c in ann.classes]
    agg = aggregate(ann, method=method, ties=ties, random_state=random_state)
    gold_arr = gold_array(gold, ann) if gold is not None else None
    counts = ann.counts()
    n_ann = counts.sum(axis=1)

    def est(name: str, statistic: Callable[[np.ndarray], float], n_units: int) -> Estimate:
        """``statistic`` on every unit, with its bootstrap interval."""
        lo, hi = bootstrap_ci(n_units, statistic, n_bootstrap=n_bootstrap,
                              confidence=confidence, random_state=random_state)
        return Estimate(name, float(statistic(np.arange(n_units))), lo, hi)

    stats = _statistics(ann, counts, est, level=level, values=values)
    if gold_arr is not None:
        has = np.array([g is not None for g in gold_arr])
        correct = np.array([a == g for a, g in zip(agg.labels, gold_arr, strict=True)])[has]
        stats.append(est("aggregate_accuracy", lambda idx: float(correct[idx].mean()),
                         int(has.sum())))
    return AgreementReport(
        n_items=ann.n_items,
        n_annotations=int(n_ann.sum()),
        n_annotators=None if ann.annotators is None else len(ann.annotators),
        classes=ann.classes,
        annotations_per_item=(int(n_ann.min()), float(n_ann.mean()), int(n_ann.max())),
        statistics=tuple(stats),
        item_agreement=per_item_agreement(counts),
        aggregation=agg,
        gold=gold_standard(ann, min_share=min_share, confidence=confidence, p_chance=p_chance,
                           p_method=p_method),
        annotator_table=annotator_table(ann, counts, agg, gold_arr),
        gold_labels=gold_arr,
        confidence=float(confidence),
        n_bootstrap=n_bootstrap,
        ties=ties,
    )


def _drop_single(ann: Annotations, drop_single: bool) -> Annotations:
    """The annotations without items of fewer than 2 annotations (refused unless asked)."""
    import pandas as pd
    n_ann = ann.counts().sum(axis=1)
    few = np.flatnonzero(n_ann < 2)
    if not len(few):
        return ann
    if not drop_single:
        raise InvalidInputError(
            f"agreement needs at least 2 annotations per item; fewer in "
            f"{format_items(ann.items[few].tolist())} (drop them, or pass "
            "drop_single=True)", param="drop_single")
    frame = ann.to_frame()
    frame = frame[frame["item"].isin(pd.Index(ann.items[n_ann >= 2]))]
    if frame.empty:
        raise InvalidInputError(
            f"none of the {ann.n_items} items has 2 or more annotations: nothing to measure")
    warnings.warn(DroppedAnnotationsWarning(
        f"dropped {len(few)} of {ann.n_items} items with fewer than 2 annotations "
        f"({format_items(ann.items[few].tolist())})"), stacklevel=3)
    if ann.annotators is None:
        frame = frame.drop(columns="annotator")
    return to_annotations(frame, item="item", label="label",
                          annotator="annotator" if ann.annotators is not None else None)


def _statistics(ann: Annotations, counts: np.ndarray,
                est: Callable[[str, Callable[[np.ndarray], float], int], Estimate], *,
                level: Level, values: list[float] | None) -> list[Estimate]:
    """Observed and chance agreement, Fleiss' kappa, Krippendorff's alpha, Cohen's kappa
    (exactly two annotators) and the unanimous share, each bootstrapped over items."""
    import pandas as pd
    n_ann = counts.sum(axis=1)
    pa_i = per_item_agreement(counts)

    def p_e(idx: np.ndarray) -> float:
        p_j = counts[idx].sum(axis=0) / n_ann[idx].sum()
        return float((p_j**2).sum())

    stats = [
        est("observed_agreement", lambda idx: float(pa_i[idx].mean()), ann.n_items),
        est("chance_agreement", p_e, ann.n_items),
        est("fleiss_kappa", lambda idx: fleiss_kappa(counts[idx]), ann.n_items),
        est("krippendorff_alpha",
            lambda idx: krippendorff_alpha(counts[idx], level=level, values=values), ann.n_items),
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
    return stats
