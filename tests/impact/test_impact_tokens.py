"""impact for tagged data: sentence sets from two copies, entity F1 pooled over sentences,
and a flip point of the weighted curve computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.impact import RetokenisedWarning, measure_impact_tokens, token_ladder_predictions
from labelaudit.impact._impact import _crossings, _curve
from labelaudit.tokens import make_token_dataset

# sentence 8 is re-tokenised on purpose; test_retokenised_... checks the warning
pytestmark = pytest.mark.filterwarnings(
    "ignore::labelaudit.impact.RetokenisedWarning")
TOKENS = [["Ann"], ["Bob"], ["Rome"], ["ran"], ["Cal"], ["Acme"], ["Dee"], ["New", "York"]]
ORIGINAL = [["B-PER"], ["B-PER"], ["B-LOC"], ["O"], ["B-PER"], ["B-LOC"], ["O"],
            ["B-LOC", "I-LOC"]]
# s5 and s6 corrected (C); s7 re-tokenised (U); s0-s4 the same (B)
FIXED_TOKENS = TOKENS[:7] + [["New York"]]
FIXED = ORIGINAL[:5] + [["B-ORG"], ["B-PER"], ["B-LOC"]]
# m1 is right on B and keeps the original labels on C; m2 finds one entity of B, all of C
M1 = [["B-PER"], ["B-PER"], ["B-LOC"], ["O"], ["B-PER"], ["B-LOC"], ["O"], ["B-LOC", "I-LOC"]]
M2 = [["B-PER"], ["O"], ["O"], ["O"], ["O"], ["B-ORG"], ["B-PER"], ["O", "O"]]


def copies():
    return make_token_dataset(TOKENS, ORIGINAL), make_token_dataset(FIXED_TOKENS, FIXED)


def run(**predictions):
    original, fixed = copies()
    return measure_impact_tokens(fixed, original, predictions or {"m1": M1, "m2": M2})


def test_sentence_sets_and_prevalence():
    result = run()
    assert (result.n_benign, result.n_correctable, result.n_unknown) == (5, 2, 1)
    assert result.noise_prevalence == pytest.approx(2 / 7)
    assert (result.metric, result.unit) == ("entity_f1", "sentences")


def test_retokenised_sentences_are_unknown_with_a_warning():
    original, fixed = copies()
    with pytest.warns(RetokenisedWarning, match="1 sentences have other tokens.*sentence 8"):
        measure_impact_tokens(fixed, original, {"m1": M1})


def test_entity_f1_by_hand():
    # m1 on B: 4 of 4 entities (2TP = 8 over 8); on C corrected: 0 TP, 1 predicted, 2 gold
    # m2 on B: 1 TP, 1 predicted, 4 gold (2 over 5); on C corrected 2 of 2 (4 over 4)
    result = run()
    np.testing.assert_allclose(result.acc_B, [1.0, 2 / 5])
    np.testing.assert_allclose(result.acc_C, [0.0, 1.0])
    np.testing.assert_allclose(result.acc_corrected, [8 / 11, 6 / 9])
    # against the original labels: m1 is perfect, m2 gets 0 TP of 2 predicted, 1 gold on C
    np.testing.assert_allclose(result.acc_C_original, [1.0, 0.0])
    np.testing.assert_allclose(result.acc_original, [1.0, 2 / 8])
    assert result.rank_corrected.tolist() == [1, 2]


def test_pooled_f1_is_seqeval_micro_f1_on_the_pruned_set():
    seqeval = pytest.importorskip("seqeval.metrics")
    result = run()
    pruned = range(7)
    for row, tags in enumerate((M1, M2)):
        gold = [FIXED[i] for i in pruned]
        assert result.acc_corrected[row] == pytest.approx(
            seqeval.f1_score(gold, [tags[i] for i in pruned]))
        assert result.acc_C[row] == pytest.approx(
            seqeval.f1_score([FIXED[5], FIXED[6]], [tags[5], tags[6]]))


def test_hand_made_flip_of_the_weighted_curve():
    # with t = 1 - x: m1 = 8t / (3 + 8t), m2 = (4 + 2t) / (4 + 5t); equal where
    # 24 t^2 - 6 t - 12 = 0, i.e. t = (1 + sqrt(33)) / 8
    result = run()
    t = (1 + math.sqrt(33)) / 8
    assert len(result.flips) == 1
    flip = result.flips[0]
    assert (flip.a, flip.b) == ("m1", "m2")
    assert flip.x == pytest.approx(1 - t)
    assert flip.N == pytest.approx(2 / (2 + 5 * t))
    curve = result.curve
    np.testing.assert_allclose(curve.corrected[:, 0], result.acc_corrected)  # A(0) on P
    np.testing.assert_allclose(curve.corrected[:, -1], result.acc_C)  # A(1) on C
    np.testing.assert_allclose(curve.original[:, 0], result.acc_original)


def test_crossings_match_the_curve_on_random_weighted_pairs():
    rng = np.random.default_rng(0)
    x = np.linspace(0, 1, 4001)[1:-1]
    for _ in range(300):
        den = rng.integers(1, 40, size=(2, 2)).astype(float)  # (den_C, den_B) per model
        num = rng.random((2, 2)) * den
        totals = np.array([num[:, 0], den[:, 0], num[:, 1], den[:, 1]])
        found = _crossings(totals[:, 0], totals[:, 1])
        values = _curve(totals, x)
        sign = np.sign(values[0] - values[1])
        changes = int((sign[1:] * sign[:-1] < 0).sum())
        assert len(found) == changes
        for point in found:
            at = _curve(totals, np.array([point]))[:, 0]
            assert at[0] == pytest.approx(at[1], abs=1e-9)


def test_plain_tags_score_token_accuracy():
    tokens = [["a", "b"], ["c", "d"]]
    original = make_token_dataset(tokens, [["NN", "VB"], ["NN", "NN"]], scheme="plain")
    fixed = make_token_dataset(tokens, [["NN", "VB"], ["NN", "VB"]], scheme="plain")
    result = measure_impact_tokens(fixed, original, {"m": [["NN", "VB"], ["NN", "NN"]]})
    assert result.metric == "token_accuracy"
    assert float(result.acc_original[0]) == 1.0
    assert float(result.acc_corrected[0]) == 0.75


def test_bad_input():
    original, fixed = copies()
    with pytest.raises(InvalidParameterError, match="at least one model"):
        measure_impact_tokens(fixed, original, {})
    with pytest.raises(InvalidInputError, match="have 7 sentences, the data 8"):
        measure_impact_tokens(fixed, original, {"m": M1[:7]})
    with pytest.raises(InvalidInputError, match="tokens in 1 sentences, first sentence 8"):
        measure_impact_tokens(fixed, original, {"m": M1[:7] + [["B-LOC"]]})
    with pytest.raises(InvalidInputError, match=r"entity types outside .*\['MISC'\]"):
        measure_impact_tokens(fixed, original, {"m": [["B-MISC"]] + M1[1:]})
    with pytest.raises(InvalidInputError, match="has 8 sentences and the corrected copy 7"):
        measure_impact_tokens(fixed.subset(range(7)), original, {"m": M1})
    same = make_token_dataset(TOKENS[:7], ORIGINAL[:7])
    with pytest.warns(Warning, match="C is empty"):
        result = measure_impact_tokens(same, same, {"m": M1[:7]})
    assert result.noise_prevalence == 0 and result.flips == ()


def test_prediction_file_tokens_must_match(tmp_path):
    from labelaudit.tokens import write_conll

    original, fixed = copies()
    path = write_conll(make_token_dataset([["Zed"]] + TOKENS[1:], M1), tmp_path / "p.conll")
    with pytest.raises(InvalidInputError, match="first sentence 1"):
        measure_impact_tokens(fixed, original, {"m": path})
    good = write_conll(make_token_dataset(TOKENS, M1), tmp_path / "m1.conll")
    result = measure_impact_tokens(fixed, original, {"m1": good, "m2": M2})
    np.testing.assert_allclose(result.acc_corrected, [8 / 11, 6 / 9])


def fake_encode(sentences):
    """Word vectors that tell the tag from the word's first letter (upper case: entity)."""
    out = []
    for sentence in sentences:
        rows = [[float(w[0].isupper()), float(w in ("Rome", "Paris")), 1.0] for w in sentence]
        out.append(np.array(rows))
    return out


def test_token_ladder_fits_and_tags():
    words = [["Ann", "ran"], ["Rome", "is"], ["Bob", "met", "Paris"], ["it", "ran"]] * 6
    tags = [["B-PER", "O"], ["B-LOC", "O"], ["B-PER", "O", "B-LOC"], ["O", "O"]] * 6
    train = make_token_dataset(words, tags)
    test = make_token_dataset([["Cal", "saw", "Paris"]], [["B-PER", "O", "B-LOC"]])
    preds = token_ladder_predictions(train, test, members=["encoder"],
                                     options={"encode": fake_encode, "cache": False})
    assert list(preds) == ["encoder+linear-C0.01", "encoder+linear-C0.1", "encoder+linear-C1",
                           "encoder+crf"]
    assert preds["encoder+linear-C1"] == [["B-PER", "O", "B-LOC"]]
    with pytest.raises(InvalidParameterError, match="choose from encoder, finetune"):
        token_ladder_predictions(train, test, members=["tfidf"])
