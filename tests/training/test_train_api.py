"""labelaudit.train, save/load, evaluation, train-bench and their CLIs, on tiny data with a
tiny random sentence encoder (the methods themselves are tested in test_methods.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

import labelaudit
import labelaudit.training
from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.training import evaluate_model, load_model, parse_noise_grid, train_bench


@pytest.fixture(scope="module")
def frames():
    return make_topic_frame(30, seed=0, n_errors=9), make_topic_frame(10, seed=1)


def fit(frame, tiny_st_dir, **options):
    options.setdefault("epochs", 30)
    return labelaudit.training.train(frame, text="text", label="label", model=str(tiny_st_dir),
                            **options)


def test_train_predict_save_load_round_trip(frames, tiny_st_dir, tmp_path):
    train, test = frames
    model = fit(train, tiny_st_dir)
    probs = model.predict_proba(test)
    assert probs.shape == (len(test), 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    assert set(model.predict(test)) <= {"food", "sport", "tech"}
    model.save(tmp_path / "model")
    again = load_model(tmp_path / "model")
    np.testing.assert_array_equal(again.predict_proba(test), probs)
    assert again.method == "base" and list(again.classes) == list(model.classes)
    assert model.predict(["pasta sauce cook recipe"])[0] in model.classes


def test_same_seed_same_model(frames, tiny_st_dir):
    train, test = frames
    a = fit(train, tiny_st_dir, epochs=5).predict_proba(test)
    b = fit(train, tiny_st_dir, epochs=5).predict_proba(test)
    np.testing.assert_array_equal(a, b)


def test_filter_drops_or_relabels_flagged_items(frames, tiny_st_dir):
    train, _ = frames
    dropped = fit(train, tiny_st_dir, method="filter", filter_scorers=["tfidf"], epochs=3)
    assert dropped.log["flagged"] > 0
    assert dropped.log["n_used"] == len(train) - dropped.log["flagged"]
    relabelled = fit(train, tiny_st_dir, method="filter", filter="relabel",
                     filter_scorers=["tfidf"], epochs=3)
    assert relabelled.log["n_used"] == len(train)


def test_evaluation_counts_unseen_labels_as_wrong(frames, tiny_st_dir):
    train, test = frames
    model = fit(train, tiny_st_dir, epochs=5)
    odd = test.copy()
    odd.loc[:4, "label"] = "music"
    metrics = evaluate_model(model, odd, text="text")
    assert metrics.unseen_labels == ("music",) and metrics.n_unseen == 5
    assert metrics.top1 <= 1 - 5 / len(odd)
    assert metrics.top5 >= metrics.top1
    assert set(metrics.to_dict()) >= {"top1", "top5", "macro_f1", "n_eval"}


def test_bad_input(frames, tiny_st_dir, tmp_path):
    train, _ = frames
    with pytest.raises(InvalidParameterError, match="method must be one of"):
        fit(train, tiny_st_dir, method="nope")
    with pytest.raises(InvalidParameterError, match=r"noise_rate must be in \[0, 1\)"):
        fit(train, tiny_st_dir, method="co-teaching", noise_rate=1.0)
    single = pd.concat([train, pd.DataFrame({"id": ["x"], "text": ["a lone item"],
                                             "label": ["music"]})], ignore_index=True)
    with pytest.raises(InvalidInputError, match=r"1 class has a single training item: "
                                                r"\['music'\]"):
        fit(single, tiny_st_dir)
    missing = train.copy()
    missing.loc[3, "label"] = None
    with pytest.raises(InvalidInputError, match="label"):
        fit(missing, tiny_st_dir)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    model = fit(train, tiny_st_dir, epochs=1)
    with pytest.raises(InvalidParameterError, match="not a folder labelaudit wrote"):
        model.save(tmp_path / "notes")
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"
    with pytest.raises(InvalidInputError, match="not a labelaudit model folder"):
        load_model(tmp_path / "notes")


def test_incompatible_model_folder_is_refused(frames, tiny_st_dir, tmp_path):
    model = fit(frames[0], tiny_st_dir, epochs=1)
    folder = model.save(tmp_path / "m")
    meta = json.loads((folder / "labelaudit-model.json").read_text())
    meta["format_version"] = 99
    (folder / "labelaudit-model.json").write_text(json.dumps(meta))
    with pytest.raises(InvalidInputError, match="version 99.*reads 'labelaudit-model' "
                                                "version 1"):
        load_model(folder)


def test_train_bench_table(frames, tiny_st_dir):
    train, test = frames
    result = train_bench(train.drop(columns=["label"]).rename(columns={"true_label": "label"}),
                         test, noise=["uniform:0.2,0.4"], methods=["base", "mixup"], seeds=2,
                         model=str(tiny_st_dir), train_options={"epochs": 3})
    frame = result.to_frame()
    assert len(frame) == 2 * 2 and set(frame["n_seeds"]) == {2}
    assert result.runs["achieved_rate"].between(0.15, 0.45).all()
    table = result.table("top1")
    assert list(table.index) == ["base", "mixup"]
    assert list(table.columns) == ["uniform 20%", "uniform 40%"]
    assert "top-1" in result.summary()
    assert parse_noise_grid("instance-dependent:0.1,0.2") == ("instance-dependent", (0.1, 0.2))
    with pytest.raises(InvalidParameterError, match="must be in"):
        parse_noise_grid("uniform:1.5")


def test_train_bench_runs_in_worker_processes_give_the_same_table(frames, tiny_st_dir):
    train, test = frames
    clean = train.drop(columns=["label"]).rename(columns={"true_label": "label"})
    options = {"noise": ["uniform:0.3"], "methods": ["base", "mixup"], "seeds": 1,
               "model": str(tiny_st_dir), "train_options": {"epochs": 2}}
    one = train_bench(clean, test, **options).runs.drop(columns="seconds")
    two = train_bench(clean, test, workers=2, **options).runs.drop(columns="seconds")
    pd.testing.assert_frame_equal(one, two)
    with pytest.raises(InvalidParameterError, match="engine"):
        train_bench(clean, test, engine="spark", **options)


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "labelaudit", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def test_cli_train_predict(frames, tiny_st_dir, tmp_path):
    train, test = frames
    train.assign(clean_label=train["true_label"]).to_json(
        tmp_path / "train.jsonl", orient="records", lines=True)
    test.to_json(tmp_path / "test.jsonl", orient="records", lines=True)
    done = run_cli("train", "train.jsonl", "--model", str(tiny_st_dir), "--epochs", "5",
                   "--eval", "test.jsonl", "--out", "model", "--metrics-out", "m.json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["achieved_noise_rate"] == pytest.approx(9 / 90)
    assert metrics["method"] == "base" and metrics["n_eval"] == 30
    done = run_cli("predict", "model", "test.jsonl", "--top-k", "2", "--format", "csv",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[0]
    assert header == "id,label_1,prob_1,label_2,prob_2"
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("x")
    refused = run_cli("train", "train.jsonl", "--out", "other", cwd=tmp_path)
    assert refused.returncode == 1 and "not a folder labelaudit wrote" in refused.stderr
    unknown = run_cli("train", "train.jsonl", "--method", "nope", "--out", "m2", cwd=tmp_path)
    assert unknown.returncode == 2 and "invalid choice" in unknown.stderr
    rate = run_cli("train", "train.jsonl", "--noise-rate", "1.2", "--out", "m3", cwd=tmp_path)
    assert rate.returncode == 2 and "--noise-rate: must be a number in [0, 1)" in rate.stderr


def test_co_teaching_estimates_the_noise_rate_when_not_given(frames, tiny_st_dir):
    train, test = frames
    model = fit(train, tiny_st_dir, method="co-teaching", epochs=3)
    assert 0.0 <= model.log["noise_rate_estimated"] < 0.95
    assert model.log["noise_rate"] == model.log["noise_rate_estimated"]
    given = fit(train, tiny_st_dir, method="co-teaching", epochs=3, noise_rate=0.1)
    assert "noise_rate_estimated" not in given.log and given.log["noise_rate"] == 0.1


def test_finetune_backbone_round_trip(frames, tiny_bert_dir, tmp_path):
    train, test = frames
    model = labelaudit.training.train(train.head(30), text="text", backbone="finetune",
                             model=str(tiny_bert_dir), method="mixup", epochs=1,
                             batch_size=8)
    probs = model.predict_proba(test.head(7))
    assert probs.shape == (7, len(model.classes))
    folder = model.save(tmp_path / "ft")
    np.testing.assert_allclose(load_model(folder).predict_proba(test.head(7)), probs,
                               atol=1e-6)


def test_saving_over_an_existing_model_replaces_it(frames, tiny_st_dir, tmp_path):
    train, test = frames
    first = fit(train, tiny_st_dir, epochs=1)
    first.save(tmp_path / "m")
    second = fit(train, tiny_st_dir, epochs=8, random_state=3)
    second.save(tmp_path / "m")
    np.testing.assert_array_equal(load_model(tmp_path / "m").predict_proba(test),
                                  second.predict_proba(test))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no staging left behind


def test_cli_train_bench_table_json_and_plot(frames, tiny_st_dir, tmp_path):
    train, test = frames
    train.assign(label=train["true_label"]).to_json(tmp_path / "train.jsonl",
                                                    orient="records", lines=True)
    test.to_json(tmp_path / "test.jsonl", orient="records", lines=True)
    common = ("train-bench", "train.jsonl", "--eval", "test.jsonl", "--model", str(tiny_st_dir),
              "--epochs", "2", "--methods", "base,mixup", "--seeds", "1", "--noise",
              "uniform:0.2")
    table = run_cli(*common, "--format", "csv", "--quiet", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0] == "method,uniform 20%"
    done = run_cli(*common, "--out", "bench.json", "--plot-out", "bench.png", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "bench.json").read_text())
    assert {r["method"] for r in doc["runs"]} == {"base", "mixup"}
    assert (tmp_path / "bench.png").stat().st_size > 1000
    assert "wrote bench.json" in done.stderr and "top-1" in done.stderr
    bad = run_cli(*common[:-1], "uniform:1.5", cwd=tmp_path)
    assert bad.returncode == 2 and "must be in (0, 1)" in bad.stderr
    assert "of --noise 'uniform:1.5'" in bad.stderr  # the library's noise= said as the flag
