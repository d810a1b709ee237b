"""``evaluate``: a scan output's rankings against a truth table joined by id (as text), which
marks errors (``is_error``) or the correct label (``true_label``; label sets as sets)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
)
from labelaudit._validation import check_int, check_number
from labelaudit.evaluation._metrics import (
    DetectionReport,
    PrecisionRecallCurve,
    Unknown,
    check_unknown,
    detection_report,
    precision_at_k,
    precision_recall_curve,
    recall_at_k,
)
from labelaudit.io import (
    FALSE_WORDS,
    LABEL_SET_TYPES,
    TRUE_WORDS,
    ResultFiles,
    check_label_set_members,
    check_separator,
    clean_label,
    figure_path,
    holds_label_sets,
    label_set_names,
    read_table,
    require_columns,
    save_figure,
    text_keys,
)

if TYPE_CHECKING:
    import pandas as pd

# The columns of a multi-label scan's output (LabelSetScanResult.to_frame) besides the id.
_OUTPUT_SETS = ("label", "suggested_label", "missing", "extra")


def is_label_set_output(frame: pd.DataFrame) -> bool:
    """Whether a table is a multi-label scan's output (its label columns hold label sets)."""
    return set(_OUTPUT_SETS) <= set(frame.columns)


def label_set_key(value: object, sep: str) -> frozenset[str]:
    """One label set as compared everywhere: its labels as trimmed text, in no order.

    >>> label_set_key("tech|politics", "|") == label_set_key(["politics", " tech"], "|")
    True
    """
    return frozenset(n for n in (str(v).strip() for v in label_set_names(value, sep)) if n)


def check_label_set_columns(frame: pd.DataFrame, columns: tuple[str, ...], *, id: str,  # noqa: A002
                            sep: str, where: str) -> None:
    """Refuse a label set in ``columns`` with a null or blank member (else a class "None")."""
    ids = frame[id].to_numpy(dtype=object)
    for column in dict.fromkeys(columns):
        if column in frame.columns:
            check_label_set_members(frame[column], column=column, ids=ids, sep=sep, where=where)


def class_metrics(issues: pd.DataFrame, truth: pd.DataFrame, *, id: str,  # noqa: A002
                  label: str, true_label: str, sep: str = "|") -> pd.DataFrame | None:
    """Per class, over the items both tables list with a true set: ``changed`` (given and
    true sets differ on it), ``named`` (``missing`` or ``extra`` names it), ``hits`` (both),
    ``precision``, ``recall``, and a last row ``all``; None when ``issues`` has no
    ``missing`` and ``extra`` columns.

    >>> import pandas as pd
    >>> issues = pd.DataFrame({"id": [1, 2], "label": [["a"], ["b"]],
    ...                        "missing": [["b"], []], "extra": [[], []]})
    >>> truth = pd.DataFrame({"id": [1, 2], "true": [["a", "b"], ["a"]]})
    >>> class_metrics(issues, truth, id="id", label="label", true_label="true").to_dict("list")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'class': ['a', 'b', 'all'], 'changed': [1, 2, 3], 'named': [0, 1, 1], 'hits': [0, 1, 1],
     'precision': [nan, 1.0, 1.0], 'recall': [0.0, 0.5, 0.3333333333333333]}
    """
    import pandas as pd
    if not {"missing", "extra", label, id} <= set(issues.columns):
        return None
    check_label_set_columns(issues, (label, "missing", "extra"), id=id, sep=sep, where="issues")
    check_label_set_columns(truth, (true_label,), id=id, sep=sep, where="truth")
    lists = holds_label_sets(truth[true_label])  # then a missing value is unverified
    true = {k: v for k, v in zip(text_keys(truth[id], strip=True), truth[true_label],
                                 strict=True)
            if isinstance(v, LABEL_SET_TYPES) or not lists or not pd.isna(v)}
    counts: dict[str, list[int]] = {}
    for key, given, missing, extra in zip(text_keys(issues[id], strip=True), issues[label],
                                          issues["missing"], issues["extra"], strict=True):
        if key not in true:
            continue
        given_set, true_set = label_set_key(given, sep), label_set_key(true[key], sep)
        named = label_set_key(missing, sep) | label_set_key(extra, sep)
        for name in given_set | true_set | named:
            row = counts.setdefault(name, [0, 0, 0])
            changed = (name in given_set) != (name in true_set)
            row[0] += changed
            row[1] += name in named
            row[2] += changed and name in named
    names = sorted(counts)
    table = np.array([counts[n] for n in names] or np.zeros((0, 3)), dtype=int).reshape(-1, 3)
    table = np.vstack([table, table.sum(axis=0)])
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({"class": [*names, "all"], "changed": table[:, 0].tolist(),
                             "named": table[:, 1].tolist(), "hits": table[:, 2].tolist(),
                             "precision": (table[:, 2] / table[:, 1]).tolist(),
                             "recall": (table[:, 2] / table[:, 0]).tolist()})


