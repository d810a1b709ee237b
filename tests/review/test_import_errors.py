"""review import of Argilla records and CSV answers that are not the shape their tool
writes: one line naming the record and what was expected (exit 1 from the CLI), the file
untouched; ids, reviewers and answers of a CSV read as text the way every table's ids are
(7.0, as a column with a blank reads, is 7)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.cli import main
from labelaudit.review import export_items, import_answers, init_review


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _record(project, tmp_path, **changes) -> dict:
    """The first record `review export --to argilla` writes, with ``changes``."""
    records = json.loads(export_items(project, tmp_path / "items.json", to="argilla")
                         .read_text(encoding="utf-8"))
    return {**records[0], **changes}


ANSWER = {"value": "pos", "user_id": "u1", "status": "submitted"}
BAD = {
    "a response is a text": (
        {"responses": {"label": ["pos"]}},
        "record id review-d0 (item d0), 'label' response #1: the response is a string, "
        "expected an object"),
    "responses is a text": (
        {"responses": "pos"}, "record id review-d0 (item d0): its responses is a string, "
        "expected an object"),
    "the question's responses is an object": (
        {"responses": {"label": ANSWER}},
        "record id review-d0 (item d0): its 'label' responses is an object, expected a list"),
    "a response in a list is a number": (
        {"responses": [ANSWER, 3]},
        "record id review-d0 (item d0), response #2: the response is a number, expected an "
        "object"),
    "metadata is a number": (
        {"metadata": 3}, "record id review-d0: its metadata is a number, expected an object"),
    "metadata is a list": (
        {"metadata": ["item_id"]}, "record id review-d0: its metadata is a list, expected an "
        "object"),
    "no metadata.item_id": (
        {"metadata": {"kind": "review"}}, "record id review-d0 has no metadata.item_id"),
    "a submitted answer without its user": (
        {"responses": {"label": [{"value": "pos", "status": "submitted"}]}},
        "record id review-d0 (item d0), 'label' response #1 has no user_id"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_malformed_argilla_export_is_one_line_naming_the_record(project, tmp_path, capsys,
                                                                  case):
    changes, said = BAD[case]
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([_record(project, tmp_path, **changes)]), encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(InvalidInputError, match=f"^{path}: ") as caught:
        import_answers(project, path, source="argilla")
    assert said in str(caught.value)
    assert main(["review", "import", "--db", str(project.path), "--from", "argilla",
                 str(path)]) == 1
    assert said in one_line(capsys.readouterr().err)
    assert path.read_bytes() == before
    assert project.answers_frame().empty


def test_argilla_responses_as_a_list_are_imported(project, tmp_path):
    record = _record(project, tmp_path, responses=[{**ANSWER, "question_name": "label"},
                                                   {**ANSWER, "question_name": "other"}])
    path = tmp_path / "answers.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    report = import_answers(project, path, source="argilla")
    assert report.n_recorded == 1 and report.n_reviewers == 1


@pytest.mark.parametrize(("rows", "said"), [
    ([{"item_id": "d0", "reviewer": "a", "annotator_id": "b", "answer": "pos"}],
     "the answers table has ['reviewer'] twice"),
    ([{"item_id": "d0", "reviewer": "a"}], "the answers table lacks ['answer']"),
])
def test_a_malformed_answers_table_is_one_line_naming_the_file(project, tmp_path, capsys,
                                                               rows, said):
    path = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    before = path.read_bytes()
    with pytest.raises(InvalidInputError, match=f"^{path}: {said}".replace("[", r"\[")):
        import_answers(project, path)
    assert main(["review", "import", "--db", str(project.path), str(path)]) == 1
    assert said in one_line(capsys.readouterr().err)
    assert path.read_bytes() == before


def test_answers_that_are_lists_in_jsonl_count_as_not_an_option(project, tmp_path):
    path = tmp_path / "votes.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in [
        {"item_id": "d0", "reviewer": "a", "answer": ["pos", "neg"]},
        {"item_id": "d0", "reviewer": "b", "answer": "pos"}]), encoding="utf-8")
    report = import_answers(project, path, source="csv")
    assert report.n_recorded == 1 and report.n_invalid == 1


def test_numbers_read_as_floats_from_a_csv_with_blanks_match(tmp_path, scan_factory):
    """A blank cell makes pandas read a column of numbers as floats: 1.0 is the answer 1,
    reviewer 3.0 is reviewer 3, item 7.0 is item 7."""
    scan = scan_factory(classes=(0, 1))
    scan["id"] = range(len(scan))
    project = init_review(scan, tmp_path / "review.sqlite", top=6, n_reviewers=3,
                          n_qualification=0, n_sentinels=0)
    first = project.items_frame()["item_id"].iloc[0]
    path = tmp_path / "votes.csv"
    path.write_text(f"item_id,reviewer,answer\n{first},3,1\n{first},,0\n{first},4,\n",
                    encoding="utf-8")
    assert pd.read_csv(path)["answer"].dtype == float
    report = import_answers(project, path)
    assert (report.n_recorded, report.n_invalid, report.n_unknown_item) == (1, 0, 0)
    assert project.answers_frame()["reviewer"].tolist() == ["csv:3"]
