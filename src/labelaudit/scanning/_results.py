"""The results of a scan: :class:`ScanResult` (one label per item), :class:`LabelSetScanResult`
(label sets), :class:`StreamScanResult` (what a streamed scan wrote), and the one summary
format they all print (:func:`format_scan_summary`)."""

from __future__ import annotations

import resource
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditWarning, format_values
from labelaudit._html_table import mapping_frame, result_html
from labelaudit.detect import Probs, TopKProbs, given_probs, per_item_loss, suggest_labels
from labelaudit.io import SET_THRESHOLD, ResultFiles, evidence_text, format_label_set, write_table
from labelaudit.scanning._evidence import Evidence, conflicting_groups
from labelaudit.scanning._options import DEFAULT_METHOD

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.models import TrainingDynamics

# ``ScanResult.mode`` when the user gave the probabilities (``pred_probs=``).
GIVEN_PROBS = "given pred_probs"
# Columns ``to_frame`` writes (besides ``score_*``); a kept input column of one of these
# names, or starting with ``score_``, is renamed ``input_<name>``.
OUTPUT_COLUMNS = ("id", "text", "text_pair", "label", "suggested_label", "suggested_prob",
                  "given_prob", "loss", "rank", "consensus_label", "flagged", "evidence")


class ChanceLevelWarning(LabelAuditWarning):
    """The scorers predict no better than always guessing the most common class."""


@dataclass(frozen=True)
class ScannedTexts:
    """What every text scan has (the fields :class:`ScanResult` documents)."""

    ids: np.ndarray
    texts: list[str]
    text_pairs: list[str] | None
    scores: dict[str, np.ndarray]
    rank_by: str
    flagged: np.ndarray
    flag_rule: str
    n_issues_estimate: int
    seconds: float

    @property
    def order(self) -> np.ndarray:
        """Item positions, most suspect first (stable for ties)."""
        return np.argsort(self.scores[self.rank_by], kind="stable")