TruthFrom = Literal["is_error", "true_label"]
# The score columns labelaudit writes, by which way they point: lower = more suspect (also
# every ``score_*`` column), higher = more suspect.
LOWER_IS_SUSPECT = frozenset({"rank", "given_prob", "score", "label_quality", "label_score",
                              "dynamics_aum", "dynamics_confidence"})
HIGHER_IS_SUSPECT = frozenset({"loss"})


class ScoreDirectionWarning(LabelAuditWarning):
    """A score column that labelaudit does not write was read as lower = more suspect."""


@dataclass(frozen=True)
class TruthJoin:
    """A scan output and its truth aligned item by item (as in :class:`EvaluationResult`)."""

    ids: list[object]
    is_error: np.ndarray
    scores: dict[str, np.ndarray]
    truth_from: TruthFrom
    n_missing_truth: int
    classes: pd.DataFrame | None = None


def read_source(data: pd.DataFrame | str | Path, what: str) -> tuple[pd.DataFrame, str]:
    """A table and the name messages give it: the path as given, or ``what`` for a frame."""
    import pandas as pd
    if isinstance(data, pd.DataFrame):
        return data, what
    return read_table(data), str(data)


def _key(value: object) -> str:
    """A label as text (7, 7.0 and "7" agree); a label set as its sorted labels joined by |."""
    if isinstance(value, LABEL_SET_TYPES):
        return "|".join(sorted(_key(v) for v in value))
    return str(clean_label(value)).strip()


def _is_missing(value: object) -> bool:
    import pandas as pd
    if isinstance(value, LABEL_SET_TYPES):
        return False  # a label set, perhaps the empty one
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


class _Ids:
    """Ids as the tables spell them, for messages: ``ids 68, 70`` or ``id 'item3'``."""

    def __init__(self) -> None:
        self.spelled: dict[str, object] = {}

    def keys(self, frame: pd.DataFrame, column: str, name: str) -> list[str]:
        """The unique ids of ``column`` as text (:func:`labelaudit.io.text_keys`, stripped)."""
        values = frame[column].tolist()
        blank = [i for i, v in enumerate(values) if _is_missing(v)]
        if blank:
            raise InvalidInputError(f"{name}: column {column!r} is blank in {format_rows(blank)}")
        keys = text_keys(frame[column], strip=True).tolist()
        for k, v in zip(keys, values, strict=True):
            self.spelled.setdefault(k, clean_label(v))
        seen: set[str] = set()
        repeated = sorted({k for k in keys if k in seen or seen.add(k)})  # type: ignore[func-returns-value]
        if repeated:
            raise InvalidInputError(
                f"{name}: duplicate ids in column {column!r}: {self.show(repeated)}; "
                "each item must appear once")
        return keys

    def show(self, keys: Sequence[str]) -> str:
        return format_rows([self.spelled.get(k, k) for k in keys], word="id")


def _truth_column(truth: pd.DataFrame, is_error: str | None, true_label: str | None,
                  name: str) -> tuple[TruthFrom, str]:
    if is_error:
        return "is_error", is_error
    if true_label:
        return "true_label", true_label
    for kind in ("is_error", "true_label"):
        if kind in truth.columns:
            return kind, kind  # type: ignore[return-value]
    raise InvalidInputError(
        f"{name}: no is_error or true_label column; name the truth column with "
        "is_error=COLUMN or true_label=COLUMN", param=("is_error", "true_label"))


def _score_columns(frame: pd.DataFrame, wanted: str | Sequence[str] | None,
                   name: str) -> dict[str, str]:
    """Method name -> score column: ``score_<method>`` columns (or ``rank``) unless named."""
    if wanted:
        columns = _columns(wanted)
        require_columns(frame, columns, where=name)
    else:
        columns = [c for c in frame.columns if str(c).startswith("score_")]
        if not columns and "rank" in frame.columns:
            columns = ["rank"]
        if not columns:
            raise InvalidInputError(
                f"{name}: no score_* or rank column to evaluate; name the columns with "
                "scores=COLUMNS (lower = more suspect)", param="scores")
    return {(c[len("score_"):] if c.startswith("score_") else c): c for c in columns}


