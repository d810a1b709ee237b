"""Why a token issue is flagged: the evidence beside each issue of a token scan
(labelaudit.tokens.surface_index / issue_evidence, and scan_tokens' outputs)."""

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit.scanning import scan_tokens, write_token_scan
from labelaudit.tokens import format_evidence, make_token_dataset, token_classes

# "Rome" is LOC everywhere but in sentence 0, where its first occurrence is tagged ORG; the
# same sentence holds "Rome" as LOC too (never an example of its own issue).
TOKENS = [["Rome", "beat", "Rome", "twice"], ["In", "Rome", "today"], ["ROME", "is", "big"],
          ["Rome", "lost", "again"], ["we", "left", "Paris"], ["Paris", "is", "far"],
          ["rain", "in", "Paris"]]
TAGS = [["B-ORG", "O", "B-LOC", "O"], ["O", "B-LOC", "O"], ["B-LOC", "O", "O"],
        ["B-LOC", "O", "O"], ["O", "O", "O"], ["B-LOC", "O", "O"], ["O", "O", "B-LOC"]]


def confident_probs(dataset, classes, changes=()):
    """Probabilities that agree with the given tags, but for ``changes``: (sentence, token,
    tag) the model prefers instead."""
    index = {c: i for i, c in enumerate(classes)}
    probs = []
    for tags in dataset.iob2_tags:
        p = np.full((len(tags), len(classes)), 0.01)
        p[np.arange(len(tags)), [index[t] for t in tags]] = 0.9
        probs.append(p)
    for i, t, tag in changes:
        probs[i][t] = 0.01
        probs[i][t, index[tag]] = 0.9
    return [p / p.sum(axis=1, keepdims=True) for p in probs]


def scan(tokens=TOKENS, tags=TAGS, changes=((0, 0, "B-LOC"),), **options):
    ds = make_token_dataset(tokens, tags)
    classes = token_classes(ds)
    return scan_tokens(ds, pred_probs=confident_probs(ds, classes, changes), classes=classes,
                       **options)


def issue(result, sentence_id, kind):
    record = next(r for r in result.to_records() if r["id"] == sentence_id)
    return next(x for x in record["issues"] if x["kind"] == kind)


def test_a_planted_span_gets_the_sentences_where_its_text_has_the_suggested_tag():
    evidence = issue(scan(), 0, "wrong-type")["evidence"]
    assert (evidence["toward"], evidence["against"], evidence["form"]) == ("LOC", "ORG", "Rome")
    # case-insensitive: ROME counts; the sentence's own two occurrences count once each
    assert evidence["same_form_counts"] == {"LOC": 4, "ORG": 1}
    assert list(evidence["same_form_counts"]) == ["LOC", "ORG"]  # most frequent first
    assert sorted(x["id"] for x in evidence["examples"]) == [1, 2, 3]
    assert all(x["tag"] == "LOC" for x in evidence["examples"])
    assert {x["snippet"] for x in evidence["examples"]} == {
        "In [[Rome]] today", "[[ROME]] is big", "[[Rome]] lost again"}
    assert evidence["context"] == "[[Rome]] beat Rome twice"


def test_its_own_sentence_is_never_an_example():
    # sentence 0 holds "Rome" as LOC itself; with no other sentence it has no example at all
    evidence = issue(scan(TOKENS[:1], TAGS[:1]), 0, "wrong-type")["evidence"]
    assert evidence["same_form_counts"] == {"LOC": 1, "ORG": 1}
    assert evidence["examples"] == []
    for record in scan().to_records():
        for x in record["issues"]:
            assert record["id"] not in [e["id"] for e in x["evidence"]["examples"]]


def test_examples_are_capped_at_three_most_similar_first():
    tokens = [["Rome", "won", "the", "cup"]] + [["Rome", "x"]] * 4 + [["Rome", "won", "cup"]]
    tags = [["B-ORG", "O", "O", "O"]] + [["B-LOC", "O"]] * 4 + [["B-LOC", "O", "O"]]
    evidence = issue(scan(tokens, tags), 0, "wrong-type")["evidence"]
    assert [x["id"] for x in evidence["examples"]] == [5, 1, 2]
    assert evidence["same_form_counts"] == {"LOC": 5, "ORG": 1}


def test_a_missing_entity_counts_the_untagged_occurrences_of_its_text():
    # Paris is untagged in sentence 4; the model finds a LOC there
    evidence = issue(scan(changes=((4, 2, "B-LOC"),)), 4, "missing-entity")["evidence"]
    assert (evidence["toward"], evidence["against"]) == ("LOC", "O")
    assert evidence["same_form_counts"] == {"LOC": 2, "O": 1}
    assert sorted(x["id"] for x in evidence["examples"]) == [5, 6]


