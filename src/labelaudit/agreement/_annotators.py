"""Per-annotator statistics of an agreement report, and reference (gold) labels per item."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.agreement._aggregation import Aggregation
from labelaudit.io import Annotations, clean_label, is_missing, label_kind

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["annotator_table", "gold_array"]


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
    """One row per annotator: ``annotator, n_labels, agreement_with_majority, quality`` and,
    with gold, ``gold_accuracy, n_gold``; empty without annotator ids."""
    import pandas as pd
    if ann.annotators is None:
        return pd.DataFrame()
    n_annot = len(ann.annotators)
    table = pd.DataFrame({
        "annotator": ann.annotators,
        "n_labels": np.bincount(ann.annotator_codes, minlength=n_annot),
        "agreement_with_majority": _loo_majority_agreement(ann, counts),
        "quality": agg.annotator_quality,
    })
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
