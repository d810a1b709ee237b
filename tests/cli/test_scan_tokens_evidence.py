"""``labelaudit scan-tokens`` writes each issue's evidence (``--no-evidence`` leaves it out),
through the real entry point."""

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

os.environ.setdefault("LABELAUDIT_THREADS", "1")  # the test machine is shared
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tokens"))
from ner_fixtures import build_tiny_bert, conll_text, make_corpus, plant_errors  # noqa: E402

from labelaudit.cli import main  # noqa: E402

# scan-tokens trains tagging heads (torch networks): `make test-fast` leaves these out
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def scanned(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evidence")
    tiny_bert = build_tiny_bert(tmp_path_factory.mktemp("bert"))
    tokens, clean, docs = make_corpus(n_docs=8, per_doc=5)
    noisy, planted = plant_errors(clean)
    data = tmp / "data.conll"
    data.write_text(conll_text(tokens, noisy, docs))
    args = ["scan-tokens", str(data), "--model", str(tiny_bert), "--scorers", "encoder",
            "--folds", "2", "--scheme", "iob2", "--cache-dir", str(tmp / "cache"), "--quiet"]
    for out in ("issues.jsonl", "issues.csv"):
        assert main([*args, "--out", str(tmp / out)]) == 0
    assert main([*args, "--no-evidence", "--out", str(tmp / "bare.csv")]) == 0
    return tmp, tokens, noisy, planted


def test_every_issue_of_the_records_has_its_evidence(scanned):
    tmp, tokens, noisy, planted = scanned
    records = [json.loads(x) for x in (tmp / "issues.jsonl").read_text().splitlines()]
    issues = [(r, x) for r in records for x in r["issues"]]
    assert issues and all("evidence" in x for _, x in issues)
    # the planted city tagged ORG: its evidence counts the city's LOC occurrences elsewhere
    record = next(r for r in records if r["id"] == planted["wrong-type"])
    wrong = next(x for x in record["issues"] if any(s["type"] == "ORG" for s in x["given"]))
    city = wrong["evidence"]["form"]
    assert wrong["evidence"]["against"] == "ORG"
    assert wrong["evidence"]["same_form_counts"]["LOC"] == sum(
        1 for t, g in zip(tokens, noisy, strict=True) for w, tag in zip(t, g, strict=True)
        if w == city and tag == "B-LOC")
    for r, x in issues:
        assert r["id"] not in [e["id"] for e in x["evidence"]["examples"]]


def test_csv_holds_the_readable_line_and_no_evidence_leaves_it_out(scanned):
    tmp, *_ = scanned
    table = pd.read_csv(tmp / "issues.csv")
    assert list(table.columns)[-1] == "evidence"
    assert table["evidence"].str.match(r'^".+": ').all()
    assert "evidence" not in pd.read_csv(tmp / "bare.csv").columns
