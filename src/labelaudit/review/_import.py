"""Import answers given in Label Studio, Argilla or a CSV (``labelaudit review import``).

* **Label Studio**: its JSON export (tasks with ``annotations``) and its JSON-MIN export
  of tasks made by ``review export --to label-studio``.
* **Argilla** (2.x): records in ``rg.Record.from_dict`` form with ``responses``.
* **CSV**: long-format votes ``item_id, reviewer, answer`` (or ``item_id, annotator_id,
  label``), with optional ``kind`` and ``seconds``.

Imported reviewers are named ``<tool>:<user>``, join as active reviewers (the other tool
ran its own quality control) and their answers go through the same checks as web answers:
one per reviewer and item, at most ``n_reviewers`` per item, sentinels scored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import read_table
from labelaudit.review._export import QUESTION
from labelaudit.review._queue import record_answer
from labelaudit.review._store import ReviewStore, as_store

__all__ = ["ImportReport", "import_answers", "import_label_studio_tasks"]


@dataclass(frozen=True)
class ImportReport:
    """Counts of what an import did with each answer it found."""

    n_recorded: int
    n_duplicate: int
    n_item_full: int
    n_invalid: int
    n_unknown_item: int
    n_reviewers: int

    def __str__(self) -> str:
        return (f"{self.n_recorded} answers recorded from {self.n_reviewers} reviewers; skipped "
                f"{self.n_duplicate} repeated, {self.n_item_full} beyond the reviewers needed, "
                f"{self.n_invalid} not a label option, {self.n_unknown_item} for unknown items")


@dataclass(frozen=True)
class _Vote:
    kind: str
    item_id: str
    reviewer: str
    answer: str
    answered_at: float | None
    seconds: float | None


def _timestamp(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _load_json(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{path}: not a readable JSON file ({exc})") from None
    if isinstance(data, dict):
        data = data.get("records", data.get("tasks", [data]))
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InvalidInputError(f"{path}: expected a JSON list of tasks or records")
    return data


def _user(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("email") or value.get("username") or value.get("id")
    return str(value)


def _label_studio_votes(tasks: list[dict[str, Any]]) -> Iterator[_Vote]:
    for task in tasks:
        data = task.get("data", task)
        if "item_id" not in data:
            raise InvalidInputError(
                "a Label Studio task has no data.item_id: import tasks exported by "
                "`labelaudit review export --to label-studio`"
            )
        kind = str(data.get("kind", "review"))
        if "annotations" in task:
            for annotation in task["annotations"] or []:
                if annotation.get("was_cancelled"):
                    continue
                choices = [r.get("value", {}).get("choices", []) for r in
                           annotation.get("result", []) if r.get("from_name") == QUESTION]
                flat = [c for group in choices for c in group]
                if len(flat) != 1:
                    continue
                yield _Vote(kind, str(data["item_id"]),
                            f"label-studio:{_user(annotation.get('completed_by'))}", str(flat[0]),
                            _timestamp(annotation.get("created_at")),
                            _number(annotation.get("lead_time")))
        elif QUESTION in task:  # JSON-MIN: one row per annotation
            value = task[QUESTION]
            if isinstance(value, list):
                if len(value) != 1:
                    continue
                value = value[0]
            yield _Vote(kind, str(data["item_id"]), f"label-studio:{_user(task.get('annotator'))}",
                        str(value), _timestamp(task.get("created_at")),
                        _number(task.get("lead_time")))


def _argilla_votes(records: list[dict[str, Any]]) -> Iterator[_Vote]:
    for record in records:
        metadata = record.get("metadata") or {}
        if "item_id" not in metadata:
            raise InvalidInputError(
                "an Argilla record has no metadata.item_id: import records exported by "
                "`labelaudit review export --to argilla`"
            )
        kind = str(metadata.get("kind", "review"))
        responses = record.get("responses") or {}
        if isinstance(responses, dict):
            found = [(r, r.get("value")) for r in responses.get(QUESTION, [])]
        else:
            found = [(r, r.get("value")) for r in responses if r.get("question_name") == QUESTION]
        for response, value in found:
            if response.get("status", "submitted") != "submitted" or value is None:
                continue
            yield _Vote(kind, str(metadata["item_id"]), f"argilla:{_user(response.get('user_id'))}",
                        str(value), _timestamp(record.get("updated_at")), None)


def _csv_votes(frame: pd.DataFrame) -> Iterator[_Vote]:
    frame = frame.rename(columns={"annotator_id": "reviewer", "label": "answer"})
    missing = [c for c in ("item_id", "reviewer", "answer") if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"the answers table lacks {missing}; expected long format item_id, reviewer, answer"
        )
    for row in frame.to_dict("records"):
        if pd.isna(row["answer"]) or pd.isna(row["reviewer"]):
            continue
        item_id = row["item_id"]
        if isinstance(item_id, float) and item_id.is_integer():
            item_id = int(item_id)
        yield _Vote(str(row.get("kind", "review") or "review"), str(item_id),
                    f"csv:{row['reviewer']}", str(row["answer"]),
                    _timestamp(row.get("answered_at")), _number(row.get("seconds")))


def import_answers(store: ReviewStore | str | Path, path: str | Path,
                   *, source: Literal["label-studio", "argilla", "csv"] | None = None,
                   ) -> ImportReport:
    """Import answers given in another tool; each is recorded in its own transaction.

    ``source`` defaults to guessing: ``.json`` files with ``annotations`` or ``data`` are
    Label Studio, with ``fields`` or ``responses`` Argilla; other tables are CSV.
    """
    store = as_store(store)
    path = Path(path)
    if source is None:
        if path.suffix.lower() == ".json":
            records = _load_json(path)
            first = records[0] if records else {}
            source = "argilla" if ("fields" in first or "responses" in first) else "label-studio"
        else:
            source = "csv"
    if source == "label-studio":
        votes = list(_label_studio_votes(_load_json(path)))
    elif source == "argilla":
        votes = list(_argilla_votes(_load_json(path)))
    elif source == "csv":
        votes = list(_csv_votes(read_table(path)))
    else:
        raise InvalidParameterError(f"unknown import source {source!r}")
    if not votes:
        raise InvalidInputError(f"{path}: no answers found to import")
    return _record_votes(store, votes)


def import_label_studio_tasks(store: ReviewStore | str | Path,
                              tasks: list[dict[str, Any]]) -> ImportReport:
    """Record the answers of Label Studio tasks (its JSON export, as a list): answers
    already recorded are counted as repeated, so importing the same tasks twice records
    nothing new."""
    return _record_votes(as_store(store), list(_label_studio_votes(tasks)))


def _record_votes(store: ReviewStore, votes: list[_Vote]) -> ImportReport:
    """Each vote recorded in its own transaction, counted by what happened to it."""
    config = store.config
    items = store.items_frame()
    pk_of = {(k, i): int(pk) for k, i, pk in zip(items["kind"], items["item_id"],
                                                 items["item_pk"], strict=True)}
    counts = dict.fromkeys(["recorded", "duplicate", "item_full", "invalid_answer",
                            "unknown_item"], 0)
    reviewers: dict[str, int] = {}
    conn = store.connect()
    try:
        for vote in votes:
            item_pk = pk_of.get((vote.kind, vote.item_id))
            if item_pk is None:
                counts["unknown_item"] += 1
                continue
            answer = vote.answer
            if answer not in config.options:
                counts["invalid_answer"] += 1
                continue
            if vote.reviewer not in reviewers:
                with store.transaction(conn) as db:
                    reviewers[vote.reviewer] = store.external_reviewer(db, vote.reviewer)
            outcome = record_answer(store, reviewers[vote.reviewer], item_pk, answer,
                                    source="import", now=vote.answered_at, seconds=vote.seconds,
                                    conn=conn)
            key = outcome.status if outcome.status in counts else "invalid_answer"
            counts[key] += 1
    finally:
        conn.close()
    return ImportReport(n_recorded=counts["recorded"], n_duplicate=counts["duplicate"],
                        n_item_full=counts["item_full"], n_invalid=counts["invalid_answer"],
                        n_unknown_item=counts["unknown_item"], n_reviewers=len(reviewers))
