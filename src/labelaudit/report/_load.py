"""What a report is made from (a scan result, a token scan result, a table or a file of one),
as a :class:`TextAudit` or a :class:`TokenAudit`.

A scan output table is checked first (:func:`check_scan_table`): a scan writes it right, so a
table that breaks a rule was edited or damaged, and is refused with one line naming the
column, the first offending row (counted from 1 after the header) and the fix.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, plain_value
from labelaudit.detect import Probs, mean_probs
from labelaudit.io import json_lines, read_table
from labelaudit.report._evidence import evidence_problem
from labelaudit.tokens import issues_to_frame

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.scanning import ScanResult, TokenScanResult

REQUIRED_COLUMNS = ("id", "label", "suggested_label", "suggested_prob", "given_prob")
_TOKEN_RECORD = ("id", "tokens", "tags", "score", "issues")
_TOKEN_TABLE = ("id", "rank", "sentence_score", "kind", "start", "end")


@dataclass(frozen=True)
class Member:
    """One scorer of the ensemble: its weight, temperature, accuracy and time."""

    name: str
    weight: float | None
    temperature: float | None
    accuracy: float | None
    seconds: float | None


@dataclass(frozen=True)
class TextAudit:
    """A text or pair scan, most suspect first; ``model_agrees``: the top label is the given one."""

    frame: pd.DataFrame
    source: str
    task: str
    classes: list[Any]
    accuracy: float
    majority_rate: float
    members: tuple[Member, ...] = ()
    flag_rule: str | None = None
    n_issues_estimate: int | None = None
    mode: str | None = None
    rank_by: str | None = None
    seconds: float | None = None
    screened: dict[str, float] = field(default_factory=dict)
    result: Any = None

    @property
    def near_chance(self) -> bool:
        """Accuracy within 0.05 of always predicting the most common given label."""
        return len(self.frame) > 0 and self.accuracy < self.majority_rate + 0.05


@dataclass(frozen=True)
class TokenAudit:
    """A token scan: sentence ``records`` (None from an issue table) and its span ``issues``."""

    records: list[dict] | None
    issues: pd.DataFrame
    source: str
    n_sentences: int
    n_tokens: int | None
    scorer: str | None = None
    scheme: str | None = None


def model_prefers_given(frame: pd.DataFrame, classes: list[Any]) -> np.ndarray:
    """Whether the model's top label is the given one: ``given_prob > suggested_prob`` (the
    best *other* label), a tie going to the class first in sorted order, as ``argmax`` did.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"label": ["a", "b", "b"], "suggested_label": ["b", "a", "a"],
    ...                       "given_prob": [0.7, 0.3, 0.5], "suggested_prob": [0.3, 0.7, 0.5]})
    >>> model_prefers_given(frame, ["a", "b"]).tolist()
    [True, False, False]
    """
    import pandas as pd
    given = frame["given_prob"].to_numpy(dtype=float)
    other = frame["suggested_prob"].to_numpy(dtype=float)
    tie = given == other
    if not tie.any():
        return given > other
    labels = pd.Categorical(frame["label"][tie], categories=classes).codes
    suggested = pd.Categorical(frame["suggested_label"][tie], categories=classes).codes
    first = np.zeros(len(frame), dtype=bool)
    first[tie] = labels < suggested
    return (given > other) | (tie & first)


def _sorted_classes(values: pd.Series) -> list[Any]:
    import pandas as pd
    unique = pd.unique(values.dropna())
    try:
        return sorted(unique.tolist())
    except TypeError:
        return sorted(unique.tolist(), key=str)


def _bool_column(series: pd.Series, name: str, where: str) -> np.ndarray:
    if series.dtype == bool:
        return series.to_numpy()
    text = series.astype(str).str.strip().str.lower()
    truth = text.isin(["true", "1", "1.0", "yes", "t", "y"])
    known = truth | text.isin(["false", "0", "0.0", "no", "f", "n", "", "nan", "none"])
    if not known.all():
        bad = series[~known].head(3).tolist()
        raise InvalidInputError(f"{where}: column {name!r} must be true/false; found {bad}")
    return truth.to_numpy()


def text_audit_from_frame(frame: pd.DataFrame, where: str) -> TextAudit:
    """A scan output table (``labelaudit scan --out``) as a :class:`TextAudit`."""
    import pandas as pd
    if {"missing", "extra", "suggested_label"} <= set(frame.columns):
        raise InvalidInputError(
            f"{where} is the output of a multi-label scan (label sets), whose report "
            "labelaudit.report.write_report builds from the scan's table or result")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"{where} is not a labelaudit scan output: missing columns {', '.join(missing)} "
            "(give the file written by `labelaudit scan --out` or `labelaudit scan-tokens "
            "--out`)")
    frame = check_scan_table(frame, where)
    frame["flagged"] = (_bool_column(frame["flagged"], "flagged", where)
                        if "flagged" in frame.columns else np.zeros(len(frame), dtype=bool))
    for column in ("is_near_duplicate", "is_outlier"):
        if column in frame.columns:
            frame[column] = _bool_column(frame[column].fillna(False), column, where)
    if "rank" in frame.columns:  # checked: 1..n, each once, in the order of a score
        frame = frame.sort_values("rank", kind="stable", ignore_index=True)
    else:
        frame = frame.sort_values("given_prob", kind="stable", ignore_index=True)
        frame["rank"] = np.arange(1, len(frame) + 1)
    classes = _sorted_classes(pd.concat([frame["label"], frame["suggested_label"]]))
    agrees = model_prefers_given(frame, classes)
    frame["model_agrees"] = agrees
    return TextAudit(
        frame=frame, source=where, task="pairs" if "text_pair" in frame.columns else "text",
        classes=classes, accuracy=float(agrees.mean()) if len(frame) else 0.0,
        majority_rate=(float(frame["label"].value_counts().max() / len(frame))
                       if len(frame) else 0.0))


def text_audit_from_result(result: ScanResult, where: str) -> TextAudit:
    """A :class:`~labelaudit.scanning.ScanResult` as a :class:`TextAudit`, with its members."""
    frame = result.to_frame()
    frame["model_agrees"] = (result.pred_probs.argmax(axis=1) == result.labels)[result.order]
    runs: dict[str, list[Probs]] = {}
    for key, member in result.member_probs.items():
        runs.setdefault(key.split("#")[0], []).append(member)
    members = []
    for name in dict.fromkeys([*result.weights, *runs]):
        probs = mean_probs(runs[name]) if name in runs else None
        seconds = result.member_seconds.get(name)
        if seconds is None:
            parts = [v for k, v in result.member_seconds.items() if k.split("#")[0] == name]
            seconds = float(sum(parts)) if parts else None
        members.append(Member(
            name=name, weight=result.weights.get(name),
            temperature=result.temperatures.get(name),
            accuracy=(float((probs.argmax(axis=1) == result.labels).mean())
                      if probs is not None and len(result.labels) else None),
            seconds=seconds))
    return TextAudit(
        frame=frame, source=where, task="pairs" if result.text_pairs is not None else "text",
        classes=list(result.classes), accuracy=result.accuracy,
        majority_rate=result.majority_rate, members=tuple(members),
        flag_rule=result.flag_rule, n_issues_estimate=int(result.n_issues_estimate),
        mode=result.mode, rank_by=result.rank_by, seconds=result.seconds,
        screened=dict(result.screened), result=result)


def _token_audit_from_records(records: list[dict], where: str, *, scorer: str | None = None
                              ) -> TokenAudit:
    missing = sorted({k for r in records[:50] for k in _TOKEN_RECORD if k not in r})
    if missing:
        raise InvalidInputError(
            f"{where} is not a labelaudit scan-tokens output: records lack "
            f"{', '.join(missing)}")
    records = sorted(records, key=lambda r: (r.get("rank") is None, r.get("rank") or 0))
    return TokenAudit(
        records=records, issues=issues_to_frame(records), source=where,
        n_sentences=len(records), n_tokens=sum(len(r["tokens"]) for r in records),
        scorer=scorer, scheme=str(records[0].get("scheme", "iob2")) if records else None)


def _frame_records(frame: pd.DataFrame) -> list[dict]:
    records = frame.to_dict(orient="records")
    for record in records:
        for key in ("tokens", "tags", "suggested_tags", "issues", "token_scores"):
            value = record.get(key)
            if isinstance(value, str):  # a CSV cell of JSON text
                record[key] = json.loads(value)
            elif isinstance(value, np.ndarray):
                record[key] = value.tolist()
    return records


def _is_result(source: object, fields: tuple[str, ...]) -> bool:
    """Whether ``source`` is a scan result with these fields (a frozen dataclass)."""
    return (dataclasses.is_dataclass(source) and not isinstance(source, type)
            and all(hasattr(source, f) for f in fields))


def load_source(source: object, *, name: str | None = None) -> TextAudit | TokenAudit:
    """Read a report's source; a scan result is recognised by its fields, not ``isinstance``:
    ``ScanResult.report`` calls down here, so importing :mod:`labelaudit.scanning` is a cycle."""
    import pandas as pd
    if _is_result(source, ("member_probs", "weights", "scores", "rank_by")):
        return text_audit_from_result(source, name or "in-memory")  # type: ignore[arg-type]
    if _is_result(source, ("token_scores", "sentence_scores", "suggested_tags")):
        tokens: TokenScanResult = source  # type: ignore[assignment]
        return _token_audit_from_records(tokens.to_records(), name or "in-memory",
                                         scorer=tokens.scorer)
    if isinstance(source, pd.DataFrame):
        return _from_frame(source, name or "in-memory")
    if isinstance(source, (str, Path)):
        path = Path(source)
        if path.suffix.lower() not in (".jsonl", ".ndjson"):
            return _from_frame(read_table(path), name or path.name)
        rows = [record for _, record in json_lines(path)]  # list cells (tokens) stay lists
        if rows and not all(isinstance(r, dict) for r in rows):
            raise InvalidInputError(f"{path}: every line must be a JSON object")
        return _from_frame(pd.DataFrame(rows), name or path.name)
    raise InvalidParameterError(
        f"source must be a ScanResult, a TokenScanResult, a DataFrame or the path of a scan "
        f"output; got {type(source).__name__}")


def _from_frame(frame: pd.DataFrame, where: str) -> TextAudit | TokenAudit:
    if all(c in frame.columns for c in ("tokens", "tags", "issues")):  # sentence records
        return _token_audit_from_records(_frame_records(frame), where)
    if all(c in frame.columns for c in _TOKEN_TABLE):  # only the table of span issues
        return TokenAudit(records=None, issues=frame.reset_index(drop=True), source=where,
                          n_sentences=int(frame["id"].nunique()), n_tokens=None)
    return text_audit_from_frame(frame, where)


PROBABILITY_COLUMNS = ("given_prob", "suggested_prob")
LABEL_COLUMNS = ("label", "suggested_label")
_SLACK = 1e-6  # rounding in a weighted mean of probabilities; such values are clipped
_FIX = "re-run `labelaudit scan --out` rather than editing its output"


def _row(frame: pd.DataFrame, position: int) -> str:
    """``row 5 (id 'd3')``: the table's row counted from 1, and its id."""
    return f"row {position + 1} (id {plain_value(frame['id'].iloc[position])!r})"