def _columns(value: str | Sequence[str] | None) -> list[str]:
    """Column names given as a list or as comma-separated text."""
    if not value:
        return []
    return ([c.strip() for c in value.split(",") if c.strip()] if isinstance(value, str)
            else [str(c) for c in value])


def _reversed_columns(methods: dict[str, str],
                      higher_is_suspect: str | Sequence[str] | None) -> set[str]:
    """The score columns where higher = more suspect: those named and labelaudit's own; an
    unknown column is read as lower = more suspect, with a :class:`ScoreDirectionWarning`."""
    named = _columns(higher_is_suspect)
    columns = list(methods.values())
    unknown = [c for c in named if c not in columns]
    if unknown:
        raise InvalidParameterError(
            f"higher_is_suspect={','.join(unknown)} names no score column evaluated "
            f"({', '.join(columns)}); name the columns of scores= whose higher values are "
            "more suspect", param=("higher_is_suspect", "scores"))
    others = [c for c in columns if c not in named and c not in LOWER_IS_SUSPECT
              and c not in HIGHER_IS_SUSPECT and not str(c).startswith("score_")]
    if others:
        warnings.warn(ScoreDirectionWarning(
            f"scores={','.join(others)}: not one of labelaudit's score columns, so read as "
            "lower = more suspect; if higher values are more suspect, pass "
            f"higher_is_suspect={','.join(others)}", param=("scores", "higher_is_suspect")),
            stacklevel=4)
    return set(named) | {c for c in columns if c in HIGHER_IS_SUSPECT}


def _flags(values: list[object], ids: list[str], column: str, name: str,
           spelled: _Ids) -> np.ndarray:
    """``is_error`` values as 1/0/NaN: true/false, yes/no, 1/0, blank for unverified."""
    out = np.full(len(values), np.nan)
    bad = []
    for i, value in enumerate(values):
        text = "" if _is_missing(value) else str(value).strip().lower()
        if isinstance(value, bool) or text in TRUE_WORDS | FALSE_WORDS:
            out[i] = 1.0 if (value is True or text in TRUE_WORDS) else 0.0
        elif text:
            bad.append(ids[i])
    if bad:
        raise InvalidInputError(
            f"{name}: column {column!r} must be true/false (or 1/0, blank for unverified); "
            f"other values at {spelled.show(bad)}")
    return out


def _examples(values: list[object], limit: int = 3) -> str:
    """The first distinct values and their Python types: ``0, 1; int``."""
    distinct = list({repr(v): v for v in (
        [str(x) for x in v] if isinstance(v, LABEL_SET_TYPES) else clean_label(v)
        for v in values)}.values())
    shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in distinct[:limit])
    kinds = " and ".join(sorted({type(v).__name__ for v in distinct}))
    return shown + (", ..." if len(distinct) > limit else "") + f"; {kinds}"


@dataclass(frozen=True)
class _Tables:
    """The two tables, their names for messages and the aligned ids."""

    issues: pd.DataFrame
    truth: pd.DataFrame
    issues_name: str
    truth_name: str
    ids: list[str]
    n_listed: int  # the first n_listed ids are the scan output's rows, in order
    truth_row: dict[str, int]
    spelled: _Ids


def _label_sep(issues: pd.DataFrame, truth: pd.DataFrame, label: str, column: str,
               label_sep: str | None) -> str | None:
    """The separator of label sets written as text (``label_sep``, else ``|`` as the scan
    writes them) when the labels compared are label sets; None for single labels."""
    if label_sep is not None:
        return check_separator(label_sep)
    sets = (is_label_set_output(issues) or holds_label_sets(issues[label])
            or holds_label_sets(truth[column]))
    return "|" if sets else None


