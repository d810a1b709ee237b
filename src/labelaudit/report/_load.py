"""What a report is made from: a scan result, a token scan result, a table or a file of one.

Every source becomes a :class:`TextAudit` (one row per item, most suspect first, with
what the scan knew about its models when it is a :class:`~labelaudit.scanning.ScanResult`)
or a :class:`TokenAudit` (sentence records, or only the table of span issues).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.report._checks import check_scan_table

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.scanning import ScanResult, TokenScanResult

__all__ = ["REQUIRED_COLUMNS", "Member", "TextAudit", "TokenAudit", "load_source",
           "model_prefers_given"]

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
    """A text or sentence-pair scan: one row per item, most suspect first.

    ``frame`` has at least the :data:`REQUIRED_COLUMNS`, ``flagged`` (bool) and ``rank``;
    ``model_agrees`` says whether the model's most probable label is the given one.
    """

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
    """A token scan: sentence ``records`` (None when only the issue table was given) and
    ``issues``, one row per span issue (:func:`labelaudit.tokens.issues_to_frame`)."""

    records: list[dict] | None
    issues: pd.DataFrame
    source: str
    n_sentences: int
    n_tokens: int | None
    scorer: str | None = None
    scheme: str | None = None


def _plain(value: object) -> object:
    from labelaudit.evaluation import plain

    return plain(value)


def model_prefers_given(frame: pd.DataFrame, classes: list[Any]) -> np.ndarray:
    """Whether the model's most probable label is the given one, from the scan output.

    ``suggested_label`` is the most probable label *other than* the given one
    (:func:`labelaudit.detect.suggest_labels`), so the model's top label is the given one
    when ``given_prob > suggested_prob``; on a tie, ``argmax`` takes the class that comes
    first in the sorted classes, as the scan did.

    Examples
    --------
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


def _majority(labels: pd.Series) -> float:
    return float(labels.value_counts().max() / len(labels)) if len(labels) else 0.0


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
        majority_rate=_majority(frame["label"]))


def text_audit_from_result(result: ScanResult, where: str) -> TextAudit:
    """A :class:`~labelaudit.scanning.ScanResult` as a :class:`TextAudit`, with its members."""
    frame = result.to_frame()
    frame["model_agrees"] = (result.pred_probs.argmax(axis=1) == result.labels)[result.order]
    runs: dict[str, list[np.ndarray]] = {}
    for key, member in result.member_probs.items():
        runs.setdefault(key.split("#")[0], []).append(member)
    members = []
    for name in dict.fromkeys([*result.weights, *runs]):
        probs: np.ndarray | None = np.mean(runs[name], axis=0) if name in runs else None
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
    from labelaudit.tokens import issues_to_frame

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


def _token_audit_from_table(frame: pd.DataFrame, where: str) -> TokenAudit:
    return TokenAudit(records=None, issues=frame.reset_index(drop=True), source=where,
                      n_sentences=int(frame["id"].nunique()), n_tokens=None)


def _looks_like_records(frame: pd.DataFrame) -> bool:
    return all(c in frame.columns for c in ("tokens", "tags", "issues"))


def _frame_records(frame: pd.DataFrame) -> list[dict]:
    import json

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
    import dataclasses

    return (dataclasses.is_dataclass(source) and not isinstance(source, type)
            and all(hasattr(source, f) for f in fields))


def load_source(source: object, *, name: str | None = None) -> TextAudit | TokenAudit:
    """Read a report's source (see :func:`labelaudit.report.write_report`).

    A scan's result is recognised by its fields, not by ``isinstance``: the report sits above
    :mod:`labelaudit.scan`, and ``ScanResult.report`` calls down here, so importing the
    scan package at run time would close an import cycle."""
    import pandas as pd
    if _is_result(source, ("member_probs", "weights", "scores", "rank_by")):
        return text_audit_from_result(source, name or "in-memory")  # type: ignore[arg-type]
    if _is_result(source, ("token_scores", "sentence_scores", "suggested_tags")):
        return _from_token_result(source, name or "in-memory")  # type: ignore[arg-type]
    if isinstance(source, pd.DataFrame):
        return _from_frame(source, name or "in-memory")
    if isinstance(source, (str, Path)):
        path = Path(source)
        where = name or path.name
        if path.suffix.lower() in (".jsonl", ".ndjson"):
            frame = _read_jsonl_frame(path)
        else:
            from labelaudit.io import read_table

            frame = read_table(path)
        return _from_frame(frame, where)
    from labelaudit._errors import InvalidParameterError

    raise InvalidParameterError(
        f"source must be a ScanResult, a TokenScanResult, a DataFrame or the path of a scan "
        f"output; got {type(source).__name__}")


def _read_jsonl_frame(path: Path) -> pd.DataFrame:
    """A JSON-lines file as a frame; list cells (token records) stay lists."""
    import pandas as pd

    from labelaudit.io import json_lines

    rows = [record for _, record in json_lines(path)]
    if rows and not all(isinstance(r, dict) for r in rows):
        raise InvalidInputError(f"{path}: every line must be a JSON object")
    return pd.DataFrame(rows)


def _from_frame(frame: pd.DataFrame, where: str) -> TextAudit | TokenAudit:
    if _looks_like_records(frame):
        return _token_audit_from_records(_frame_records(frame), where)
    if all(c in frame.columns for c in _TOKEN_TABLE):
        return _token_audit_from_table(frame, where)
    return text_audit_from_frame(frame, where)


def _from_token_result(result: TokenScanResult, where: str) -> TokenAudit:
    return _token_audit_from_records(result.to_records(), where, scorer=result.scorer)
