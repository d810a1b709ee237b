"""The ``evidence`` cell of a scan output, as every file holds it: one reader for all of them
(dict, Parquet's dict of numpy arrays, JSON text, the readable CSV line, missing) and one
writer of the line, which reads back to the same words, sides, ids and duplicates."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError
from labelaudit.io import evidence_text, read_evidence, read_table

RECORD = {
    "toward": "neg", "against": "pos",
    "words": [{"term": "waste of time", "weight": 0.83, "side": "text"},
              {"term": "dull", "weight": 0.41, "side": "text_pair"}],
    "words_from": "tfidf",
    "neighbours": [{"id": 17, "label": "neg", "similarity": 0.41, "snippet": "a dull film"},
                   {"id": 230, "label": "neg", "similarity": 0.386, "snippet": "boring"}],
    "duplicate_of": [{"id": 9, "label": "pos", "similarity": 1.0}]}
LINE = ("toward neg: waste of time, dull (pair) | like neg: #17 (0.41), #230 (0.39) | "
        "duplicate of #9 (pos)")


@pytest.mark.parametrize("cell", [None, float("nan"), np.float64("nan"), pd.NA, "", "  "])
def test_a_missing_cell_is_none(cell):
    assert read_evidence(cell) is None


def test_a_dict_and_its_json_text_read_as_themselves():
    assert read_evidence(RECORD) == RECORD
    assert read_evidence(json.dumps(RECORD)) == RECORD
    assert read_evidence(" " + json.dumps(RECORD) + "\n") == RECORD


def test_parquet_gives_numpy_arrays_and_numpy_numbers_read_as_plain_json(tmp_path):
    pytest.importorskip("pyarrow")
    pd.DataFrame({"id": [1, 2], "evidence": [RECORD, None]}).to_parquet(tmp_path / "s.parquet")
    cells = read_table(tmp_path / "s.parquet")["evidence"].tolist()
    assert isinstance(cells[0]["words"], np.ndarray)  # what a Parquet reader hands over
    assert read_evidence(cells[1]) is None
    evidence = read_evidence(cells[0])
    assert json.loads(json.dumps(evidence)) == evidence  # plain Python all the way down
    assert evidence == RECORD


def test_missing_parts_of_a_dict_are_filled_in():
    evidence = read_evidence({"toward": 1, "words": [{"term": "bad", "weight": np.float32(2)}],
                              "neighbours": [{"id": np.int64(3)}]})
    assert evidence == {
        "toward": 1, "against": None, "words_from": None, "duplicate_of": [],
        "words": [{"term": "bad", "weight": 2.0, "side": "text"}],
        "neighbours": [{"id": 3, "label": None, "similarity": None, "snippet": None}]}
    assert type(evidence["neighbours"][0]["id"]) is int


def test_the_line_is_the_contract_and_reads_back():
    assert evidence_text(RECORD) == LINE
    back = read_evidence(LINE)
    assert back["toward"] == "neg" and back["against"] is None  # the line does not say it
    assert [(w["term"], w["side"]) for w in back["words"]] == [("waste of time", "text"),
                                                               ("dull", "text_pair")]
    assert [(n["id"], n["label"], n["similarity"]) for n in back["neighbours"]] == [
        ("17", "neg", 0.41), ("230", "neg", 0.39)]
    assert back["duplicate_of"] == [{"id": "9", "label": "pos", "similarity": None}]
    assert evidence_text(back) == LINE
    # the words parse back the documented way: the part starting "toward ", split on ", "
    words = next(p for p in LINE.split(" | ") if p.startswith("toward ")).split(": ", 1)[1]
    assert words.split(", ") == ["waste of time", "dull (pair)"]


def test_a_part_with_nothing_is_left_out_and_none_stays_none():
    assert evidence_text(None) is None
    only_neighbours = {**RECORD, "words": [], "words_from": None, "duplicate_of": []}
    assert evidence_text(only_neighbours) == "like neg: #17 (0.41), #230 (0.39)"
    assert read_evidence("like neg: #17 (0.41)")["toward"] == "neg"
    assert evidence_text({**only_neighbours, "neighbours": []}) == ""
    # Parquet's arrays write the same line as lists
    arrays = {k: np.array(v, dtype=object) if isinstance(v, list) else v
              for k, v in RECORD.items()}
    assert evidence_text(arrays) == LINE


def test_an_unknown_part_of_the_line_is_kept_and_written_back():
    evidence = read_evidence("toward b: x | something new")
    assert evidence["other"] == ["something new"]
    assert evidence_text(evidence) == "toward b: x | something new"


@pytest.mark.parametrize(("cell", "says"), [
    (42, "42 (expected an object, its JSON, or its text)"),
    (["bad"], "['bad'] (expected an object"),
    ("[1, 2]", "[1, 2] (expected an object"),
    ("{not json", "text that is not JSON: '{not json'"),
    ('["a"', "text that is not JSON"),
    ({"words": []}, "an object without 'toward' (keys: words)"),
    ({"toward": "neg", "words": "bad"}, "'words' is a str (expected a list)"),
    ({"toward": "neg", "neighbours": [1]}, "'neighbours' holds 1 (expected objects)"),
    ({"toward": "neg", "words": [{"term": "x", "side": "left"}]}, "has side 'left'"),
    ({"toward": "neg", "words": [{"weight": 1}]}, "a word without a term"),
    ({"toward": "neg", "words": [{"term": "x", "weight": "high"}]}, "weight 'high'"),
    ({"toward": "neg", "duplicate_of": [{"label": "pos"}]}, "'duplicate_of' without an id"),
])
def test_a_cell_that_is_no_evidence_is_refused_in_one_line(cell, says):
    with pytest.raises(InvalidInputError) as error:
        read_evidence(cell)
    assert says in str(error.value) and "\n" not in str(error.value)
