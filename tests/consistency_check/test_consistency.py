"""The learning-curve consistency test on text: scheme sizes and disjointness, verdicts on
a shifted and an unshifted labelling rule, reproducibility and bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import labelaudit
from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.consistency_check import consistency, curve_grid, draw_schemes

TOPICS = {"sport": ["goal", "match", "team", "score", "coach"],
          "tech": ["code", "chip", "server", "app", "cloud"],
          "food": ["pasta", "bread", "soup", "cake", "salt"]}
FILLER = ["the", "a", "of", "and", "today", "new", "big"]


def make_task(n: int, seed: int, shift: float = 0.0) -> pd.DataFrame:
    """Texts of topic words labelled by their topic; with ``shift`` a share of the items
    follows another rule (the next topic)."""
    rng = np.random.default_rng(seed)
    names = list(TOPICS)
    rows = []
    for i in range(n):
        k = int(rng.integers(3))
        words = list(rng.choice(TOPICS[names[k]], 3)) + list(rng.choice(FILLER, 3))
        label = names[(k + 1) % 3] if rng.random() < shift else names[k]
        rows.append({"id": f"{seed}-{i}", "text": " ".join(rng.permutation(words)),
                     "label": label})
    return pd.DataFrame(rows)


def test_identify_subsets_have_the_seeds_sizes_and_are_exclusive():
    draw = draw_schemes(100, 20, size=15, rng=np.random.default_rng(3))
    parts = {name: dict(segs) for name, segs in draw.schemes.items()}
    t1, t2, s = parts["PureTrain"]["T1"], parts["PureTrain"]["T2"], parts["TestTrain"]["S"]
    assert [len(p) for p in (draw.test, t1, t2, s)] == [15, 15, 15, 15]
    train_parts = np.concatenate([draw.test, t1, t2])
    assert len(set(train_parts)) == 45 and train_parts.max() < 100  # exclusive, training
    assert s.min() >= 100 and s.max() < 120 and len(set(s)) == 15  # suspect items
    assert [p for p, _ in draw.schemes["TrainTest"]] == ["T2", "S"]
    assert [p for p, _ in draw.schemes["TestTrain"]] == ["S", "T2"]
    assert np.array_equal(parts["TrainTest"]["T2"], t2)


def test_validate_subsets_have_the_seeds_sizes_and_are_exclusive():
    mistakes = np.array([1, 4, 7])
    draw = draw_schemes(100, 10, size=10, rng=np.random.default_rng(0), mistakes=mistakes,
                        extra=20)
    segs = {name: dict(s) for name, s in draw.schemes.items()}
    y, w, z = segs["PureTrainTrain"]["Y"], segs["PureTrainTrain"]["W"], segs["PureTrainTrain"]["Z"]
    assert (len(draw.test), len(y), len(w), len(z)) == (10, 7, 20, 3)
    train = np.concatenate([draw.test, y, w, z])
    assert len(set(train)) == 40 and train.max() < 100
    wrong, fixed = segs["MistakePureTrain"]["Mistake"], segs["CorrectPureTrain"]["Correct"]
    assert sorted(wrong - 100) == [1, 4, 7]
    assert np.array_equal(fixed, wrong + 10)  # the same items' corrected copies
    test = segs["TestTrainMistake"]["Test"]
    assert sorted(test - 100) == [0, 2, 3, 5, 6, 8, 9]
    expected = {"TestTrainMistake": ["Test", "W", "Mistake"],
                "PureTrainCorrect": ["Y", "W", "Correct"],
                "MistakeTestTrain": ["Mistake", "Test", "W"],
                "CorrectPureTrain": ["Correct", "Y", "W"],
                "TrainPureTrain": ["Z", "Y", "W"]}
    for name, order in expected.items():
        assert [p for p, _ in draw.schemes[name]] == order
    assert {len(draw.order(name)) for name in draw.schemes if name not in (
        "TrainTest", "PureTrain", "TestTrain")} == {30}


def test_sizes_the_training_set_cannot_hold_are_refused_with_the_possible_size():
    with pytest.raises(InvalidParameterError, match="use --size 33 or less"):
        draw_schemes(100, 40, size=40, rng=np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match=r"size \+ train-size <= 70"):
        draw_schemes(100, 30, size=30, rng=np.random.default_rng(0),
                     mistakes=np.array([0]), extra=50)


def test_curve_grid():
    assert curve_grid(10, 10).tolist() == list(range(1, 11))
    assert curve_grid(7, 10).tolist() == [1, 2, 3, 4, 5, 6, 7]


def test_shifted_rule_is_inconsistent_and_same_rule_consistent():
    train = make_task(450, 1)
    same = consistency(train, make_task(80, 2), text="text", repeats=4,
                                  n_points=6)
    shifted = consistency(train, make_task(80, 3, shift=0.5), text="text",
                                     repeats=4, n_points=6)
    assert same.verdict == "consistent"
    assert same.verdicts["TrainTest"].verdict == "consistent"
    assert shifted.verdict == "inconsistent"
    assert shifted.verdicts["TestTrain"].gap < -0.2
    assert shifted.verdicts["TrainTest"].verdict == "inconsistent"
    assert shifted.summary().startswith("The suspect set is inconsistent")
    assert same.summary().startswith("No inconsistency found")


def test_correction_restores_consistency():
    train = make_task(450, 1)
    clean = make_task(80, 3)
    noisy = make_task(80, 3, shift=0.5)
    result = consistency(train, noisy, clean, text="text", repeats=4, n_points=5,
                                    size=80, train_size=60)
    assert result.sizes["z"] == int((noisy["label"] != clean["label"]).sum())
    assert result.sizes["y"] + result.sizes["z"] == 80
    for name in ("TestTrainMistake", "PureTrainMistake", "MistakeTestTrain",
                 "MistakePureTrain"):
        assert result.verdicts[name].verdict == "inconsistent", name
    for name in ("PureTrainCorrect", "CorrectPureTrain"):
        assert result.verdicts[name].verdict == "consistent", name
    assert "corrected labels in" in result.summary()
    assert {v.verdict for v in result.corrections.values()} == {"correction helps"}
    assert set(result.to_dict()["corrections"]) == {
        "TestTrainMistake", "PureTrainMistake", "MistakeTestTrain", "MistakePureTrain"}


def test_same_seed_same_curves_and_another_seed_other_draws():
    train, suspect = make_task(300, 1), make_task(50, 4, shift=0.3)
    first = consistency(train, suspect, text="text", repeats=3, n_points=4)
    again = consistency(train, suspect, text="text", repeats=3, n_points=4)
    other = consistency(train, suspect, text="text", repeats=3, n_points=4,
                                   random_state=1)
    assert first.to_dict() == again.to_dict()
    assert first.to_dict()["curves"] != other.to_dict()["curves"]
    frame = first.to_frame()
    assert set(frame["scheme"]) == {"TrainTest", "PureTrain", "TestTrain"}
    assert (frame["low"] <= frame["mean"]).all() and (frame["mean"] <= frame["high"]).all()


def test_fits_in_worker_processes_give_the_same_result():
    """The curve points are independent fits: two spawned workers give what one process
    gives."""
    train, suspect = make_task(300, 1), make_task(50, 4, shift=0.3)
    one = consistency(train, suspect, text="text", repeats=2, n_points=3,
                                 workers=1)
    two = consistency(train, suspect, text="text", repeats=2, n_points=3,
                                 workers=2)
    assert one.to_dict() == two.to_dict()
    points = 2 * sum(len(c.sizes) for c in one.curves.values())
    assert one.n_fits == points
    with pytest.raises(InvalidParameterError, match="workers"):
        consistency(train, suspect, text="text", workers=0)
    with pytest.raises(InvalidParameterError, match="engine"):
        consistency(train, suspect, text="text", engine="spark")


def test_the_default_is_one_worker_per_free_core(monkeypatch):
    monkeypatch.setattr("labelaudit.consistency_check._run.default_threads", lambda: 2)
    said = []
    consistency(make_task(300, 1), make_task(50, 4), text="text", repeats=2,
                           n_points=2, on_plan=said.append)
    assert said[0].endswith("on 2 workers (priced by one fit timed now)")


def test_macro_f1_metric_and_bad_input():
    train, suspect = make_task(300, 1), make_task(50, 2)
    result = consistency(train, suspect, text="text", repeats=2, n_points=3,
                                    metric="macro_f1")
    assert result.metric == "macro_f1"
    odd = suspect.assign(label=["music"] * 50)
    with pytest.raises(InvalidInputError, match=r"labels only in the suspect file: \['music'\]"):
        consistency(train, odd, text="text")
    fixed = suspect.assign(id=[f"x{i}" for i in range(50)])
    with pytest.raises(InvalidInputError, match="50 suspect ids are missing"):
        consistency(train, suspect, fixed, text="text")
    with pytest.raises(InvalidInputError, match="has 49 rows and the suspect file 50"):
        consistency(train, suspect.drop(columns="id"),
                               suspect.drop(columns="id").iloc[:49], text="text")
    with pytest.raises(InvalidInputError, match="no rows"):
        consistency(train, suspect.iloc[:0], text="text")
    with pytest.raises(InvalidParameterError, match="repeats"):
        consistency(train, suspect, text="text", repeats=1)
    with pytest.raises(InvalidParameterError, match="nothing to validate"):
        consistency(train, suspect, suspect, text="text", size=20)


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "labelaudit", "consistency", *argv],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_json_plot_and_table(tmp_path):
    make_task(300, 1).to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    make_task(50, 3, shift=0.6).to_json(tmp_path / "batch.jsonl", orient="records", lines=True)
    done = run_cli("train.jsonl", "--suspect", "batch.jsonl", "--text", "text", "--repeats",
                   "3", "--points", "4", "--out", "out.json", "--plot-out", "curves.png",
                   "--workers", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["verdict"] == "inconsistent"
    assert set(doc["verdicts"]) == {"TrainTest", "TestTrain"}
    assert {"gap", "ci_low", "ci_high", "verdict"} <= set(doc["verdicts"]["TestTrain"])
    assert len(doc["curves"]["PureTrain"]["n"]) == 4
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert "The suspect set is inconsistent" in done.stderr
    # the plan comes first: fits a repeat, the range of repeats, about how long
    [plan] = [line for line in done.stderr.splitlines() if line.startswith("plan:")]
    assert plan.startswith("plan: 3 schemes x 4 points, 12 fits a repeat, 3 repeats (36 "
                           "fits); about ")
    assert plan.endswith(" on 2 workers (priced by one fit timed now)")
    assert done.stderr.index(plan) < done.stderr.index("The suspect set is inconsistent")
    table = run_cli("train.jsonl", "--suspect", "batch.jsonl", "--text", "text", "--repeats",
                    "2", "--points", "3", "--format", "csv", "--quiet", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0] == "scheme,reference,gap,ci_low,ci_high,verdict"


@pytest.mark.parametrize(("argv", "message"), [
    (("--size", "200"), "use --size 100 or less"),
    (("--metric", "macro_f1", "--text", "text"), None),
    (("--out", "train.jsonl"), "never overwrites an input"),
])
def test_cli_bad_input(tmp_path, argv, message):
    make_task(300, 1).to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    make_task(50, 3).to_json(tmp_path / "batch.jsonl", orient="records", lines=True)
    extra = () if "--text" in argv else ("--text", "text")
    done = run_cli("train.jsonl", "--suspect", "batch.jsonl", *extra, *argv, "--repeats", "2",
                   "--points", "2", "--quiet", cwd=tmp_path)
    if message is None:
        assert done.returncode == 0, done.stderr
        return
    assert done.returncode == 1
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.json").exists()


def test_random_labels_warn_that_the_model_is_near_chance():
    train = make_task(300, 1)
    train["label"] = np.random.default_rng(0).choice(list(TOPICS), len(train))
    with pytest.warns(labelaudit.ChanceLevelWarning, match="near chance"):
        consistency(train, make_task(50, 2), text="text", repeats=2, n_points=3)


def test_bootstrap_interval_is_narrower_than_t_with_few_repeats():
    train, suspect = make_task(300, 1), make_task(50, 4, shift=0.3)
    by_t = consistency(train, suspect, text="text", repeats=4, n_points=4)
    boot = consistency(train, suspect, text="text", repeats=4, n_points=4,
                                  interval="bootstrap")
    for name, v in by_t.verdicts.items():
        b = boot.verdicts[name]
        assert v.gap == pytest.approx(b.gap)
        assert v.ci_low <= b.ci_low + 1e-12 and b.ci_high <= v.ci_high + 1e-12
    assert boot.to_dict()["interval"] == "bootstrap"


def test_t_interval_covers_95_percent_and_the_bootstrap_does_not_with_5_repeats():
    from labelaudit.consistency_check._run import _interval

    rng = np.random.default_rng(0)
    covered = {"t": 0, "bootstrap": 0}
    for _ in range(600):
        gaps = rng.normal(0.0, 1.0, 5)
        for method in covered:
            low, high = _interval(gaps, rng, 0.95, method)
            covered[method] += low <= 0.0 <= high
    assert 0.92 <= covered["t"] / 600 <= 0.98
    assert covered["bootstrap"] / 600 < 0.89  # about 0.84


def test_cli_prints_the_near_chance_warning_before_the_summary(tmp_path):
    train = make_task(300, 1)
    train["label"] = np.random.default_rng(0).choice(list(TOPICS), len(train))
    train.to_json(tmp_path / "train.jsonl", orient="records", lines=True)
    make_task(50, 2).to_json(tmp_path / "batch.jsonl", orient="records", lines=True)
    done = run_cli("train.jsonl", "--suspect", "batch.jsonl", "--text", "text", "--repeats",
                   "2", "--points", "3", "--format", "csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warning = done.stderr.index("warning: the model fed all of PureTrain")
    verdict = max(done.stderr.find("No inconsistency"), done.stderr.find("The suspect set"))
    assert 0 <= warning < verdict


def test_adaptive_repeats_stop_early_when_clear_and_use_the_maximum_when_not():
    train = make_task(300, 1)
    clear = consistency(train, make_task(50, 3, shift=0.7), text="text",
                                   repeats=10, n_points=3)
    assert clear.verdict == "inconsistent" and clear.repeats == 3 and clear.max_repeats == 10
    assert "stopped after 3 of at most 10 repeats" in clear.summary()
    null = consistency(train, make_task(50, 4), text="text", repeats=8,
                                  n_points=3, width=0.0)
    assert null.verdict == "consistent" and null.repeats == 8
    fixed = consistency(train, make_task(50, 3, shift=0.7), text="text",
                                   repeats=4, n_points=3, adaptive=False)
    assert fixed.repeats == 4
    # the first repeats are the same draws either way
    assert fixed.curves["PureTrain"].scores[:3].tolist() == \
        clear.curves["PureTrain"].scores[:3].tolist()


def test_a_killed_run_resumes_without_refitting_finished_fits(tmp_path, monkeypatch):
    import labelaudit.consistency_check._fits as module

    train, suspect = make_task(300, 1), make_task(50, 2)
    real, calls = module.fit_point, []

    def dies_after_five(*args, **kwargs):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "fit_point", dies_after_five)
    options = {"text": "text", "repeats": 3, "n_points": 3, "adaptive": False,
               "checkpoint_dir": tmp_path / "fits"}
    with pytest.raises(KeyboardInterrupt):
        consistency(train, suspect, **options)
    assert len(list((tmp_path / "fits").glob("consistency-point-*.pkl"))) == 5
    calls.clear()
    monkeypatch.setattr(module, "fit_point", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    resumed = consistency(train, suspect, **options)
    assert len(calls) == resumed.n_fits - 5
    monkeypatch.setattr(module, "fit_point", real)
    fresh = consistency(train, suspect, **{**options, "checkpoint_dir": None})
    assert resumed.to_dict() == fresh.to_dict()


def test_a_checkpoint_folder_of_the_users_is_refused_before_any_reading(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep me")
    (tmp_path / "afile").write_text("x")
    for folder, message in ((mine, "is not one of labelaudit's"), (tmp_path / "afile",
                                                                    "is a file")):
        with pytest.raises(InvalidParameterError, match=message):
            consistency(tmp_path / "missing.csv", tmp_path / "missing2.csv",
                                   text="text", checkpoint_dir=folder)
    assert sorted(p.name for p in mine.iterdir()) == ["todo.txt"]
    assert (tmp_path / "afile").read_text() == "x"
