"""Read an annotation file, long or nested, into the long table the agreement report takes."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.agreement._report import AgreementReport, agreement_report
from labelaudit.agreement._text import percent
from labelaudit.io import (
    ITEM_ALIASES,
    SIDECARS,
    DroppedAnnotationsWarning,
    format_items,
    is_empty_label,
    is_missing,
    nested_to_long,
    read_table,
    sidecar_path,
    to_annotations,
    write_json,
    write_table,
)

if TYPE_CHECKING:
    import pandas as pd

NESTED_GUESSES = ("annotator_labels", "annotations", "labels", "votes")


@dataclass(frozen=True)
class AnnotationFile:
    """An annotation file read into long form: ``long`` one row per annotation
    (``item, label`` and ``annotator`` when named), the file's ``item_column``, the ``frame``
    as read, a nested file's list column (``nested_column``, else None) and the ``gold``
    labels by item id (or None).
    """

    long: pd.DataFrame
    item_column: str
    frame: pd.DataFrame
    nested_column: str | None
    gold: pd.Series | None

    def agreement_report(self, **options: Any) -> AgreementReport:
        """:func:`labelaudit.agreement.agreement_report` of these annotations, with the
        file's gold labels; ``options`` are those of that function but the columns."""
        return agreement_report(
            self.long, item="item", label="label", gold=self.gold,
            annotator="annotator" if "annotator" in self.long.columns else None, **options)

    def items_frame(self, report: AgreementReport) -> pd.DataFrame:
        """The report's row per item (:meth:`AgreementReport.items_frame`), keyed by the
        file's item column."""
        return report.items_frame().rename(columns={"item": self.item_column})

    def gold_frame(self, report: AgreementReport) -> pd.DataFrame:
        """The agreed items with their label (``gold_label``), support and number of
        annotations, keyed by the file's item column; a nested file's other columns
        (text, ...) come along."""
        gold = report.gold.to_frame().rename(
            columns={"item": self.item_column, "label": "gold_label"})
        if self.nested_column is None:
            return gold
        extra = self.frame.drop(columns=[c for c in self.frame.columns
                                         if c == self.nested_column or c in gold.columns])
        extra[self.item_column] = self.frame[self.item_column]
        return gold.merge(extra, on=self.item_column, how="left")

    def write_tables(self, report: AgreementReport, *, source: str | Path,
                     items_out: str | Path | None = None,
                     annotators_out: str | Path | None = None,
                     gold_out: str | Path | None = None) -> Iterator[str]:
        """Write the tables asked for, one at a time (format by suffix): a row per item
        (:meth:`items_frame`), a row per annotator, the gold standard with its sidecar
        (:meth:`write_gold`, ``source`` the annotation file); after each, yield a line that
        says what it wrote."""
        if items_out:
            items = self.items_frame(report)
            write_table(items, items_out)
            yield f"wrote {len(items)} items to {items_out}"
        if annotators_out:
            write_table(report.annotator_table, annotators_out)
            yield f"wrote {len(report.annotator_table)} annotators to {annotators_out}"
        if gold_out:
            gold, sidecar = self.write_gold(report, gold_out, source=source)
            noise = report.gold.noise
            yield (f"wrote {len(gold)} agreed items to {Path(gold_out)} (gamma "
                   f"{percent(noise.gamma)} at {100 * noise.confidence:g}% confidence; see "
                   f"{sidecar})")

    def write_gold(self, report: AgreementReport, out: str | Path, *,
                   source: str | Path) -> tuple[pd.DataFrame, Path]:
        """Write :meth:`gold_frame` to ``out`` (format by suffix) and the gold standard's
        summary, with its noise bound gamma, to the ``out``-stem ``.noise.json`` sidecar;
        returns the agreed items and the sidecar's path."""
        gold, target = self.gold_frame(report), Path(out)
        sidecar = sidecar_path(target, SIDECARS["gold_out"])
        write_table(gold, target)
        statement = report.gold.noise_statement()
        write_json({"source": str(source), "gold_file": target.name, **statement}, sidecar)
        return gold, sidecar


def _is_list_column(frame: pd.DataFrame, column: str) -> bool:
    values = frame[column].dropna()
    if values.empty:
        return False
    first = values.iloc[0]
    if isinstance(first, str):
        return first.lstrip().startswith("[")
    return isinstance(first, (list, tuple)) or type(first).__name__ == "ndarray"