@dataclass(frozen=True)
class ScanResult(ScannedTexts, ResultFiles):
    """The outcome of :func:`scan`: out-of-sample probabilities and every method's scores.

    Attributes
    ----------
    ids, texts, text_pairs : the scored items (``text_pairs`` None for single texts).
    labels, classes : ndarray of shape (n_samples,) and (n_classes,)
        Given labels as indices into ``classes`` (the user's label values).
    pred_probs, member_probs : ndarray, and dict of str to ndarray (n_samples, n_classes)
        Out-of-sample probabilities of the ensemble (or the user's own), and of each
        member (``#seed`` for repeats); above 256 classes (``top_classes``) each item's
        likeliest classes only, as :class:`labelaudit.detect.TopKProbs`.
    weights, temperatures : dict of str to float
        Each scorer's ensemble weight (seed repeats averaged first) and the temperature it
        was scaled by before averaging (1 = unchanged).
    scores : dict of str to ndarray (n_samples,)
        Label-quality score of every method asked for; lower = more suspect.
    rank_by, flagged, flag_rule, n_issues_estimate, seconds
        The method that orders the output; the flagged items and how they were chosen;
        cleanlab's estimate of the number of label errors; the wall time.
    member_seconds, screened : dict of str to float
        Each member's wall time; default members skipped after the screen, with weight.
    mode : str
        ``"5-fold cross-fit"``, ``"fit-on-train, score-on-test"``, or :data:`GIVEN_PROBS`.
    extra : DataFrame or None
        The input's other columns (not text, text pair, label, id or annotations), row
        ``i`` for item ``i``, written last; None with ``keep_columns=False`` or none.
    datalab, dynamics : DatalabIssues, TrainingDynamics or None
        Datalab's near-duplicate, outlier and non-IID findings (``datalab=True``), and the
        ``dynamics`` member's held-out AUM, confidence and variability (``dynamics_*``).
    evidence : Evidence or None
        Why items are flagged (:meth:`explain`); None with ``evidence=False``.
    """

    labels: np.ndarray
    classes: np.ndarray
    pred_probs: Probs
    member_probs: dict[str, Probs]
    weights: dict[str, float]
    temperatures: dict[str, float]
    mode: str = field(default="cross-fit")
    consensus_labels: np.ndarray | None = None
    member_seconds: dict[str, float] = field(default_factory=dict)
    screened: dict[str, float] = field(default_factory=dict)
    extra: pd.DataFrame | None = None
    datalab: Any = None
    dynamics: TrainingDynamics | None = None
    evidence: Evidence | None = None

    @property
    def accuracy(self) -> float:
        """Out-of-sample accuracy of ``pred_probs`` against the given labels."""
        return _accuracy(self.labels, self.pred_probs)

    @property
    def majority_rate(self) -> float:
        """The accuracy of always predicting the most common given label."""
        return _majority_rate(self.labels)

    def score_column(self, method: str) -> str:
        """The output column of a method's scores (``loss`` names its scorer)."""
        return score_column(method, next(iter(self.weights)))

    @property
    def near_chance(self) -> bool:
        """True when out-of-sample accuracy is within 0.05 of the majority-class rate."""
        return len(self.labels) > 0 and _near_chance(self.accuracy, self.majority_rate)

    def to_table(self, n_rows: int = 20) -> pd.DataFrame:
        """The ``n_rows`` most suspect items of :meth:`to_frame` with the columns a person
        reads first: ``rank, id, label, suggested_label, suggested_prob, loss, flagged, text``
        and the ``evidence`` line."""
        columns = ["rank", "id", "label", "suggested_label", "suggested_prob", "loss",
                   "flagged", "text"] + (["evidence"] if self.evidence is not None else [])
        return self.to_frame(readable=True).head(n_rows)[columns]

    def to_frame(self, *, readable: bool = False) -> pd.DataFrame:
        """One row per item, most suspect first: ``id, text, [text_pair,] label,
        suggested_label, suggested_prob, given_prob, loss, rank, score_<method>..., flagged,
        evidence``, then the :attr:`datalab`, :attr:`dynamics` and :attr:`extra` columns (a
        clashing one renamed ``input_<name>``). ``loss`` is the ensemble's ``-log p(label)``,
        the FML ``loss`` method is ``score_loss_<scorer>``; ``score_*`` is lower = more
        suspect; ``score_crowdlab`` is CROWDLAB's consensus quality where the consensus is
        the given label, minus 2 where not, so those items rank first. ``evidence`` is
        :meth:`explain`'s dict for a flagged item (``readable``: its line, as CSV holds it),
        else None; absent with ``evidence=False``."""
        import pandas as pd

        frame = pd.DataFrame(item_columns(self.ids, self.texts, self.text_pairs, self.labels,
                                          self.classes, self.pred_probs))
        order = self.order
        frame["rank"] = ranks(order)
        for method, values in self.scores.items():
            frame[self.score_column(method)] = values
        if self.consensus_labels is not None:
            frame["consensus_label"] = self.classes[self.consensus_labels]
        frame["flagged"] = self.flagged
        if self.evidence is not None:
            said = dict(zip(np.flatnonzero(self.flagged).tolist(),
                            self._records(np.flatnonzero(self.flagged)), strict=True))
            frame["evidence"] = [evidence_text(said.get(i)) if readable else said.get(i)
                                 for i in range(len(frame))]
        if self.datalab is not None:
            frame = pd.concat([frame, self.datalab.to_frame()], axis=1)
        if self.dynamics is not None:
            frame = pd.concat([frame, self.dynamics.to_frame().add_prefix("dynamics_")], axis=1)
        if self.extra is not None and len(self.extra.columns):
            frame = pd.concat([frame, _renamed(self.extra, frame.columns)], axis=1)
        return frame.iloc[order].reset_index(drop=True)

    def write(self, path: str | Path) -> Path:
        """The table of :meth:`to_frame` to ``path`` (CSV, TSV, JSONL, JSON or Parquet by
        its suffix; the evidence as a line in CSV and TSV, structured elsewhere)."""
        readable = Path(path).suffix.lower() in (".csv", ".tsv")
        return write_table(self.to_frame(readable=readable), path)

    def _repr_html_(self) -> str:
        """The items in a notebook, flagged first, then by rank, in the columns of
        :meth:`to_table` (the others named below); a line of the summary's facts above."""
        n_flagged = int(self.flagged.sum())
        header = (f"{len(self.labels):,} items, {len(self.classes)} classes; flagged "
                  f"{n_flagged:,} ({n_flagged / max(len(self.labels), 1):.1%}; "
                  f"{self.flag_rule}); cleanlab estimates {self.n_issues_estimate:,} label "
                  f"errors; out-of-sample accuracy {self.accuracy:.3f}; ranked by {self.rank_by}")
        return result_html(self, self.to_frame(readable=True), header=header, columns=(
            "rank", "id", "label", "suggested_label", "suggested_prob", "loss", "flagged",
            "text", "text_pair", "evidence"))

    def explain(self, item_id: object) -> dict[str, Any]:
        """Why item ``item_id`` (an id of :attr:`ids`, or its text) ranks where it does:
        ``toward`` (the suggested label) and ``against`` (the given one), ``words`` (terms of
        the item pushing the ``words_from`` member's out-of-fold model toward the
        suggested label, with their weight and side), ``neighbours`` (the 3 most similar
        items with the suggested label) and ``duplicate_of`` (items with the same or nearly
        the same text and another label). Any ranked item, flagged or not.

        Examples
        --------
        >>> import pandas as pd
        >>> from labelaudit import scan
        >>> rows = [("good fun film", "pos"), ("bad dull film", "neg")] * 10
        >>> frame = pd.DataFrame(rows, columns=["text", "label"])
        >>> frame.loc[0, "label"] = "neg"
        >>> found = scan(frame, scorers=["tfidf"]).explain(0)
        >>> found["toward"], found["duplicate_of"][0]["label"]
        ('pos', 'pos')
        """
        if self.evidence is None:
            raise InvalidParameterError(
                "this scan ran with evidence=False (--no-evidence): scan again without it to "
                "explain its items", param="item_id")
        matches = np.flatnonzero(self.ids == item_id) if len(self.ids) else np.array([])
        if not len(matches):
            matches = np.flatnonzero(np.asarray(self.ids).astype(str) == str(item_id))
        if not len(matches):
            raise InvalidParameterError(
                f"item id {item_id!r} is not in this scan's result ({len(self.ids)} items; "
                f"ids such as {format_values(list(self.ids[:3]))})", param="item_id")
        return self._records(matches[:1])[0]

    def _records(self, positions: np.ndarray) -> list[dict[str, Any]]:
        assert self.evidence is not None  # noqa: S101 - the callers checked
        return self.evidence.records_of(
            positions, ids=self.ids, texts=self.texts, text_pairs=self.text_pairs,
            labels=self.labels, classes=self.classes, pred_probs=self.pred_probs)

    def report(self, path: str | Path, **options: Any) -> Path:
        """Write the self-contained HTML audit report of this scan to ``path``; options as
        :func:`labelaudit.report.write_report` (``truth=``, ``annotations=``, ``top=``...)."""
        # the one upward import of scan: the report sits above it and reads this result
        from labelaudit.report import write_report

        return write_report(self, path, **options)

    def summary(self) -> str:
        """A few lines for a person, as every scan prints them (:func:`format_scan_summary`)."""
        given = self.mode == GIVEN_PROBS
        facts = ScanFacts(
            n_items=len(self.labels), n_classes=len(self.classes),
            n_issues_estimate=self.n_issues_estimate, n_flagged=int(self.flagged.sum()),
            flag_rule=self.flag_rule, rank_by=self.rank_by, accuracy=self.accuracy,
            majority_rate=self.majority_rate, given=given,
            how=GIVEN_PROBS if given else ", ".join(self.weights),
            mode="" if given else self.mode,
            weights={k: (v, self.temperatures.get(k), self.member_seconds.get(k))
                     for k, v in self.weights.items()},
            screened=self.screened, seconds=self.seconds,
            extra_lines=self._kept_lines() + self._evidence_lines() + (tuple(
                f"datalab: {line}" for line in self.datalab.summary().splitlines())
                if self.datalab is not None else ()))
        weak = chance_note(self.accuracy, self.majority_rate) if len(self.labels) else ""
        return format_scan_summary(facts, weak)


    def _kept_lines(self) -> tuple[str, ...]:
        """With many classes, how many were kept per item and how much mass they left out."""
        if not isinstance(self.pred_probs, TopKProbs):
            return ()
        kept, rest = self.pred_probs.classes.shape[1], self.pred_probs.rest
        return (f"probabilities: each item's {kept} likeliest of {len(self.classes)} classes "
                f"(top_classes); the rest held at most {rest.max(initial=0):.3g} of an item's "
                f"mass (mean {rest.mean() if len(rest) else 0:.2g}), taken as spread evenly",)

    def _evidence_lines(self) -> tuple[str, ...]:
        """What the summary says of the evidence: where it has no words, and conflicting
        duplicates."""
        if self.evidence is None:
            return ()
        lines = []
        if self.evidence.words is None:
            why = ("the probabilities are yours (pred_probs)" if self.mode == GIVEN_PROBS
                   else "no TF-IDF member ran")
            lines.append(f"evidence: neighbours and duplicates only, no words ({why})")
        groups, conflicting = conflicting_groups(self.evidence.groups, self.labels)
        if conflicting:
            lines.append(f"duplicates: {conflicting} of {groups} groups of identical texts "
                         "(lower-cased, punctuation dropped) carry different labels; the "
                         "evidence of their items names them")
        return tuple(lines)


