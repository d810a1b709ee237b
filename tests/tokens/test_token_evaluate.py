import json

import numpy as np
import pytest
from ner_fixtures import fake_encode

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.evaluation import (
    HeadlineMetrics,
    detection_report,
    evaluate_tokens,
    read_token_issues,
)
from labelaudit.models import EncoderTokenScorer
from labelaudit.scanning import scan_tokens
from labelaudit.tokens import format_issue_table, make_token_dataset, read_conll


def record(i, tokens, tags, token_scores, issues=(), rank=1):
    return {"id": i, "rank": rank, "tokens": tokens, "tags": tags,
            "score": float(np.exp(min(token_scores))), "token_scores": token_scores,
            "issues": list(issues), "scheme": "iob2"}


def issue(kind, start, end, score, suggested=()):
    return {"kind": kind, "start": start, "end": end, "score": score, "source": "model",
            "given": [], "suggested": list(suggested), "detail": ""}


def test_hand_computed_metrics():
    # Three sentences; the truth changes token 1 of sentence 0 and token 0 of sentence 2.
    tokens = [["a", "b"], ["c", "d"], ["e"]]
    truth = make_token_dataset(tokens, [["O", "B-LOC"], ["O", "O"], ["B-PER"]])
    records = [
        record(0, ["a", "b"], ["O", "O"], [-0.1, -3.0],
               [issue("missing-entity", 1, 2, 0.05, [{"start": 1, "end": 2, "type": "LOC"}])]),
        record(1, ["c", "d"], ["O", "O"], [-2.0, -0.2],
               [issue("missing-entity", 0, 1, 0.1, [{"start": 0, "end": 1, "type": "PER"}])]),
        record(2, ["e"], ["O"], [-1.0],
               [issue("missing-entity", 0, 1, 0.2, [{"start": 0, "end": 1, "type": "ORG"}])]),
    ]
    ev = evaluate_tokens(records, truth, ks=(1, 2, 3))
    token, sent_min, sent_soft = ev.levels
    # Token ranking: b (-3.0, error), c (-2.0), e (-1.0, error), d, a.
    assert (token.n_items, token.n_errors) == (5, 2)
    assert token.precision_at_k == (1.0, 0.5, pytest.approx(2 / 3))
    assert token.recall_at_k == (0.5, 0.5, 1.0)
    # Sentence ranking by worst token: s0 (e^-3), s1 (e^-2), s2 (e^-1); errors s0 and s2.
    assert (sent_min.n_items, sent_min.n_errors) == (3, 2)
    assert sent_min.precision_at_k == (1.0, 0.5, pytest.approx(2 / 3))
    # Span issues by score: s0 (hit, fix), s1 (miss), s2 (hit, wrong type: no fix).
    model = ev.spans[0]
    assert model.source == "model" and model.n_issues == 3
    assert model.hit_precision_at_k == (1.0, 0.5, pytest.approx(2 / 3))
    assert model.fix_precision_at_k == (1.0, 0.5, pytest.approx(1 / 3))
    assert model.kinds == ("missing-entity",) and model.kind_hits == (2,)
    assert ev.spans[1].n_issues == 0 and ev.to_dict()["spans"][1]["hit_precision_at_k"] == [
        None, None, None]
    frame = ev.to_frame()
    assert list(frame["level"]) == ["token", "sentence", "sentence", "span", "span", "span"]
    json.dumps(ev.to_dict())  # JSON-ready


def test_levels_carry_the_detection_report_headline():
    tokens = [["a", "b"], ["c", "d"], ["e"]]
    truth = make_token_dataset(tokens, [["O", "B-LOC"], ["O", "O"], ["B-PER"]])
    records = [record(0, ["a", "b"], ["O", "O"], [-0.1, -3.0]),
               record(1, ["c", "d"], ["O", "O"], [-2.0, -0.2]),
               record(2, ["e"], ["O"], [-1.0])]
    token = evaluate_tokens(records, truth, ks=(1,)).levels[0]
    report = detection_report([False, True, False, False, True], [-0.1, -3.0, -2.0, -0.2, -1.0])
    assert isinstance(token, HeadlineMetrics) and token.headline() == report.headline()
    assert list(token.to_dict()) == [
        "level", "method", "n_items", "n_errors", "aupr", "average_precision",
        "precision_at_err", "recall_at_err", "recall_at_2err", "roc_auc", "ks",
        "precision_at_k", "recall_at_k"]


def test_mismatches_are_clear_errors():
    truth = make_token_dataset([["a", "b"]], [["O", "B-LOC"]])
    ok = [record(0, ["a", "b"], ["O", "O"], [-0.1, -3.0])]
    with pytest.raises(InvalidInputError, match="not in the corrected copy"):
        evaluate_tokens([dict(ok[0], id=5)], truth)
    with pytest.raises(InvalidInputError, match="tokens differ"):
        evaluate_tokens([dict(ok[0], tokens=["a", "c"])], truth)
    with pytest.raises(InvalidInputError, match="no token-level differences"):
        evaluate_tokens([dict(ok[0], tags=["O", "B-LOC"])], truth)
    with pytest.raises(InvalidParameterError):
        evaluate_tokens(ok, truth, ks=(0,))


def test_scan_then_evaluate_on_planted_errors(noisy_conll, tmp_path):
    path, truth_path, planted = noisy_conll
    result = scan_tokens(read_conll(path), scorer=EncoderTokenScorer(encode=fake_encode),
                         n_folds=4)
    out = tmp_path / "issues.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in result.to_records()))
    records = read_token_issues(out)
    ev = evaluate_tokens(records, read_conll(truth_path), ks=(5,))
    token, sent_min, _ = ev.levels
    assert sent_min.n_errors == len(planted) and sent_min.precision_at_k == (1.0,)
    assert sent_min.aupr > 0.95
    assert token.average_precision > 0.8
    model = ev.spans[0]
    assert model.hit_precision_at_k == (1.0,) and model.fix_precision_at_k == (1.0,)
    text = format_issue_table(records, top=3)
    assert text.count("\n#") == 2 and "[" in text


def test_read_token_issues_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    with pytest.raises(InvalidInputError, match="line 1: missing tokens"):
        read_token_issues(bad)
    with pytest.raises(InvalidInputError, match="no such file"):
        read_token_issues(tmp_path / "none.jsonl")
