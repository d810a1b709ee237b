"""Everything ``labelaudit review`` does, from Python: one library call per step."""

from __future__ import annotations

import json
import socket
import warnings

import pandas as pd
import pytest

import labelaudit.review as review
from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.review import (
    apply_verdicts_file,
    export_items,
    import_answers,
    init_review,
    invite_reviewer,
    review_results,
    review_status,
)


def test_all_lists_the_steps_and_keeps_the_rest_importable():
    for name in ("init_review", "invite_reviewer", "serve", "open_server", "review_status",
                 "review_results", "apply_verdicts_file", "export_items", "import_answers"):
        assert name in review.__all__
    for name in ("next_item", "record_answer", "progress", "ProjectConfig", "NONE_OF_THESE"):
        assert name not in review.__all__ and hasattr(review, name)
    assert all(hasattr(review, name) for name in review.__all__)


def test_init_review_reads_files_and_types_text_labels(tmp_path, scan_factory):
    scan = scan_factory(20, n_flagged=4).assign(label=lambda f: (f["label"] == "pos").astype(int),
                                                suggested_label=0)
    path = tmp_path / "issues.csv"
    scan.to_csv(path, index=False)
    store = init_review(path, tmp_path / "r.sqlite", top=4, labels=["0", "1"])
    assert store.config.classes == [0, 1] and store.config.source == str(path)
    assert store.item_counts() == {"review": 4, "qualification": 0, "sentinel": 0}


def test_invite_reviewer_makes_a_link_the_store_knows(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=3)
    invitation = invite_reviewer(store.path, "alice", port=9001)
    assert invitation.url == f"http://127.0.0.1:9001/login?token={invitation.token}"
    assert store.reviewer_by_token(invitation.token).name == "alice"
    assert invite_reviewer(store, "root", admin=True).reviewer.role == "admin"
    with pytest.raises(InvalidInputError, match="already exists"):
        invite_reviewer(store, "alice")


def test_status_and_results_from_a_path(tmp_path, scan, answer_until_done):
    store = init_review(scan, tmp_path / "r.sqlite", top=3, n_reviewers=1)
    reviewer, _ = store.add_reviewer("a")
    answer_until_done(store, reviewer, lambda item: item["given_label"])
    status = review_status(store.path)
    assert "items complete: 3 of 3" in status.summary()
    assert status.to_dict()["progress"]["n_complete"] == 3
    assert "precision_at_k" not in status.to_dict()
    assert status.to_frame()["reviewer"].tolist() == ["a"]
    results = review_results(store.path)
    assert results.summary().startswith("Correctable 0, Non-Agreement 0, Non-Error 3")


def test_apply_verdicts_file_writes_a_copy_and_never_in_place(tmp_path):
    data = pd.DataFrame({"id": [1, 2, 3], "text": ["x", "y", "z"], "label": ["a", "a", "b"]})
    verdicts = pd.DataFrame({"id": [1, 3], "verdict": ["Correctable", "Non-Agreement"],
                             "majority_label": ["b", None], "votes": ["b:3", "a:1; b:1"]})
    data.to_csv(tmp_path / "data.csv", index=False)
    verdicts.to_csv(tmp_path / "verdicts.csv", index=False)
    applied = apply_verdicts_file(tmp_path / "data.csv", tmp_path / "verdicts.csv",
                                  tmp_path / "fixed.jsonl", non_agreement="drop")
    assert str(applied) == (f"wrote {tmp_path / 'fixed.jsonl'}: 1 relabelled, 0 flagged, "
                            "1 dropped, 0 confirmed, 2 rows")
    assert pd.read_json(tmp_path / "fixed.jsonl", lines=True)["label"].tolist() == ["b", "a"]
    with pytest.raises(InvalidParameterError, match="never writes in place"):
        apply_verdicts_file(tmp_path / "data.csv", tmp_path / "verdicts.csv",
                            tmp_path / "data.csv")


def test_export_writes_the_label_config_and_import_reads_a_path(tmp_path, scan):
    db = tmp_path / "r.sqlite"
    init_review(scan, db, top=2, n_reviewers=1)
    export_items(db, tmp_path / "items.csv", to="csv", label_config=tmp_path / "config.xml")
    assert (tmp_path / "config.xml").read_text().startswith("<View>")
    items = pd.read_csv(tmp_path / "items.csv")
    pd.DataFrame({"item_id": items["item_id"], "reviewer": "x",
                  "answer": items["given_label"]}).to_csv(tmp_path / "votes.csv", index=False)
    assert import_answers(db, tmp_path / "votes.csv").n_recorded == 2
    with pytest.raises(InvalidParameterError, match="to must be one of"):
        export_items(db, tmp_path / "items.json", to="excel")


def test_open_server_binds_records_and_warns(tmp_path, scan):
    pytest.importorskip("uvicorn", reason="the review server needs the [review] extra")
    pytest.importorskip("fastapi", reason="the review web app needs the [review] extra")
    store = init_review(scan, tmp_path / "r.sqlite", top=2)
    invite_reviewer(store, "alice", port=1)  # a link no server on another port reaches
    server = review.open_server(store, host="127.0.0.1", port=0)
    try:
        assert server.sock.getsockname()[0] == "127.0.0.1"
        assert store.setting("served_at") == {"host": "127.0.0.1", "port": 0}
        assert len(server.notices) == 1 and "alice" in server.notices[0]
    finally:
        server.sock.close()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(InvalidParameterError, match="already in use"):
            review.open_server(store, port=taken.getsockname()[1])


def test_status_summary_is_json_ready(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        json.dumps(review_status(store).to_dict())
