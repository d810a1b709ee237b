"""The review in other annotation tools: items out (``review export``/``push``), answers back.

Export writes Label Studio tasks (for a blind review, do not let Label Studio pre-fill answers
from their ``predictions``) with :func:`label_studio_config`, Argilla 2.x records or CSV rows;
import reads those tools' exports and CSV long-format votes. Imported reviewers are named
``<tool>:<user>`` and join as active (the other tool ran its own quality control).
``push``/``pull`` use Label Studio's REST API with the standard library: the token travels
only in the ``Authorization`` header and no message quotes it; every pushed task carries the
database's public id (``data.review_db``), so another review's project is refused.
"""

from __future__ import annotations

import http.client
import json
import math
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from xml.sax.saxutils import quoteattr

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_choice
from labelaudit.io import atomic_path, evidence_text, read_table, text_keys, write_json
from labelaudit.review._evidence import stored_evidence
from labelaudit.review._protocol import ProjectConfig
from labelaudit.review._store import ReviewStore, as_store, record_answer

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

ExportFormat = Literal["label-studio", "argilla", "csv"]
QUESTION = "label"  # the question's name in both tools
# The environment variable that holds the API token (Label Studio's own name for it).
TOKEN_ENV = "LABEL_STUDIO_API_KEY"
TIMEOUT = 10.0
_SETTING = "label_studio"
# where a task says which review database sent it (ReviewStore.review_id)
REVIEW_KEY = "review_db"
_ROOT_HINT = "the Label Studio root, the address its start page opens at, such as " \
             "http://localhost:8080"


def _items(store: ReviewStore, kinds: Iterable[str], *, predictions: bool = True,
           ) -> list[dict[str, Any]]:
    """The items of ``kinds`` as dicts, in queue order; ``evidence``: what exports carry."""
    config = store.config
    frame = store.items_frame()
    frame = frame[frame["kind"].isin(list(kinds))]
    order = {"review": 0, "sentinel": 1, "qualification": 2}
    frame = frame.assign(_o=frame["kind"].map(order)).sort_values(["_o", "position"])
    records = []
    for row in frame.drop(columns="_o").to_dict("records"):
        clean = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                 for k, v in row.items()}
        if clean["rank"] is not None:
            clean["rank"] = int(clean["rank"])
        clean["evidence"] = _evidence(clean, config, predictions)
        records.append(clean)
    return records


def label_studio_config(store: ReviewStore | str | Path) -> str:
    """The Label Studio labeling config (XML) for a project's items.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> from labelaudit.review import init_review
    >>> scan = pd.DataFrame({"id": [1, 2], "text": ["a", "b"], "label": ["x", "y"], "rank": [1, 2]})
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "r.sqlite"
    >>> print(label_studio_config(init_review(scan, db, top=2)))  # doctest: +ELLIPSIS
    <View>
      <Text name="text" value="$text"/>
      <Choices name="label" toName="text" choice="single" showInline="true">
        <Choice value="x" hotkey="1"/>
    ...
    """
    store = as_store(store)
    config = store.config
    has_pair = any(r["text_pair"] is not None for r in _items(store, ["review"])[:1])
    lines = ["<View>", '  <Text name="text" value="$text"/>']
    if has_pair:
        lines.append('  <Text name="text_pair" value="$text_pair"/>')
    if config.show_label:
        lines.append('  <Header value="Given label: $given_label"/>')
    if _shows_evidence(config):  # read-only: no control names it in toName
        lines += ['  <Header value="Why the detector flagged it"/>',
                  '  <Text name="evidence" value="$evidence" selectionEnabled="false"/>']
    lines.append('  <Choices name="label" toName="text" choice="single" showInline="true">')
    for number, option in enumerate(config.options, start=1):
        hotkey = f' hotkey="{number}"' if number <= 9 else ""
        lines.append(f"    <Choice value={quoteattr(option)}{hotkey}/>")
    lines += ["  </Choices>", "</View>"]
    return "\n".join(lines)


def _shows_evidence(config: ProjectConfig) -> bool:
    """Whether exports show reviewers the scan's evidence: only where they see the given label.

    The evidence names the suggested label, and another tool cannot hold it back until an
    answer is submitted (the review app can), so a blind review exports none of it."""
    return config.show_label


