"""Export to Label Studio / Argilla / CSV and import their answers back."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from labelaudit import InvalidInputError
from labelaudit.review import (
    export_items,
    import_answers,
    init_review,
    label_studio_config,
    review_results,
)


@pytest.fixture
def pair_project(tmp_path, scan_factory):
    scan = scan_factory(20, n_flagged=4, pairs=True)
    return init_review(scan, tmp_path / "r.sqlite", top=4, n_reviewers=3, n_sentinels=2,
                       n_qualification=0, min_sentinels=2)


def test_label_studio_tasks(pair_project, tmp_path):
    path = export_items(pair_project, tmp_path / "tasks.json", to="label-studio")
    tasks = json.loads(path.read_text())
    assert len(tasks) == 6
    review = [t for t in tasks if t["data"]["kind"] == "review"]
    assert [t["data"]["item_id"] for t in review] == ["d0", "d1", "d2", "d3"]
    first = review[0]
    assert first["data"]["text_pair"] == "hypothesis 0"
    assert "<script>" in first["data"]["text"]  # raw data, escaping is the tool's job
    prediction = first["predictions"][0]
    items = pair_project.items_frame().set_index("item_id")
    assert prediction["score"] == pytest.approx(items.loc["d0", "suggested_prob"])
    assert prediction["result"][0]["value"]["choices"] == [items.loc["d0", "suggested_label"]]
    assert first["meta"]["rank"] == 1
    sentinel = [t for t in tasks if t["data"]["kind"] == "sentinel"][0]
    assert "predictions" not in sentinel


def test_label_studio_config_is_valid_xml(pair_project):
    root = ET.fromstring(label_studio_config(pair_project))
    choices = [c.get("value") for c in root.iter("Choice")]
    assert choices == ["neg", "pos", "none of these", "unsure"]
    assert [t.get("name") for t in root.iter("Text")] == ["text", "text_pair"]
    assert not list(root.iter("Header"))  # blind: the given label is not shown


def test_argilla_records(pair_project, tmp_path):
    records = json.loads(export_items(pair_project, tmp_path / "a.json", to="argilla").read_text())
    first = records[0]
    assert set(first) >= {"id", "fields", "metadata", "suggestions", "responses"}
    assert first["fields"] == {"text": first["fields"]["text"], "text_pair": "hypothesis 0"}
    assert first["metadata"]["item_id"] == "d0" and first["metadata"]["kind"] == "review"
    assert first["suggestions"]["label"]["agent"] == "labelaudit"


def test_csv_items(pair_project, tmp_path):
    frame = pd.read_csv(export_items(pair_project, tmp_path / "items.csv", to="csv"))
    assert frame["kind"].tolist() == ["review"] * 4 + ["sentinel"] * 2
    assert {"text", "text_pair", "given_label", "suggested_label", "rank"} <= set(frame.columns)


def _ls_task(item_id, kind, answers):
    return {"id": 1, "data": {"item_id": item_id, "kind": kind, "text": "..."},
            "annotations": [
                {"completed_by": {"id": i, "email": user}, "was_cancelled": cancelled,
                 "lead_time": 4.5, "created_at": "2024-05-01T10:00:00.000000Z",
                 "result": [{"from_name": "label", "to_name": "text", "type": "choices",
                             "value": {"choices": [answer]}}]}
                for i, (user, answer, cancelled) in enumerate(answers)]}


def test_import_label_studio_export(pair_project, tmp_path):
    items = pair_project.items_frame().set_index("item_id")
    given = items["given_label"].to_dict()
    flip = {"neg": "pos", "pos": "neg"}
    export = [
        _ls_task("d0", "review", [("a@x", flip[given["d0"]], False),
                                  ("b@x", flip[given["d0"]], False),
                                  ("c@x", given["d0"], False)]),
        _ls_task("d1", "review", [("a@x", given["d1"], False), ("b@x", given["d1"], False),
                                  ("c@x", "perhaps", False), ("d@x", "neg", True)]),
        _ls_task("d9", "review", [("a@x", "neg", False)]),                       # unknown item
        _ls_task("d2", "review", [("a@x", "neg", False), ("a@x", "pos", False),  # repeated
                                  ("b@x", "neg", False), ("c@x", "neg", False),
                                  ("e@x", "neg", False)]),                       # a 4th vote
    ]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    report = import_answers(pair_project, path)
    assert (report.n_recorded, report.n_duplicate, report.n_item_full, report.n_invalid,
            report.n_unknown_item, report.n_reviewers) == (8, 1, 1, 1, 1, 4)
    answers = pair_project.answers_frame()
    assert set(answers["reviewer"]) == {"label-studio:a@x", "label-studio:b@x",
                                        "label-studio:c@x"}
    assert (answers["source"] == "import").all()
    assert (answers["seconds"] == 4.5).all()
    verdicts = review_results(pair_project).items.set_index("id")["verdict"]
    assert verdicts["d0"] == "Correctable"
    assert verdicts["d2"] == ("Non-Error" if given["d2"] == "neg" else "Correctable")
    # importing the same file again adds nothing
    assert import_answers(pair_project, path).n_recorded == 0


def test_import_argilla_and_csv_roundtrip(pair_project, tmp_path):
    records = json.loads(export_items(pair_project, tmp_path / "a.json", to="argilla").read_text())
    known = pair_project.items_frame().set_index("item_id")["known_label"]
    for record in records:
        meta = record["metadata"]
        right = known[meta["item_id"]] if meta["kind"] == "sentinel" else "neg"
        record["responses"] = {"label": [
            {"value": right, "user_id": "u1", "status": "submitted"},
            {"value": "neg", "user_id": "u2", "status": "draft"},
        ]}
    (tmp_path / "a.json").write_text(json.dumps(records))
    report = import_answers(pair_project, tmp_path / "a.json")
    assert report.n_recorded == 6 and report.n_reviewers == 1
    votes = pd.DataFrame({"item_id": ["d0", "d0", "d1", "d3"],
                          "reviewer": ["v", "w", "v", "v"],
                          "answer": ["pos", "pos", "unsure", "neg"]})
    votes.to_csv(tmp_path / "votes.csv", index=False)
    report = import_answers(pair_project, tmp_path / "votes.csv")
    assert report.n_recorded == 4
    results = review_results(pair_project).items.set_index("id")
    assert results.loc["d0", "n_votes"] == 3
    assert results.loc["d0", "votes"] in ("pos:2; neg:1", "neg:1; pos:2")


def test_import_suspends_reviewers_failing_sentinels(pair_project, tmp_path):
    items = pair_project.items_frame()
    sentinels = items[items["kind"] == "sentinel"]
    rows = [{"item_id": i, "kind": "sentinel", "reviewer": "z", "answer": "none of these"}
            for i in sentinels["item_id"]]
    rows.append({"item_id": "d0", "kind": "review", "reviewer": "z", "answer": "pos"})
    pd.DataFrame(rows).to_csv(tmp_path / "votes.csv", index=False)
    import_answers(pair_project, tmp_path / "votes.csv")
    answers = pair_project.answers_frame()
    assert answers["excluded"].all()
    stats = review_results(pair_project).reviewers.set_index("reviewer")
    assert stats.loc["csv:z", "status"] == "suspended"


def test_import_errors(pair_project, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidInputError, match="not a readable JSON"):
        import_answers(pair_project, bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"data": {"text": "x"}, "annotations": []}]))
    with pytest.raises(InvalidInputError, match="no data.item_id"):
        import_answers(pair_project, other)
    empty = tmp_path / "empty.csv"
    empty.write_text("item_id,reviewer,answer\n")
    with pytest.raises(InvalidInputError):
        import_answers(pair_project, empty)


def test_export_takes_its_output_as_out_only(pair_project, tmp_path, capsys):
    """The output as an argument (deprecated before 1.0) is gone: a usage error."""
    from labelaudit.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["review", "export", "--db", str(pair_project.path), "--to", "csv",
              str(tmp_path / "items.csv")])
    assert stop.value.code == 2 and "--out" in capsys.readouterr().err
    assert not (tmp_path / "items.csv").exists()
    assert main(["review", "export", "--db", str(pair_project.path), "--to", "csv", "--out",
                 str(tmp_path / "items.csv"), "--quiet"]) == 0
