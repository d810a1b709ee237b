"""A live round trip with a running Label Studio (``review push`` and ``review pull``):
the project's items go to a Label Studio project through its REST API, and the reviewers'
answers come back into the same SQLite project, so ``status``, ``results`` and ``apply``
work unchanged. Plain HTTP (the standard library): no SDK to install.

The token travels only in the ``Authorization`` header: it is checked before any request
(surrounding whitespace, such as the line break of a pasted key, is dropped; a control,
space or non-ASCII character left inside is refused, naming its position, never the token)
and no message quotes it. Every task ``push`` sends carries the review database's public
id (``data.review_db``), so a Label Studio project that another review database filled is
refused instead of getting every item twice."""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.review._export import QUESTION, label_studio_config, label_studio_tasks
from labelaudit.review._import import ImportReport, _kind_of, import_label_studio_tasks
from labelaudit.review._store import ReviewStore, as_store

__all__ = ["LabelStudio", "PushReport", "TOKEN_ENV", "pull_answers", "push_items"]

# The environment variable that holds the API token (Label Studio's own name for it).
TOKEN_ENV = "LABEL_STUDIO_API_KEY"
TIMEOUT = 10.0
_SETTING = "label_studio"
# where a task says which review database sent it (ReviewStore.review_id)
REVIEW_KEY = "review_db"
_ROOT_HINT = "the Label Studio root, the address its start page opens at, such as " \
             "http://localhost:8080"


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


def _is_jwt(token: str) -> bool:
    return bool(re.fullmatch(r"[\w-]+\.[\w-]+\.[\w-]+", token))


def _flaw(token: str) -> str | None:
    """What makes ``token`` (already stripped) unfit for an HTTP header, without quoting
    it: the first character that is not visible ASCII, and its position (from 1)."""
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
    """A Label Studio server at ``url`` with an API ``token``: a legacy token
    (``Authorization: Token ...``) or a personal access token (a JWT, exchanged for an
    access token at ``/api/token/refresh``). Every request times out after ``timeout``
    seconds; failures are one line each."""

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
        if _is_jwt(token):
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
                                    f"HTTP {error.code}{': ' + detail if detail else ''}"
                                    ) from None
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
    """The project's labelling config still asks the review's question with every answer
    option and shows the text; else one line naming what is missing."""
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
    """The tasks another review database sent: marked with another review id, or, given
    ``sent`` (the items this database's record says it sent), unmarked and not on it."""
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
    """Send the review and sentinel items to a Label Studio project titled ``project``
    (created with the review's question and ``reviewers`` annotations per task when it
    does not exist); items sent before are not sent again. A project holding tasks that
    this review database did not send (another review's) is refused: pushing into it
    would mix two reviews and, for the items they share, put each item there twice."""
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
    tasks = [t for t in label_studio_tasks(store, predictions=predictions)
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
    """Bring the answers of the Label Studio project back into the review project; an
    answer already stored is never stored twice, so pulling again is safe. A project
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
    return import_label_studio_tasks(store, tasks, where=f"Label Studio project {project!r} "
                                     f"at {client.url}")