def score_column(method: str, first: str) -> str:
    """A method's output column: ``score_<method>``, ``score_loss_<first>`` for ``loss``."""
    return f"score_loss_{first}" if method == "loss" else f"score_{method}"


def ranks(order: np.ndarray) -> np.ndarray:
    """Each item's rank (1 = most suspect) from its positions ``order``, most suspect first."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    return rank


def item_columns(ids: Any, texts: Any, text_pairs: Any, labels: np.ndarray,
                 classes: np.ndarray, pred_probs: Probs) -> dict[str, Any]:
    """The output's first columns, in every scan's order: ``id, text, [text_pair,] label,
    suggested_label, suggested_prob, given_prob, loss``."""
    suggested, suggested_prob = suggest_labels(labels, pred_probs)
    columns: dict[str, Any] = {"id": ids, "text": texts}
    if text_pairs is not None:
        columns["text_pair"] = text_pairs
    columns.update(label=classes[labels], suggested_label=classes[suggested],
                   suggested_prob=suggested_prob,
                   given_prob=given_probs(labels, pred_probs),
                   loss=per_item_loss(labels, pred_probs))
    return columns


def input_names(columns: Sequence[object], taken: Iterable[object]) -> list[object]:
    """The output name of each kept input column: ``input_<name>`` (prefixed again as
    often as needed) where it is one of ``taken``, of :data:`OUTPUT_COLUMNS`, or starts
    with ``score_``, which ``evaluate`` and ``review`` read as scores.

    Examples
    --------
    >>> input_names(["label", "note", "score_x"], ["id", "label"])
    ['input_label', 'note', 'input_score_x']
    """
    reserved = {*map(str, taken), *OUTPUT_COLUMNS}
    names: list[object] = []
    for column in columns:
        name: object = column
        if str(name) in reserved or str(name).startswith("score_"):
            while str(name) in reserved or name in columns or name in names:
                name = f"input_{name}"
        names.append(name)
    return names


def _renamed(extra: pd.DataFrame, taken: pd.Index) -> pd.DataFrame:
    """The kept input columns, renamed ``input_<name>`` where they would clash."""
    import pandas as pd
    out = extra.reset_index(drop=True)
    out.columns = pd.Index(input_names(list(extra.columns), taken))
    return out


def chance_note(accuracy: float, majority: float) -> str:
    """The summary's line for probabilities near chance level ("" when they are not)."""
    if not _near_chance(accuracy, majority):
        return ""
    return (f"\n  the models are near chance level (accuracy {accuracy:.3f} vs "
            f"{majority:.3f} for always the most common class): many flags are the "
            "models' mistakes, not label errors")