def _rows(positions: np.ndarray) -> str:
    """``rows 3 and 10``: the first few of several rows, counted from 1."""
    shown = [str(int(r) + 1) for r in positions[:5]]
    return f"rows {', '.join(shown[:-1])} and {shown[-1]}"


def _more(n: int, what: str) -> str:
    return f" ({n:,} {what} in all)" if n > 1 else ""


def check_scan_table(frame: pd.DataFrame, where: str) -> pd.DataFrame:
    """The table with its probability (and rank) columns as numbers, or the first problem.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": ["a", "b"], "given_prob": [0.2, 41.0],
    ...                       "suggested_prob": [0.7, 0.1]})
    >>> check_scan_table(frame, "issues.csv")
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidInputError: issues.csv: column 'given_prob' must hold \
probabilities in [0, 1]; row 2 (id 'b') has 41.0; re-run `labelaudit scan --out` rather \
than editing its output
    """
    frame = frame.copy()
    _check_ids(frame, where)
    for column in LABEL_COLUMNS:
        _check_labels(frame, column, where)
    for column in PROBABILITY_COLUMNS:
        frame[column] = _probabilities(frame, column, where)
    if "rank" in frame.columns:
        frame["rank"] = _ranks(frame, where)
        _check_rank_order(frame, where)
    if "evidence" in frame.columns:
        _check_evidence(frame, where)
    return frame


