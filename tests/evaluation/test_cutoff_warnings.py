"""A cut-off beyond the items evaluated is clipped with the same warning in ``evaluate`` and
``evaluate-tokens`` (there, beyond the sentences)."""

from __future__ import annotations

import json

import pytest

from labelaudit.cli import main
from labelaudit.evaluation import CutoffWarning, evaluate_tokens
from labelaudit.tokens import make_token_dataset


def _records():
    tokens = [["a", "b"], ["c", "d"], ["e"]]
    truth = make_token_dataset(tokens, [["O", "B-LOC"], ["O", "O"], ["B-PER"]])
    records = [{"id": i, "rank": i + 1, "tokens": t, "tags": ["O"] * len(t), "score": s,
                "token_scores": [s] * len(t), "issues": [], "scheme": "iob2"}
               for i, (t, s) in enumerate(zip(tokens, [-3.0, -2.0, -1.0], strict=True))]
    return records, truth


def test_evaluate_tokens_warns_past_the_sentences():
    records, truth = _records()
    with pytest.warns(CutoffWarning, match=r"ks=50, 100: more than the 3 sentences evaluated"):
        evaluate_tokens(records, truth, ks=(2, 50, 100))


def test_the_cli_spells_the_flag(tmp_path, capsys):
    records, _ = _records()
    issues = tmp_path / "tokens.jsonl"
    issues.write_text("".join(json.dumps(r) + "\n" for r in records))
    truth = tmp_path / "fixed.jsonl"
    truth.write_text("".join(json.dumps({"id": r["id"], "tokens": r["tokens"], "tags": t}) + "\n"
                             for r, t in zip(records, [["O", "B-LOC"], ["O", "O"], ["B-PER"]],
                                             strict=True)))
    assert main(["evaluate-tokens", str(issues), "--eval", str(truth), "--at-k", "2,50"]) == 0
    assert ("labelaudit: warning: --at-k 50: more than the 3 sentences evaluated"
            in capsys.readouterr().err)
