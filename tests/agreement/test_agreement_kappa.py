"""Kappa and observed agreement: hand-computed tables, the paper's examples, statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from labelaudit import InvalidInputError
from labelaudit.agreement import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
    per_item_agreement,
)


def _five_annotator_table(n_41: int, n_32: int) -> np.ndarray:
    """Section 3.2: 1,000 items, five annotators, 660 unanimous; disagreements split symmetrically
    between the categories so that both stay equiprobable."""
    rows = [[5, 0]] * 330 + [[0, 5]] * 330
    rows += [[4, 1], [1, 4]] * (n_41 // 2) + [[3, 2], [2, 3]] * (n_32 // 2)
    table = np.array(rows)
    assert table.shape == (1000, 2)
    return table


def test_fleiss_hand_computed_small_table():
    # 3 items, 3 raters, categories (a, b, c)
    counts = [[3, 0, 0], [1, 2, 0], [0, 1, 2]]
    # P_Ai = (3*2)/6, (0 + 2)/6, (0 + 2)/6 -> P_A = (1 + 1/3 + 1/3) / 3 = 5/9
    # p = (4/9, 3/9, 2/9) -> P_E = (16 + 9 + 4) / 81 = 29/81
    p_a, p_e = 5 / 9, 29 / 81
    assert observed_agreement(counts) == pytest.approx(p_a)
    assert fleiss_kappa(counts) == pytest.approx((p_a - p_e) / (1 - p_e))
    np.testing.assert_allclose(per_item_agreement(counts), [1, 1 / 3, 1 / 3])


def test_fleiss_matches_statsmodels_on_random_tables():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    rng = np.random.default_rng(0)
    for n_raters, n_cat in [(2, 2), (3, 2), (5, 3), (10, 4), (7, 6)]:
        probs = rng.dirichlet(np.ones(n_cat))
        counts = rng.multinomial(n_raters, probs, size=int(rng.integers(5, 60)))
        assert fleiss_kappa(counts) == pytest.approx(sm_fleiss(counts, method="fleiss"), abs=1e-12)


def test_fleiss_variable_raters_hand_computed():
    counts = [[2, 0], [2, 1], [1, 3]]
    # P_Ai: 2/2 = 1; (2)/(6) = 1/3; (0 + 6)/12 = 1/2 ; P_A = 11/18
    # p_j = (5/9, 4/9), P_E = 41/81
    p_a, p_e = 11 / 18, 41 / 81
    assert fleiss_kappa(counts) == pytest.approx((p_a - p_e) / (1 - p_e))


def test_paper_section_3_1_kappa_is_0_8():
    counts = [[2, 0]] * 450 + [[0, 2]] * 450 + [[1, 1]] * 100
    assert fleiss_kappa(counts) == pytest.approx(0.8)
    # and 33 disagreements among 1,000 corresponds to kappa = 0.93
    counts = [[2, 0]] * 484 + [[0, 2]] * 483 + [[1, 1]] * 33
    assert round(fleiss_kappa(counts), 2) == 0.93


def test_paper_section_3_2_kappa_range():
    # all disagreements split 4-to-1: kappa = 0.73
    assert round(fleiss_kappa(_five_annotator_table(340, 0)), 2) == 0.73
    # twice as many 3-to-2 as 4-to-1 (the most likely coin-flip pattern): about 0.637
    table = _five_annotator_table(114, 226)  # 226 / 114 ~ 2
    assert fleiss_kappa(table) == pytest.approx(0.637, abs=0.002)


def test_paper_section_3_2_three_to_two_reading():
    """The paper reports kappa = 0.52 when every disagreement is 3-to-2. Equation 2 as printed
    gives 0.592 (each 3-2 item has C(3,2) + C(2,2) = 4 agreeing pairs of 10); 0.52 is reproduced
    only when the minority's agreeing pair is left out (3 of 10 pairs). We implement equation 2."""
    table = _five_annotator_table(0, 340)
    assert fleiss_kappa(table) == pytest.approx(0.592, abs=1e-3)
    p_a_majority_pairs_only = 0.66 + 0.34 * 3 / 10
    assert round((p_a_majority_pairs_only - 0.5) / 0.5, 2) == 0.52


def test_fleiss_undefined_when_one_category():
    assert math.isnan(fleiss_kappa([[3, 0], [3, 0]]))


@pytest.mark.parametrize(
    "counts, match",
    [
        ([[1, 0], [2, 0]], "at least 2 annotations"),
        ([1, 2, 3], "2-D"),
        ([[2, -1], [1, 1]], "non-negative"),
        ([[1.5, 0.5], [1, 1]], "whole numbers"),
        (np.zeros((0, 2)), "empty"),
    ],
)
def test_fleiss_bad_counts(counts, match):
    with pytest.raises(InvalidInputError, match=match):
        fleiss_kappa(counts)


def test_single_annotation_error_names_the_item():
    with pytest.raises(InvalidInputError, match="fewer in row 1 "):
        fleiss_kappa([[2, 0], [1, 0], [0, 2]])


def test_cohen_against_sklearn_and_by_hand():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 80)
    b = np.where(rng.random(80) < 0.7, a, rng.integers(0, 3, 80))
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    # hand: po = 3/4; pA = (1/2, 1/2), pB = (1/4, 3/4) -> pe = 1/2 -> kappa = 0.5
    assert cohen_kappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]) == pytest.approx(0.5)


def test_cohen_bad_input():
    with pytest.raises(InvalidInputError, match="same length"):
        cohen_kappa([1, 2], [1])
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))


def test_krippendorff_against_package_reliability_data():
    import krippendorff

    nan = np.nan
    reliability = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    data = np.array(reliability)
    counts = []
    for unit in data.T:
        values = unit[~np.isnan(unit)]
        if len(values) >= 2:
            counts.append([int((values == v).sum()) for v in (1, 2, 3, 4)])
    for level in ("nominal", "ordinal", "interval"):
        expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement=level)
        got = krippendorff_alpha(counts, level=level, values=[1, 2, 3, 4])
        assert got == pytest.approx(expected)
    assert round(krippendorff_alpha(counts), 3) == 0.691


def test_krippendorff_two_coders_binary_by_hand():
    # 2 coders, 4 units: (0,0), (0,1), (1,1), (1,1). Coincidences: o00 = 2, o01 = o10 = 1, o11 = 4;
    # n0 = 3, n1 = 5, n = 8. D_o = 2/8; D_e = 2 * 3 * 5 / (8 * 7). alpha = 1 - D_o / D_e
    counts = [[2, 0], [1, 1], [0, 2], [0, 2]]
    expected = 1 - (2 / 8) / (2 * 3 * 5 / (8 * 7))
    assert krippendorff_alpha(counts) == pytest.approx(expected)
    assert math.isnan(krippendorff_alpha([[2, 0], [3, 0]]))