def _check_evidence(frame: pd.DataFrame, where: str) -> None:
    """Every ``evidence`` cell is empty, the scan's object (or its JSON) or its readable text."""
    problems = [evidence_problem(value) for value in frame["evidence"].tolist()]
    bad = np.array([p is not None for p in problems], dtype=bool)
    _refuse_rows(frame, where, "column 'evidence' must hold a scan's evidence (an object with "
                 "'toward', its JSON, or its text) or nothing", bad,
                 lambda i: f"has {problems[i]}")


def _check_ids(frame: pd.DataFrame, where: str) -> None:
    ids = frame["id"]
    repeated = (ids.duplicated(keep=False) & ids.notna()).to_numpy()
    if not repeated.any():
        return
    first = int(np.flatnonzero(repeated)[0])
    rows = np.flatnonzero(repeated & (ids == ids.iloc[first]).to_numpy())
    n_ids = int(ids[repeated].nunique())
    raise InvalidInputError(
        f"{where}: column 'id' must name each item once; id "
        f"{plain_value(ids.iloc[first])!r} is on {_rows(rows)}{_more(n_ids, 'repeated ids')}; "
        f"{_FIX}")


def _refuse_rows(frame: pd.DataFrame, where: str, rule: str, bad: np.ndarray,
                 has: Callable[[int], str]) -> None:
    """One line for the rows ``bad`` that break ``rule``: the first, what it ``has``, how many."""
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InvalidInputError(f"{where}: {rule}; {_row(frame, first)} {has(first)}"
                                f"{_more(int(bad.sum()), 'rows')}; {_FIX}")


