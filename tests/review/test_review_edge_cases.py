"""Edge cases of ``labelaudit review`` (default ids, ranking, one-line errors, export formats,
invite links, file modes, sign-in links, blind exports), each through the real entry point
(``labelaudit.cli.main``, or ``python -m labelaudit``)."""

from __future__ import annotations

import csv
import json
import os
import re
import socket
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.review import ReviewStore, init_review


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("labelaudit review: error: ")
    return lines[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def plain(tmp_path):
    """A plain dataset (no id, rank or score column) with 4 classes; by ``suspicion`` the 15
    lowest rows hold only 'a' and 'b'."""
    rng = np.random.default_rng(0)
    labels = np.array(["a", "b"] * 15 + ["c", "d"] * 5)
    frame = pd.DataFrame({"text": [f"text {i}" for i in range(40)], "label": labels,
                          "suspicion": np.r_[rng.uniform(0, 1, 30), rng.uniform(2, 3, 10)]})
    frame = frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    path = tmp_path / "plain.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.fixture
def project(tmp_path, scan):
    db = tmp_path / "review.sqlite"
    init_review(scan, db, top=4, n_reviewers=1)
    return db


# -- 1. apply's default id is scan's: a column named id, else the row number -------------
def test_review_apply_default_id_is_scans_row_number_without_an_id_column(
        tmp_path, capsys):
    data = pd.DataFrame({"text": ["t", "u", "v"], "label": ["x", "x", "x"]})
    data.to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame({"id": [2], "verdict": ["Correctable"], "majority_label": ["y"]}).to_csv(
        tmp_path / "verdicts.csv", index=False)
    assert main(["review", "apply", str(tmp_path / "data.csv"), str(tmp_path / "verdicts.csv"),
                 "--out", str(tmp_path / "out.csv"), "--quiet"]) == 0
    out = pd.read_csv(tmp_path / "out.csv", keep_default_na=False)
    assert out["label"].tolist() == ["x", "x", "y"]
    assert "id" not in out.columns  # no id column is made up


def test_review_apply_default_id_uses_an_id_column(tmp_path, capsys):
    data = pd.DataFrame({"id": ["p", "q", "r"], "text": ["t", "u", "v"], "label": ["x"] * 3})
    data.to_csv(tmp_path / "data.csv", index=False)
    pd.DataFrame({"id": ["q"], "verdict": ["Correctable"], "majority_label": ["y"]}).to_csv(
        tmp_path / "verdicts.csv", index=False)
    assert main(["review", "apply", str(tmp_path / "data.csv"), str(tmp_path / "verdicts.csv"),
                 "--out", str(tmp_path / "out.csv"), "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "out.csv")["label"].tolist() == ["x", "y", "x"]
    # --no-id still forces row numbers; with --id as well it is a mistake
    pd.DataFrame({"id": [0], "verdict": ["Correctable"], "majority_label": ["y"]}).to_csv(
        tmp_path / "rows.csv", index=False)
    assert main(["review", "apply", str(tmp_path / "data.csv"), str(tmp_path / "rows.csv"),
                 "--no-id", "--out", str(tmp_path / "out2.csv"), "--quiet"]) == 0
    assert pd.read_csv(tmp_path / "out2.csv")["label"].tolist() == ["y", "x", "x"]
    assert main(["review", "apply", str(tmp_path / "data.csv"), str(tmp_path / "rows.csv"),
                 "--no-id", "--id", "id", "--out", str(tmp_path / "out3.csv")]) == 1
    assert "not both" in one_error_line(capsys.readouterr().err)


# -- 2. a plain dataset is refused without --rank-by; options are every label -------------
def test_review_init_refuses_a_plain_dataset_without_rank_by(plain, tmp_path, capsys):
    path, _ = plain
    db = tmp_path / "r.sqlite"
    assert main(["review", "init", str(path), "--db", str(db), "--top", "15"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "not a scan output" in line and "--rank-by COLUMN" in line
    assert not db.exists()
    with pytest.raises(InvalidInputError, match="not a scan output"):
        init_review(pd.read_csv(path), db, top=15)


def test_review_init_rank_by_orders_ascending_and_offers_every_label(plain, tmp_path,
                                                                            capsys):
    path, frame = plain
    db = tmp_path / "r.sqlite"
    assert main(["review", "init", str(path), "--db", str(db), "--top", "15",
                 "--rank-by", "suspicion"]) == 0
    assert "labels ['a', 'b', 'c', 'd']" in capsys.readouterr().err
    store = ReviewStore.open(db)
    assert store.config.options == ["a", "b", "c", "d", "none of these", "unsure"]
    review = store.items_frame().sort_values("position")
    expected = frame.sort_values("suspicion").index[:15]  # row numbers, most suspect first
    assert review["item_id"].tolist() == [str(i) for i in expected]
    assert set(review["given_label"]) == {"a", "b"}
    for argv, message in ((["--rank-by", "missing"], "no such column"),
                          (["--rank-by", "text"], "needs a number")):
        assert main(["review", "init", str(path), "--db", str(tmp_path / "x.sqlite"),
                     "--top", "3", *argv]) == 1
        assert message in one_error_line(capsys.readouterr().err)


def test_review_init_options_come_from_every_row_of_a_scan(tmp_path, scan_factory):
    scan = scan_factory(40)  # neg and pos; 'mixed' and 'other' only far down the ranking
    scan.loc[30, "label"] = "mixed"
    scan.loc[35, "suggested_label"] = "other"
    store = init_review(scan, tmp_path / "r.sqlite", top=2, n_reviewers=1)
    assert store.config.class_keys == ["mixed", "neg", "other", "pos"]


def test_review_init_rank_by_rows_then_apply_with_default_ids(plain, tmp_path):
    """The ids a --rank-by project gives the verdicts are the row numbers apply defaults to."""
    from labelaudit.review import next_item, record_answer

    path, frame = plain
    db = tmp_path / "r.sqlite"
    assert main(["review", "init", str(path), "--db", str(db), "--top", "2", "--rank-by",
                 "suspicion", "--reviewers", "1", "--quiet"]) == 0
    store = ReviewStore.open(db)
    reviewer, _ = store.add_reviewer("r1")
    while (got := next_item(store, reviewer.reviewer_pk)).item is not None:
        assert record_answer(store, reviewer.reviewer_pk, got.item["item_pk"], "d").recorded
    assert main(["review", "results", "--db", str(db), "--out", str(tmp_path / "v.csv"),
                 "--quiet"]) == 0
    assert main(["review", "apply", str(path), str(tmp_path / "v.csv"), "--out",
                 str(tmp_path / "fixed.csv"), "--quiet"]) == 0
    fixed = pd.read_csv(tmp_path / "fixed.csv", keep_default_na=False)
    relabelled = fixed.index[fixed["review_action"] == "relabelled"].tolist()
    assert relabelled == sorted(frame.sort_values("suspicion").index[:2])
    assert (fixed.loc[relabelled, "label"] == "d").all()


# -- 3. tracebacks become one line -------------------------------------------------------
def test_review_init_unwritable_db_is_one_line(tmp_path, scan, capsys):
    scan.to_csv(tmp_path / "issues.csv", index=False)
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")
    # a folder under a regular file, and a name too long for sqlite's temporary file:
    # both fail for root too
    long_name = tmp_path / ("x" * 245 + ".sqlite")
    for db in (blocker / "sub" / "db.sqlite", long_name):
        assert main(["review", "init", str(tmp_path / "issues.csv"), "--db", str(db),
                     "--top", "3"]) == 1
        line = one_error_line(capsys.readouterr().err)
        assert "--db" in line
        assert not db.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "issues.csv"]
    with pytest.raises(InvalidParameterError, match="cannot create the review database"):
        init_review(scan, long_name, top=3)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root writes into a read-only folder anyway")
def test_review_init_unwritable_db_folder_is_one_line(tmp_path, scan, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with pytest.raises(InvalidParameterError, match="cannot create the review database"):
            init_review(scan, locked / "db.sqlite", top=3)
        scan.to_csv(tmp_path / "issues.csv", index=False)
        assert main(["review", "init", str(tmp_path / "issues.csv"), "--db",
                     str(locked / "db.sqlite"), "--top", "3"]) == 1
        one_error_line(capsys.readouterr().err)
    finally:
        locked.chmod(0o755)


def test_review_init_overwrite_keeps_the_old_db_until_the_new_one_is_whole(
        tmp_path, scan):
    db = tmp_path / "r.sqlite"
    init_review(scan, db, top=3)
    with pytest.raises(InvalidInputError):  # fails after reading, before writing
        init_review(scan.assign(text=""), db, top=3, overwrite=True)
    assert len(ReviewStore.open(db).items_frame()) == 3


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
def test_review_serve_port_out_of_range_is_a_usage_error(project, port, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["review", "serve", "--db", str(project), "--port", port])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--port" in err and "Traceback" not in err


def serve(db, *args, timeout=60):
    """``python -m labelaudit review serve`` that is expected to fail at once."""
    return subprocess.run([sys.executable, "-m", "labelaudit", "review", "serve", "--db",
                           str(db), *args], capture_output=True, text=True, timeout=timeout,
                          check=False)


def test_review_serve_port_in_use_is_one_line(project):
    pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = serve(project, "--port", str(port))
    assert run.returncode == 1
    line = one_error_line(run.stderr)
    assert f"127.0.0.1:{port}" in line and "already in use" in line and "--port" in line


@pytest.mark.parametrize(("host", "message"), [
    ("no-such-host.invalid", "unknown"),
    ("192.0.2.1", "not an address of this machine"),  # TEST-NET-1, never local
])
def test_review_serve_bad_host_is_one_line(project, host, message):
    pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")
    run = serve(project, "--host", host, "--port", str(free_port()))
    assert run.returncode == 1
    line = one_error_line(run.stderr)
    assert host in line and message in line and "--host" in line


# -- 4. every --to writes what it says ---------------------------------------------------
@pytest.mark.parametrize(("to", "name"), [("csv", "items.csv"), ("csv", "items.txt"),
                                          ("label-studio", "tasks.json"),
                                          ("argilla", "records.json")])
def test_review_export_csv_writes_csv_and_every_format_what_it_says(project, tmp_path,
                                                                          to, name):
    out = tmp_path / name
    assert main(["review", "export", "--db", str(project), "--to", to, "--out", str(out),
                 "--quiet"]) == 0
    text = out.read_text(encoding="utf-8")
    if to == "csv":
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)
        rows = list(csv.DictReader(text.splitlines()))
        assert len(rows) == 4 and rows[0]["kind"] == "review" and rows[0]["item_id"] == "d0"
        assert rows[0]["rank"] == "1"
    else:
        records = json.loads(text)
        assert isinstance(records, list) and len(records) == 4
        key = "data" if to == "label-studio" else "fields"
        assert all(key in r for r in records)


@pytest.mark.parametrize(("to", "name"), [("csv", "items.json"), ("csv", "items.parquet"),
                                          ("label-studio", "tasks.csv"),
                                          ("argilla", "records.jsonl")])
def test_review_export_refuses_a_name_of_another_format(project, tmp_path, capsys,
                                                               to, name):
    assert main(["review", "export", "--db", str(project), "--to", to,
                 "--out", str(tmp_path / name)]) == 1
    assert "writes" in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / name).exists()


# -- 5. the invite link points where the server runs --------------------------------------
def wait_for(url, process, timeout=30.0):
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.communicate()[1]}")
        try:
            return httpx.get(url, timeout=2.0)
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")


def test_review_invite_link_uses_the_serve_port(project, capsys):
    pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")
    port, other = free_port(), free_port()
    assert main(["review", "invite", "--db", str(project), "--name", "early"]) == 0
    assert capsys.readouterr().out.startswith("http://127.0.0.1:8000/login?token=")
    assert main(["review", "invite", "--db", str(project), "--name", "alice",
                 "--port", str(other)]) == 0
    alice = capsys.readouterr().out.strip()
    assert alice.startswith(f"http://127.0.0.1:{other}/login?token=")
    server = subprocess.Popen([sys.executable, "-m", "labelaudit", "review", "serve", "--db",
                               str(project), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(f"http://127.0.0.1:{port}/", server).status_code == 401
        # made while it runs, a link points to the server
        assert main(["review", "invite", "--db", str(project), "--name", "bob"]) == 0
        bob = capsys.readouterr().out.strip()
        assert bob.startswith(f"http://127.0.0.1:{port}/login?token=")
        landing = wait_for(bob, server)
        assert landing.status_code == 200 and "Sign in as bob" in landing.text
    finally:
        server.terminate()
        err = server.communicate(timeout=30)[1]
    # it warned about the links that cannot reach it, naming them and the fix
    warnings = [line for line in err.splitlines() if "warning: the invite links" in line]
    assert len(warnings) == 2
    assert "early" in warnings[0] and "http://127.0.0.1:8000" in warnings[0]
    assert "alice" in warnings[1] and f"--port {other}" in warnings[1]
    assert all(f"--new-token --port {port}" in w for w in warnings)


def test_review_serve_without_port_runs_where_the_links_point(project, capsys):
    pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")
    port = free_port()
    assert main(["review", "invite", "--db", str(project), "--name", "alice", "--port",
                 str(port), "--quiet"]) == 0
    link = capsys.readouterr().out.strip()
    server = subprocess.Popen([sys.executable, "-m", "labelaudit", "review", "serve", "--db",
                               str(project)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert "Sign in as alice" in wait_for(link, server).text
    finally:
        server.terminate()
        err = server.communicate(timeout=30)[1]
    assert "warning" not in err and f"http://127.0.0.1:{port}" in err


def test_review_invite_base_url_is_checked(project, capsys):
    assert main(["review", "invite", "--db", str(project), "--name", "a", "--base-url",
                 "https://review.example.org/"]) == 0
    assert capsys.readouterr().out.startswith("https://review.example.org/login?token=")
    assert main(["review", "invite", "--db", str(project), "--name", "b", "--base-url",
                 "review.example.org"]) == 2  # a bad option value: a usage error
    assert "--base-url" in one_error_line(capsys.readouterr().err)
    with pytest.raises(SystemExit) as exc:
        main(["review", "invite", "--db", str(project), "--name", "c", "--port", "70000"])
    assert exc.value.code == 2


# -- 6. outputs follow the umask ---------------------------------------------------------
@pytest.mark.parametrize(("umask", "mode"), [(0o002, 0o664), (0o027, 0o640)])
def test_review_outputs_follow_the_umask(project, tmp_path, scan, umask, mode):
    scan.to_csv(tmp_path / "data.csv", index=False)
    out = tmp_path / "out"
    commands = [
        ["export", "--db", str(project), "--to", "label-studio", "--out",
         str(out / "tasks.json"), "--label-config-out", str(out / "config.xml")],
        ["export", "--db", str(project), "--to", "argilla", "--out", str(out / "records.json")],
        ["export", "--db", str(project), "--to", "csv", "--out", str(out / "items.csv")],
        ["results", "--db", str(project), "--out", str(out / "verdicts.csv"), "--summary-out",
         str(out / "summary.json")],
        ["apply", str(tmp_path / "data.csv"), str(out / "verdicts.csv"), "--out",
         str(out / "fixed.csv")],
    ]
    old = os.umask(umask)
    try:
        for command in commands:
            assert main(["review", *command, "--quiet"]) == 0
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    assert len(modes) == 7
    assert modes == dict.fromkeys(modes, mode)


# -- 7. a link does not sign a browser in; long answers are not echoed ---------------------
@pytest.fixture
def app_store(tmp_path, scan):
    pytest.importorskip("fastapi", reason="the review web app needs the [review] extra")
    return init_review(scan, tmp_path / "app.sqlite", top=3, n_reviewers=2)


def landing_csrf(html):
    return re.search(r'id="login-form".*?name="csrf" value="([0-9a-f]+)"', html, re.S).group(1)


def test_review_login_link_needs_a_same_origin_post(app_store):
    from fastapi.testclient import TestClient

    from labelaudit.review import create_app
    from labelaudit.review._app import COOKIE, LOGIN_COOKIE

    app = create_app(app_store)
    _, mallory = app_store.add_reviewer("mallory")
    # the attacker opens their own link and keeps the form
    attacker = TestClient(app)
    forged = {"token": mallory, "csrf": landing_csrf(attacker.get(
        "/login", params={"token": mallory}).text)}
    victim = TestClient(app)
    landing = victim.get("/login", params={"token": mallory}, follow_redirects=False)
    assert landing.status_code == 200 and "Sign in as mallory" in landing.text
    assert COOKIE not in victim.cookies and victim.get("/").status_code == 401
    # a cross-site form: the attacker's CSRF does not fit the victim's nonce; a foreign
    # Origin or a missing nonce is refused as well
    assert victim.post("/login", data=forged).status_code == 403
    own = {"token": mallory, "csrf": landing_csrf(landing.text)}
    assert victim.post("/login", data=own,
                       headers={"Origin": "http://evil.example"}).status_code == 403
    fresh = TestClient(app)
    assert fresh.post("/login", data=own).status_code == 403
    assert fresh.post("/login", data={**own, "csrf": "é"}).status_code == 403
    assert victim.get("/").status_code == 401 and fresh.get("/").status_code == 401
    # the page's own button: signed in, the nonce cookie gone
    done = victim.post("/login", data=own, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/"
    assert COOKIE in victim.cookies and LOGIN_COOKIE not in victim.cookies
    assert victim.get("/").status_code == 200


def test_review_long_answer_is_echoed_as_a_short_prefix(app_store):
    from fastapi.testclient import TestClient

    from labelaudit.review import create_app

    _, token = app_store.add_reviewer("alice")
    client = TestClient(create_app(app_store))
    landing = client.get("/login", params={"token": token})
    client.post("/login", data={"token": token, "csrf": landing_csrf(landing.text)})
    html = client.get("/").text
    item = re.search(r'name="item" value="(\d+)"', html).group(1)
    csrf = re.search(r'id="answer-form".*?name="csrf" value="([0-9a-f]+)"', html, re.S).group(1)
    answer = "A" * 1_000_000
    response = client.post("/answer", data={"item": item, "csrf": csrf, "answer": answer})
    assert response.status_code == 400
    assert len(response.text) < 5_000
    assert "A" * 79 + "…" in response.text and "A" * 81 not in response.text


# -- 8. a blind export has no predictions ---------------------------------------------------
def test_review_export_no_predictions_for_blind_review(project, tmp_path):
    for flag, name in (([], "full"), (["--no-predictions"], "blind")):
        for to, suffix in (("label-studio", "json"), ("argilla", "json"), ("csv", "csv")):
            assert main(["review", "export", "--db", str(project), "--to", to,
                         "--out", str(tmp_path / f"{name}.{to}.{suffix}"), "--quiet",
                         *flag]) == 0
    full = json.loads((tmp_path / "full.label-studio.json").read_text())
    assert sum("predictions" in task for task in full) == 4
    blind = json.loads((tmp_path / "blind.label-studio.json").read_text())
    assert len(blind) == 4 and not any("predictions" in task for task in blind)
    argilla = json.loads((tmp_path / "blind.argilla.json").read_text())
    assert all(record["suggestions"] == {} for record in argilla)
    assert "suggested_label" in pd.read_csv(tmp_path / "full.csv.csv").columns
    columns = pd.read_csv(tmp_path / "blind.csv.csv").columns
    assert "suggested_label" not in columns and "suggested_prob" not in columns
