"""`labelaudit agreement` through the real entry point."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from labelaudit.cli import main


def _crowd(n_items: int = 40, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    acc = {"w1": 0.95, "w2": 0.9, "w3": 0.8, "w4": 0.6, "w5": 0.5}
    rows, gold = [], {}
    for i in range(n_items):
        truth = int(rng.integers(0, 2))
        gold[f"it{i}"] = ["no", "yes"][truth]
        for w, p in acc.items():
            lab = truth if rng.random() < p else 1 - truth
            rows.append((f"it{i}", w, ["no", "yes"][lab]))
    return pd.DataFrame(rows, columns=["item_id", "worker_id", "label"]), gold


@pytest.fixture
def votes_csv(tmp_path):
    df, gold = _crowd()
    df["expert"] = df["item_id"].map(gold)
    path = tmp_path / "votes.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def crowd_jsonl(tmp_path):
    df, gold = _crowd()
    path = tmp_path / "crowd.jsonl"
    with open(path, "w") as fh:
        for item, group in df.groupby("item_id", sort=False):
            record = {
                "id": item,
                "text": f"text of {item}",
                "annotator_labels": [
                    {"worker": w, "label": lab}
                    for w, lab in zip(group["worker_id"], group["label"], strict=True)
                ],
                "true_label": gold[item],
            }
            fh.write(json.dumps(record) + "\n")
    return path


def test_long_csv_table(votes_csv, capsys):
    code = main(["agreement", str(votes_csv), "--item", "item_id", "--annotator", "worker_id",
                 "--label", "label", "--format", "table", "--bootstrap", "50", "--gold", "expert"])
    out = capsys.readouterr().out
    assert code == 0
    assert "votes.csv: 40 items, 200 annotations" in out
    assert "fleiss_kappa" in out and "krippendorff_alpha" in out
    assert "noise bound gamma" in out
    assert "gold_accuracy" in out


def test_nested_jsonl_json_and_gold_out(crowd_jsonl, tmp_path, capsys):
    gold_out = tmp_path / "gold.jsonl"
    report = tmp_path / "report.json"
    code = main(["agreement", str(crowd_jsonl), "--item", "id", "--annotations",
                 "annotator_labels", "--gold", "true_label", "--format", "json", "--out",
                 str(report), "--gold-out", str(gold_out), "--confidence", "0.9",
                 "--bootstrap", "20", "--quiet"])
    assert code == 0
    assert capsys.readouterr().out == ""
    data = json.loads(report.read_text())
    assert data["n_items"] == 40 and data["n_annotators"] == 5
    stats = data["statistics"]
    assert stats["fleiss_kappa"]["ci_low"] <= stats["fleiss_kappa"]["value"]
    sidecar = json.loads((tmp_path / "gold.noise.json").read_text())
    assert sidecar["confidence"] == 0.9
    assert sidecar == {**data["gold_standard"], "source": str(crowd_jsonl),
                       "gold_file": "gold.jsonl"}
    rows = [json.loads(line) for line in gold_out.read_text().splitlines()]
    assert len(rows) == sidecar["n_agreed"] > 0
    assert {"id", "gold_label", "support", "text", "true_label"} <= set(rows[0])
    assert "annotator_labels" not in rows[0]
    assert all(r["support"] == 1.0 for r in rows)


def test_nested_column_is_found_and_items_out(crowd_jsonl, tmp_path, capsys):
    items_out = tmp_path / "items.csv"
    annot_out = tmp_path / "annotators.csv"
    code = main(["agreement", str(crowd_jsonl), "--format", "csv", "--bootstrap", "0",
                 "--method", "dawid-skene", "--items-out", str(items_out),
                 "--annotators-out", str(annot_out), "--min-share", "0.8"])
    assert code == 0
    stats = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    assert list(stats.columns) == ["statistic", "value", "ci_low", "ci_high"]
    items = pd.read_csv(items_out)
    assert len(items) == 40 and {"id", "label", "agreement", "agreed"} <= set(items.columns)
    assert len(pd.read_csv(annot_out)) == 5


def test_plain_label_lists_without_annotators(tmp_path, capsys):
    path = tmp_path / "plain.jsonl"
    lines = [{"id": i, "votes": v} for i, v in enumerate(
        [["a", "a", "b"], ["b", "b", "b"], ["a", "a", "a"], ["a", "b", "b"]])]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code = main(["agreement", str(path), "--annotations", "votes", "--format", "jsonl",
                 "--bootstrap", "0", "--ties", "error"])
    assert code == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_name = {r["statistic"]: r for r in rows}
    assert by_name["unanimous_share"]["value"] == 0.5
    assert by_name["observed_agreement"]["value"] == pytest.approx((1 / 3 + 1 + 1 + 1 / 3) / 4)


def test_compare_paper_example(capsys):
    code = main(["agreement", "compare", "--n", "900", "--noise-rate", "0.139", "--delta", "35",
                 "--format", "table"])
    out = capsys.readouterr().out
    assert code == 0
    assert "125" in out and "35.4" in out
    assert re.search(r"verdict, Chebyshev \(the paper\)\s+can be chance", out)
    assert re.search(r"verdict, exact tail at 95%\s+larger than chance", out)
    code = main(["agreement", "compare", "--n", "900", "--noise-items", "125", "--delta", "40",
                 "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["can_be_chance"] is False and data["n_noise"] == 125


def test_noise_and_tolerate_paper_examples(capsys):
    assert main(["agreement", "noise", "--n", "1000", "-d", "100", "--p-chance", "0.5",
                 "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hidden_hard"] == 125 and round(data["gamma"], 3) == 0.139
    assert main(["agreement", "tolerate", "--n", "1000", "--p-chance", "0.5", "--gamma", "0.05",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["max_disagreements"] == 33


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty"),
        ("item,worker,label\n1,a,x\n1,b,x\n2,a,y\n", "fewer in item 2"),
        ("item,worker,label\n1,a,x\n1,b,1\n2,a,y\n2,b,y\n", None),  # CSV reads all as strings
    ],
)
def test_bad_input_exits_1_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    code = main(["agreement", str(path), "--format", "json", "--bootstrap", "0"])
    err = capsys.readouterr().err
    if message is None:
        assert code == 0
        return
    assert code == 1
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_mixed_label_types_in_jsonl(tmp_path, capsys):
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"item": 1, "worker": "a", "label": "yes"}\n'
                    '{"item": 1, "worker": "b", "label": 1}\n')
    assert main(["agreement", str(path), "--format", "json"]) == 1
    assert "mixed" in capsys.readouterr().err


def test_usage_errors_exit_2(votes_csv):
    with pytest.raises(SystemExit) as exc:
        main(["agreement", "compare", "--n", "900"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["agreement", str(votes_csv), "--confidence", "1.5"])
    assert exc.value.code == 2


def test_subprocess_entry_point_and_help(votes_csv, tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "labelaudit", "agreement", str(votes_csv), "--bootstrap", "0",
         "--out", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["n_annotations"] == 200  # not a terminal: json
    help_text = subprocess.run(
        [sys.executable, "-m", "labelaudit", "agreement", "--help"],
        capture_output=True, text=True, timeout=60,
    ).stdout
    assert "compare" in help_text and "measure" in help_text


# --- field-test findings of issue #11 -----------------------------------------------------------


def test_delta_larger_than_n_is_refused(capsys):
    for delta in ("950", "-950"):
        with pytest.raises(SystemExit) as exc:
            main(["agreement", "compare", "--n", "900", "--noise-rate", "0.139", "--delta", delta])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert f"--delta {delta} is larger in size than --n 900" in err
    assert main(["agreement", "compare", "--n", "900", "--noise-rate", "0.139", "--delta", "900",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["delta"] == 900


@pytest.mark.parametrize("argv", [
    ["compare", "--n", "0", "--noise-rate", "0.1"],
    ["compare", "--n", "900", "--noise-items", "-1"],
    ["compare", "--n", "900", "--noise-items", "901"],
    ["compare", "--n", "900", "--noise-rate", "1.5"],
    ["compare", "--n", "900", "--noise-rate", "0.1", "--confidence", "1"],
    ["noise", "--n", "10", "-d", "11", "--p-chance", "0.5"],
    ["noise", "--n", "10", "-d", "-1", "--p-chance", "0.5"],
    ["noise", "--n", "10", "-d", "1", "--p-chance", "0.5", "--confidence", "0"],
    ["tolerate", "--n", "-5", "--p-chance", "0.5"],
    ["tolerate", "--n", "5", "--p-chance", "0.5", "--gamma", "2"],
    ["measure", "MISSING", "--bootstrap", "-1"],
    ["measure", "MISSING", "--seed", "-3"],
    ["measure", "MISSING", "--min-share", "0.5"],
    ["measure", "MISSING", "--confidence", "1"],
    ["measure", "MISSING", "--p-chance", "1.2"],
])
def test_numeric_options_are_usage_errors_up_front(tmp_path, capsys, argv):
    argv = [str(tmp_path / "missing.csv") if a == "MISSING" else a for a in argv]
    with pytest.raises(SystemExit) as exc:
        main(["agreement", *argv])
    assert exc.value.code == 2  # a missing input file would be exit 1: checked before reading
    assert "error:" in capsys.readouterr().err


def test_a_range_is_said_in_the_library_s_words_with_the_option_s_note(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["agreement", str(tmp_path / "missing.csv"), "--min-share", "0.3"])
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "argument --min-share: must be a number in (0.5, 1] (a strict majority); got 0.3")


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("labelaudit: warning:")]


def test_dropped_empty_labels_are_counted_on_stderr(tmp_path):
    rows = ["item,annotator,label"] + [
        f"{i},w{a},{'pos' if i == 0 and a < 2 else ''}" for i in range(100) for a in range(3)]
    (tmp_path / "votes.csv").write_text("\n".join(rows) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "labelaudit", "agreement", "votes.csv", "--bootstrap", "0",
         "--format", "json"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert _warnings(proc.stderr) == [
        "labelaudit: warning: dropped 298 of 300 annotations with an empty label in column "
        "'label' (rows 2, 3, 4, 5, 6 and 293 more); 99 of 100 items have no label left "
        "(items 1, 2, 3, 4, 5 and 94 more)"]
    report = json.loads(proc.stdout)
    assert report["n_items"] == 1 and report["n_annotations"] == 2
    quiet = subprocess.run(
        [sys.executable, "-m", "labelaudit", "agreement", "votes.csv", "--bootstrap", "0", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_dropped_empty_annotation_lists_are_counted(tmp_path, capsys):
    path = tmp_path / "crowd.jsonl"
    with open(path, "w") as fh:
        for i in range(30):
            labels = ["a", "a", "b"] if i == 0 else []
            fh.write(json.dumps({"id": i, "annotator_labels": labels}) + "\n")
    assert main(["agreement", str(path), "--bootstrap", "0", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert _warnings(captured.err) == [
        "labelaudit: warning: dropped 29 of 30 items with no annotation (an empty "
        "'annotator_labels' list, or only empty labels): items 1, 2, 3, 4, 5 and 24 more"]
    assert json.loads(captured.out)["n_items"] == 1


def test_dropped_blank_labels_inside_lists_and_by_drop_single(tmp_path, capsys):
    path = tmp_path / "crowd.jsonl"
    path.write_text('{"id": 1, "annotator_labels": ["a", ""]}\n'
                    '{"id": 2, "annotator_labels": ["a", "b", null]}\n'
                    '{"id": 3, "annotator_labels": ["", null]}\n'
                    '{"id": 4, "annotator_labels": ["b", "b"]}\n')
    assert main(["agreement", str(path), "--bootstrap", "0", "--format", "json",
                 "--drop-single"]) == 0
    captured = capsys.readouterr()
    assert _warnings(captured.err) == [
        "labelaudit: warning: dropped 4 of 9 annotations with an empty label in the "
        "'annotator_labels' lists (items 1, 2, 3)",
        "labelaudit: warning: dropped 1 of 4 items with no annotation (an empty "
        "'annotator_labels' list, or only empty labels): item 3",
        "labelaudit: warning: dropped 1 of 3 items with fewer than 2 annotations (item 1)"]
    assert json.loads(captured.out)["n_items"] == 2


@pytest.mark.parametrize(("name", "content", "message"), [
    ("votes.csv", "item,annotator,label\n1,a,\n1,b,\n2,a,\n",
     "all 3 annotations have an empty or missing label"),
    ("crowd.jsonl", '{"id": 1, "annotator_labels": []}\n{"id": 2, "annotator_labels": [""]}\n',
     "all 2 items have an empty 'annotator_labels' list"),
])
def test_nothing_left_after_dropping_is_one_clear_error(tmp_path, capsys, name,
                                                                 content, message):
    (tmp_path / name).write_text(content)
    assert main(["agreement", str(tmp_path / name), "--format", "json"]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if not line.startswith("labelaudit: warning:")]
    assert len(errors) == 1 and message in errors[0] and "nothing to measure" in errors[0]