def _accuracy(labels: np.ndarray, pred_probs: Probs) -> float:
    return float((pred_probs.argmax(axis=1) == labels).mean())


def _majority_rate(labels: np.ndarray) -> float:
    return float(np.bincount(labels).max() / len(labels)) if len(labels) else 0.0


def _near_chance(accuracy: float, majority: float) -> bool:
    """Accuracy within 0.05 of always predicting the most common class."""
    return accuracy < majority + 0.05


def warn_if_chance_level(labels: np.ndarray, pred_probs: Probs, *,
                         given: bool = False) -> None:
    """Warn when the probabilities do no better than the most common class (``given``: yours)."""
    if len(labels) == 0:
        return
    accuracy, majority = _accuracy(labels, pred_probs), _majority_rate(labels)
    if not _near_chance(accuracy, majority):
        return
    how = (f"{'barely above' if accuracy > majority else 'no better than'} always predicting "
           f"the most common class ({majority:.2f})")
    warnings.warn(
        f"the given pred_probs have accuracy {accuracy:.2f} against the labels, {how}: check "
        "that their columns are in the class order (classes=) and their rows in the order of "
        "the data; otherwise the ranking is close to random" if given else
        f"out-of-sample accuracy {accuracy:.2f} is {how}: the scorers have not learned this "
        "task, so the ranking is close to random and the estimated error count is unreliable; "
        "fit on a real training split with --score, or use a model that knows the task "
        "(--model)", ChanceLevelWarning, stacklevel=3)


