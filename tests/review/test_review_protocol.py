"""The verdict rule on hand-made vote tables (Chong et al. 2022, section 5)."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.review import (
    CORRECTABLE,
    NON_AGREEMENT,
    NON_ERROR,
    PENDING,
    classify_votes,
    verdicts_from_annotations,
)


@pytest.mark.parametrize(("votes", "given", "verdict", "majority"), [
    # the paper's 3-of-5 rule
    (["pos", "pos", "pos", "neg", "neg"], "pos", NON_ERROR, "pos"),
    (["pos", "pos", "pos", "pos", "pos"], "pos", NON_ERROR, "pos"),
    (["neg", "neg", "neg", "pos", "pos"], "pos", CORRECTABLE, "neg"),
    (["neu", "neu", "neu", "neg", "pos"], "pos", CORRECTABLE, "neu"),
    (["pos", "pos", "neg", "neg", "neu"], "pos", NON_AGREEMENT, None),
    (["neg", "neg", "neu", "neu", "pos"], "pos", NON_AGREEMENT, None),
    # unsure fills a slot but supports nothing
    (["pos", "pos", "unsure", "neg", "neg"], "pos", NON_AGREEMENT, None),
    (["neg", "neg", "neg", "unsure", "unsure"], "pos", CORRECTABLE, "neg"),
    (["unsure"] * 5, "pos", NON_AGREEMENT, None),
    # "none of these" is a replacement answer outside the label set (the paper's off-topic)
    (["none of these"] * 3 + ["pos", "pos"], "pos", CORRECTABLE, "none of these"),
])
def test_three_of_five(votes, given, verdict, majority):
    result = classify_votes(votes, given)
    assert result.verdict == verdict
    assert result.majority_label == majority
    assert result.n_votes == 5
    assert result.is_error == (verdict != NON_ERROR)


def test_decided_before_all_votes_are_in():
    assert classify_votes(["neg", "neg", "neg"], "pos").verdict == CORRECTABLE
    assert classify_votes(["pos", "pos", "pos"], "pos").verdict == NON_ERROR
    # 2 neg + 1 pos + 1 neu: with one vote left nothing can reach 3 except neg
    assert classify_votes(["neg", "neg", "pos", "neu"], "pos").verdict == PENDING
    # 4 different answers: no label can reach 3 with one vote left
    assert classify_votes(["a", "b", "c", "unsure"], "a").verdict == NON_AGREEMENT
    empty = classify_votes([], "pos")
    assert empty.verdict == PENDING and empty.is_error is None and empty.counts == ()


@pytest.mark.parametrize(("n", "majority", "votes", "verdict"), [
    (3, None, ["b", "b", "a"], CORRECTABLE),       # 2 of 3
    (3, None, ["a", "b", "c"], NON_AGREEMENT),
    (7, None, ["b"] * 3 + ["a"] * 3 + ["c"], NON_AGREEMENT),   # needs 4 of 7
    (7, None, ["b"] * 4 + ["a"] * 3, CORRECTABLE),
    (5, 4, ["b", "b", "b", "a", "a"], NON_AGREEMENT),          # a stricter 4 of 5
    (5, 4, ["a", "a", "a", "a", "b"], NON_ERROR),
    (1, None, ["b"], CORRECTABLE),
    (4, None, ["a", "a", "b", "b"], NON_AGREEMENT),            # 3 of 4 needed
])
def test_any_number_of_reviewers(n, majority, votes, verdict):
    assert classify_votes(votes, "a", n_reviewers=n, majority=majority).verdict == verdict


@pytest.mark.parametrize(("n", "majority"), [(5, 2), (5, 6), (4, 2), (0, None), (5, 2.5)])
def test_majority_must_exceed_half(n, majority):
    with pytest.raises(InvalidParameterError):
        classify_votes(["a"], "a", n_reviewers=n, majority=majority)


def test_vote_table_long_format():
    votes = pd.DataFrame({
        "item_id": [1] * 5 + [2] * 5 + [3] * 5 + [4] * 2,
        "annotator_id": list("abcde") * 3 + ["a", "b"],
        "label": ["x", "x", "x", "y", "y",
                  "y", "y", "y", "y", "x",
                  "x", "y", "z", "unsure", "x",
                  "y", "y"],
    })
    given = {1: "x", 2: "x", 3: "x", 4: "x", 5: "y"}
    table = verdicts_from_annotations(votes, given)
    assert table["item_id"].tolist() == [1, 2, 3, 4, 5]
    assert table["verdict"].tolist() == [NON_ERROR, CORRECTABLE, NON_AGREEMENT, PENDING, PENDING]
    assert table["majority_label"].tolist() == ["x", "y", None, None, None]
    assert table["n_given"].tolist() == [3, 1, 2, 0, 0]
    assert table["votes"].tolist()[:3] == ["x:3; y:2", "y:4; x:1", "x:2; y:1; z:1; unsure:1"]
    assert table["is_error"].tolist() == [False, True, True, None, None]


def test_vote_table_is_invariant_to_row_order():
    rng = pd.Series(range(17)).sample(frac=1, random_state=0).to_numpy()
    votes = pd.DataFrame({"item_id": [1] * 5 + [2] * 5 + [3] * 5 + [4] * 2,
                          "annotator_id": list("abcde") * 3 + ["a", "b"],
                          "label": list("xxxyy") + list("yyyyx") + list("xyzxz") + ["y", "y"]})
    given = {1: "x", 2: "x", 3: "x", 4: "y"}
    a = verdicts_from_annotations(votes, given)
    b = verdicts_from_annotations(votes.iloc[rng].reset_index(drop=True), given)
    pd.testing.assert_frame_equal(a, b)


def test_vote_table_errors():
    votes = pd.DataFrame({"item_id": [1, 1], "annotator_id": ["a", "a"], "label": ["x", "y"]})
    with pytest.raises(InvalidInputError, match="more than once"):
        verdicts_from_annotations(votes, {1: "x"})
    with pytest.raises(InvalidInputError, match="without a given label"):
        verdicts_from_annotations(votes.iloc[:1], {2: "x"})
    with pytest.raises(InvalidInputError, match="item_id, annotator_id, label"):
        verdicts_from_annotations(votes.drop(columns="label"), {1: "x"})


def test_verdict_properties():
    """Hypothesis: the verdict depends only on the vote counts and follows the rule."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    answers = st.sampled_from(["a", "b", "c", "none of these", "unsure"])

    @settings(max_examples=120, deadline=None, derandomize=True)
    @given(st.integers(1, 9), st.data())
    def check(n, data):
        votes = data.draw(st.lists(answers, min_size=0, max_size=n))
        given_label = data.draw(st.sampled_from(["a", "b", "c"]))
        need = n // 2 + 1
        result = classify_votes(votes, given_label, n_reviewers=n)
        shuffled = classify_votes(list(reversed(votes)), given_label, n_reviewers=n)
        assert (shuffled.verdict, shuffled.majority_label) == (result.verdict,
                                                               result.majority_label)
        counts = {v: votes.count(v) for v in set(votes) - {"unsure"}}
        top = max(counts.values(), default=0)
        if votes.count(given_label) >= need:
            assert result.verdict == NON_ERROR
        elif top >= need:
            assert result.verdict == CORRECTABLE and result.majority_label != given_label
        elif top + n - len(votes) < need:
            assert result.verdict == NON_AGREEMENT
        else:
            assert result.verdict == PENDING
        # a complete vote is never pending
        if len(votes) == n:
            assert result.verdict != PENDING

    check()
