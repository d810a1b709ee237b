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
from typing import TYPE_CHECKING, Any, Literal

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import read_table, text_keys
from labelaudit.review._export import QUESTION
from labelaudit.review._queue import record_answer
from labelaudit.review._store import ReviewStore, as_store

if TYPE_CHECKING:
    import pandas as pd

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


def _kind_of(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null",
            bool: "a boolean"}.get(type(value), "a number")


# how each import format names the writer of the shape it expects, for messages
_LABEL_STUDIO = "Label Studio's JSON export"
_ARGILLA = "Argilla 2.x's Record.to_dict"


def _expected(value: Any, expected: type, where: str, what: str,
              writer: str = _LABEL_STUDIO) -> Any:
    """``value`` if it is an ``expected``, else one line: where, what was expected, what
    was found, and what writes the expected shape (``writer``)."""
    if not isinstance(value, expected):
        raise InvalidInputError(f"{where}: {what} is {_kind_of(value)}, expected "
                                f"{_kind_of(expected())} (as {writer} writes it)")
    return value


def _label_studio_votes(tasks: list[Any], where: str) -> Iterator[_Vote]:
    """The votes in Label Studio tasks; a task or annotation of another shape than Label
    Studio's JSON (or JSON-MIN) export is one line naming it (``where``: the file or the
    project it came from)."""
    for number, task in enumerate(tasks, start=1):
        name = f"{where}: task #{number}"
        task = _expected(task, dict, name, "the task")
        if "id" in task:
            name = f"{where}: task id {task['id']}"
        data = _expected(task.get("data", task), dict, name, "its data")
        if "item_id" not in data:
            raise InvalidInputError(
                f"{name} has no data.item_id: import tasks exported by "
                "`labelaudit review export --to label-studio`"
            )
        name = f"{name} (item {data['item_id']})"
        kind = str(data.get("kind", "review"))
        if "annotations" in task:
            annotations = _expected(task["annotations"] or [], list, name, "its annotations")
            for position, annotation in enumerate(annotations, start=1):
                at = f"{name}, annotation #{position}"
                annotation = _expected(annotation, dict, at, "the annotation")
                if "id" in annotation:
                    at = f"{name}, annotation id {annotation['id']}"
                if annotation.get("was_cancelled"):
                    continue
                result = _expected(annotation.get("result") or [], list, at, "its result")
                choices = []
                for region in result:
                    region = _expected(region, dict, at, "a result entry")
                    if region.get("from_name") == QUESTION:
                        value = _expected(region.get("value", {}), dict, at,
                                          f"the value of its {QUESTION!r} result")
                        choices.append(_expected(value.get("choices", []), list, at,
                                                 f"the choices of its {QUESTION!r} result"))
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


def _argilla_votes(records: list[Any], where: str) -> Iterator[_Vote]:
    """The votes in Argilla records: ``responses`` keyed by question (``Record.to_dict``)
    or a list of responses naming their ``question_name``. A record or response of another
    shape, or a submitted answer without its ``user_id``, is one line naming it (``where``:
    the file)."""
    for number, record in enumerate(records, start=1):
        name = f"{where}: record #{number}"
        record = _expected(record, dict, name, "the record", _ARGILLA)
        if "id" in record:
            name = f"{where}: record id {record['id']}"
        metadata = _expected(record.get("metadata") or {}, dict, name, "its metadata", _ARGILLA)
        if "item_id" not in metadata:
            raise InvalidInputError(
                f"{name} has no metadata.item_id: import records exported by "
                "`labelaudit review export --to argilla`"
            )
        name = f"{name} (item {metadata['item_id']})"
        kind = str(metadata.get("kind", "review"))
        responses = record.get("responses") or {}
        if isinstance(responses, list):
            found = [r for r in (_expected(r, dict, f"{name}, response #{position}",
                                           "the response", _ARGILLA)
                                 for position, r in enumerate(responses, start=1))
                     if r.get("question_name") == QUESTION]
        else:
            responses = _expected(responses, dict, name, "its responses", _ARGILLA)
            found = _expected(responses.get(QUESTION) or [], list, name,
                              f"its {QUESTION!r} responses", _ARGILLA)
        for position, response in enumerate(found, start=1):
            at = f"{name}, {QUESTION!r} response #{position}"
            response = _expected(response, dict, at, "the response", _ARGILLA)
            value = response.get("value")
            if response.get("status", "submitted") != "submitted" or value is None:
                continue
            if response.get("user_id") is None:  # else every such answer is one reviewer's
                raise InvalidInputError(f"{at} has no user_id: each answer needs the Argilla "
                                        "user who gave it")
            yield _Vote(kind, str(metadata["item_id"]), f"argilla:{_user(response['user_id'])}",
                        str(value), _timestamp(record.get("updated_at")), None)


def _csv_votes(frame: pd.DataFrame, where: str) -> Iterator[_Vote]:
    """The votes of a long-format table (``where``: the file). Ids, reviewers, answers and
    kinds are read as text (:func:`labelaudit.io.text_keys`: ``7.0``, as a column with a
    blank reads, is ``"7"``); a row with a blank answer or reviewer is skipped, a blank
    kind is a review item."""
    frame = frame.rename(columns={"annotator_id": "reviewer", "label": "answer"})
    missing = [c for c in ("item_id", "reviewer", "answer") if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"{where}: the answers table lacks {missing}; expected long format item_id, "
            "reviewer, answer"
        )
    twice = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if twice:
        raise InvalidInputError(
            f"{where}: the answers table has {twice} twice (annotator_id is another name for "
            "reviewer, label for answer); keep one column of each")
    text = {c: text_keys(frame[c]) for c in ("item_id", "reviewer", "answer", "kind")
            if c in frame.columns}
    kinds = text.get("kind", [""] * len(frame))
    for i, row in enumerate(frame.to_dict("records")):
        if not text["answer"][i] or not text["reviewer"][i]:
            continue
        yield _Vote(kinds[i] or "review", text["item_id"][i], f"csv:{text['reviewer'][i]}",
                    text["answer"][i], _timestamp(row.get("answered_at")),
                    _number(row.get("seconds")))


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
        votes = list(_label_studio_votes(_load_json(path), str(path)))
    elif source == "argilla":
        votes = list(_argilla_votes(_load_json(path), str(path)))
    elif source == "csv":
        votes = list(_csv_votes(read_table(path), str(path)))
    else:
        raise InvalidParameterError(f"unknown import source {source!r}")
    if not votes:
        raise InvalidInputError(f"{path}: no answers found to import")
    return _record_votes(store, votes)


def import_label_studio_tasks(store: ReviewStore | str | Path, tasks: list[dict[str, Any]],
                              *, where: str = "Label Studio") -> ImportReport:
    """Record the answers of Label Studio tasks (its JSON export, as a list): answers
    already recorded are counted as repeated, so importing the same tasks twice records
    nothing new. ``where`` (the tasks' origin) starts the message of a malformed task."""
    return _record_votes(as_store(store), list(_label_studio_votes(tasks, where)))


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