@dataclass(frozen=True)
class LabelSetScanResult(ScannedTexts):
    """The outcome of :func:`labelaudit.scan` on multi-label data.

    Attributes
    ----------
    ids, texts, text_pairs, rank_by, flagged, flag_rule, seconds, member_probs, extra :
        As :class:`ScanResult`.
    label_sets, classes : ndarray of shape (n_samples, n_classes) and (n_classes,)
        The given label sets: 1 where the item has the class.
    pred_probs : ndarray of shape (n_samples, n_classes)
        Each class's out-of-sample probability of being in the set (the members' mean).
    scores, n_issues_estimate
        Label-set quality of every method (lower = more suspect); cleanlab's estimate of
        the number of items whose label set is wrong.
    label_sep : str or None
        How label sets are written to CSV and TSV (and read from them).
    """

    label_sets: np.ndarray
    classes: np.ndarray
    pred_probs: np.ndarray
    member_probs: dict[str, np.ndarray]
    label_sep: str | None = None
    extra: pd.DataFrame | None = None

    @property
    def suggested_sets(self) -> np.ndarray:
        """The classes each item's probabilities put in its set (at least
        :data:`SET_THRESHOLD`), shape (n_samples, n_classes)."""
        return (self.pred_probs >= SET_THRESHOLD).astype(np.int8)

    @property
    def missing(self) -> np.ndarray:
        """Classes not in the given set that the probabilities put there."""
        return (self.suggested_sets == 1) & (self.label_sets == 0)

    @property
    def extra_classes(self) -> np.ndarray:
        """Classes in the given set that the probabilities leave out."""
        return (self.suggested_sets == 0) & (self.label_sets == 1)

    def class_counts(self) -> pd.DataFrame:
        """Per class: items given it, items suggested it, and the flagged items where it
        looks missing or wrong."""
        import pandas as pd
        flagged = self.flagged[:, None]
        return pd.DataFrame({
            "class": [str(c) for c in self.classes],
            "given": self.label_sets.sum(axis=0),
            "suggested": self.suggested_sets.sum(axis=0),
            "flagged_missing": (self.missing & flagged).sum(axis=0),
            "flagged_extra": (self.extra_classes & flagged).sum(axis=0),
        })

    def to_frame(self, *, sep: str | None = None) -> pd.DataFrame:
        """One row per item, most suspect first: id, text(s), the given ``label`` set, the
        ``suggested_label`` set, the ``missing`` and ``extra`` classes, every method's
        ``score_*``, ``rank`` and ``flagged``. Sets are lists, or text joined by ``sep``
        (for CSV and TSV)."""
        import pandas as pd

        order = self.order

        def sets(matrix: np.ndarray) -> list[Any]:
            return [format_label_set(matrix[i], self.classes, sep) for i in order]

        frame = pd.DataFrame({"id": self.ids[order], "text": np.asarray(self.texts,
                                                                        dtype=object)[order]})
        if self.text_pairs is not None:
            frame["text_pair"] = np.asarray(self.text_pairs, dtype=object)[order]
        frame["label"] = sets(self.label_sets)
        frame["suggested_label"] = sets(self.suggested_sets)
        frame["missing"] = sets(self.missing.astype(np.int8))
        frame["extra"] = sets(self.extra_classes.astype(np.int8))
        for name, values in self.scores.items():
            frame[f"score_{name}"] = values[order]
        frame["rank"] = np.arange(1, len(order) + 1)
        frame["flagged"] = self.flagged[order]
        if self.extra is not None:
            kept = self.extra.iloc[order].reset_index(drop=True)
            frame = pd.concat([frame, kept.rename(columns=lambda c: f"input_{c}" if c in
                                                   frame.columns else c)], axis=1)
        return frame

    def write(self, path: str | Path) -> Path:
        """The table to ``path`` (CSV, TSV, JSONL, JSON or Parquet; sets joined by
        ``label_sep`` or ``|`` in CSV and TSV, lists elsewhere)."""
        suffix = Path(path).suffix.lower()
        sep = (self.label_sep or "|") if suffix in (".csv", ".tsv") else None
        return write_table(self.to_frame(sep=sep), path)

    def _repr_html_(self) -> str:
        """The items in a notebook, flagged first, then by rank (sets joined by ", ")."""
        return result_html(self, self.to_frame(sep=", "))

    def summary(self) -> str:
        n = len(self.ids)
        counts = self.class_counts()
        lines = [f"{n} items, {len(self.classes)} classes (multi-label; "
                 f"{int((self.label_sets.sum(axis=1) == 0).sum())} with the empty set), "
                 f"members {', '.join(self.member_probs)}; "
                 f"{int((self.missing | self.extra_classes).any(axis=1).sum())} items' "
                 "suggested set differs from the given one; cleanlab estimates "
                 f"{self.n_issues_estimate} items with a wrong label set; flagged "
                 f"{int(self.flagged.sum())} ({self.flag_rule}); ranked by {self.rank_by} in "
                 f"{self.seconds:.1f} s",
                 "per class, among the flagged items (missing: the class looks left out; "
                 "extra: it looks wrong):",
                 counts.to_string(index=False)]
        return "\n".join(lines)


