"""The learning-curve consistency test on tagged sentences (a fake word encoder)."""

from __future__ import annotations

import pytest
from ner_fixtures import conll_text, fake_encode, make_corpus

import labelaudit
from labelaudit._errors import InvalidInputError
from labelaudit.models import EncoderTokenScorer
from labelaudit.tokens import make_token_dataset

SWAP = {"B-PER": "B-LOC", "I-PER": "I-LOC", "B-LOC": "B-PER", "I-LOC": "I-PER"}


def scorer():
    return EncoderTokenScorer(encode=fake_encode, head="linear", cache=False)


def corpus(n_docs, seed, swap=False):
    tokens, tags, _ = make_corpus(n_docs=n_docs, seed=seed)
    if swap:  # another rule: persons and places trade types
        tags = [[SWAP.get(t, t) for t in sent] for sent in tags]
    return make_token_dataset(tokens, tags)


def test_shifted_token_rule_is_inconsistent_and_same_rule_consistent():
    train = corpus(40, 0)
    same = labelaudit.consistency(train, corpus(8, 1), scorer=scorer(), repeats=3,
                                  n_points=4)
    shifted = labelaudit.consistency(train, corpus(8, 1, swap=True), scorer=scorer(),
                                     repeats=3, n_points=4)
    assert same.metric == "entity_f1"
    assert same.verdict == "consistent"
    assert shifted.verdict == "inconsistent"
    assert shifted.verdicts["TestTrain"].gap < -0.1


def test_corrected_copy_validates(tmp_path):
    train = corpus(40, 0)
    fixed = corpus(8, 1)
    wrong_tags = [list(t) for t in fixed.tags]
    for i in range(0, len(wrong_tags), 2):  # every other sentence swapped
        wrong_tags[i] = [SWAP.get(t, t) for t in wrong_tags[i]]
    wrong = make_token_dataset(fixed.tokens, wrong_tags)
    result = labelaudit.consistency(train, wrong, fixed, scorer=scorer(), repeats=5,
                                    n_points=4)
    changed = sum(a != b for a, b in zip(wrong.tags, fixed.tags, strict=True))
    assert result.sizes["z"] == changed
    assert result.verdicts["MistakePureTrain"].verdict == "inconsistent"
    assert result.verdicts["PureTrainCorrect"].verdict == "consistent"
    # the changed sentences are those with persons or places, a biased sample, so the
    # Correct schemes are judged against their Mistake twins (same items, same order)
    for name, verdict in result.corrections.items():
        assert verdict.gap < 0, name
        assert verdict.reference == name.replace("Mistake", "Correct")
    for name in ("MistakeTestTrain", "MistakePureTrain"):  # fed first: a clear effect
        assert result.corrections[name].verdict == "correction helps", name


def test_corrected_tokens_must_align(tmp_path):
    train, suspect = corpus(40, 0), corpus(8, 1)
    tokens = [list(t) for t in suspect.tokens]
    tokens[3][0] = "Zzz"
    (tmp_path / "fixed.conll").write_text(
        conll_text(tokens, suspect.tags, [0] * len(tokens)))
    with pytest.raises(InvalidInputError, match="differ from the suspect file's in sentence 4"):
        labelaudit.consistency(train, suspect, tmp_path / "fixed.conll", scorer=scorer())
    odd = make_token_dataset(suspect.tokens, [["B-MISC" if t != "O" else t for t in s]
                                              for s in suspect.tags])
    with pytest.raises(InvalidInputError, match=r"entity types only in the suspect file: "
                                                r"\['MISC'\]"):
        labelaudit.consistency(train, odd, scorer=scorer())