def test_a_spurious_entity_is_shown_where_its_text_is_untagged():
    tokens = [["Monday", "came"], ["on", "Monday"], ["Monday", "again"]]
    tags = [["B-MISC", "O"], ["O", "O"], ["O", "O"]]
    evidence = issue(scan(tokens, tags, changes=((0, 0, "O"),)), 0, "spurious-entity")[
        "evidence"]
    assert (evidence["toward"], evidence["against"]) == ("O", "MISC")
    assert evidence["same_form_counts"] == {"O": 2, "MISC": 1}
    assert [x["tag"] for x in evidence["examples"]] == ["O", "O"]


def test_plain_tags_look_up_the_token():
    tokens = [["run", "fast"], ["we", "run"], ["a", "run"], ["the", "run"]]
    tags = [["NN", "RB"], ["PRP", "VB"], ["DT", "VB"], ["DT", "NN"]]
    evidence = issue(scan(tokens, tags, changes=((0, 0, "VB"),)), 0, "wrong-tag")["evidence"]
    assert (evidence["toward"], evidence["against"]) == ("VB", "NN")
    assert evidence["same_form_counts"] == {"NN": 2, "VB": 2}
    assert sorted(x["id"] for x in evidence["examples"]) == [1, 2]


def test_a_scored_file_draws_evidence_from_the_training_data_too():
    train = make_token_dataset([["Rome", "won"], ["in", "Rome"]], [["B-LOC", "O"], ["O", "B-LOC"]])
    test = make_token_dataset([["Rome", "lost"]], [["B-ORG", "O"]])
    classes = token_classes(train, test)
    result = scan_tokens(train, score=test, classes=classes,
                         pred_probs=confident_probs(test, classes, [(0, 0, "B-LOC")]))
    evidence = issue(result, 0, "wrong-type")["evidence"]
    assert evidence["same_form_counts"] == {"LOC": 2, "ORG": 1}
    assert [x.get("in") for x in evidence["examples"]] == ["training", "training"]
    assert "#0 (training)" in format_evidence(evidence)


def test_no_evidence_leaves_it_out_everywhere(tmp_path):
    result = scan(evidence=False)
    assert result.evidence is None
    assert all("evidence" not in x for r in result.to_records() for x in r["issues"])
    assert "evidence" not in result.issue_frame().columns
    write_token_scan(result, str(tmp_path / "i.csv"), format="csv")
    assert "evidence" not in pd.read_csv(tmp_path / "i.csv").columns


def test_csv_holds_one_readable_line_and_jsonl_and_parquet_the_structure(tmp_path):
    result = scan()
    evidence = issue(result, 0, "wrong-type")["evidence"]
    line = format_evidence(evidence)
    assert line.startswith('"Rome": LOC 4, ORG 1 | like LOC: #')
    assert '"In [[Rome]] today"' in line

    write_token_scan(result, str(tmp_path / "i.csv"), format="csv")
    table = pd.read_csv(tmp_path / "i.csv")
    assert list(table.columns)[-1] == "evidence"
    assert table.loc[table["kind"] == "wrong-type", "evidence"].tolist() == [line]

    write_token_scan(result, str(tmp_path / "i.jsonl"), format="jsonl")
    records = [json.loads(x) for x in (tmp_path / "i.jsonl").read_text().splitlines()]
    assert records[0]["issues"][0]["evidence"] == evidence

    write_token_scan(result, str(tmp_path / "i.json"), format="json")
    rows = json.loads((tmp_path / "i.json").read_text())
    assert next(r for r in rows if r["kind"] == "wrong-type")["evidence"] == evidence

    write_token_scan(result, str(tmp_path / "i.parquet"), format="parquet")
    back = pd.read_parquet(tmp_path / "i.parquet")
    cell = back.loc[back["kind"] == "wrong-type", "evidence"].iloc[0]
    assert isinstance(cell, dict) and format_evidence(cell) == line

    write_token_scan(result, str(tmp_path / "i.txt"), format="table")
    text = (tmp_path / "i.txt").read_text()
    assert text.count("why: " + line) == 1  # once per span, under its first issue


def test_format_evidence_takes_what_a_file_gives_back():
    assert format_evidence(None) == "" and format_evidence(float("nan")) == ""
    assert format_evidence("as written") == "as written"
    parquet_like = {"form": "Rome", "same_form_counts": {"ORG": 1, "LOC": 3, "PER": None},
                    "examples": np.array([{"id": 4, "snippet": "[[Rome]] won", "tag": "LOC",
                                           "in": None}], dtype=object)}
    assert format_evidence(parquet_like) == '"Rome": LOC 3, ORG 1 | like LOC: #4 "[[Rome]] won"'
    assert format_evidence({"form": "Zork", "same_form_counts": {}, "examples": []}) == (
        '"Zork": not found as one span')


@pytest.mark.parametrize("rules", [True, False])
def test_every_issue_has_evidence(rules):
    result = scan(changes=((0, 0, "B-LOC"), (4, 2, "B-LOC")), rules=rules)
    issues = [x for r in result.to_records() for x in r["issues"]]
    assert issues and all(set(x["evidence"]) == {"context", "toward", "against", "form",
                                                 "same_form_counts", "examples"}
                          for x in issues)
