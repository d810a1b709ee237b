"""Several reviewers at once against the real server, which is killed with SIGKILL mid-way:
every answer the server acknowledged (303 after the commit) must be in the database."""

from __future__ import annotations

import re
import sqlite3
import threading
import time

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")

from labelaudit.review import init_review, review_results  # noqa: E402

N_REVIEWERS = 6
N_ITEMS = 15
PER_ITEM = 3


def reviewer_loop(url, token, acked, lock, stop, errors, *, max_requests=60, budget=60.0):
    """Answer items until done, the server dies, ``stop`` is set, or the bounds run out."""
    deadline = time.monotonic() + budget
    try:
        with httpx.Client(base_url=url, timeout=10.0) as client:
            landing = client.get("/login", params={"token": token})
            csrf = re.search(r'id="login-form".*?name="csrf" value="([0-9a-f]+)"',
                             landing.text, re.S).group(1)
            client.post("/login", data={"token": token, "csrf": csrf})
            for _ in range(max_requests):
                if stop.is_set() or time.monotonic() > deadline:
                    return
                page = client.get("/")
                if 'id="answer-form"' not in page.text:
                    return
                item = re.search(r'name="item" value="(\d+)"', page.text).group(1)
                csrf = re.search(r'id="answer-form".*?name="csrf" value="([0-9a-f]+)"',
                                 page.text, re.S).group(1)
                answer = ["neg", "pos", "unsure"][int(item) % 3]
                response = client.post("/answer", data={"item": item, "csrf": csrf,
                                                        "answer": answer},
                                       follow_redirects=False)
                if response.status_code == 303:
                    with lock:
                        acked.append((token, int(item), answer))
                elif response.status_code != 409:
                    errors.append(f"unexpected {response.status_code}: {response.text[:200]}")
                    return
    except httpx.TransportError:
        return  # the server was killed


def run_reviewers(url, tokens, acked, *, kill_after=None, server=None):
    lock, stop, errors = threading.Lock(), threading.Event(), []
    threads = [threading.Thread(target=reviewer_loop, args=(url, t, acked, lock, stop, errors),
                                daemon=True) for t in tokens]
    for thread in threads:
        thread.start()
    if kill_after is not None:
        deadline = time.monotonic() + 60
        while len(acked) < kill_after and time.monotonic() < deadline and \
                any(t.is_alive() for t in threads):
            time.sleep(0.005)
        server.kill()
    for thread in threads:
        thread.join(timeout=90)
    stop.set()
    assert not any(t.is_alive() for t in threads), "a reviewer thread did not finish"
    return errors


def stored_answers(db):
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return conn.execute("SELECT r.token_hash, a.item_pk, a.answer FROM answers a "
                            "JOIN reviewers r USING (reviewer_pk)").fetchall()
    finally:
        conn.close()


def test_concurrent_reviewers_and_a_kill_lose_no_acknowledged_answer(tmp_path, scan,
                                                                     live_server):
    from labelaudit.review._store import hash_token

    db = tmp_path / "review.sqlite"
    store = init_review(scan, db, top=N_ITEMS, n_reviewers=PER_ITEM)
    tokens = [store.add_reviewer(f"r{i}")[1] for i in range(N_REVIEWERS)]
    server = live_server(db)
    acked: list = []
    errors = run_reviewers(server.url, tokens, acked, kill_after=12, server=server)
    assert not errors
    assert server.process.returncode == -9
    assert 12 <= len(acked) < N_ITEMS * PER_ITEM
    stored = {(h, item, answer) for h, item, answer in stored_answers(db)}
    missing = [a for a in acked if (hash_token(a[0]), a[1], a[2]) not in stored]
    assert not missing, f"acknowledged answers lost by the kill: {missing}"

    # restarted, the same reviewers finish the project: exactly 3 per item, none twice
    server = live_server(db)
    errors = run_reviewers(server.url, tokens, acked)
    assert not errors
    stored = stored_answers(db)
    assert len(stored) == N_ITEMS * PER_ITEM == len(set(stored))
    assert all((hash_token(t), i, a) in set(stored) for t, i, a in acked)
    results = review_results(db)
    assert results.items["n_votes"].tolist() == [PER_ITEM] * N_ITEMS
    assert (results.items["verdict"] != "Pending").all()