def result_table(result: Any, *, rows: int | None = None, sep: str | None = None) -> pd.DataFrame:
    """The table a scan's result writes: every item (``rows`` None), or the ``rows`` most
    suspect (:meth:`ScanResult.to_table`; for label sets every item when ``rows`` is 0),
    label sets as lists or as text joined by ``sep`` (evidence as text with ``sep``)."""
    if not isinstance(result, LabelSetScanResult):
        return result.to_frame(readable=sep is not None) if rows is None \
            else result.to_table(rows)
    frame = result.to_frame(sep=sep)
    return frame.head(rows) if rows else frame


@dataclass(frozen=True)
class ScanFacts:
    """What a scan's summary reports, whichever result; ``weights`` maps a member to
    (weight, temperature or None, seconds or None)."""

    n_items: int
    n_classes: int
    n_issues_estimate: int
    n_flagged: int
    flag_rule: str
    rank_by: str
    accuracy: float
    majority_rate: float
    how: str
    mode: str = ""
    given: bool = False
    engine: str = ""
    weights: Mapping[str, tuple[float, float | None, float | None]] = field(default_factory=dict)
    screened: Mapping[str, float] = field(default_factory=dict)
    extra_lines: tuple[str, ...] = ()
    written: str | None = None
    seconds: float = 0.0
    peak_rss_mb: float | None = None


def _member(name: str, weight: float, temperature: float | None, seconds: float | None) -> str:
    detail = [f"T={temperature:.2f}"] if temperature is not None else []
    detail += [f"{seconds:.1f}s"] if seconds is not None else []
    return f"{name} {weight:.2f}" + (f" ({', '.join(detail)})" if detail else "")


