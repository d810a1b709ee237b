"""review push and pull against a stand-in for Label Studio's REST API (a local HTTP server
speaking the endpoints and JSON that Label Studio 1.23.2 answers with, as the live test in
test_label_studio_live.py checks against the real server): push is idempotent, pull never
stores an answer twice, and an unreachable address, a wrong token or a changed labelling
config are one line each."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.review import init_review, pull_answers, push_items, review_results

TOKEN = "0123456789abcdef"


class FakeLabelStudio(BaseHTTPRequestHandler):
    projects: dict[int, dict] = {}
    tasks: dict[int, list[dict]] = {}
    requests: list[str] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") in (f"Token {TOKEN}", "Bearer access-1"):
            return True
        self._send(401, {"detail": "Invalid token."})
        return False

    def _body(self) -> object:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.requests.append(f"GET {self.path}")
        if not self._authorised():
            return
        if self.path.startswith("/api/projects?"):
            return self._send(200, {"count": len(self.projects), "next": None,
                                    "previous": None, "results": list(self.projects.values())})
        found = re.fullmatch(r"/api/projects/(\d+)(/export\?.*)?", self.path)
        if found and int(found[1]) in self.projects:
            pid = int(found[1])
            return self._send(200, self.tasks[pid] if found[2] else self.projects[pid])
        self._send(404, {"detail": "Not found."})

    def do_POST(self) -> None:  # noqa: N802
        self.requests.append(f"POST {self.path}")
        if self.path == "/api/token/refresh":
            body = self._body()
            return self._send(200 if body == {"refresh": "a.b.c"} else 401,
                              {"access": "access-1"})
        if not self._authorised():
            return
        body = self._body()
        if self.path == "/api/projects":
            pid = len(self.projects) + 1
            self.projects[pid] = {"id": pid, **body}
            self.tasks[pid] = []
            return self._send(201, self.projects[pid])
        found = re.fullmatch(r"/api/projects/(\d+)/import", self.path)
        if found:
            pid = int(found[1])
            for task in body:
                self.tasks[pid].append({"id": len(self.tasks[pid]) + 1, "annotations": [],
                                        **task})
            return self._send(201, {"task_count": len(body)})
        self._send(404, {"detail": "Not found."})


@pytest.fixture
def server():
    FakeLabelStudio.projects, FakeLabelStudio.tasks, FakeLabelStudio.requests = {}, {}, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeLabelStudio)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture
def project(tmp_path):
    frame = pd.DataFrame({"id": range(30), "text": [f"text {i}" for i in range(30)],
                          "label": ["pos", "neg"] * 15, "suggested_label": ["neg", "pos"] * 15,
                          "rank": range(1, 31), "flagged": [i < 6 for i in range(30)]})
    return init_review(frame, tmp_path / "review.sqlite", top=6, n_reviewers=5, n_sentinels=2)


def _annotate(task_list: list[dict], answers: dict[str, list[str]]) -> None:
    """Each listed item's task gets one annotation per answer, from users 1, 2..."""
    for task in task_list:
        for user, answer in enumerate(answers.get(task["data"]["item_id"], []), start=1):
            task["annotations"].append({
                "id": len(task["annotations"]) + 1, "completed_by": user,
                "was_cancelled": False, "lead_time": 3.5,
                "created_at": "2026-11-26T21:02:00.961251Z",
                "result": [{"from_name": "label", "to_name": "text", "type": "choices",
                            "value": {"choices": [answer]}}]})


def test_push_creates_the_project_once_and_pull_records_each_answer_once(server, project,
                                                                          monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    first = push_items(project, url=server, project="IMDB audit")
    assert first.created and first.n_sent == 8 and first.project_id == 1  # 6 + 2 sentinels
    created = FakeLabelStudio.projects[1]
    assert created["maximum_annotations"] == 5 and '<Choice value="unsure"' in \
        created["label_config"]
    again = push_items(project, url=server, project="IMDB audit")
    assert not again.created and again.n_sent == 0 and again.n_already == 8
    assert len(FakeLabelStudio.tasks[1]) == 8
    kinds = {t["data"]["kind"] for t in FakeLabelStudio.tasks[1]}
    assert kinds == {"review", "sentinel"}
    _annotate(FakeLabelStudio.tasks[1], {"0": ["neg"] * 5, "1": ["neg", "neg", "pos", "pos",
                                                                 "unsure"]})
    report = pull_answers(project, url=server, project="IMDB audit")
    assert report.n_recorded == 10 and report.n_reviewers == 5
    repeat = pull_answers(project, url=server, project="IMDB audit")
    assert repeat.n_recorded == 0 and repeat.n_duplicate == 10
    verdicts = review_results(project).to_frame().set_index("id")
    assert verdicts.loc["0", "verdict"] == "Correctable"  # 5 of 5 say neg, given pos
    assert verdicts.loc["1", "verdict"] == "Non-Agreement"  # no 3 of 5


def test_a_personal_access_token_is_exchanged_for_an_access_token(server, project):
    push_items(project, url=server, project="T", token="a.b.c")
    assert "POST /api/token/refresh" in FakeLabelStudio.requests


def test_bad_address_token_and_changed_config_are_one_line(server, project, monkeypatch):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    started = time.perf_counter()
    with pytest.raises(InvalidInputError, match=r"cannot reach Label Studio at "
                                                r"http://127.0.0.1:9 .*is it running"):
        push_items(project, url="http://127.0.0.1:9", project="T")
    assert time.perf_counter() - started < 10
    with pytest.raises(InvalidInputError, match=r"refused the token \(401\): check "
                                                r"LABEL_STUDIO_API_KEY"):
        push_items(project, url=server, project="T", token="wrong")
    with pytest.raises(InvalidParameterError, match="give the Label Studio address"):
        push_items(project, url="localhost:8080", project="T")
    monkeypatch.delenv("LABEL_STUDIO_API_KEY")
    with pytest.raises(InvalidParameterError, match="set LABEL_STUDIO_API_KEY"):
        push_items(project, url=server, project="T")
    push_items(project, url=server, project="T", token=TOKEN)
    FakeLabelStudio.projects[1]["label_config"] = (
        '<View><Text name="text" value="$text"/><Choices name="label" toName="text">'
        '<Choice value="neg"/><Choice value="pos"/></Choices></View>')
    with pytest.raises(InvalidInputError, match=r"was changed: its labelling config lacks "
                                                r"the answers 'none of these', 'unsure'"):
        pull_answers(project, url=server, project="T", token=TOKEN)
    with pytest.raises(InvalidInputError, match="no project titled 'Other': push it first"):
        pull_answers(project, url=server, project="Other", token=TOKEN)


def test_cli_push_and_pull(server, project, monkeypatch, capsys):
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", TOKEN)
    db = str(project.path)
    assert main(["review", "push", "--db", db, "--to", "label-studio", "--url", server,
                 "--project", "Audit"]) == 0
    assert "created Label Studio project 'Audit' (id 1)" in capsys.readouterr().err
    _annotate(FakeLabelStudio.tasks[1], {"2": ["pos"] * 3})
    assert main(["review", "pull", "--db", db, "--from", "label-studio", "--url", server,
                 "--project", "Audit"]) == 0
    assert "3 answers recorded from 3 reviewers" in capsys.readouterr().err
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "wrong")
    assert main(["review", "pull", "--db", db, "--from", "label-studio", "--url", server,
                 "--project", "Audit"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused the token" in err[0]
