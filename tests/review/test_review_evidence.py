"""The scan's evidence in a review: kept from every scan output, shown in the protocol's
order (after the answer in a blind review, beside the item where labels are shown), carried
to Label Studio read-only, and an older project file still opens."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from labelaudit import InvalidInputError
from labelaudit.io import evidence_text
from labelaudit.review import (
    ReviewStore,
    export_items,
    import_answers,
    init_review,
    label_studio_config,
    review_results,
)
from labelaudit.review._evidence import stored_evidence


def evidence_of(i: int, label: str) -> dict:
    """Item ``d{i}``'s evidence: marker words no page holds otherwise, a neighbour ``d{i+1}``
    (the next item of the review) and, for d0, a conflicting duplicate ``d1``."""
    return {"toward": "neg" if label == "pos" else "pos", "against": label,
            "words": [{"term": f"marker{i}", "weight": 0.83, "side": "text"},
                      {"term": f"pairword{i}", "weight": 0.41, "side": "text_pair"}],
            "words_from": "tfidf",
            "neighbours": [{"id": f"d{i + 1}", "label": "neg", "similarity": 0.41,
                            "snippet": f"snippet of d{i + 1}"},
                           {"id": "d30", "label": "neg", "similarity": 0.39,
                            "snippet": "snippet of d30"}],
            "duplicate_of": [{"id": "d1", "label": "pos", "similarity": 1.0}] if i == 0 else []}


@pytest.fixture
def scan(scan_factory) -> pd.DataFrame:
    """A scan output whose 10 flagged items carry evidence (the others None), as in
    ``ScanResult.to_frame()``."""
    frame = scan_factory()
    frame["evidence"] = [evidence_of(i, label) if flagged else None for i, (label, flagged)
                         in enumerate(zip(frame["label"], frame["flagged"], strict=True))]
    return frame


def kept(store: ReviewStore) -> dict[str, dict | None]:
    items = store.items_frame()
    return {f"{k}:{i}": stored_evidence(e) for k, i, e in
            zip(items["kind"], items["item_id"], items["evidence"], strict=True)}


# -- kept from every kind of scan output ----------------------------------------------------
@pytest.mark.parametrize("kind", ["frame", "jsonl", "parquet"])
def test_structured_evidence_is_kept_from_a_frame_jsonl_and_parquet(tmp_path, scan, kind):
    if kind == "frame":
        source = scan
    elif kind == "jsonl":
        source = tmp_path / "scan.jsonl"
        scan.to_json(source, orient="records", lines=True)
    else:
        pytest.importorskip("pyarrow")
        source = tmp_path / "scan.parquet"
        scan.to_parquet(source)
    store = init_review(source, tmp_path / "r.sqlite", top=12, n_sentinels=3,
                        n_qualification=1)
    found = kept(store)
    for i in range(10):  # words, neighbours and duplicates come back whole
        assert found[f"review:d{i}"] == evidence_of(i, scan["label"][i])
    # items without evidence, qualification and sentinel items: none
    assert found["review:d10"] is None and found["review:d11"] is None
    assert [v for k, v in found.items() if not k.startswith("review:")] == [None] * 4


def test_the_readable_string_of_a_csv_scan_is_parsed_back(tmp_path, scan):
    as_text = scan.assign(evidence=[evidence_text(e) if e else None for e in scan["evidence"]])
    assert scan["label"][0] == "pos"  # the contract's readable form (d0 is given pos)
    assert as_text["evidence"][0] == ("toward neg: marker0, pairword0 (pair) | like neg: "
                                      "#d1 (0.41), #d30 (0.39) | duplicate of #d1 (pos)")
    as_text.to_csv(tmp_path / "scan.csv", index=False)
    store = init_review(tmp_path / "scan.csv", tmp_path / "r.sqlite", top=12)
    found = kept(store)
    first = found["review:d0"]
    assert first["toward"] == evidence_of(0, scan["label"][0])["toward"]
    assert first["against"] == scan["label"][0]  # the string lacks it: the given label
    assert [(w["term"], w["side"]) for w in first["words"]] == [("marker0", "text"),
                                                                ("pairword0", "text_pair")]
    assert [(n["id"], n["similarity"]) for n in first["neighbours"]] == [("d1", 0.41),
                                                                         ("d30", 0.39)]
    assert first["duplicate_of"] == [{"id": "d1", "label": "pos", "similarity": None}]
    assert found["review:d10"] is None  # an empty CSV cell
    # and the readable form is the same string again
    assert evidence_text(first) == as_text["evidence"][0]


def test_a_scan_without_an_evidence_column_gives_none(tmp_path, scan):
    store = init_review(scan.drop(columns="evidence"), tmp_path / "r.sqlite", top=5)
    assert set(kept(store).values()) == {None}


def test_a_damaged_evidence_cell_is_refused_naming_the_item(tmp_path, scan):
    scan["evidence"] = scan["evidence"].astype(object)
    scan.at[2, "evidence"] = {"words": []}
    with pytest.raises(InvalidInputError) as error:
        init_review(scan, tmp_path / "r.sqlite", top=5)
    message = str(error.value)
    assert "\n" not in message and "'evidence' of item d2" in message
    assert "an object without 'toward'" in message and not (tmp_path / "r.sqlite").exists()


# -- an older project file -----------------------------------------------------------------
def old_project(tmp_path, scan) -> ReviewStore:
    """A project as labelaudit wrote it before evidence: no ``items.evidence`` column."""
    store = init_review(scan, tmp_path / "old.sqlite", top=3, n_reviewers=1)
    with sqlite3.connect(store.path) as conn:
        conn.execute("ALTER TABLE items DROP COLUMN evidence")
    return store


def test_a_project_made_before_evidence_opens_and_works(tmp_path, scan):
    path = old_project(tmp_path, scan).path
    store = ReviewStore.open(path)  # adds the column, empty
    assert set(kept(store).values()) == {None}
    reviewer, _ = store.add_reviewer("alice")
    from labelaudit.review import next_item, record_answer

    item = next_item(store, reviewer.reviewer_pk).item
    assert record_answer(store, reviewer.reviewer_pk, item["item_pk"], "neg").recorded
    tasks = json.loads(export_items(path, tmp_path / "t.json").read_text())
    assert len(tasks) == 3 and "evidence" not in tasks[0]["data"]


# -- the review app ------------------------------------------------------------------------
def _client(store):
    pytest.importorskip("fastapi", reason="the review web app needs the [review] extra")
    from fastapi.testclient import TestClient

    from labelaudit.review import create_app

    _, token = store.add_reviewer("alice")
    return TestClient(create_app(store), headers={"Authorization": f"Bearer {token}"})


def _form(html):
    item = re.search(r'name="item" value="(\d+)"', html).group(1)
    csrf = re.search(r'id="answer-form".*?name="csrf" value="([0-9a-f]+)"', html, re.S)[1]
    return {"item": item, "csrf": csrf}


def _item_id(store, item_pk) -> str:
    items = store.items_frame().set_index("item_pk")
    return str(items.loc[int(item_pk), "item_id"])


LEADS = ("marker", "pairword", "snippet of", "Why the detector flagged", "evidence")


def test_blind_review_shows_evidence_only_after_the_answer(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=4, n_reviewers=1)
    client = _client(store)
    page = client.get("/")
    answered = []
    while "answer-form" in page.text:
        form = _form(page.text)
        item_id = _item_id(store, form["item"])
        # before the answer: nothing of this item's evidence anywhere in the page
        article = page.text.split('<article', 1)[1]
        assert not any(lead in article for lead in LEADS), item_id
        assert f"marker{item_id[1:]}" not in page.text
        # asking for the evidence of the item on screen shows nothing either
        peek = client.get(f"/?after={form['item']}")
        assert f"marker{item_id[1:]}" not in peek.text and 'id="answered"' not in peek.text
        response = client.post("/answer", data={**form, "answer": "neg"},
                               follow_redirects=False)
        assert response.headers["location"] == f"/?after={form['item']}"
        page = client.get(response.headers["location"])
        answered.append(item_id)
        # after it: that item's evidence, the answer given, and no other item's
        panel = page.text.split('id="answered"', 1)[1].split("</aside>", 1)[0]
        i = int(item_id[1:])
        assert f"marker{i}" in panel and f"pairword{i} <small>(pair)</small>" in panel
        assert 'id="answered-label">neg<' in panel
        assert "snippet of d30" in panel  # not an item of the review
        # a neighbour or duplicate still to answer is left out: its label would lead
        if i + 1 < 4:  # d{i+1} is the next item of the review
            assert f"#d{i + 1} " not in panel and f"snippet of d{i + 1}<" not in panel
        assert "Same text" not in panel  # d0's duplicate d1 was still to answer
        for other in range(10):
            if other != i:
                assert f"marker{other}<" not in page.text.split('<article', 1)[0]
    assert answered == ["d0", "d1", "d2", "d3"]
    assert 'id="state"' in page.text and "marker3" in page.text  # the last one: done page


def test_blind_review_never_sends_another_reviewers_item_evidence(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=4, n_reviewers=2)
    first = _client(store)
    form = _form(first.get("/").text)
    _, token = store.add_reviewer("bob")
    from fastapi.testclient import TestClient

    from labelaudit.review import create_app

    bob = TestClient(create_app(store), headers={"Authorization": f"Bearer {token}"})
    bob.get("/")
    # bob has not answered alice's item: ?after= shows him nothing of it
    assert 'id="answered"' not in bob.get(f"/?after={form['item']}").text


def test_labels_shown_review_shows_evidence_with_the_item(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=4, n_reviewers=1, show_label=True)
    client = _client(store)
    page = client.get("/")
    i = int(_item_id(store, _form(page.text)["item"])[1:])
    article = page.text.split("<article", 1)[1].split("</article>", 1)[0]
    assert 'id="given-label"' in article and 'id="evidence"' in article
    assert f"marker{i}" in article and "snippet of d1" in article  # neighbours not hidden
    assert "Same text, another label" in article and "#d1 (pos)" in article
    response = client.post("/answer", data={**_form(page.text), "answer": "neg"},
                           follow_redirects=False)
    assert response.headers["location"] == "/"


def test_evidence_text_is_escaped(tmp_path, scan):
    scan.at[0, "evidence"] = {**evidence_of(0, "pos"),
                              "words": [{"term": "<script>x()</script>", "weight": 1.0,
                                         "side": "text"}]}
    store = init_review(scan, tmp_path / "r.sqlite", top=2, n_reviewers=1, show_label=True)
    html = _client(store).get("/").text
    assert "&lt;script&gt;x()&lt;/script&gt;" in html and "<script>x()" not in html


# -- Label Studio --------------------------------------------------------------------------
def test_label_studio_export_carries_evidence_read_only_where_labels_are_shown(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=4, n_reviewers=3, n_sentinels=2,
                        n_qualification=0, min_sentinels=2, show_label=True)
    tasks = json.loads(export_items(store, tmp_path / "t.json").read_text())
    by_id = {t["data"]["item_id"]: t for t in tasks}
    assert by_id["d0"]["data"]["evidence"] == evidence_text(evidence_of(0, scan["label"][0]))
    assert "marker0" in by_id["d0"]["data"]["evidence"]
    # every task has the key the config names (Label Studio refuses a task without it)
    assert all(isinstance(t["data"]["evidence"], str) for t in tasks)
    assert [t["data"]["evidence"] for t in tasks if t["data"]["kind"] == "sentinel"] == ["", ""]
    config = ET.fromstring(label_studio_config(store))
    shown = config.find("Text[@name='evidence']")
    assert shown is not None and shown.get("value") == "$evidence"
    assert shown.get("selectionEnabled") == "false"
    # read-only: no control answers about it, and the one question points at the text
    assert [c.get("toName") for c in config.iter() if c.get("toName")] == ["text"]
    # without suggestions, the evidence (which names the suggestion) goes too
    plain = json.loads(export_items(store, tmp_path / "p.json", predictions=False).read_text())
    assert {t["data"]["evidence"] for t in plain} == {""}
    # answers come back as before: the evidence is not an answer
    for task in tasks:
        task["annotations"] = [{"completed_by": n, "result": [{
            "from_name": "label", "to_name": "text", "type": "choices",
            "value": {"choices": ["neg"]}}]} for n in range(3)]
        task["annotations"].append({"completed_by": 9, "result": [{
            "from_name": "evidence", "to_name": "evidence", "type": "choices",
            "value": {"choices": ["pos"]}}]})
    (tmp_path / "answered.json").write_text(json.dumps(tasks))
    report = import_answers(store, tmp_path / "answered.json")
    assert report.n_recorded == 18 and report.n_reviewers == 3
    assert set(review_results(store).items["majority_label"]) == {"neg"}


def test_blind_label_studio_export_leaves_the_evidence_out(tmp_path, scan):
    store = init_review(scan, tmp_path / "r.sqlite", top=4, n_reviewers=3)
    tasks = json.loads(export_items(store, tmp_path / "t.json").read_text())
    assert not any("evidence" in t["data"] for t in tasks)
    assert "marker" not in json.dumps(tasks)
    assert "evidence" not in label_studio_config(store)
    csv = export_items(store, tmp_path / "t.csv", to="csv")
    assert "evidence" not in pd.read_csv(csv).columns


def test_cli_export_writes_the_evidence_text_and_config(tmp_path, scan):
    scan.assign(evidence=[evidence_text(e) if e else None for e in scan["evidence"]]).to_csv(
        tmp_path / "scan.csv", index=False)
    db, out = tmp_path / "r.sqlite", tmp_path / "tasks.json"

    def run(*args):
        return subprocess.run([sys.executable, "-m", "labelaudit", "review", *args],
                              capture_output=True, text=True, check=False)

    made = run("init", str(tmp_path / "scan.csv"), "--db", str(db), "--top", "3",
               "--show-label")
    assert made.returncode == 0, made.stderr
    done = run("export", "--db", str(db), "--to", "label-studio", "--out", str(out),
               "--label-config-out", str(tmp_path / "config.xml"))
    assert done.returncode == 0, done.stderr
    first = json.loads(out.read_text())[0]["data"]
    assert first["item_id"] == "d0" and first["evidence"].startswith("toward ")
    assert "marker0, pairword0 (pair)" in first["evidence"]
    assert 'name="evidence" value="$evidence"' in (tmp_path / "config.xml").read_text()
