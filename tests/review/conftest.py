"""Fixtures for the review tests: small scan outputs built with ``default_rng(0)``."""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from labelaudit.review import init_review


def make_scan(n: int = 40, *, n_flagged: int = 10, pairs: bool = False,
              classes: tuple = ("neg", "pos")) -> pd.DataFrame:
    """A scan output, most suspect first, whose texts contain HTML to test escaping."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({
        "id": [f"d{i}" for i in range(n)],
        "text": [f"review {i} <b>bold</b> & <script>alert({i})</script>" for i in range(n)],
        "label": rng.choice(list(classes), n),
        "suggested_label": rng.choice(list(classes), n),
        "suggested_prob": rng.uniform(0.5, 1.0, n).round(3),
        "loss": np.sort(rng.uniform(0, 3, n))[::-1].round(3),
        "rank": np.arange(1, n + 1),
        "score_loss": np.sort(rng.uniform(0, 1, n)).round(3),
        "flagged": np.arange(n) < n_flagged,
    })
    if pairs:
        frame.insert(2, "text_pair", [f"hypothesis {i}" for i in range(n)])
    return frame


@pytest.fixture
def scan() -> pd.DataFrame:
    return make_scan()


@pytest.fixture
def project(tmp_path: Path, scan: pd.DataFrame):
    """A project: 6 items, 3 reviewers each, 2 qualification and 3 sentinel items."""
    return init_review(scan, tmp_path / "review.sqlite", top=6, n_reviewers=3,
                       n_qualification=2, n_sentinels=3, sentinel_every=2, min_sentinels=2,
                       sentinel_threshold=0.6)


def answer_all(store, reviewer, choose, *, limit: int = 200) -> list:
    """Let a reviewer answer until nothing is left; ``choose(item) -> answer``."""
    from labelaudit.review import next_item, record_answer

    seen = []
    for _ in range(limit):
        assignment = next_item(store, reviewer.reviewer_pk)
        if assignment.state != "item":
            return seen
        item = assignment.item
        outcome = record_answer(store, reviewer.reviewer_pk, item["item_pk"], choose(item))
        assert outcome.recorded, outcome
        seen.append((item["kind"], item["item_id"]))
    raise AssertionError("the queue did not end")


@pytest.fixture(scope="session")
def scan_factory():
    """``make_scan`` as a fixture (test modules cannot import this conftest by name)."""
    return make_scan


@pytest.fixture
def answer_until_done():
    """``answer_all`` as a fixture."""
    return answer_all


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """``labelaudit review serve`` in a child process on 127.0.0.1 and a free port."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db, self.log = db, log
        self.process = None
        self.url = ""

    def start(self, timeout: float = 30.0) -> LiveServer:
        import subprocess
        import sys
        import time

        import httpx

        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "labelaudit", "review", "serve", "--db", str(self.db),
             "--port", str(port)],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "ab"),  # noqa: SIM115
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log.read_text()[-2000:]}")
            try:
                # no token: a running server answers 401
                if httpx.get(self.url + "/", timeout=2.0).status_code == 401:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not start within {timeout} s")

    def kill(self) -> None:
        import signal

        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except Exception:  # noqa: BLE001 - make sure it goes
                self.kill()


@pytest.fixture
def live_server(tmp_path):
    """A factory: ``live_server(db)`` starts a server; every one started is stopped after."""
    servers: list[LiveServer] = []

    def start(db: Path) -> LiveServer:
        server = LiveServer(db, tmp_path / f"server{len(servers)}.log")
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


class FakeLabelStudio(BaseHTTPRequestHandler):
    """A stand-in for Label Studio's REST API, speaking the endpoints and JSON that Label
    Studio 1.23.2 answers with (test_label_studio_live.py checks them against the real
    server). ``answers`` scripts a raw answer (status, content type, body[, the length it
    claims]) for requests whose "METHOD path" starts with a key: HTML pages, cut-off JSON..."""

    token = "0123456789abcdef"
    url = ""
    projects: dict[int, dict] = {}
    tasks: dict[int, list[dict]] = {}
    requests: list[str] = []
    headers_seen: list[str] = []
    answers: dict[str, tuple] = {}

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _scripted(self, method: str) -> bool:
        self.requests.append(f"{method} {self.path}")
        self.headers_seen.append(str(self.headers.get("Authorization")))
        for start, (code, kind, body, *claimed) in self.answers.items():
            if f"{method} {self.path}".startswith(start):
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(claimed[0] if claimed else len(body)))
                self.end_headers()
                self.wfile.write(body)
                return True
        return False

    def _authorised(self) -> bool:
        if self.headers.get("Authorization") in (f"Token {self.token}", "Bearer access-1"):
            return True
        self._send(401, {"detail": "Invalid token."})
        return False

    def _body(self) -> object:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null")

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self._scripted("GET") or not self._authorised():
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
        if self._scripted("POST"):
            return
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
def label_studio():
    """A running :class:`FakeLabelStudio` on 127.0.0.1 (its class: ``url``, and what it holds
    and was sent), empty at the start of each test."""
    import threading
    from http.server import ThreadingHTTPServer

    stand_in = FakeLabelStudio
    stand_in.projects, stand_in.tasks, stand_in.requests = {}, {}, []
    stand_in.headers_seen, stand_in.answers = [], {}
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), stand_in)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    stand_in.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield stand_in
    httpd.shutdown()
    httpd.server_close()
