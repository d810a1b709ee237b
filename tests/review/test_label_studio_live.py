"""The live round trip with a real Label Studio (the PyPI package, pinned): start it on a
free port with a temporary data folder, push 20 items (a labels-shown review, so each task
carries the scan's evidence, read-only), answer them as 5 reviewers through its API, pull,
and check the verdicts against the built-in review's rule. Installs
nothing: ``make test-integration`` installs Label Studio and runs this; elsewhere it is
skipped with the reason."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

from labelaudit.review import init_review, pull_answers, push_items, review_results

pytestmark = pytest.mark.integration

BINARY = os.environ.get("LABEL_STUDIO_BIN") or shutil.which("label-studio")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _call(url: str, token: str, method: str, path: str, body: object = None) -> object:
    request = urllib.request.Request(url + path, method=method, data=None if body is None
                                     else json.dumps(body).encode())
    request.add_header("Authorization", f"Token {token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        return json.loads(response.read() or b"null")


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory):
    if not BINARY or not Path(BINARY).exists():
        pytest.skip("Label Studio is not installed (make test-integration installs it; or "
                    "set LABEL_STUDIO_BIN)")
    port, token = _free_port(), secrets.token_hex(20)
    data = tmp_path_factory.mktemp("label-studio")
    env = {**os.environ, "LABEL_STUDIO_BASE_DATA_DIR": str(data),
           "LABEL_STUDIO_USERNAME": "admin@example.com", "LABEL_STUDIO_PASSWORD": "live-test-1",
           "LABEL_STUDIO_USER_TOKEN": token, "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true"}
    log = (data / "server.log").open("w")
    server = subprocess.Popen([BINARY, "start", "--no-browser", "-p", str(port),
                               "--internal-host", "127.0.0.1"], env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                with urllib.request.urlopen(url + "/health", timeout=2):  # noqa: S310
                    break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("Label Studio did not start in 120 s: " + (data / "server.log")
                        .read_text()[-2000:])
        yield url, token
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_push_answer_as_five_reviewers_and_pull(label_studio, tmp_path):
    url, token = label_studio
    frame = pd.DataFrame({"id": range(60), "text": [f"review text {i}" for i in range(60)],
                          "label": ["pos", "neg"] * 30, "suggested_label": ["neg", "pos"] * 30,
                          "rank": range(1, 61), "flagged": [i < 20 for i in range(60)],
                          "evidence": [f"toward {side}: text {i} | like {side}: #{i + 2} "
                                       "(0.41)" if i < 20 else None
                                       for i, side in enumerate(["neg", "pos"] * 30)]})
    store = init_review(frame, tmp_path / "review.sqlite", top=20, n_reviewers=5,
                        n_sentinels=4, show_label=True)
    pushed = push_items(store, url=url, project="live audit", token=token)
    assert pushed.created and pushed.n_sent == 24
    users = [_call(url, token, "POST", "/api/users/",
                   {"email": f"r{k}@example.com", "username": f"r{k}",
                    "password": "live-test-1"})["id"] for k in range(5)]
    tasks = _call(url, token, "GET", f"/api/projects/{pushed.project_id}/export?"
                  "exportType=JSON&download_all_tasks=true")
    # Label Studio took the read-only evidence element and every task's data.evidence
    config = _call(url, token, "GET", f"/api/projects/{pushed.project_id}")["label_config"]
    assert 'name="evidence" value="$evidence"' in config
    shown = {t["data"]["item_id"]: t["data"]["evidence"] for t in tasks}
    assert shown["0"] == "toward neg: text 0 | like neg: #2 (0.41)"
    assert sum(v == "" for v in shown.values()) == 4  # the sentinels have none
    expected = {}
    for task in tasks:
        data = task["data"]
        given = data["given_label"]
        other = "neg" if given == "pos" else "pos"
        position = int(data["item_id"])
        if data["kind"] == "sentinel":
            answers = [given] * 5
        elif position < 10:  # all five say the other label: correctable
            answers, expected[data["item_id"]] = [other] * 5, "Correctable"
        elif position < 15:  # four keep the given label: not an error
            answers, expected[data["item_id"]] = [given] * 4 + [other], "Non-Error"
        else:  # two, two and unsure: no majority of 3
            answers, expected[data["item_id"]] = [given, given, other, other, "unsure"], \
                "Non-Agreement"
        for user, answer in zip(users, answers, strict=True):
            _call(url, token, "POST", f"/api/tasks/{task['id']}/annotations/",
                  {"completed_by": user, "result": [{
                      "from_name": "label", "to_name": "text", "type": "choices",
                      "value": {"choices": [answer]}}]})
    report = pull_answers(store, url=url, project="live audit", token=token)
    assert report.n_recorded == 24 * 5 and report.n_reviewers == 5
    assert pull_answers(store, url=url, project="live audit", token=token).n_recorded == 0
    verdicts = review_results(store).to_frame().set_index("id")["verdict"]
    assert verdicts.loc[list(expected)].to_dict() == expected
    again = push_items(store, url=url, project="live audit", token=token)
    assert not again.created and again.n_sent == 0
