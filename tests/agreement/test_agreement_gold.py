"""Chance agreement (footnote 3), the agreed subset as a gold standard, and the full report."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.agreement import (
    agreed_items,
    agreement_report,
    chance_agreement,
    cohen_kappa,
    fleiss_kappa,
    gold_standard,
    krippendorff_alpha,
    noise_bound,
)
from labelaudit.agreement._gold import _tail_at_least


def _panel(labels_by_item: dict[str, list[str]], annotators: str) -> pd.DataFrame:
    rows = [
        (i, a, lab)
        for i, labs in labels_by_item.items()
        for a, lab in zip(annotators, labs, strict=True)
    ]
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


def test_chance_agreement_fixed_panel_is_footnote_3_product():
    # three annotators; disagreed items are d1..d4
    items = {
        "e1": "xxx", "e2": "yyy", "e3": "xxx",
        "d1": "xxy", "d2": "xyy", "d3": "yxx", "d4": "xyx",
    }
    df = _panel({k: list(v) for k, v in items.items()}, "abc")
    # shares of x on disagreed items: a 3/4, b 2/4, c 2/4
    q = {"a": 3 / 4, "b": 2 / 4, "c": 2 / 4}
    expected = q["a"] * q["b"] * q["c"] + (1 - q["a"]) * (1 - q["b"]) * (1 - q["c"])
    assert chance_agreement(df) == pytest.approx(expected)
    # pooled: x has 7 of 12 labels on disagreed items -> (7/12)^3 + (5/12)^3
    assert chance_agreement(df, method="pooled") == pytest.approx((7 / 12) ** 3 + (5 / 12) ** 3)
    # without ids the pooled coin is used
    assert chance_agreement(df.drop(columns="annotator")) == pytest.approx(
        (7 / 12) ** 3 + (5 / 12) ** 3
    )


def test_chance_agreement_paper_values():
    # two annotators, categories equiprobable on disagreed items: p = 0.5 (section 3.1)
    df = _panel({"a": ["x", "x"], "b": ["x", "y"], "c": ["y", "x"]}, "uv")
    assert chance_agreement(df) == pytest.approx(0.5)
    # five annotators, equiprobable: p = 2 / 2^5 = 0.0625 (section 3.2)
    five = {"e": list("xxxxx"), "d1": list("xxyyx"), "d2": list("yyxxy")}
    assert chance_agreement(_panel(five, "abcde")) == pytest.approx(0.0625)


def test_poisson_binomial_tail_matches_enumeration():
    rng = np.random.default_rng(0)
    q = rng.random((4, 5))
    need = np.array([0, 2, 4, 5])
    got = _tail_at_least(q, need)
    for r in range(4):
        total = 0.0
        for bits in itertools.product([0, 1], repeat=5):
            prob = np.prod([q[r, j] if b else 1 - q[r, j] for j, b in enumerate(bits)])
            if sum(bits) >= need[r]:
                total += prob
        assert got[r] == pytest.approx(total)


def test_min_share_chance_agreement_by_hand():
    # pooled coin 1/2, five annotators, "agreed" = at least 4 of 5 -> p = 2 * 6/32
    items = {"e": list("xxxxx"), "d1": list("xxxyy"), "d2": list("yyyxx")}
    df = _panel(items, "abcde")
    assert chance_agreement(df, min_share=0.8, method="pooled") == pytest.approx(2 * 6 / 32)
    with pytest.raises(InvalidParameterError, match="min_share"):
        chance_agreement(df, min_share=0.5)


def test_gold_standard_subset_and_bound():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(120):
        easy = rng.random() < 0.7
        truth = rng.integers(0, 2)
        for a in "abc":
            lab = truth if easy else rng.integers(0, 2)
            rows.append((i, a, int(lab)))
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    gold = gold_standard(df, confidence=0.9)
    counts = df.pivot_table(index="item", columns="label", aggfunc="size", fill_value=0).to_numpy()
    unanimous = counts.max(axis=1) == 3
    assert gold.items.tolist() == np.flatnonzero(unanimous).tolist()
    assert gold.noise.n_disagreed == int((~unanimous).sum())
    expected = noise_bound(120, gold.noise.n_disagreed, chance_agreement(df), confidence=0.9)
    assert gold.noise == expected
    assert gold.p_method == "annotators"
    assert set(gold.to_frame().columns) == {"item", "label", "support", "n_annotations"}
    summary = gold.noise_statement()
    assert summary["n_agreed"] == len(gold.items) and "gold standard" in gold.summary()
    assert summary["gamma"] == pytest.approx(expected.gamma)
    # a looser agreement threshold admits more items
    loose = gold_standard(df, min_share=0.6, p_chance=0.3)
    assert len(loose.items) == 120 and loose.p_method == "given"
    assert agreed_items(counts, min_share=0.6).all()


def test_gold_standard_single_annotation_error():
    df = pd.DataFrame({"item": [1, 1, 2], "label": ["a", "a", "b"]})
    with pytest.raises(InvalidInputError, match="fewer in item 2"):
        gold_standard(df)


def _crowd_with_gold():
    rng = np.random.default_rng(0)
    acc = {"a": 0.95, "b": 0.85, "c": 0.75, "d": 0.55}
    truth = rng.integers(0, 3, 60)
    rows = []
    for i, t in enumerate(truth):
        for annot, p in acc.items():
            if annot == "d" and i % 3 == 0:
                continue  # missing annotations
            lab = t if rng.random() < p else (t + rng.integers(1, 3)) % 3
            rows.append((f"q{i}", annot, ["neg", "neu", "pos"][lab]))
    gold = pd.Series(
        {f"q{i}": ["neg", "neu", "pos"][t] for i, t in enumerate(truth) if i % 2 == 0}
    )
    return pd.DataFrame(rows, columns=["item", "annotator", "label"]), gold, truth


def test_report_statistics_and_annotator_table():
    df, gold, _ = _crowd_with_gold()
    rep = agreement_report(df, gold=gold, n_bootstrap=200, random_state=1)
    counts = rep.aggregation.probs * rep.aggregation.n_annotations[:, None]
    counts = np.rint(counts).astype(int)
    assert rep.statistic("fleiss_kappa").value == pytest.approx(fleiss_kappa(counts))
    assert rep.statistic("krippendorff_alpha").value == pytest.approx(krippendorff_alpha(counts))
    for est in rep.statistics:
        assert est.ci_low <= est.value <= est.ci_high, est
    assert rep.n_annotators == 4 and rep.annotations_per_item == (3, 3.6666666666666665, 4)
    table = rep.annotator_table.set_index("annotator")
    # the careful annotator agrees with the others' majority and with gold more than the sloppy one
    assert table.loc["a", "agreement_with_majority"] > table.loc["d", "agreement_with_majority"]
    assert table.loc["a", "gold_accuracy"] > table.loc["d", "gold_accuracy"]
    assert table.loc["a", "n_gold"] == 30 and table.loc["d", "n_gold"] == 20
    # gold accuracy by hand for annotator b
    b = df[df.annotator == "b"].set_index("item")["label"]
    on_gold = b[b.index.isin(gold.index)]
    assert table.loc["b", "gold_accuracy"] == pytest.approx((on_gold == gold[on_gold.index]).mean())
    items = rep.items_frame()
    assert {"agreement", "agreed", "gold"} <= set(items.columns)
    assert items["agreed"].sum() == len(rep.gold.items)
    assert "cohen_kappa" not in rep.to_frame()["statistic"].tolist()  # four annotators
    as_dict = rep.to_dict()
    assert as_dict["statistics"]["aggregate_accuracy"]["value"] > 0.8


def test_report_bootstrap_is_seeded():
    df, _, _ = _crowd_with_gold()
    a = agreement_report(df, n_bootstrap=100, random_state=5).to_frame()
    b = agreement_report(df, n_bootstrap=100, random_state=5).to_frame()
    c = agreement_report(df, n_bootstrap=100, random_state=6).to_frame()
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    none = agreement_report(df, n_bootstrap=0).to_frame()
    assert none["ci_low"].isna().all()


def test_report_two_annotators_has_cohen():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, 50)
    y = np.where(rng.random(50) < 0.8, x, 1 - x)
    df = pd.DataFrame({"item": np.r_[np.arange(50), np.arange(50)],
                       "annotator": ["u"] * 50 + ["v"] * 50, "label": np.r_[x, y]})
    rep = agreement_report(df, n_bootstrap=0)
    assert rep.statistic("cohen_kappa").value == pytest.approx(cohen_kappa(x, y))


def test_report_single_annotation_and_drop_single():
    df, _, _ = _crowd_with_gold()
    extra = pd.DataFrame({"item": ["lonely"], "annotator": ["a"], "label": ["pos"]})
    bad = pd.concat([df, extra], ignore_index=True)
    with pytest.raises(InvalidInputError, match="fewer in item 'lonely'"):
        agreement_report(bad, n_bootstrap=0)
    rep = agreement_report(bad, n_bootstrap=0, drop_single=True)
    assert rep.n_items == 60 and "lonely" not in rep.aggregation.items.tolist()


def test_report_gold_type_mismatch_and_bad_options():
    df, _, _ = _crowd_with_gold()
    with pytest.raises(InvalidInputError, match="gold labels are"):
        agreement_report(df, gold={"q0": 1}, n_bootstrap=0)
    with pytest.raises(InvalidInputError, match="none of the gold labels"):
        agreement_report(df, gold={"zzz": "pos"}, n_bootstrap=0)
    with pytest.raises(InvalidParameterError, match="numeric labels"):
        agreement_report(df, level="interval", n_bootstrap=0)
    with pytest.raises(InvalidParameterError, match="confidence"):
        agreement_report(df, confidence=1.5)


def test_report_ordinal_levels_on_numeric_labels():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 40)
    rows = [(i, a, int(np.clip(t + rng.integers(-1, 2), 1, 5)))
            for i, t in enumerate(truth) for a in "abc"]
    df = pd.DataFrame(rows, columns=["item", "annotator", "label"])
    nominal = agreement_report(df, n_bootstrap=0).statistic("krippendorff_alpha").value
    interval = agreement_report(df, n_bootstrap=0, level="interval").statistic(
        "krippendorff_alpha").value
    assert interval > nominal  # near misses count as near agreement on an interval scale
    assert not math.isnan(nominal)