def _errors_from_labels(t: _Tables, column: str, label: str, sep: str | None) -> np.ndarray:
    """1 where the given label differs from the true one, NaN where the truth is blank; with
    ``sep``, label sets compared as sets, where a blank cell of text is the empty set."""
    true = t.truth[column].tolist()
    pairs: list[tuple[int, object, object]] = []  # (position, given label, true label)
    if t.n_listed < len(t.ids) and label not in t.truth.columns:
        raise InvalidInputError(
            f"partial_ranking=True with true_label={column!r} needs the given label of "
            f"unlisted items: add a {label!r} column to {t.truth_name}",
            param=("partial_ranking", "true_label"))

    def blank_in(values: pd.Series):  # how a column of these labels says "no label": a
        # missing value, but in text label sets a blank cell is the empty set
        return _is_missing if sep is None or holds_label_sets(values) else (lambda _: False)

    true_blank = blank_in(t.truth[column])
    for i, k in enumerate(t.ids):
        row = t.truth_row.get(k)
        if row is None or true_blank(true[row]):
            continue
        given = t.issues[label].iat[i] if i < t.n_listed else t.truth[label].iat[row]
        pairs.append((i, given, true[row]))
    given_blank = blank_in(t.issues[label])
    unlisted_blank = blank_in(t.truth[label]) if t.n_listed < len(t.ids) else given_blank
    blank = [i for i, given, _ in pairs
             if (given_blank if i < t.n_listed else unlisted_blank)(given)]
    if blank:
        listed = blank[0] < t.n_listed  # blank in the scan output, else in the truth
        same = [t.ids[i] for i in blank if (i < t.n_listed) == listed]
        raise InvalidInputError(
            f"{t.issues_name if listed else t.truth_name}: column {label!r} is blank at "
            f"{t.spelled.show(same)}; every verified item needs its given label")

    def key(value: object) -> object:
        return _key(value) if sep is None else label_set_key(value, sep)

    def names(keys: set) -> set:  # the labels, or with label sets the classes
        return keys if sep is None else {n for each in keys for n in each}

    given_keys, true_keys = {key(g) for _, g, _ in pairs}, {key(v) for _, _, v in pairs}
    if pairs and names(given_keys) and names(true_keys) and not (
            names(given_keys) & names(true_keys)):
        raise InvalidInputError(
            f"the given labels (label={label!r} of {t.issues_name}: "
            f"{_examples([g for _, g, _ in pairs])}) and the true labels "
            f"(true_label={column!r} of {t.truth_name}: {_examples([v for _, _, v in pairs])}) "
            "share no value, so every item would count as an error; write both columns with "
            "the same label values (both class names or both class numbers)",
            param=("label", "true_label"))
    out = np.full(len(t.ids), np.nan)
    for i, given, true_value in pairs:
        out[i] = float(key(given) != key(true_value))
    return out


def _scores(t: _Tables, methods: dict[str, str], higher: set[str]) -> dict[str, np.ndarray]:
    """Each method's scores, lower = more suspect (the columns in ``higher`` negated)."""
    scores = {}
    for method, column in methods.items():
        try:
            values = t.issues[column].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"{t.issues_name}: score column {column!r} is not numeric") from None
        blank = np.flatnonzero(~np.isfinite(values))
        if blank.size:
            raise InvalidInputError(
                f"{t.issues_name}: score column {column!r} is blank or not finite at "
                f"{t.spelled.show([t.ids[i] for i in blank])}")
        if column in higher:
            values = -values
        last = values.max() + 1.0 if values.size else 0.0
        scores[method] = np.r_[values, np.full(len(t.ids) - t.n_listed, last)]
    return scores


def _align(issues: pd.DataFrame, truth: pd.DataFrame, names: tuple[str, str], id: str,
           unknown: object, partial_ranking: bool) -> tuple[_Tables, int]:
    """Match the ids; returns the aligned tables and how many scan ids the truth lacks."""
    spelled = _Ids()
    issue_keys = spelled.keys(issues, id, names[0])
    truth_keys = spelled.keys(truth, id, names[1])
    truth_row = {k: i for i, k in enumerate(truth_keys)}
    listed = set(issue_keys)
    if not any(k in truth_row for k in issue_keys):
        raise InvalidInputError(
            f"no id of {names[0]} is in {names[1]} (column {id!r}); check the id column "
            f"(id={id!r}) and that both tables describe the same items", param="id")
    only_issues = [k for k in issue_keys if k not in truth_row]
    only_truth = [k for k in truth_keys if k not in listed]
    if only_issues and unknown is None:
        raise InvalidInputError(
            f"{len(only_issues)} ids of {names[0]} are not in {names[1]}: "
            f"{spelled.show(only_issues)}; pass unknown='exclude' or unknown='clean' to treat "
            "them as unverified", param="unknown")
    if only_truth and not partial_ranking:
        raise InvalidInputError(
            f"{len(only_truth)} ids of {names[1]} are not in {names[0]}: "
            f"{spelled.show(only_truth)}; pass partial_ranking=True if the scan output lists "
            "only its most suspect items", param="partial_ranking")
    tables = _Tables(issues, truth, names[0], names[1], issue_keys + only_truth,
                     len(issue_keys), truth_row, spelled)
    return tables, len(only_issues)