def format_scan_summary(facts: ScanFacts, chance: str = "") -> str:
    """The summary lines of a scan (``chance``: the near-chance note, or "").

    Examples
    --------
    >>> facts = ScanFacts(n_items=100, n_classes=2, n_issues_estimate=7, n_flagged=7,
    ...                   flag_rule="cleanlab's estimate", rank_by="ensemble",
    ...                   accuracy=0.9, majority_rate=0.5, how="tfidf",
    ...                   mode="5-fold cross-fit", engine="local",
    ...                   weights={"tfidf": (1.0, 1.0, 0.4)}, seconds=1.2)
    >>> print(format_scan_summary(facts))
    items: 100  classes: 2  probabilities: tfidf (5-fold cross-fit)  engine: local
    estimated label errors (cleanlab): 7 (7.0%)
    flagged: 7 (7.0%; cleanlab's estimate)  ranked by: ensemble
    out-of-sample accuracy: 0.900 (most common class: 0.500)
    members (weight): tfidf 1.00 (T=1.00, 0.4s)
    time: 1.2s
    """
    n = max(facts.n_items, 1)
    source = f"probabilities: {facts.how}" + (f" ({facts.mode})" if facts.mode else "") \
        + (f"  engine: {facts.engine}" if facts.engine else "")
    lines = [
        f"items: {facts.n_items}  classes: {facts.n_classes}  {source}",
        f"estimated label errors (cleanlab): {facts.n_issues_estimate} "
        f"({facts.n_issues_estimate / n:.1%})",
        f"flagged: {facts.n_flagged} ({facts.n_flagged / n:.1%}; {facts.flag_rule})  "
        f"ranked by: {facts.rank_by}{chance}",
    ]
    if facts.given:
        lines += [f"accuracy of the given pred_probs: {facts.accuracy:.3f} (most common "
                  f"class: {facts.majority_rate:.3f})",
                  "probabilities: yours (pred_probs), used as given; the ranking means "
                  "something only if they are out-of-sample, each item scored by a model "
                  "that never trained on it"]
    else:
        lines += [f"out-of-sample accuracy: {facts.accuracy:.3f} (most common class: "
                  f"{facts.majority_rate:.3f})"]
        if facts.weights:
            lines.append("members (weight): " + ", ".join(
                _member(k, *v) for k, v in facts.weights.items()))
    lines += [f"skipped {k}: weight {v:.3f} on the screening sample (below 0.05); name it "
              "in --scorers to run it anyway" for k, v in facts.screened.items()]
    lines += list(facts.extra_lines)
    if facts.written:
        lines.append(f"wrote {facts.written}")
    memory = f"  peak memory: {facts.peak_rss_mb:.0f} MiB" if facts.peak_rss_mb else ""
    lines.append(f"time: {facts.seconds:.1f}s{memory}")
    return "\n".join(lines)


@dataclass(frozen=True)
class StreamScanResult:
    """What :func:`scan` with ``out`` did; the ranked items are in the file ``out``.

    Attributes
    ----------
    out : Path or str
        The output file (or folder of Parquet parts; a remote URI stays a string): one row
        per item, most suspect first, with the columns of :meth:`ScanResult.to_frame`.
    n_items, n_classes, n_flagged, n_issues_estimate, flag_rule, weights, screened, seconds :
        As :class:`ScanResult`.
    accuracy, majority_rate : float
        Out-of-sample accuracy, and that of always predicting the most common given label.
    model, engine : str
        ``"tfidf"`` (in memory, as :func:`labelaudit.scan`) or ``"tfidf-hash"`` (hashed
        features, out-of-core SGD); ``"local"`` or ``"ray"``.
    n_folds, resumed_folds : int
        The folds, and those loaded from the checkpoint of an interrupted run.
    peak_rss_mb : float
        Peak resident memory of this process so far (``getrusage``), in MiB.
    """

    out: Path | str
    n_items: int
    n_classes: int
    n_flagged: int
    n_issues_estimate: int
    flag_rule: str
    accuracy: float
    majority_rate: float
    model: str
    weights: dict[str, float]
    screened: dict[str, float]
    engine: str
    n_folds: int
    resumed_folds: int
    seconds: float
    peak_rss_mb: float

    def summary(self) -> str:
        """A few lines for a person, as every scan prints them (:func:`format_scan_summary`)."""
        resumed = f", {self.resumed_folds} resumed" if self.resumed_folds else ""
        facts = ScanFacts(
            n_items=self.n_items, n_classes=self.n_classes,
            n_issues_estimate=self.n_issues_estimate, n_flagged=self.n_flagged,
            flag_rule=self.flag_rule, rank_by=DEFAULT_METHOD, accuracy=self.accuracy,
            majority_rate=self.majority_rate,
            how=(self.model if set(self.weights) <= {"tfidf"}
                 else ", ".join(self.weights)),
            mode=f"{self.n_folds}-fold cross-fit{resumed}", engine=self.engine,
            weights={k: (v, None, None) for k, v in self.weights.items()},
            screened=self.screened, written=str(self.out), seconds=self.seconds,
            peak_rss_mb=self.peak_rss_mb)
        weak = chance_note(self.accuracy, self.majority_rate) if self.n_items else ""
        return format_scan_summary(facts, weak)

    def _repr_html_(self) -> str:
        """The scan's facts in a notebook (its items are in the file :attr:`out`)."""
        return result_html(self, mapping_frame({**vars(self), "out": str(self.out)}))


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
