"""Golden tests with the numbers of Chong, Hong & Manning (2022).

Appendix E (table 8) gives, for the items each method hypothesised on IMDB (1,310 of
25,000) and Amazon (1,000), how many crowd verification found Correctable, Non-Agreement
(both label errors) or Non-Error. Table 3's P@Err% follows from those counts, and so do the
text's "FME correctly identifies 909 label errors, a 28% absolute improvement" (IMDB) and
"660 ... compared to the 505 identified by CL, a 15.5% absolute improvement" (Amazon).
"""

from __future__ import annotations

import numpy as np
import pytest

from labelaudit.evaluation import precision_at_k, truncated_aupr_score, verified_precision

# dataset: (n_items, n_hypothesised, {method: (correctable, non_agreement, non_error)})
TABLE_8 = {
    "IMDB": (25_000, 1310, {"CL": (183, 358, 769), "FML": (323, 573, 414),
                            "FME": (328, 581, 401)}),
    "Amazon": (None, 1000, {"CL": (357, 148, 495), "FML": (508, 131, 361),
                            "FME": (517, 143, 340)}),
}
TABLE_3_P_AT_ERR = {("IMDB", "CL"): 0.41, ("IMDB", "FML"): 0.68, ("IMDB", "FME"): 0.69,
                    ("Amazon", "CL"): 0.51, ("Amazon", "FML"): 0.64, ("Amazon", "FME"): 0.66}


def verified_ranking(n_items, n_top, n_errors, rng):
    """Top ``n_top`` items verified (``n_errors`` of them errors, in random order); the rest
    unverified (NaN)."""
    n_items = n_items or 2 * n_top
    is_error = np.full(n_items, np.nan)
    top = np.zeros(n_top)
    top[rng.choice(n_top, n_errors, replace=False)] = 1.0
    is_error[:n_top] = top
    return is_error, np.arange(n_items, dtype=float)


@pytest.mark.parametrize(("dataset", "method"), list(TABLE_3_P_AT_ERR))
def test_table_3_precision_at_err(dataset, method):
    n_items, n_top, counts = TABLE_8[dataset]
    correctable, non_agreement, non_error = counts[method]
    assert correctable + non_agreement + non_error == n_top
    is_error, scores = verified_ranking(n_items, n_top, correctable + non_agreement,
                                        np.random.default_rng(0))
    value = precision_at_k(is_error, scores, k=n_top, unknown="exclude")
    assert round(value, 2) == TABLE_3_P_AT_ERR[dataset, method]
    vp = verified_precision(correctable + non_agreement, n_top)
    assert vp.precision == pytest.approx(value)
    assert vp.ci_low < value < vp.ci_high


def test_absolute_improvements_quoted_in_the_text():
    rng = np.random.default_rng(0)
    for dataset, (quoted_fme, quoted_cl, improvement) in {
        "IMDB": (909, 541, 0.28), "Amazon": (660, 505, 0.155),
    }.items():
        n_items, n_top, counts = TABLE_8[dataset]
        found = {m: c + a for m, (c, a, _) in counts.items()}
        assert found["FME"] == quoted_fme and found["CL"] == quoted_cl
        p = {m: precision_at_k(*verified_ranking(n_items, n_top, found[m], rng), k=n_top,
                               unknown="exclude") for m in ("FME", "CL")}
        assert p["FME"] - p["CL"] == pytest.approx(improvement, abs=0.0015)


def test_truncated_aupr_with_the_papers_5_percent_estimate():
    # IMDB: only the 1,310 hypothesised items are verified; the paper assumes 5% of the
    # 25,000 reviews are errors (1,250). The truncated AUPR can then be no larger than
    # P@1310 * 1310 / 1250, the recall reached at the cut-off.
    rng = np.random.default_rng(0)
    is_error, scores = verified_ranking(25_000, 1310, 909, rng)
    value = truncated_aupr_score(is_error, scores, k=1310, unknown="exclude", n_errors=1250)
    assert 0.0 < value <= 909 / 1250
    # a ranking that puts all 909 errors first reaches the whole recall at precision 1
    perfect = np.r_[np.ones(909), np.zeros(401), np.full(25_000 - 1310, np.nan)]
    assert truncated_aupr_score(perfect, scores, k=1310, unknown="exclude",
                                n_errors=1250) == pytest.approx(909 / 1250)