def read_annotation_file(path: str | Path, *, item: str | None = None,
                         annotations: str | None = None, annotator: str | None = None,
                         label: str | None = None, gold: str | None = None) -> AnnotationFile:
    """Read a long or nested annotation file (any format :func:`labelaudit.io.read_table` reads).

    A nested file has one row per item and a list column (``annotations``, or the first of
    ``annotator_labels``, ``annotations``, ``labels``, ``votes`` that holds lists when no long
    column is named). Annotations with an empty label and items with an empty list are left
    out, with a :class:`DroppedAnnotationsWarning` that counts them; when nothing is left the
    error says so.
    """
    import pandas as pd

    frame = read_table(path)
    if frame.empty or len(frame.columns) == 0:
        raise InvalidInputError(f"{path}: no rows: there is nothing to measure")
    nested_col = annotations
    if nested_col is None and label is None and annotator is None:
        nested_col = next(
            (c for c in NESTED_GUESSES if c in frame.columns and _is_list_column(frame, c)), None)
    if nested_col is not None:
        long, item_col = _read_nested(frame, path, item, nested_col)
    else:
        ann = to_annotations(frame, item=item, annotator=annotator, label=label)
        item_col = item or next(c for c in ITEM_ALIASES if c in frame.columns)
        long = ann.to_frame()
        if ann.annotators is None:
            long = long.drop(columns="annotator")
    gold_labels = None
    if gold:
        if gold not in frame.columns:
            raise InvalidInputError(f"{path}: no gold column {gold!r}")
        pairs = frame[[item_col, gold]]
        pairs = pairs[[not is_missing(v) for v in pairs[gold]]]
        conflict = pairs.groupby(item_col)[gold].nunique()
        bad = conflict[conflict > 1].index.tolist()
        if bad:
            raise InvalidInputError(
                f"{path}: the gold column {gold!r} differs within {format_items(bad)}; "
                "give each item one gold label"
            )
        first = pairs.drop_duplicates(subset=item_col)
        gold_labels = pd.Series(first[gold].to_numpy(dtype=object),
                                index=first[item_col].to_numpy(dtype=object))
    return AnnotationFile(long, item_col, frame, nested_col, gold_labels)


def _read_nested(frame: pd.DataFrame, path: str | Path, item: str | None,
                 nested_col: str) -> tuple[pd.DataFrame, str]:
    """The annotations of a nested file in long form, and its item column."""
    import pandas as pd
    item_col = item or next((c for c in ("id", *ITEM_ALIASES) if c in frame.columns), None)
    if item_col is None:
        raise InvalidInputError(
            f"{path}: no item-id column; name it with --item (columns: {list(frame.columns)})")
    if item_col not in frame.columns:
        raise InvalidInputError(
            f"{path}: no column {item_col!r}; columns are {list(frame.columns)}")
    dup = frame[item_col][frame[item_col].duplicated()].tolist()
    if dup:
        raise InvalidInputError(
            f"{path}: nested input needs one row per item, but {format_items(dup)} repeat")
    long = nested_to_long(frame, item=item_col, annotations=nested_col)
    n_items = len(frame)
    empty = np.array([is_empty_label(v) for v in long["label"]], dtype=bool)
    if empty.any():
        where = pd.unique(long.loc[empty, "item"].to_numpy(dtype=object)).tolist()
        warnings.warn(DroppedAnnotationsWarning(
            f"dropped {int(empty.sum())} of {len(long)} annotations with an empty label in the "
            f"{nested_col!r} lists ({format_items(where)})"), stacklevel=3)
        long = long[~empty].reset_index(drop=True)
    if long.empty:
        raise InvalidInputError(
            f"{path}: all {n_items} items have an empty {nested_col!r} list (or only empty "
            "labels): there is nothing to measure")
    listed = set(long["item"].tolist())
    bare = [v for v in frame[item_col].tolist() if v not in listed]
    if bare:
        warnings.warn(DroppedAnnotationsWarning(
            f"dropped {len(bare)} of {n_items} items with no annotation (an empty "
            f"{nested_col!r} list, or only empty labels): {format_items(bare)}"), stacklevel=3)
    if long["annotator"].isna().all():
        long = long.drop(columns="annotator")
    return long, item_col