def join_truth(issues: pd.DataFrame | str | Path, truth: pd.DataFrame | str | Path, *,
               id: str = "id", is_error: str | None = None, true_label: str | None = None,
               label: str = "label", scores: str | Sequence[str] | None = None,
               higher_is_suspect: str | Sequence[str] | None = None, label_sep: str | None = None,
               unknown: object = None, partial_ranking: bool = False) -> TruthJoin:
    """Align a scan output with its truth by id (see :func:`labelaudit.evaluation.evaluate`).

    >>> import pandas as pd
    >>> issues = pd.DataFrame({"id": [1, 2, 3], "score_loss": [0.1, 0.5, 0.9]})
    >>> truth = pd.DataFrame({"id": ["3", "2", "1"], "is_error": ["no", "no", "yes"]})
    >>> joined = join_truth(issues, truth)
    >>> joined.ids, joined.is_error.tolist(), list(joined.scores)
    (['1', '2', '3'], [1.0, 0.0, 0.0], ['loss'])
    """
    issues_frame, issues_name = read_source(issues, "issues")
    truth_frame, truth_name = read_source(truth, "truth")
    require_columns(issues_frame, [id], where=issues_name)
    require_columns(truth_frame, [id], where=truth_name)
    kind, column = _truth_column(truth_frame, is_error, true_label, truth_name)
    require_columns(truth_frame, [column], where=truth_name)
    if kind == "true_label":
        require_columns(issues_frame, [label], where=issues_name)
    methods = _score_columns(issues_frame, scores, issues_name)
    higher = _reversed_columns(methods, higher_is_suspect)
    t, n_missing = _align(issues_frame, truth_frame, (issues_name, truth_name), id, unknown,
                          partial_ranking)
    sep = None
    if kind == "is_error":
        values = truth_frame[column].tolist()
        raw = [values[t.truth_row[k]] if k in t.truth_row else None for k in t.ids]
        errors = _flags(raw, t.ids, column, truth_name, t.spelled)
    else:
        sep = _label_sep(issues_frame, truth_frame, label, column, label_sep)
        if sep is not None:
            check_label_set_columns(issues_frame, (label, "missing", "extra"), id=id, sep=sep,
                                    where=issues_name)
            check_label_set_columns(truth_frame, (column, label), id=id, sep=sep, where=truth_name)
        errors = _errors_from_labels(t, column, label, sep)
    classes = (class_metrics(issues_frame, truth_frame, id=id, label=label, true_label=column,
                             sep=sep or "|") if kind == "true_label" else None)
    return TruthJoin(ids=list(t.ids), is_error=errors, scores=_scores(t, methods, higher),
                     truth_from=kind, n_missing_truth=n_missing, classes=classes)


def draw_precision_recall(axes: Any, lines: Iterable[tuple[str, Any, Any, float]], *,
                          xlabel: str = "recall (share of errors found)",
                          ylabel: str = "precision (share of flagged that are errors)",
                          fontsize: Any = "small", linewidth: float = 1.5) -> None:
    """Draw ``(label, recall, precision, error rate)`` lines on matplotlib ``axes``, a dotted
    line at each error rate (a random ranking), the unit square, a grid and a legend."""
    rates = set()
    for label, recall, precision, rate in lines:
        axes.plot(recall, precision, label=label, linewidth=linewidth)
        if rate == rate:  # not NaN
            rates.add(round(float(rate), 6))
    for rate in sorted(rates):
        axes.axhline(rate, color="grey", linestyle=":", linewidth=1)
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.02)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper right", fontsize=fontsize)


