import itertools

import numpy as np
import pytest

from labelaudit import InvalidParameterError
from labelaudit.tokens import (
    Span,
    consistency_issues,
    decode_tags,
    invalid_sequence_issues,
    make_token_dataset,
    region_score,
    span_issues,
    tag_consistency,
    tag_issues,
)

CLASSES = ("O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER")


def confident(tags, p=0.9):
    """Probabilities putting ``p`` on each tag and the rest evenly elsewhere."""
    probs = np.full((len(tags), len(CLASSES)), (1 - p) / (len(CLASSES) - 1))
    for t, tag in enumerate(tags):
        probs[t, CLASSES.index(tag)] = p
    return probs


def kinds(given, predicted):
    probs = confident(predicted)
    return [(i.kind, i.start, i.end) for i in span_issues(given, predicted, probs, CLASSES)]


def test_each_span_issue_kind():
    o = ["O"] * 5
    assert kinds(["O", "B-LOC", "O", "O", "O"], ["O", "B-ORG", "O", "O", "O"]) == [
        ("wrong-type", 1, 2)]
    assert kinds(["B-PER", "O", "O", "O", "O"], ["B-PER", "I-PER", "O", "O", "O"]) == [
        ("wrong-boundary", 0, 2)]
    assert kinds(o, ["O", "O", "B-LOC", "I-LOC", "O"]) == [("missing-entity", 2, 4)]
    assert kinds(["O", "O", "B-ORG", "O", "O"], o) == [("spurious-entity", 2, 3)]
    assert kinds(["B-PER", "I-PER", "O", "B-LOC", "O"], ["B-PER", "I-PER", "O", "B-LOC", "O"]) == []


def test_one_group_for_a_split_entity():
    # "New York Times" as ORG vs "New York" LOC + "Times" ORG: one wrong-boundary issue.
    issues = kinds(["B-ORG", "I-ORG", "I-ORG"], ["B-LOC", "I-LOC", "B-ORG"])
    assert issues == [("wrong-boundary", 0, 3)]


def test_region_score_is_the_pairwise_likelihood_ratio():
    probs = confident(["O", "B-LOC"], p=0.8)
    given, suggested = ["O", "O"], ["O", "B-LOC"]
    p_given = 0.8 * (0.2 / 6)
    p_sugg = 0.8 * 0.8
    expected = p_given / (p_given + p_sugg)
    assert region_score(probs, CLASSES, given, suggested, 0, 2) == pytest.approx(expected)
    issue = span_issues(given, suggested, probs, CLASSES)[0]
    assert issue.score == pytest.approx((0.2 / 6) / (0.2 / 6 + 0.8))  # region is token 1 only


def test_decode_tags_is_the_best_valid_sequence_by_brute_force():
    rng = np.random.default_rng(0)
    classes = ("O", "B-A", "I-A", "B-B", "I-B")
    for _ in range(20):
        probs = rng.dirichlet(np.ones(5), size=4)
        best, best_score = None, -np.inf
        for seq in itertools.product(range(5), repeat=4):
            tags = [classes[j] for j in seq]
            valid = all(
                not t.startswith("I-")
                or (i > 0 and tags[i - 1][2:] == t[2:] and tags[i - 1] != "O")
                for i, t in enumerate(tags)
            )
            score = sum(np.log(probs[i, j]) for i, j in enumerate(seq))
            if valid and score > best_score:
                best, best_score = tags, score
        assert decode_tags(probs, classes) == best


def test_plain_tags_give_wrong_tag_issues():
    probs = np.array([[0.9, 0.1], [0.2, 0.8]])
    assert decode_tags(probs, ("NN", "VB"), spans=False) == ["NN", "VB"]
    issues = tag_issues(["NN", "NN"], ["NN", "VB"], probs, ("NN", "VB"))
    assert [(i.kind, i.start, i.score) for i in issues] == [("wrong-tag", 1, pytest.approx(0.2))]


def test_invalid_sequence_issue_suggests_the_conlleval_reading():
    [issue] = invalid_sequence_issues(["O", "I-PER", "I-PER", "O"], scheme="iob2")
    assert (issue.kind, issue.start, issue.end, issue.score) == ("invalid-sequence", 1, 3, 0.0)
    assert issue.suggested == (Span(1, 3, "PER"),)
    assert invalid_sequence_issues(["O", "I-PER"], scheme="iob1") == []


def test_consistency_counts_and_minority_issue():
    tokens = [["Rome", "wins"]] * 4 + [["Rome", "loses"]]
    tags = [["B-LOC", "O"]] * 4 + [["B-ORG", "O"]]
    ds = make_token_dataset(tokens, tags)
    counts = tag_consistency([ds])
    assert dict(counts.counts[("Rome",)]) == {"LOC": 4, "ORG": 1}
    assert ("wins",) not in counts.counts  # never an entity
    frame = counts.to_frame()
    assert frame.loc[0, "text"] == "Rome" and frame.loc[0, "majority_share"] == 0.8
    found = consistency_issues(ds, counts)
    assert [len(x) for x in found] == [0, 0, 0, 0, 1]
    issue = found[4][0]
    assert issue.kind == "inconsistent-tag" and issue.score == pytest.approx(0.2)
    assert issue.given == (Span(0, 1, "ORG"),) and issue.suggested == (Span(0, 1, "LOC"),)
    assert consistency_issues(ds, counts, min_count=6) == [[]] * 5
    with pytest.raises(InvalidParameterError):
        consistency_issues(ds, counts, max_share=1.5)


def test_consistency_of_multi_token_entities_and_untagged_occurrences():
    tokens = [["New", "York", "is", "big"]] * 3 + [["in", "New", "York", "and", "York"]]
    tags = [["B-LOC", "I-LOC", "O", "O"]] * 3 + [["O", "O", "O", "O", "B-LOC"]]
    ds = make_token_dataset(tokens, tags)
    counts = tag_consistency([ds])
    assert dict(counts.counts[("New", "York")]) == {"LOC": 3, "O": 1}
    assert dict(counts.counts[("York",)]) == {"LOC": 1}  # "York" inside "New York" is not O
    found = consistency_issues(ds, counts)
    [issue] = found[3]
    assert (issue.start, issue.end, issue.given, issue.suggested) == (
        1, 3, (), (Span(1, 3, "LOC"),))
    assert issue.score == pytest.approx(0.25)


def test_consistency_of_plain_tags():
    ds = make_token_dataset([["run", "fast"]] * 3 + [["run"]], [["VB", "RB"]] * 3 + [["NN"]])
    counts = tag_consistency([ds])
    assert counts.spans is False and dict(counts.counts[("run",)]) == {"VB": 3, "NN": 1}
    assert [len(x) for x in consistency_issues(ds, counts)] == [0, 0, 0, 1]
