"""`labelaudit noise` and `labelaudit noise realism` through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from labelaudit.cli import main


def crowd_frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gold = rng.choice(["yes", "no"], size=n)
    notes = []
    for g in gold:
        workers = rng.choice(6, size=4, replace=False)
        notes.append([{"worker": f"w{w}", "label": g if rng.random() < 0.7 else
                       ("no" if g == "yes" else "yes")} for w in workers])
    return pd.DataFrame({"id": [f"q{i}" for i in range(n)], "text": [f"item {i}" for i in range(n)],
                         "gold": gold, "annotator_labels": notes})


def write_jsonl(frame: pd.DataFrame, path) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))


def read_jsonl(path) -> pd.DataFrame:
    return pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])


def test_uniform_noise_writes_the_noisy_file(tmp_path, capsys):
    source = tmp_path / "clean.jsonl"
    write_jsonl(crowd_frame(), source)
    before = source.read_bytes()
    code = main(["noise", str(source), "--label", "gold", "--method", "uniform", "--rate", "0.1",
                 "--seed", "3", "--out", str(tmp_path / "noisy.jsonl")])
    assert code == 0
    assert source.read_bytes() == before
    noisy = read_jsonl(tmp_path / "noisy.jsonl")
    assert list(noisy.columns)[-3:] == ["clean_label", "is_noisy", "noise_method"]
    assert noisy["is_noisy"].sum() == 4
    assert ((noisy["gold"] != noisy["clean_label"]) == noisy["is_noisy"]).all()
    assert set(noisy.loc[noisy["is_noisy"], "noise_method"]) == {"uniform"}
    assert noisy.loc[~noisy["is_noisy"], "noise_method"].isna().all()
    err = capsys.readouterr().err
    assert "noised 4 of 40 items" in err and "achieved noise matrix" in err


def test_same_seed_same_file(tmp_path):
    source = tmp_path / "clean.jsonl"
    write_jsonl(crowd_frame(), source)
    outputs = []
    for name in ("a.jsonl", "b.jsonl"):
        assert main(["noise", str(source), "--label", "gold", "--method", "dissenting-worker",
                     "--annotations", "annotator_labels", "--rate", "0.2", "-q",
                     "--out", str(tmp_path / name)]) == 0
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]


def test_recipe_with_summary_json(tmp_path):
    source = tmp_path / "crowd.jsonl"
    write_jsonl(crowd_frame(60), source)
    summary = tmp_path / "summary.json"
    code = main(["noise", str(source), "--label", "gold", "--annotations", "annotator_labels",
                 "--recipe", "dissenting-worker:0.8,dissenting-label:0.2", "--rate", "0.1",
                 "--out", str(tmp_path / "noisy.jsonl"), "--summary-out", str(summary), "-q"])
    assert code == 0
    record = json.loads(summary.read_text())
    assert record["n_noisy"] == 6 and record["recipe"][0] == {"method": "dissenting-worker",
                                                              "share": 0.8}
    by_method = {r["value"]: r["n_noisy"] for r in record["rates"] if r["by"] == "method"}
    assert by_method == {"dissenting-worker": 5, "dissenting-label": 1}
    assert np.allclose(np.sum(record["noise_matrix"], axis=1), 1)
    noisy = read_jsonl(tmp_path / "noisy.jsonl")
    for _, row in noisy[noisy["is_noisy"]].iterrows():
        assert row["gold"] in {a["label"] for a in row["annotator_labels"]}


def test_csv_round_trip_keeps_annotations_readable(tmp_path):
    source = tmp_path / "crowd.jsonl"
    write_jsonl(crowd_frame(), source)
    out = tmp_path / "noisy.csv"
    assert main(["noise", str(source), "--label", "gold", "--annotations", "annotator_labels",
                 "--method", "crowd-majority", "--out", str(out), "-q"]) == 0
    frame = pd.read_csv(out)
    notes = [json.loads(cell) for cell in frame["annotator_labels"]]
    assert notes[0][0].keys() == {"worker", "label"}
    # the noisy CSV can be noised again from its annotation column once the columns are renamed
    frame = frame.drop(columns=["clean_label", "is_noisy", "noise_method"])
    frame.to_csv(tmp_path / "again.csv", index=False)
    assert main(["noise", str(tmp_path / "again.csv"), "--label", "gold", "--annotations",
                 "annotator_labels", "--method", "dissenting-label", "--rate", "0.05", "-q",
                 "--out", str(tmp_path / "again_noisy.csv")]) == 0


def test_long_annotation_file_and_stdout_csv(tmp_path, capsys):
    frame = crowd_frame()
    long = pd.DataFrame([{"item_id": frame["id"][i], "annotator_id": a["worker"],
                          "label": a["label"]}
                         for i, notes in enumerate(frame["annotator_labels"]) for a in notes])
    long.to_csv(tmp_path / "long.csv", index=False)
    frame.drop(columns=["annotator_labels"]).to_csv(tmp_path / "clean.csv", index=False)
    code = main(["noise", str(tmp_path / "clean.csv"), "--label", "gold", "--id", "id",
                 "--annotations-file", str(tmp_path / "long.csv"), "--method",
                 "dissenting-worker", "--rate", "0.1", "--format", "csv", "-q"])
    assert code == 0
    out = capsys.readouterr().out
    noisy = pd.read_csv(pd.io.common.StringIO(out))
    assert noisy["is_noisy"].sum() == 4 and len(noisy) == 40


def test_class_dependent_matrix_file(tmp_path, capsys):
    source = tmp_path / "clean.jsonl"
    write_jsonl(crowd_frame(), source)
    (tmp_path / "matrix.json").write_text(json.dumps({"yes": {"yes": 0.5, "no": 0.5},
                                                       "no": {"no": 1.0}}))
    code = main(["noise", str(source), "--label", "gold", "--method", "class-dependent",
                 "--noise-matrix", str(tmp_path / "matrix.json"), "--rate", "0.1",
                 "--out", str(tmp_path / "noisy.jsonl")])
    assert code == 0
    noisy = read_jsonl(tmp_path / "noisy.jsonl")
    assert set(noisy.loc[noisy["is_noisy"], "clean_label"]) == {"yes"}
    assert "achieved noise matrix" in capsys.readouterr().err


def test_instance_dependent_with_swap_input(tmp_path, tiny_st_dir):
    frame = pd.DataFrame({
        "text": ["match goal team", "goal cup league", "coach player score", "pasta sauce cook",
                 "bake soup chef", "recipe spicy soup", "team score goal", "cook bake sauce"],
        "label": ["sport", "sport", "sport", "food", "food", "food", "sport", "food"],
    })
    frame.to_csv(tmp_path / "clean.csv", index=False)
    out = tmp_path / "noisy.csv"
    code = main(["noise", str(tmp_path / "clean.csv"), "--text", "text", "--label", "label",
                 "--method", "instance-dependent", "--rate", "0.25", "--swap-input",
                 "--model", str(tiny_st_dir), "--cache-dir", str(tmp_path / "cache"), "-q",
                 "--out", str(out)])
    assert code == 0
    noisy = pd.read_csv(out)
    swapped = noisy[noisy["is_noisy"]]
    assert len(swapped) == 2
    assert (swapped["label"] == swapped["clean_label"]).all()
    assert (swapped["text"] != swapped["clean_text"]).all()
    assert set(swapped["text"]) <= set(frame["text"])


@pytest.mark.parametrize("argv, message", [
    (["--method", "dissenting-label", "--rate", "0.1"], "needs per-item crowd annotations"),
    (["--method", "dissenting-label", "--rate", "0.9", "--annotations", "annotator_labels"],
     "can noise at most"),
    (["--method", "uniform", "--rate", "0.1", "--label", "nope"], "missing column 'nope'"),
])
def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys, argv, message):
    source = tmp_path / "clean.jsonl"
    write_jsonl(crowd_frame(), source)
    args = ["noise", str(source), "--label", "gold", *argv]
    assert main(args) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and err.startswith("labelaudit noise:")


def test_labels_outside_the_set_in_annotations(tmp_path, capsys):
    frame = crowd_frame()
    frame.at[3, "annotator_labels"] = frame["annotator_labels"][3] + [{"worker": "w9",
                                                                        "label": "maybe"}]
    write_jsonl(frame, tmp_path / "crowd.jsonl")
    assert main(["noise", str(tmp_path / "crowd.jsonl"), "--label", "gold", "--annotations",
                 "annotator_labels", "--method", "dissenting-label", "--rate", "0.1"]) == 1
    assert "outside the label set" in capsys.readouterr().err


def test_usage_errors_exit_2(tmp_path):
    source = tmp_path / "clean.jsonl"
    write_jsonl(crowd_frame(), source)
    for argv in (["--rate", "0.1"], ["--method", "uniform"], ["--method", "gaussian",
                                                              "--rate", "0.1"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["noise", str(source), "--label", "gold", *argv])
        assert exit_info.value.code == 2


def test_realism_table_and_plot(tmp_path, capsys):
    rng = np.random.default_rng(0)
    words = {"sport": ["goal", "team", "match", "coach"], "food": ["pasta", "soup", "bake", "chef"]}
    rows = [{"text": " ".join(rng.choice(words[c], size=3)) + f" {i}", "label": c}
            for i, c in enumerate(["sport", "food"] * 30)]
    write_jsonl(pd.DataFrame(rows), tmp_path / "clean.jsonl")
    assert main(["noise", str(tmp_path / "clean.jsonl"), "--method", "uniform", "--rate", "0.1",
                 "-q", "--out", str(tmp_path / "noisy.jsonl")]) == 0
    code = main(["noise", "realism", str(tmp_path / "noisy.jsonl"), "--text", "text",
                 "--label", "label", "--scorers", "tfidf", "--plot-out", str(tmp_path / "h.png"),
                 "--out", str(tmp_path / "realism.csv"), "-q"])
    assert code == 0
    table = pd.read_csv(tmp_path / "realism.csv")
    assert table["method"].tolist() == ["uniform"] and table["n_noisy"].tolist() == [6]
    assert table["wasserstein_distance"].iloc[0] > 0
    assert (tmp_path / "h.png").stat().st_size > 1000
    # a boolean column names the noise; table to stdout
    capsys.readouterr()
    assert main(["noise", "realism", str(tmp_path / "noisy.jsonl"), "--noise-column", "is_noisy",
                 "--scorers", "tfidf", "-q"]) == 0
    assert "is_noisy" in capsys.readouterr().out


def test_realism_rejects_injection_flags_and_missing_columns(tmp_path, capsys):
    write_jsonl(pd.DataFrame({"text": ["a b", "c d"] * 5, "label": [0, 1] * 5}),
                tmp_path / "x.jsonl")
    with pytest.raises(SystemExit) as exit_info:
        main(["noise", "realism", str(tmp_path / "x.jsonl"), "--rate", "0.1"])
    assert exit_info.value.code == 2
    assert main(["noise", "realism", str(tmp_path / "x.jsonl")]) == 1
    assert "--noise-column" in capsys.readouterr().err


def test_entry_point_subprocess(tmp_path):
    source = tmp_path / "clean.csv"
    crowd_frame().drop(columns=["annotator_labels"]).to_csv(source, index=False)
    done = subprocess.run(
        [sys.executable, "-m", "labelaudit", "noise", str(source), "--label", "gold",
         "--method", "uniform", "--rate", "0.05", "--out", str(tmp_path / "noisy.parquet")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert pd.read_parquet(tmp_path / "noisy.parquet")["is_noisy"].sum() == 2
    help_text = subprocess.run([sys.executable, "-m", "labelaudit", "noise", "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    assert "dissenting-worker" in help_text and "realism" in help_text


def test_split_and_sources(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"text": [f"t{i}" for i in range(50)],
                          "label": rng.choice(["a", "b", "c"], 50),
                          "split": np.where(np.arange(50) < 30, "train", "test")})
    frame.to_csv(tmp_path / "clean.csv", index=False)
    (tmp_path / "sources.json").write_text(json.dumps({"a": "S1", "b": "S1", "c": "S2"}))
    assert main(["noise", str(tmp_path / "clean.csv"), "--method", "uniform", "--rate", "0.1",
                 "--split", "split", "--sources", str(tmp_path / "sources.json"), "-q",
                 "--out", str(tmp_path / "noisy.csv")]) == 0
    noisy = pd.read_csv(tmp_path / "noisy.csv")
    assert noisy.groupby("split")["is_noisy"].sum().to_dict() == {"test": 2, "train": 3}
    assert set(noisy["noise_source"]) == {"S1", "S2"}
    assert (noisy["noise_source"] == noisy["clean_label"].map({"a": "S1", "b": "S1",
                                                              "c": "S2"})).all()
    assert main(["noise", str(tmp_path / "clean.csv"), "--method", "uniform", "--rate", "0.1",
                 "--sources", "a=S1,b", "-q"]) == 2  # a bad option value: a usage error


# --- field-test findings of issue #11 -----------------------------------------------------------


@pytest.mark.parametrize(("rate", "claimed", "warned"), [
    ("0.1", "noised 4 of 40 items with uniform (requested rate 0.1 -> 4 items; achieved rate "
     "0.1000)", None),
    ("0.999", "noised 40 of 40 items with uniform (requested rate 0.999 -> 40 items; achieved "
     "rate 1.0000)", "asks for 39.96 items, which rounds to all 40: every item is noised"),
    ("0.01", "noised 0 of 40 items with uniform (requested rate 0.01 -> 0 items; achieved rate "
     "0.0000)", "asks for 0.4 items, which rounds to 0: no item is noised"),
    ("0.0125", "noised 1 of 40 items with uniform (requested rate 0.0125 -> 1 item; achieved "
     "rate 0.0250)", None),  # 0.5 items: halves round up
])
def test_noise_rate_rounding_message_is_true(tmp_path, rate, claimed, warned):
    source = tmp_path / "clean.csv"
    crowd_frame().drop(columns=["annotator_labels"]).to_csv(source, index=False)
    done = subprocess.run(
        [sys.executable, "-m", "labelaudit", "noise", str(source), "--label", "gold",
         "--method", "uniform", "--rate", rate, "--out", str(tmp_path / "noisy.csv")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    # the rounding warnings (0.999 over 2 classes also warns that a wrong label is the more
    # likely one: tests/noise/test_noise_wrong_majority.py)
    warnings = [line for line in lines if line.startswith("labelaudit: warning:")
                and "a wrong label is at least as likely" not in line]
    assert claimed in lines
    assert (warnings == []) if warned is None else (len(warnings) == 1 and warned in warnings[0])
    # the count claimed is the number of rows marked noisy, and of rows whose label changed
    n_claimed = int(claimed.split()[1])
    noisy = pd.read_csv(tmp_path / "noisy.csv")
    assert noisy["is_noisy"].sum() == n_claimed
    assert (noisy["gold"] != noisy["clean_label"]).sum() == n_claimed


def test_noise_summary_json_has_the_requested_count(tmp_path):
    source = tmp_path / "clean.jsonl"
    write_jsonl(crowd_frame(), source)
    assert main(["noise", str(source), "--label", "gold", "--method", "uniform", "--rate",
                 "0.999", "-q", "--out", str(tmp_path / "noisy.jsonl"),
                 "--summary-out", str(tmp_path / "summary.json")]) == 0
    record = json.loads((tmp_path / "summary.json").read_text())
    assert (record["requested_rate"], record["n_requested"], record["n_noisy"],
            record["achieved_rate"]) == (0.999, 40, 40, 1.0)


@pytest.mark.parametrize("argv", [["--seed", "-1"], ["--seed", "x"], ["--rate", "abc"]])
def test_numeric_options_are_usage_errors_before_reading_data(tmp_path, argv):
    with pytest.raises(SystemExit) as exit_info:
        main(["noise", str(tmp_path / "missing.csv"), "--method", "uniform", "--rate", "0.1",
              *argv])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        main(["noise", "realism", str(tmp_path / "missing.csv"), "--folds", "1"])
    assert exit_info.value.code == 2


def test_noise_rate_out_of_range_is_checked_before_reading_data(tmp_path, capsys):
    # a usage error (exit 2) with the rate message, not the missing file: the rate is
    # checked first
    with pytest.raises(SystemExit) as exit_info:
        main(["noise", str(tmp_path / "missing.csv"), "--method", "uniform", "--rate", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("error: argument --rate: must be a number in [0, 1); got 1.0")