def _evidence(item: dict[str, Any], config: ProjectConfig, predictions: bool) -> str | None:
    """The readable evidence an export carries for ``item``: None where the protocol shows
    none; "" for an item without any (a sentinel), or when suggestions are left out."""
    if not _shows_evidence(config):
        return None
    return (evidence_text(stored_evidence(item.get("evidence"))) or "") if predictions else ""


# a file name that says another format than the one written is a mistake, not a wish
_SUFFIX_FORMATS = {".json": "JSON", ".jsonl": "JSON lines", ".ndjson": "JSON lines",
                   ".csv": "CSV", ".tsv": "TSV", ".tab": "TSV", ".parquet": "Parquet",
                   ".pq": "Parquet", ".xml": "XML"}


def _check_suffix(path: Path, to: str) -> None:
    written = "CSV" if to == "csv" else "JSON"
    said = _SUFFIX_FORMATS.get(path.suffix.lower())
    if said is not None and said != written:
        raise InvalidParameterError(
            f"{path}: --to {to} writes {written}, but the name says {said}; name the file "
            f"{path.with_suffix('.csv' if to == 'csv' else '.json').name}")


def export_items(store: ReviewStore | str | Path, path: str | Path, *,
                 to: ExportFormat = "label-studio",
                 kinds: Iterable[str] = ("review", "sentinel"), predictions: bool = True,
                 label_config: str | Path | None = None) -> Path:
    """Write the project's items for another annotation tool.

    Parameters
    ----------
    store : ReviewStore or path
    path : path
        Output file: JSON, or UTF-8 CSV for ``csv``; a suffix naming another format is refused.
    to : {"label-studio", "argilla", "csv"}
    kinds : iterable of str
        Which items: ``review``, ``sentinel``, ``qualification``.
    predictions : bool
        Include the detector's suggested label and its probability, and, in a review that
        shows the given label, the scan's evidence as read-only text (``data.evidence``, a CSV
        ``evidence`` column; a blind review exports none); False for a blind review.
    label_config : path, optional
        Also write the Label Studio labeling config (XML, :func:`label_studio_config`) here.

    Returns
    -------
    Path
    """
    check_choice(to, "to", ("label-studio", "argilla", "csv"))
    store = as_store(store)
    path = Path(path)
    _check_suffix(path, to)
    items = _items(store, kinds, predictions=predictions)
    if to == "csv":
        with atomic_path(path) as tmp:
            _csv_frame(items, predictions).to_csv(tmp, index=False, encoding="utf-8")
    else:
        write = _label_studio_task if to == "label-studio" else _argilla_record
        write_json([write(item, predictions) for item in items], path)
    if label_config is not None:
        with atomic_path(label_config) as tmp:
            tmp.write_text(label_studio_config(store) + "\n", encoding="utf-8")
    return path


def _suggests(item: dict[str, Any], predictions: bool) -> bool:
    return predictions and item["kind"] == "review" and item["suggested_label"] is not None


def _label_studio_task(item: dict[str, Any], predictions: bool) -> dict[str, Any]:
    data = {"item_id": item["item_id"], "kind": item["kind"], "text": item["text"],
            "given_label": item["given_label"]}
    if item["text_pair"] is not None:
        data["text_pair"] = item["text_pair"]
    if item["evidence"] is not None:  # shown read-only by label_studio_config's <Text>
        data["evidence"] = item["evidence"]
    task: dict[str, Any] = {"data": data}
    if _suggests(item, predictions):
        task["predictions"] = [{
            "model_version": "labelaudit",
            "score": item["suggested_prob"],
            "result": [{"from_name": QUESTION, "to_name": "text", "type": "choices",
                        "value": {"choices": [item["suggested_label"]]}}],
        }]
    task["meta"] = {"rank": item["rank"], "label_quality_score": item["score"]}
    return task


def _argilla_record(item: dict[str, Any], predictions: bool) -> dict[str, Any]:
    fields = {"text": item["text"]}
    if item["text_pair"] is not None:
        fields["text_pair"] = item["text_pair"]
    record: dict[str, Any] = {
        "id": f"{item['kind']}-{item['item_id']}",
        "fields": fields,
        "metadata": {"item_id": item["item_id"], "kind": item["kind"],
                     "given_label": item["given_label"], "rank": item["rank"],
                     "label_quality_score": item["score"]},
        "suggestions": {},
        "responses": {},
    }
    if _suggests(item, predictions):
        record["suggestions"][QUESTION] = {"value": item["suggested_label"],
                                           "score": item["suggested_prob"],
                                           "agent": "labelaudit"}
    return record


