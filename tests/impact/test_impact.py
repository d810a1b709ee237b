"""impact: the sets, N and its interval, accuracies, rankings, curve and flip points of
seed 003, section 6, on a hand-made case."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.impact import (
    EmptyCorrectableWarning,
    ImpactResult,
    PendingVerdictWarning,
    measure_impact,
)
from labelaudit.impact._impact import _accuracy_totals, _crossings, _curve


def impact_curve(acc_c, acc_b, n_c, n_b, x):
    """A(x; M) = (A_C(M)|C| + (1 - x) A_B(M)|B|) / (|C| + (1 - x)|B|) per model and x."""
    return _curve(_accuracy_totals(acc_c, acc_b, n_c, n_b), x)


def test_impact_curve_is_the_papers_formula():
    assert impact_curve(np.array([0.5]), np.array([0.9]), 10, 90,
                        np.array([0.0, 1.0])) == pytest.approx(np.array([[0.86, 0.5]]))

IDS = list(range(11))


def flip_point(c_a, b_a, c_b, b_b, n_correctable, n_benign):
    """The share x in (0, 1) where A(x; a) = A(x; b), from the crossings of the curves."""
    totals = _accuracy_totals(np.array([c_a, c_b]), np.array([b_a, b_b]), n_correctable,
                              n_benign)
    found = _crossings(totals[:, 0], totals[:, 1])
    return found[0] if found else None


def corrected_table() -> pd.DataFrame:
    """B = ids 0-5 (0-3 not flagged, 4-5 flagged Non-Error), C = ids 6-8 (a -> b),
    U = id 9 (Non-Agreement) and id 10 (Pending)."""
    return pd.DataFrame({
        "id": IDS,
        "label": ["a", "a", "a", "b", "b", "b", "a", "a", "a", "a", "b"],
        "corrected": ["a", "a", "a", "b", "b", "b", "b", "b", "b", None, None],
        "flagged": [False] * 4 + [True] * 7,
        "verdict": [""] * 4 + ["Non-Error"] * 2 + ["Correctable"] * 3
        + ["Non-Agreement", "Pending"],
    })


def predictions() -> dict[str, pd.DataFrame]:
    """``big`` learned the errors: all of B right, C predicted with the original label
    (A_B = 1, A_C = 0); ``small`` gets C right but only 2 of 6 in B (A_B = 1/3, A_C = 1)."""
    big = ["a", "a", "a", "b", "b", "b", "a", "a", "a", "b", "a"]
    small = ["a", "a", "b", "a", "a", "a", "b", "b", "b", "a", "a"]
    return {"big": pd.DataFrame({"id": IDS, "pred": big}),
            "small": pd.DataFrame({"id": IDS, "pred": small})}


def run(table=None, preds=None, **options) -> ImpactResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingVerdictWarning)
        return measure_impact(corrected_table() if table is None else table,
                      predictions() if preds is None else preds, **options)


def test_hand_made_sets_and_prevalence():
    result = run()
    assert (result.n_benign, result.n_correctable, result.n_unknown, result.n_pruned) == \
        (6, 3, 2, 9)
    assert result.n_pending == 1
    assert result.noise_prevalence == pytest.approx(3 / 9)
    low, high = result.noise_prevalence_ci
    # Wilson interval of 3/9 at 95 %: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    z, n, p = 1.959963984540054, 9, 3 / 9
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (low, high) == pytest.approx((centre - half, centre + half))
    from scipy.stats import binomtest

    ci = binomtest(3, 9).proportion_ci(confidence_level=0.95, method="wilson")
    assert (low, high) == pytest.approx((ci.low, ci.high))


def test_hand_made_accuracies_and_ranks():
    result = run()
    assert result.models == ("big", "small")
    np.testing.assert_allclose(result.acc_original, [9 / 9, 2 / 9])
    np.testing.assert_allclose(result.acc_corrected, [6 / 9, 5 / 9])
    np.testing.assert_allclose(result.acc_C, [0, 1])
    np.testing.assert_allclose(result.acc_C_original, [1, 0])
    np.testing.assert_allclose(result.acc_B, [1, 1 / 3])
    assert result.rank_original.tolist() == [1, 2]
    assert result.rank_corrected.tolist() == [1, 2]
    assert result.swapped == ()


def test_hand_made_flip_point():
    # big: 6(1-x) / (3 + 6(1-x)); small: (3 + 2(1-x)) / (3 + 6(1-x)); equal at 4(1-x) = 3
    result = run()
    assert len(result.flips) == 1
    flip = result.flips[0]
    assert (flip.a, flip.b) == ("big", "small")
    assert flip.x == pytest.approx(0.25)
    assert flip.N == pytest.approx(3 / (3 + 0.75 * 6))  # = 0.4
    assert flip_point(0.0, 1.0, 1.0, 1 / 3, 3, 6) == pytest.approx(0.25)
    # on the original labels big is right on all of P, so it leads for every x
    assert result.flips_original == ()


def test_curve_ends():
    result = run()
    curve = result.curve
    assert curve.x[0] == 0 and curve.x[-1] == 1
    np.testing.assert_allclose(curve.corrected[:, 0], result.acc_corrected)  # A(0) on P
    np.testing.assert_allclose(curve.corrected[:, -1], result.acc_C)  # A(1) on C
    np.testing.assert_allclose(curve.original[:, 0], result.acc_original)
    np.testing.assert_allclose(curve.original[:, -1], result.acc_C_original)
    assert curve.noise_prevalence[0] == pytest.approx(result.noise_prevalence)
    assert curve.noise_prevalence[-1] == pytest.approx(1.0)
    # the order is big first before the flip at x = 0.25, small first after it
    before, after = curve.x < 0.25, curve.x > 0.25
    assert (curve.corrected[0, before] > curve.corrected[1, before]).all()
    assert (curve.corrected[0, after] < curve.corrected[1, after]).all()


def test_flip_point_matches_curve_on_random_pairs():
    rng = np.random.default_rng(0)
    for _ in range(200):
        acc_c, acc_b = rng.random(2), rng.random(2)
        n_c, n_b = int(rng.integers(1, 50)), int(rng.integers(1, 500))
        x = flip_point(acc_c[0], acc_b[0], acc_c[1], acc_b[1], n_c, n_b)
        ends = impact_curve(acc_c, acc_b, n_c, n_b, np.array([0.0, 1.0]))
        signs = np.sign(ends[0] - ends[1])
        assert (x is not None) == (signs[0] * signs[1] < 0)
        if x is not None:
            at = impact_curve(acc_c, acc_b, n_c, n_b, np.array([x]))[:, 0]
            assert at[0] == pytest.approx(at[1], abs=1e-12)


def test_swapped_pair_on_pruned_set():
    preds = predictions()
    # small now gets 4 of 6 in B: A* = 7/9 beats big's 6/9, Ã = 4/9 does not
    preds["small"]["pred"] = ["a", "a", "a", "a", "a", "b", "b", "b", "b", "a", "a"]
    result = run(preds=preds)
    np.testing.assert_allclose(result.acc_corrected, [6 / 9, 7 / 9])
    assert result.rank_original.tolist() == [1, 2]
    assert result.rank_corrected.tolist() == [2, 1]
    assert result.swapped == (("big", "small"),)
    assert result.flips == ()  # small leads for every x


def test_pending_warns():
    with pytest.warns(PendingVerdictWarning, match="1 flagged items"):
        measure_impact(corrected_table(), predictions())


def test_probability_columns():
    preds = predictions()
    probs = {}
    for name, frame in preds.items():
        is_a = (frame["pred"] == "a").to_numpy()
        probs[name] = pd.DataFrame({"id": IDS, "prob_a": np.where(is_a, 0.8, 0.2),
                                    "b": np.where(is_a, 0.2, 0.8)})
    a, b = run(), run(preds=probs)
    np.testing.assert_allclose(a.acc_corrected, b.acc_corrected)


def test_review_apply_output():
    from labelaudit.review import apply_verdicts

    table = corrected_table()
    data = table[["id", "label"]].assign(text="x")
    verdicts = table.loc[table["flagged"], ["id", "verdict"]].assign(
        majority_label=table.loc[table["flagged"], "corrected"])
    applied = apply_verdicts(data, verdicts)
    result = run(applied)
    assert (result.n_benign, result.n_correctable, result.n_unknown) == (6, 3, 2)
    np.testing.assert_allclose(result.acc_corrected, run().acc_corrected)


def test_without_verdict_column():
    table = corrected_table().drop(columns="verdict")
    table.loc[9, "corrected"] = None
    result = run(table)
    # flagged items: 4-5 unchanged (B), 6-8 changed (C), 9-10 blank (U)
    assert (result.n_benign, result.n_correctable, result.n_unknown) == (6, 3, 2)


def test_invariant_to_row_order_and_class_names():
    table = corrected_table().sample(frac=1.0, random_state=0)
    renamed = {"a": "x", "b": "y"}
    table = table.assign(label=table["label"].map(renamed),
                         corrected=table["corrected"].map(renamed))
    preds = {k: v.iloc[::-1].assign(pred=v["pred"].map(renamed)) for k, v in
             predictions().items()}
    a, b = run(), run(table, preds)
    np.testing.assert_allclose(a.acc_corrected, b.acc_corrected)
    np.testing.assert_allclose(a.acc_original, b.acc_original)
    assert a.flips == b.flips


def test_integer_labels_and_ids_as_text():
    table = corrected_table()
    codes = {"a": 0, "b": 1}
    table = table.assign(label=table["label"].map(codes),
                         corrected=table["corrected"].map(codes))  # floats with NaN
    preds = {k: v.assign(id=v["id"].astype(str), pred=v["pred"].map(codes).astype(str))
             for k, v in predictions().items()}
    np.testing.assert_allclose(run(table, preds).acc_corrected, run().acc_corrected)


def test_to_dict_and_frame():
    result = run()
    doc = json.loads(json.dumps(result.to_dict()))
    assert doc["sizes"] == {"B": 6, "C": 3, "U": 2, "P": 9}
    assert doc["N"] == pytest.approx(1 / 3)
    assert len(doc["N_ci"]) == 2
    assert set(doc["models"]["big"]) >= {"acc_original", "acc_corrected", "acc_C", "acc_B",
                                         "rank_original", "rank_corrected"}
    assert doc["flips"] == [{"a": "big", "b": "small", "x": pytest.approx(0.25),
                             "N": pytest.approx(0.4)}]
    assert len(doc["curve"]["x"]) == len(doc["curve"]["corrected"]["big"]) == 101
    frame = result.to_frame()
    assert frame["model"].tolist() == ["big", "small"]
    assert "x = 0.2500" in result.summary()


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot(tmp_path, suffix):
    out = run().plot(tmp_path / f"impact{suffix}")
    assert out.exists() and out.stat().st_size > 1000


def test_plot_bad_suffix(tmp_path):
    with pytest.raises(InvalidParameterError, match="png or .svg"):
        run().plot(tmp_path / "impact.pdf")


# --- bad input ---------------------------------------------------------------------------

def test_prediction_ids_do_not_match():
    preds = predictions()
    preds["big"] = preds["big"].iloc[:8].assign(id=[0, 1, 2, 3, 4, 5, 6, 99])
    with pytest.raises(InvalidInputError, match=r"'big' do not match the data's ids: "
                       r"4 ids have no prediction \(rows '7', '8', '9', '10'\); "
                       r"1 predicted id is not in the data \(row '99'\)"):
        run(preds=preds)


def test_prediction_label_outside_label_set():
    preds = predictions()
    preds["small"].loc[3, "pred"] = "zebra"
    with pytest.raises(InvalidInputError, match=r"'small' have labels outside the label "
                       r"set \['a', 'b'\]: \['zebra'\] for ids '3'"):
        run(preds=preds)


def test_no_flagged_items():
    table = corrected_table().assign(flagged=False, verdict="")
    with pytest.raises(InvalidInputError, match="no flagged items"):
        run(table)


@pytest.mark.filterwarnings("ignore::labelaudit.impact.PendingVerdictWarning")
def test_empty_correctable_set():
    table = corrected_table()
    table.loc[6:8, "verdict"] = "Non-Error"
    with pytest.warns(EmptyCorrectableWarning, match="C is empty"):
        result = measure_impact(table, predictions())
    assert result.noise_prevalence == 0.0 and result.flips == ()
    assert result.noise_prevalence_ci[0] == 0.0
    assert "C is empty" in result.summary()
    json.dumps(result.to_dict(), allow_nan=False)


def test_unknown_verdict():
    table = corrected_table()
    table.loc[6, "verdict"] = "Maybe"
    with pytest.raises(InvalidInputError, match=r"verdicts it does not know: \['Maybe'\]"):
        run(table)


def test_missing_columns_and_duplicates():
    with pytest.raises(InvalidInputError, match="missing column 'corrected'"):
        run(corrected_table().drop(columns="corrected"))
    with pytest.raises(InvalidInputError, match="neither a 'flagged' nor a 'verdict'"):
        run(corrected_table().drop(columns=["flagged", "verdict"]))
    with pytest.raises(InvalidInputError, match="duplicate ids"):
        run(corrected_table().assign(id=[0] * 11))
    with pytest.raises(InvalidInputError, match="not true/false"):
        run(corrected_table().assign(flagged="maybe"))
    with pytest.raises(InvalidParameterError, match="predictions is empty"):
        run(preds={})
    with pytest.raises(InvalidParameterError, match="confidence_level must be in"):
        run(confidence_level=1.5)
    with pytest.raises(InvalidParameterError, match="n_points must be at least 2"):
        run(n_points=1)
    preds = {"big": predictions()["big"].rename(columns={"id": "key"})}
    with pytest.raises(InvalidInputError, match="no id column 'id'"):
        run(preds=preds)