def plot_precision_recall(curves: Mapping[str, PrecisionRecallCurve], path: str | Path, *,
                          title: str | None = None) -> Path:
    """Save the named precision-recall curves, each labelled with its AUPR, as a ``.png`` or
    ``.svg`` file (atomically); the dotted line of each error rate is a random ranking.

    >>> import tempfile, pathlib
    >>> from labelaudit.evaluation import precision_recall_curve
    >>> curve = precision_recall_curve([True, False, True, False], [0.1, 0.2, 0.3, 0.4])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "pr.svg"
    >>> plot_precision_recall({"loss": curve}, out).read_text().startswith("<?xml")
    True
    """
    target, _ = figure_path(path)
    if not curves:
        raise InvalidParameterError("curves is empty: pass at least one named curve")
    for name, curve in curves.items():
        if not isinstance(curve, PrecisionRecallCurve):
            raise InvalidParameterError(
                f"curves[{name!r}] must be a PrecisionRecallCurve, got {type(curve).__name__}"
            )

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.0, 4.5), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    draw_precision_recall(axes, [(f"{name} (AUPR {curve.area():.3f})", curve.recall,
                                  curve.precision, curve.n_errors / curve.n_items)
                                 for name, curve in curves.items()])
    if title:
        axes.set_title(title)
    figure.tight_layout()
    return save_figure(figure, target)