def _csv_frame(items: list[dict[str, Any]], predictions: bool) -> pd.DataFrame:
    import pandas as pd
    columns = ["kind", "item_id", "text", "text_pair", "given_label", "suggested_label",
               "suggested_prob", "score", "rank", "evidence"]
    frame = pd.DataFrame(items, columns=columns)
    for column in ("text_pair", "evidence"):
        if frame[column].isna().all():
            frame = frame.drop(columns=column)
    frame["rank"] = frame["rank"].astype("Int64")  # empty for known items, not 1.0
    if not predictions:
        frame = frame.drop(columns=["suggested_label", "suggested_prob"])
    return frame


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
    """``value`` if it is an ``expected``, else one line saying where, what and who writes it."""
    if not isinstance(value, expected):
        raise InvalidInputError(f"{where}: {what} is {_kind_of(value)}, expected "
                                f"{_kind_of(expected())} (as {writer} writes it)")
    return value


def _label_studio_votes(tasks: list[Any], where: str) -> Iterator[_Vote]:
    """The votes in Label Studio tasks (JSON or JSON-MIN export); ``where``: file or project."""
    for number, task in enumerate(tasks, start=1):
        name = f"{where}: task #{number}"
        task = _expected(task, dict, name, "the task")
        if "id" in task:
            name = f"{where}: task id {task['id']}"
        data = _expected(task.get("data", task), dict, name, "its data")
        if "item_id" not in data:
            raise InvalidInputError(
                f"{name} has no data.item_id: import tasks exported by "
                "`labelaudit review export --to label-studio`")
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
    """Votes in Argilla records (``responses`` by question, or a list with ``question_name``)."""
    for number, record in enumerate(records, start=1):
        name = f"{where}: record #{number}"
        record = _expected(record, dict, name, "the record", _ARGILLA)
        if "id" in record:
            name = f"{where}: record id {record['id']}"
        metadata = _expected(record.get("metadata") or {}, dict, name, "its metadata", _ARGILLA)
        if "item_id" not in metadata:
            raise InvalidInputError(
                f"{name} has no metadata.item_id: import records exported by "
                "`labelaudit review export --to argilla`")
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
    """The votes of a long-format table read as text keys; blank answer or reviewer: skipped."""
    frame = frame.rename(columns={"annotator_id": "reviewer", "label": "answer"})
    missing = [c for c in ("item_id", "reviewer", "answer") if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"{where}: the answers table lacks {missing}; expected long format item_id, "
            "reviewer, answer")
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


def _record_votes(store: ReviewStore, votes: list[_Vote]) -> ImportReport:
    """Each vote recorded in its own transaction, counted by what happened to it."""
    config = store.config
    items = store.items_frame()
    pk_of = {(k, i): int(pk) for k, i, pk in zip(items["kind"], items["item_id"],
                                                 items["item_pk"], strict=True)}
    fields = {"recorded": "n_recorded", "duplicate": "n_duplicate", "item_full": "n_item_full",
              "invalid_answer": "n_invalid", "unknown_item": "n_unknown_item"}
    counts = dict.fromkeys(fields.values(), 0)
    reviewers: dict[str, int] = {}
    conn = store.connect()
    try:
        for vote in votes:
            item_pk = pk_of.get((vote.kind, vote.item_id))
            if item_pk is None or vote.answer not in config.options:
                counts["n_unknown_item" if item_pk is None else "n_invalid"] += 1
                continue
            if vote.reviewer not in reviewers:
                with store.transaction(conn) as db:
                    reviewers[vote.reviewer] = store.external_reviewer(db, vote.reviewer)
            outcome = record_answer(store, reviewers[vote.reviewer], item_pk, vote.answer,
                                    source="import", now=vote.answered_at, seconds=vote.seconds,
                                    conn=conn)
            counts[fields.get(outcome.status, "n_invalid")] += 1
    finally:
        conn.close()
    return ImportReport(**counts, n_reviewers=len(reviewers))