def _check_labels(frame: pd.DataFrame, column: str, where: str) -> None:
    """Every row has a label in ``column`` (the given one, or the one the scan suggests)."""
    if column in frame.columns:
        values = frame[column]
        blank = (values.isna() | (values.astype(str).str.strip() == "")).to_numpy()
        _refuse_rows(frame, where, f"column {column!r} must hold a label on every row (one of "
                     "the classes)", blank, lambda _: "is blank")


def _probabilities(frame: pd.DataFrame, column: str, where: str) -> np.ndarray:
    import pandas as pd
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    blank = np.isnan(values)
    _refuse_rows(frame, where, f"column {column!r} must hold probabilities in [0, 1]",
                 blank | (values < -_SLACK) | (values > 1 + _SLACK),
                 lambda i: "is blank" if pd.isna(raw.iloc[i]) else
                 f"has {plain_value(raw.iloc[i] if blank[i] else values[i])!r}")
    return np.clip(values, 0.0, 1.0)


def _ranks(frame: pd.DataFrame, where: str) -> np.ndarray:
    import pandas as pd
    n = len(frame)
    raw = frame["rank"]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        bad = np.isnan(values) | (values != np.round(values)) | (values < 1) | (values > n)
    expected = f"column 'rank' must number the rows 1 to {n:,}, each once"
    _refuse_rows(frame, where, expected, bad, lambda i: "is blank" if pd.isna(raw.iloc[i])
                 else f"has {plain_value(raw.iloc[i])!r}")
    ranks = values.astype(np.int64)
    seen = pd.Series(ranks).duplicated(keep=False).to_numpy()
    if seen.any():
        first = int(np.flatnonzero(seen)[0])
        rows = np.flatnonzero(ranks == ranks[first])
        raise InvalidInputError(
            f"{where}: {expected}; rank {ranks[first]} is on {_rows(rows)}"
            f"{_more(len(np.unique(ranks[seen])), 'repeated ranks')}; {_FIX}")
    return ranks


def _check_rank_order(frame: pd.DataFrame, where: str) -> None:
    """Some ``score_*`` column (if any) never decreases from rank 1 on, as the scan ranked."""
    import pandas as pd
    columns = [c for c in frame.columns if str(c).startswith("score_")]
    order = np.argsort(frame["rank"].to_numpy(), kind="stable")
    worst: tuple[int, str, int] | None = None
    for column in columns:
        scores = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)[order]
        if np.isnan(scores).any():
            continue
        falls = np.flatnonzero(np.diff(scores) < 0)
        if not len(falls):
            return
        if worst is None or len(falls) < worst[0]:
            worst = (len(falls), str(column), int(falls[0]) + 1)
    if worst is None:
        return
    _, column, at = worst
    scores = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)[order]
    low, high = (f"{v:.6g}" for v in (scores[at], scores[at - 1]))
    if low == high:  # too close for six digits
        low, high = repr(float(scores[at])), repr(float(scores[at - 1]))
    raise InvalidInputError(
        f"{where}: column 'rank' does not follow the scan's ranking: no score column "
        f"(lower = more suspect) grows with the rank; in the closest, {column!r}, rank "
        f"{at + 1} at {_row(frame, int(order[at]))} scores {low}, below rank {at}'s {high}; "
        f"{_FIX}")
