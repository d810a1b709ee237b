"""Writing a token scan (labelaudit.scanning.write_token_scan and its helpers)."""

import json

import numpy as np
import pytest

from labelaudit import InvalidParameterError
from labelaudit.scanning import (
    describe_token_scan,
    make_token_scorers,
    scan_tokens,
    token_output_format,
    write_token_scan,
)
from labelaudit.tokens import make_token_dataset, token_classes


@pytest.fixture
def result():
    tokens = [["Ann", "met", "Bob", "\u2028x"], ["Paris", "is", "big"]]
    tags = [["B-PER", "O", "B-PER", "O"], ["B-LOC", "O", "O"]]
    ds = make_token_dataset(tokens, tags)
    classes = token_classes(ds)
    rng = np.random.default_rng(0)
    probs = [rng.dirichlet(np.ones(len(classes)), size=len(t)) for t in tokens]
    return scan_tokens(ds, pred_probs=probs, classes=classes)


def test_the_suffix_picks_the_format_and_a_mismatch_is_refused():
    assert token_output_format(None) == "table"
    assert token_output_format(None, "jsonl") == "jsonl"
    assert token_output_format("a.txt") == "table" and token_output_format("a.txt", "csv") == "csv"
    assert token_output_format("a.parquet") == "parquet"
    with pytest.raises(InvalidParameterError, match="a .jsonl file gets --format jsonl"):
        token_output_format("a.jsonl", "csv")


def test_records_text_view_and_issue_table(result, tmp_path, capsys):
    write_token_scan(result, tmp_path / "r.jsonl", format="jsonl")
    lines = (tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2  # U+2028 in a token is escaped, so the line stays whole
    assert [json.loads(x)["rank"] for x in lines] == [1, 2]
    write_token_scan(result, format="table", show=1)
    assert capsys.readouterr().out.strip()
    write_token_scan(result, tmp_path / "r.txt", format="csv")
    assert (tmp_path / "r.txt").read_text().startswith("id,")


def test_describe_and_scorers(result):
    assert describe_token_scan(result, 1.25).startswith("2 sentences (7 tokens, IOB2) scored")
    assert "in 1.2s" in describe_token_scan(result, 1.2)
    names = [type(s).__name__ for s in make_token_scorers(["encoder", "encoder"])]
    assert names == ["EncoderTokenScorer"]


def test_write_writes_what_the_out_option_writes(result, tmp_path):
    write_token_scan(result, tmp_path / "cli.jsonl", format="jsonl")
    assert result.write(tmp_path / "r.jsonl") == tmp_path / "r.jsonl"
    assert (tmp_path / "r.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    write_token_scan(result, tmp_path / "cli.txt", format="table", show=None)
    result.write(tmp_path / "r.txt")
    assert (tmp_path / "r.txt").read_text() == (tmp_path / "cli.txt").read_text()
    result.write(tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text().startswith("id,")