@dataclass(frozen=True)
class PushReport:
    """What ``review push`` did: the Label Studio project and the tasks sent."""

    url: str
    project_id: int
    title: str
    created: bool
    n_sent: int
    n_already: int

    def __str__(self) -> str:
        made = "created" if self.created else "found"
        return (f"{made} Label Studio project {self.title!r} (id {self.project_id}) at "
                f"{self.url}; sent {self.n_sent} items, {self.n_already} were there already")


def _flaw(token: str) -> str | None:
    """Why ``token`` is unfit for an HTTP header, without quoting it: the first bad character."""
    for position, char in enumerate(token, start=1):
        if "!" <= char <= "~":
            continue
        what = ("a line break" if char in "\r\n" else "a space" if char == " " else
                "a tab" if char == "\t" else "a control character" if char.isascii() else
                "a non-ASCII character")
        return f"contains {what} at position {position}"
    return None


def _check_url(url: str) -> str:
    """``url`` without a trailing slash, or one line saying why it is not an address."""
    example = "give the Label Studio address, such as http://localhost:8080"
    address = re.match(r"https?://([^/?#]*)", url) if isinstance(url, str) else None
    if address is None:
        raise InvalidParameterError(f"url {url!r}: {example}")
    host = address[1]
    if "@" in host:  # a password in it would be echoed back and stored: never
        raise InvalidParameterError(
            f"url {url.split('//')[0]}//...@{host.rsplit('@', 1)[1]}: put no user name or "
            f"password in the address; the token goes in {TOKEN_ENV}")
    if re.search(r"[\x00-\x20\x7f]", url):
        raise InvalidParameterError(f"url {url!r} contains a space or a control character: "
                                    f"{example}")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError as error:  # "Port out of range 0-65535", "Invalid IPv6 URL"...
        raise InvalidParameterError(f"url {url!r}: {error}; {example}") from None
    if not parts.hostname:
        raise InvalidParameterError(f"url {url!r}: no host name; {example}")
    return url.rstrip("/")


