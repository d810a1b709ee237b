"""Fixtures for the review tests: small scan outputs built with ``default_rng(0)``."""

from __future__ import annotations

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