def no_nan(value: Any) -> Any:
    """``value`` for JSON: NaN as None, in dicts and lists too (tuples become lists)."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: no_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [no_nan(v) for v in value]
    return value


class CutoffWarning(LabelAuditWarning):
    """An ``at_k`` cut-off beyond the items evaluated was clipped to them."""


@dataclass(frozen=True)
class EvaluationResult(ResultFiles):
    """Detection metrics of every ranking of a scan output against the truth.

    Attributes
    ----------
    ids, is_error : list and ndarray of shape (n_items,)
        The items evaluated, as ids (text); the truth: 1 wrong label, 0 right, NaN unverified.
    scores, reports : dict of str to ndarray (n_items,), and to DetectionReport
        Each ranking (lower = more suspect) and its headline metrics.
    precision_at_k, recall_at_k : dict of str to dict of int to float
        Each ranking's precision and recall at the cut-offs ``at_k``.
    truth_from, unknown, at_k
        Which kind of truth column was read, and the options of :func:`evaluate`.
    n_unverified, n_missing_truth, n_errors_estimate
        Items the truth leaves blank (or does not list), scan ids it does not list, and
        the estimated errors in the whole set (``error_rate`` or ``n_errors``; or None).
    issues_source, truth_source, classes
        The files read (None for DataFrames); for label sets, :func:`class_metrics`.
    """

    ids: list[object]
    is_error: np.ndarray
    scores: dict[str, np.ndarray]
    reports: dict[str, DetectionReport]
    precision_at_k: dict[str, dict[int, float]]
    recall_at_k: dict[str, dict[int, float]]
    at_k: tuple[int, ...]
    truth_from: TruthFrom
    unknown: Unknown | None
    n_unverified: int
    n_missing_truth: int
    n_errors_estimate: int | None
    issues_source: str | None = None
    truth_source: str | None = None
    classes: pd.DataFrame | None = None

    @property
    def n_errors(self) -> int:
        """Errors the truth marks."""
        return int(np.nansum(self.is_error))

    def to_frame(self) -> pd.DataFrame:
        """One row per ranking: ``method``, the :class:`DetectionReport` fields, then
        ``precision_at_<k>, recall_at_<k>`` for each cut-off."""
        import pandas as pd
        rows = []
        for method, report in self.reports.items():
            row: dict[str, object] = {"method": method, **report.to_dict()}
            for k in self.at_k:
                row[f"precision_at_{k}"] = self.precision_at_k[method][k]
                row[f"recall_at_{k}"] = self.recall_at_k[method][k]
            rows.append(row)
        return pd.DataFrame(rows)

    def to_table(self) -> pd.DataFrame:
        """:meth:`to_frame` for reading: short column names (``ap``, ``p@err``, ``r@2err``,
        ``p@<k>``, ``unverified``...), ``-`` for no ``unknown`` setting, four decimals."""
        return self.to_frame().rename(columns={
            "average_precision": "ap", "precision_at_err": "p@err", "recall_at_err": "r@err",
            "recall_at_2err": "r@2err", "n_unknown": "unverified",
            **{f"precision_at_{k}": f"p@{k}" for k in self.at_k},
            **{f"recall_at_{k}": f"r@{k}" for k in self.at_k},
        }).fillna({"unknown": "-"}).round(4)

    def to_dict(self) -> dict:
        """JSON-ready: the sources, how the truth was read, and the metrics (NaN as None)."""
        return no_nan({
            "issues": self.issues_source, "truth": self.truth_source,
            "truth_from": self.truth_from, "unknown": self.unknown,
            "n_unverified": self.n_unverified,
            "n_scan_ids_missing_from_truth": self.n_missing_truth,
            "n_errors_estimate": self.n_errors_estimate,
            "metrics": self.to_frame().to_dict(orient="records"),
        } | ({} if self.classes is None else {
            "classes": self.classes.to_dict(orient="records")}))

    def summary(self) -> str:
        """One line: items, known errors, the estimate and unverified items, methods."""
        note = f", {self.n_unverified} unverified ({self.unknown})" if self.n_unverified else ""
        estimate = (f", {self.n_errors_estimate} estimated in all"
                    if self.n_errors_estimate is not None else "")
        n = len(self.reports)
        line = (f"evaluated {len(self.ids)} items: {self.n_errors} known errors{estimate}{note}; "
                f"{n} method{'s' if n != 1 else ''}")
        if self.classes is None:
            return line
        return (line + "\nper class: items whose membership the truth changes, those the scan "
                "names missing or extra, and the hits\n"
                + self.classes.round(4).to_string(index=False))

    def curves(self) -> dict[str, PrecisionRecallCurve]:
        """The precision-recall curve of each ranking."""
        return {method: precision_recall_curve(self.is_error, scores, unknown=self.unknown,
                                               n_errors=self.n_errors_estimate)
                for method, scores in self.scores.items()}

    def plot(self, path: str | Path, *, title: str | None = None) -> Path:
        """Save the precision-recall curves as PNG or SVG (:func:`plot_precision_recall`)."""
        if title is None and self.issues_source and self.truth_source:
            title = f"{self.issues_source} vs {self.truth_source}"
        return plot_precision_recall(self.curves(), path, title=title)


def _estimate(error_rate: float | None, n_errors: int | None, n_items: int, observed: int,
              where: str) -> int | None:
    """The estimated number of errors, checked against the items and the truth."""
    if error_rate is not None and n_errors is not None:
        raise InvalidParameterError("give error_rate or n_errors, not both",
                                    param=("error_rate", "n_errors"))
    if n_errors is not None:
        n_errors = check_int(n_errors, "n_errors", minimum=1)
        if n_errors > n_items:
            raise InvalidParameterError(
                f"n_errors={n_errors} is more than the {n_items} items in {where}: there "
                f"cannot be more errors than items; give at most {n_items} (or error_rate=, "
                "a share of the items)", param=("n_errors", "error_rate"))
    if error_rate is not None:
        rate = check_number(error_rate, "error_rate", low=0.0, high=1.0, low_open=True)
        n_errors = max(1, round(rate * n_items))
    if n_errors is not None and n_errors < observed:
        raise InvalidParameterError(
            f"the estimated number of errors ({n_errors}) is smaller than the {observed} "
            "errors the truth marks; raise error_rate=/n_errors= or drop it",
            param=("error_rate", "n_errors"))
    return n_errors


def warn_clipped(ks: Sequence[int], n_evaluated: int, *, name: str = "at_k",
                 items: str = "items", stacklevel: int = 3) -> None:
    """Warn (:class:`CutoffWarning`) naming the cut-offs ``ks`` (the option ``name``)
    beyond the ``n_evaluated`` ``items`` ranked, where p@k and r@k are those of them all."""
    beyond = [k for k in ks if k > n_evaluated]
    if beyond:
        warnings.warn(CutoffWarning(
            f"{name}={', '.join(map(str, beyond))}: more than the {n_evaluated} {items} "
            f"evaluated, so p@k and r@k there are those of all {n_evaluated} {items} (the "
            "cut-off is clipped)", param=name), stacklevel=stacklevel + 1)


def _cutoffs(at_k: int | Sequence[int], n_evaluated: int) -> tuple[int, ...]:
    """The distinct cut-offs; a warning names those beyond the items evaluated."""
    ks = tuple(dict.fromkeys(check_int(k, "at_k", minimum=1) for k in
                             ((at_k,) if isinstance(at_k, (int, np.integer)) else at_k)))
    warn_clipped(ks, n_evaluated)
    return ks


def evaluate(issues: pd.DataFrame | str | Path, truth: pd.DataFrame | str | Path, *, id: str = "id",
             is_error: str | None = None, true_label: str | None = None, label: str = "label",
             scores: str | Sequence[str] | None = None,
             higher_is_suspect: str | Sequence[str] | None = None, label_sep: str | None = None,
             unknown: Unknown | None = None, partial_ranking: bool = False,
             error_rate: float | None = None, n_errors: int | None = None,
             at_k: int | Sequence[int] = ()) -> EvaluationResult:
    """Measure how well each ranking of a scan output finds the errors a truth table marks.

    Every score column (``score_<method>``, or ``rank``) is one ranking: for each,
    :func:`detection_report` and :func:`precision_at_k` / :func:`recall_at_k` at ``at_k``.

    Parameters
    ----------
    issues : DataFrame or path
        The scan output (any format :func:`labelaudit.io.read_table` reads).
    truth : DataFrame or path
        The known errors, keyed by ``id`` (the id column of both tables).
    is_error, true_label
        The truth column: true for wrong labels (blank: unverified), or the correct label,
        compared with ``label``. Default: ``is_error``, else ``true_label``.
    label
        Given-label column of the scan output (and, with ``partial_ranking``, of the truth).
    scores, higher_is_suspect
        Score columns (comma-separated text or a list; default every ``score_*``), lower =
        more suspect but for ``loss`` and those in ``higher_is_suspect``; a column
        labelaudit does not write is read as lower, with a :class:`ScoreDirectionWarning`.
    label_sep
        The labels are label sets written as text joined by ``label_sep`` (default: sets
        are recognised, text split at ``|``). Compared as sets; a blank text cell is empty.
    unknown : {"exclude", "clean"}, optional
        Unverified items (blank truth, or scan ids the truth lacks): leave them out, or
        count them as clean. Required when there are any.
    partial_ranking
        The scan output is a flagged list: truth items missing from it rank last, tied.
    error_rate, n_errors
        Estimated share (in (0, 1]) or number of errors in the whole set, when only part
        was verified: ``k_err`` of the @Err metrics and the recall denominator.
    at_k
        Cut-offs for precision and recall at ``k``; one beyond the items evaluated is
        clipped, with a :class:`CutoffWarning`.

    Returns
    -------
    EvaluationResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, EMNLP, section 7 and appendix E.1.

    Examples
    --------
    >>> import pandas as pd
    >>> issues = pd.DataFrame({"id": [1, 2, 3, 4], "score_loss": [0.1, 0.2, 0.3, 0.4]})
    >>> truth = pd.DataFrame({"id": [1, 2, 3, 4], "is_error": [True, False, True, False]})
    >>> result = evaluate(issues, truth, at_k=[2])
    >>> result.to_frame()[["method", "aupr", "precision_at_2"]].round(4)
      method    aupr  precision_at_2
    0   loss  0.7917             0.5
    >>> result.summary()
    'evaluated 4 items: 2 known errors; 1 method'
    """
    import pandas as pd
    unknown = check_unknown(unknown)
    joined = join_truth(issues, truth, id=id, is_error=is_error, true_label=true_label,
                        label=label, scores=scores, higher_is_suspect=higher_is_suspect,
                        label_sep=label_sep, unknown=unknown, partial_ranking=partial_ranking)
    n_unverified = int(np.isnan(joined.is_error).sum())
    n_items = len(joined.ids)
    if n_unverified and unknown is None:
        raise InvalidInputError(
            f"the truth leaves {n_unverified} of {n_items} items unverified (blank); pass "
            "unknown='exclude' to leave them out or unknown='clean' to count them as clean",
            param="unknown")
    sources = [None if isinstance(x, pd.DataFrame) else str(x) for x in (issues, truth)]
    where = " and ".join(s or name for s, name in zip(sources, ("issues", "truth"), strict=True))
    estimate = _estimate(error_rate, n_errors, n_items, int(np.nansum(joined.is_error)), where)
    ks = _cutoffs(at_k, n_items - (n_unverified if unknown == "exclude" else 0))
    reports, precision, recall = {}, {}, {}
    for method, values in joined.scores.items():
        reports[method] = detection_report(joined.is_error, values, unknown=unknown,
                                           n_errors=estimate)
        precision[method] = {k: precision_at_k(joined.is_error, values, k=k, unknown=unknown)
                             for k in ks}
        recall[method] = {k: recall_at_k(joined.is_error, values, k=k, unknown=unknown,
                                         n_errors=estimate) for k in ks}
    return EvaluationResult(
        ids=joined.ids, is_error=joined.is_error, scores=joined.scores, reports=reports,
        precision_at_k=precision, recall_at_k=recall, at_k=ks, truth_from=joined.truth_from,
        unknown=unknown, n_unverified=n_unverified, n_missing_truth=joined.n_missing_truth,
        n_errors_estimate=estimate, issues_source=sources[0], truth_source=sources[1],
        classes=joined.classes)