class LabelStudio:
    """A Label Studio server at ``url``; ``token``: legacy, or a personal access token (JWT)."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = TIMEOUT) -> None:
        self.url, self.timeout = _check_url(url), timeout
        where = "the token" if token is not None else TOKEN_ENV
        token = (token if token is not None else os.environ.get(TOKEN_ENV) or "").strip()
        if not token:
            raise InvalidParameterError(
                f"no Label Studio API token: set {TOKEN_ENV} (Label Studio: Account & "
                "Settings, Access Token), or use `review export` and `review import` files")
        flaw = _flaw(token)
        if flaw:
            raise InvalidParameterError(
                f"{where} {flaw} (after surrounding spaces and line breaks are dropped): copy "
                "the token again from Label Studio (Account & Settings, Access Token)")
        self._secrets = [token]  # never shown: cut out of anything a server answers
        self._header = f"Token {token}"
        if re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]+", token):  # a JWT: exchange it
            path = "/api/token/refresh"
            answer = self._call("POST", path, {"refresh": token}, auth=False)
            access = answer.get("access") if isinstance(answer, dict) else None
            if not isinstance(access, str) or not access.strip() or _flaw(access.strip()):
                raise self._bad_answer("POST", path, f"answered {_kind_of(access)} where an "
                                       "access token was expected")
            self._secrets.append(access.strip())
            self._header = f"Bearer {access.strip()}"

    def _redacted(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _bad_answer(self, method: str, path: str, what: str) -> InvalidInputError:
        """The one line for an answer that is not what Label Studio's API gives."""
        return InvalidInputError(f"Label Studio at {self.url}: {method} {path} {what}: is "
                                 f"{self.url} {_ROOT_HINT}?")

    def _call(self, method: str, path: str, body: Any = None, *, auth: bool = True) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if auth:
            request.add_header("Authorization", self._header)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                status, kind = response.status, response.headers.get_content_type()
                raw = response.read()
        except urllib.error.HTTPError as error:
            try:
                body = error.read()
            except (OSError, http.client.HTTPException):
                body = b""
            detail = self._redacted(" ".join(body.decode("utf-8", "replace").split()))[:200]
            if error.code in (401, 403):
                raise InvalidInputError(
                    f"Label Studio at {self.url} refused the token ({error.code}): check "
                    f"{TOKEN_ENV}") from None
            if error.code == 404:
                raise InvalidInputError(
                    f"Label Studio at {self.url}: {method} {self.url}{path} failed with HTTP "
                    f"404 (not found{': ' + detail[:80] if detail else ''}): check that "
                    f"{self.url} is {_ROOT_HINT}, and that the project exists") from None
            raise InvalidInputError(f"Label Studio at {self.url}: {method} {path} failed with "
                                    f"HTTP {error.code}{': ' + detail if detail else ''}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = self._redacted(str(getattr(error, "reason", error)))
            raise InvalidInputError(f"cannot reach Label Studio at {self.url} ({reason}): is "
                                    "it running, and is the address right?") from None
        except http.client.HTTPException as error:  # a cut-off answer, a broken status line
            raise InvalidInputError(
                f"Label Studio at {self.url}: the answer to {method} {path} broke off "
                f"({type(error).__name__}): is {self.url} {_ROOT_HINT}, and is it "
                "running?") from None
        text = raw.decode("utf-8", "replace")
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            start = self._redacted(" ".join(text.split()))[:40]
            raise self._bad_answer(method, path, f"answered HTTP {status} with {kind}, not "
                                   f"JSON (it begins {start!r})") from None

    def _expect(self, value: Any, method: str, path: str, expected: type, what: str) -> Any:
        if not isinstance(value, expected):
            raise self._bad_answer(method, path, f"answered {_kind_of(value)} where {what} was "
                                   "expected")
        return value

    def _project_answer(self, value: Any, method: str, path: str) -> dict[str, Any]:
        value = self._expect(value, method, path, dict, "a project (an object with an id)")
        if not isinstance(value.get("id"), int):
            raise self._bad_answer(method, path, "answered an object without a project id")
        return value

    def projects(self) -> list[dict[str, Any]]:
        path = "/api/projects?page_size=1000"
        found = self._call("GET", path)
        if isinstance(found, dict):
            found = found.get("results")
        found = self._expect(found, "GET", path, list, "a list of projects")
        return [self._project_answer(p, "GET", path) for p in found]

    def project(self, project_id: int) -> dict[str, Any]:
        path = f"/api/projects/{int(project_id)}"
        return self._project_answer(self._call("GET", path), "GET", path)

    def create_project(self, title: str, label_config: str, reviewers: int) -> dict[str, Any]:
        path = "/api/projects"
        return self._project_answer(self._call("POST", path, {
            "title": title, "label_config": label_config, "maximum_annotations": reviewers,
            "show_collab_predictions": False, "description": "labelaudit review"}), "POST", path)

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> None:
        self._call("POST", f"/api/projects/{int(project_id)}/import", tasks)

    def export_tasks(self, project_id: int) -> list[dict[str, Any]]:
        path = (f"/api/projects/{int(project_id)}/export?exportType=JSON"
                "&download_all_tasks=true")
        return self._expect(self._call("GET", path) or [], "GET", path, list,
                            "a list of tasks")


def _check_config(project: dict[str, Any], expected: str, url: str) -> None:
    """Refuse a project whose labelling config lost the text, the question or an answer."""
    config = project.get("label_config") or ""
    answers = [v for v in re.findall(r'<Choice value="([^"]*)"', expected)
               if f'value="{v}"' not in config]
    missing = (["the text ($text)"] if 'value="$text"' not in config else []) + (
        [f"the Choices named {QUESTION!r}"] if f'name="{QUESTION}"' not in config else []) + (
        [f"the answer{'s' if len(answers) > 1 else ''} {', '.join(map(repr, answers))}"]
        if answers else [])
    if missing:
        raise InvalidInputError(
            f"Label Studio project {project.get('title')!r} at {url} was changed: its "
            f"labelling config lacks {' and '.join(missing)}; restore it (labelaudit review "
            "export --label-config-out writes the original) or push to a new project")


def _find(client: LabelStudio, store: ReviewStore, title: str) -> dict[str, Any] | None:
    saved = store.setting(_SETTING) or {}
    if saved.get("url") == client.url and saved.get("title") == title:
        try:
            return client.project(saved["project_id"])
        except InvalidInputError:
            pass  # deleted in Label Studio: look it up by title
    same = [p for p in client.projects() if p.get("title") == title]
    if len(same) > 1:
        raise InvalidInputError(f"Label Studio at {client.url} has {len(same)} projects "
                                f"titled {title!r}: give a unique title")
    return same[0] if same else None


def _key(data: dict[str, Any]) -> str:
    return f"{data.get('kind', 'review')}:{data.get('item_id')}"


def _others(tasks: list[dict[str, Any]], store: ReviewStore, sent: set[str] | None,
            ) -> list[dict[str, Any]]:
    """Tasks another review database sent: another review id, or unmarked and not in ``sent``."""
    ours = store.review_id
    found = []
    for task in tasks:
        data = task.get("data") if isinstance(task, dict) else None
        mark = data.get(REVIEW_KEY) if isinstance(data, dict) else None
        if mark is not None and mark != ours:
            found.append(task)
        elif mark is None and sent is not None and (not isinstance(data, dict)
                                                    or _key(data) not in sent):
            found.append(task)
    return found


def _refuse_others(others: list[dict[str, Any]], found: dict[str, Any], url: str,
                   store: ReviewStore, fix: str) -> None:
    if others:
        ids = ", ".join(str(t.get("id", "?")) for t in others[:3] if isinstance(t, dict))
        raise InvalidInputError(
            f"Label Studio project {found.get('title')!r} (id {found['id']}) at {url} holds "
            f"{len(others)} task{'s' if len(others) > 1 else ''} (id"
            f"{'s' if len(others) > 1 else ''} {ids}"
            f"{'...' if len(others) > 3 else ''}) that review database {store.path.name} did "
            f"not send: it belongs to another review, and the two would mix; {fix}")


def push_items(store: ReviewStore | str | Path, *, url: str, project: str,
               token: str | None = None, predictions: bool = True) -> PushReport:
    """Send the review and sentinel items to the Label Studio project titled ``project``
    (created if missing); items sent before are not sent again. A project holding another
    review's tasks is refused: the two would mix, and shared items would be there twice."""
    store = as_store(store)
    client = LabelStudio(url, token)
    expected = label_studio_config(store)
    found = _find(client, store, project)
    created = found is None
    if found is None:
        found = client.create_project(project, expected, store.config.n_reviewers)
    else:
        _check_config(found, expected, client.url)
    project_id = int(found["id"])
    saved = store.setting(_SETTING) or {}
    sent = set(saved.get("sent", [])) if saved.get("project_id") == project_id and \
        saved.get("url") == client.url else set()
    if not created:
        there = client.export_tasks(project_id)
        _refuse_others(_others(there, store, sent), found, client.url, store,
                       "push to a new project: give another title")
        sent |= {_key(t["data"]) for t in there}  # ours, though a failed push did not record it
    tasks = [t for t in (_label_studio_task(item, predictions)
                         for item in _items(store, ("review", "sentinel"),
                                            predictions=predictions))
             if _key(t["data"]) not in sent]
    for task in tasks:
        task["data"][REVIEW_KEY] = store.review_id
    if tasks:
        client.import_tasks(project_id, tasks)
    sent |= {_key(t["data"]) for t in tasks}
    store.set_setting(_SETTING, {"url": client.url, "title": project,
                                 "project_id": project_id, "sent": sorted(sent)})
    return PushReport(client.url, project_id, project, created, len(tasks),
                      len(sent) - len(tasks))


def pull_answers(store: ReviewStore | str | Path, *, url: str, project: str,
                 token: str | None = None) -> ImportReport:
    """Bring the Label Studio project's answers back (pulling again is safe); a project
    holding tasks that another review database pushed is refused."""
    store = as_store(store)
    client = LabelStudio(url, token)
    found = _find(client, store, project)
    if found is None:
        raise InvalidInputError(f"Label Studio at {client.url} has no project titled "
                                f"{project!r}: push it first (labelaudit review push)")
    _check_config(found, label_studio_config(store), client.url)
    tasks = client.export_tasks(int(found["id"]))
    # unmarked tasks pass: pushed by an earlier labelaudit, or imported from `review export`
    _refuse_others(_others(tasks, store, None), found, client.url, store,
                   "pull with the review database that pushed it")
    # answers already recorded count as repeated: pulling the same tasks twice adds nothing
    where = f"Label Studio project {project!r} at {client.url}"
    return _record_votes(store, list(_label_studio_votes(tasks, where)))
