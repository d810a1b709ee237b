"""A live round trip with a running Label Studio (``review push`` and ``review pull``):
the project's items go to a Label Studio project through its REST API, and the reviewers'
answers come back into the same SQLite project, so ``status``, ``results`` and ``apply``
work unchanged. Plain HTTP (the standard library): no SDK to install."""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.review._export import QUESTION, label_studio_config, label_studio_tasks
from labelaudit.review._import import ImportReport, import_label_studio_tasks
from labelaudit.review._store import ReviewStore, as_store

__all__ = ["LabelStudio", "PushReport", "TOKEN_ENV", "pull_answers", "push_items"]

# The environment variable that holds the API token (Label Studio's own name for it).
TOKEN_ENV = "LABEL_STUDIO_API_KEY"
TIMEOUT = 10.0
_SETTING = "label_studio"


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


class LabelStudio:
    """A Label Studio server at ``url`` with an API ``token``: a legacy token
    (``Authorization: Token ...``) or a personal access token (a JWT, exchanged for an
    access token at ``/api/token/refresh``). Every request times out after ``timeout``
    seconds; failures are one line each."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = TIMEOUT) -> None:
        if not re.match(r"https?://", url or ""):
            raise InvalidParameterError(f"url {url!r}: give the Label Studio address, such as "
                                        "http://localhost:8080")
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        if not token:
            raise InvalidParameterError(
                f"no Label Studio API token: set {TOKEN_ENV} (Label Studio: Account & "
                "Settings, Access Token), or use `review export` and `review import` files")
        self.url, self.timeout = url.rstrip("/"), timeout
        self._header = f"Token {token}"
        if _is_jwt(token):
            access = self._call("POST", "/api/token/refresh", {"refresh": token},
                                auth=False)["access"]
            self._header = f"Bearer {access}"

    def _call(self, method: str, path: str, body: Any = None, *, auth: bool = True) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if auth:
            request.add_header("Authorization", self._header)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            detail = " ".join(error.read().decode("utf-8", "replace").split())[:200]
            if error.code in (401, 403):
                raise InvalidInputError(
                    f"Label Studio at {self.url} refused the token ({error.code}): check "
                    f"{TOKEN_ENV}") from None
            raise InvalidInputError(f"Label Studio at {self.url}: {method} {path} failed with "
                                    f"HTTP {error.code}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise InvalidInputError(f"cannot reach Label Studio at {self.url} ({reason}): is "
                                    "it running, and is the address right?") from None
        return json.loads(text) if text.strip() else None

    def projects(self) -> list[dict[str, Any]]:
        found = self._call("GET", "/api/projects?page_size=1000")
        return found["results"] if isinstance(found, dict) else list(found)

    def project(self, project_id: int) -> dict[str, Any]:
        return self._call("GET", f"/api/projects/{int(project_id)}")

    def create_project(self, title: str, label_config: str, reviewers: int) -> dict[str, Any]:
        return self._call("POST", "/api/projects", {
            "title": title, "label_config": label_config, "maximum_annotations": reviewers,
            "show_collab_predictions": False, "description": "labelaudit review"})

    def import_tasks(self, project_id: int, tasks: list[dict[str, Any]]) -> None:
        self._call("POST", f"/api/projects/{int(project_id)}/import", tasks)

    def export_tasks(self, project_id: int) -> list[dict[str, Any]]:
        return self._call("GET", f"/api/projects/{int(project_id)}/export?exportType=JSON"
                                 "&download_all_tasks=true") or []


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


def push_items(store: ReviewStore | str | Path, *, url: str, project: str,
               token: str | None = None, predictions: bool = True) -> PushReport:
    """Send the review and sentinel items to a Label Studio project titled ``project``
    (created with the review's question and ``reviewers`` annotations per task when it
    does not exist); items sent before are not sent again."""
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
    sent = set(saved.get("sent", [])) if saved.get("project_id") == project_id else set()
    tasks = [t for t in label_studio_tasks(store, predictions=predictions)
             if f"{t['data']['kind']}:{t['data']['item_id']}" not in sent]
    if tasks:
        client.import_tasks(project_id, tasks)
    sent |= {f"{t['data']['kind']}:{t['data']['item_id']}" for t in tasks}
    store.set_setting(_SETTING, {"url": client.url, "title": project,
                                 "project_id": project_id, "sent": sorted(sent)})
    return PushReport(client.url, project_id, project, created, len(tasks),
                      len(sent) - len(tasks))


def pull_answers(store: ReviewStore | str | Path, *, url: str, project: str,
                 token: str | None = None) -> ImportReport:
    """Bring the answers of the Label Studio project back into the review project; an
    answer already stored is never stored twice, so pulling again is safe."""
    store = as_store(store)
    client = LabelStudio(url, token)
    found = _find(client, store, project)
    if found is None:
        raise InvalidInputError(f"Label Studio at {client.url} has no project titled "
                                f"{project!r}: push it first (labelaudit review push)")
    _check_config(found, label_studio_config(store), client.url)
    return import_label_studio_tasks(store, client.export_tasks(int(found["id"])))
