"""``labelaudit evaluate`` through the real entry point, on small files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from labelaudit.cli import main
from labelaudit.evaluation import aupr_score, detection_report


@pytest.fixture()
def files(tmp_path):
    """A scan-like output of 40 items, 8 of them errors, and its truth file."""
    rng = np.random.default_rng(0)
    n = 40
    ids = [f"item{i}" for i in range(n)]
    is_error = np.zeros(n, dtype=bool)
    is_error[rng.choice(n, 8, replace=False)] = True
    good = np.where(is_error, 0.0, 1.0) + rng.random(n) * 1.2  # informative, imperfect
    labels = rng.choice(["pos", "neg"], n)
    true_labels = np.where(is_error, np.where(labels == "pos", "neg", "pos"), labels)
    issues = pd.DataFrame({"id": ids, "text": "t", "label": labels, "loss": -good,
                           "rank": good.argsort().argsort() + 1,
                           "score_good": good, "score_random": rng.random(n)})
    order = rng.permutation(n)  # the truth file lists the items in another order
    truth = pd.DataFrame({"id": np.array(ids)[order], "is_error": is_error[order],
                          "true_label": true_labels[order]})
    issues.to_csv(tmp_path / "issues.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    return tmp_path, is_error, good


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "labelaudit", "evaluate", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_table_json_and_plot_through_the_entry_point(files):
    folder, is_error, good = files
    done = run_cli("issues.csv", "--eval", "truth.csv", "--id", "id", "--is-error", "is_error",
                   "--out", "metrics.json", "--plot-out", "pr.png", cwd=folder)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:4] == ["method", "n_items", "n_errors", "aupr"]
    assert [line.split()[0] for line in lines[1:]] == ["good", "random"]
    assert "evaluated 40 items: 8 known errors" in done.stderr
    document = json.loads((folder / "metrics.json").read_text())
    good_row = document["metrics"][0]
    assert good_row["method"] == "good" and document["truth_from"] == "is_error"
    expected = detection_report(is_error, good).to_dict()
    for key in ("aupr", "average_precision", "precision_at_err", "recall_at_2err", "roc_auc"):
        assert good_row[key] == pytest.approx(expected[key])
    assert (folder / "pr.png").read_bytes().startswith(b"\x89PNG")


def test_true_label_and_formats(files, capsys):
    folder, is_error, good = files
    code = main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--true-label", "true_label", "--format", "csv", "--at-k", "5,100", "--quiet"])
    assert code == 0
    out = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert out["method"].tolist() == ["good", "random"]
    assert out.loc[0, "aupr"] == pytest.approx(aupr_score(is_error, good))
    assert {"precision_at_5", "recall_at_100"} <= set(out.columns)
    assert out.loc[0, "recall_at_100"] == pytest.approx(1.0)  # k beyond n: everything found
    code = main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--format", "jsonl", "--scores", "rank,score_good", "-q"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and [r["method"] for r in rows] == ["rank", "good"]
    assert rows[0]["aupr"] == pytest.approx(rows[1]["aupr"])  # rank is the order of good


def test_out_as_a_table_file(files):
    folder, _, _ = files
    assert main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--out", str(folder / "m.parquet"), "-q"]) == 0
    assert pd.read_parquet(folder / "m.parquet")["method"].tolist() == ["good", "random"]


def test_unverified_items_need_an_explicit_choice(files, capsys):
    folder, is_error, good = files
    truth = pd.read_csv(folder / "truth.csv")
    truth["is_error"] = truth["is_error"].astype(object)
    truth.loc[truth.index[:10], "is_error"] = None
    truth.to_csv(folder / "partial.csv", index=False)
    args = [str(folder / "issues.csv"), "--eval", str(folder / "partial.csv")]
    assert main(["evaluate", *args]) == 1
    assert "--unknown exclude" in capsys.readouterr().err
    for choice, n_items in (("exclude", 30), ("clean", 40)):
        assert main(["evaluate", *args, "--unknown", choice, "--format", "json", "-q"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert rows[0]["unknown"] == choice and rows[0]["n_items"] == n_items
        assert rows[0]["n_unknown"] == 10


def test_error_rate_sets_the_estimated_error_count(files, capsys):
    folder, is_error, good = files
    assert main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--error-rate", "0.25", "--format", "json", "-q"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["k_err"] == 10
    assert row["aupr"] == pytest.approx(aupr_score(is_error, good) * 8 / 10)
    assert main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--error-rate", "0.05"]) == 2  # a bad option value: a usage error
    assert "smaller than the 8 errors" in capsys.readouterr().err


def test_partial_ranking_and_missing_ids(files, capsys):
    folder, is_error, good = files
    issues = pd.read_csv(folder / "issues.csv").sort_values("score_good").head(12)
    issues.to_csv(folder / "top.csv", index=False)
    args = [str(folder / "top.csv"), "--eval", str(folder / "truth.csv")]
    assert main(["evaluate", *args]) == 1
    assert "--partial-ranking" in capsys.readouterr().err
    assert main(["evaluate", *args, "--partial-ranking", "--format", "json", "-q"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["n_items"] == 40 and row["n_errors"] == 8
    # scan ids missing from the truth: unverified, so --unknown is required
    truth = pd.read_csv(folder / "truth.csv")
    truth[truth["id"] != "item3"].to_csv(folder / "short.csv", index=False)
    short = [str(folder / "issues.csv"), "--eval", str(folder / "short.csv")]
    assert main(["evaluate", *short]) == 1
    assert "'item3'" in capsys.readouterr().err
    assert main(["evaluate", *short, "--unknown", "exclude", "-q"]) == 0


@pytest.mark.parametrize(("change", "message"), [
    ("duplicate", "duplicate ids"),
    ("no_errors", "no errors"),
    ("no_clean", "no clean items"),
    ("bad_value", "must be true/false"),
    ("other_ids", "no id of"),
    ("no_column", "no is_error or true_label column"),
])
def test_clear_errors(files, capsys, change, message):
    folder, _, _ = files
    truth = pd.read_csv(folder / "truth.csv")
    if change == "duplicate":
        truth = pd.concat([truth, truth.head(1)])
    elif change == "no_errors":
        truth["is_error"] = False
    elif change == "no_clean":
        truth["is_error"] = True
    elif change == "bad_value":
        truth["is_error"] = truth["is_error"].astype(object)
        truth.loc[3, "is_error"] = "maybe"
    elif change == "other_ids":
        truth["id"] = "other" + truth["id"]
    else:
        truth = truth.drop(columns=["is_error", "true_label"])
    truth.to_csv(folder / "bad.csv", index=False)
    code = main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "bad.csv")])
    err = capsys.readouterr().err
    assert code == 1
    assert message in err
    assert err.startswith("labelaudit evaluate: error:") and len(err.strip().splitlines()) == 1


def test_errors_through_the_entry_point(files):
    folder, _, _ = files
    done = run_cli("issues.csv", "--eval", "truth.csv", "--is-error", "is_error",
                   "--true-label", "true_label", cwd=folder)
    assert done.returncode == 2  # usage error
    done = run_cli("issues.csv", "--eval", "missing.csv", cwd=folder)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "missing.csv" in done.stderr


def test_inputs_are_not_modified(files):
    folder, _, _ = files
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "-q"]) == 0
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


# --- field-test findings of issue #11 -----------------------------------------------------------


def test_n_errors_larger_than_the_data_is_refused(files, capsys):
    folder, _, _ = files
    code = main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--n-errors", "500"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--n-errors 500" in err and "40 items" in err and "at most 40" in err
    assert main(["evaluate", str(folder / "issues.csv"), "--eval", str(folder / "truth.csv"),
                 "--n-errors", "40", "-q"]) == 0  # every item an error: allowed


def test_at_k_larger_than_the_data_is_clipped_and_said(files):
    folder, is_error, _ = files
    done = run_cli("issues.csv", "--eval", "truth.csv", "--at-k", "5,100", "--format", "json",
                   cwd=folder)
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)[0]
    assert row["precision_at_100"] == pytest.approx(is_error.mean())  # clipped to all 40
    assert row["recall_at_100"] == pytest.approx(1.0)
    warning = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warning == ["labelaudit: warning: --at-k 100: more than the 40 items evaluated, so "
                       "p@k and r@k there are those of all 40 items (the cut-off is clipped)"]
    # with unverified items excluded, the cut-off is compared with the items evaluated
    truth = pd.read_csv(folder / "truth.csv")
    truth["is_error"] = truth["is_error"].astype(object)
    truth.loc[truth.index[:10], "is_error"] = None
    truth.to_csv(folder / "partial.csv", index=False)
    done = run_cli("issues.csv", "--eval", "partial.csv", "--unknown", "exclude", "--at-k",
                   "30,35", cwd=folder)
    assert done.returncode == 0 and "--at-k 35: more than the 30 items evaluated" in done.stderr


@pytest.mark.parametrize("argv", [
    ["--n-errors", "0"], ["--n-errors", "x"], ["--error-rate", "0"], ["--error-rate", "1.5"],
    ["--error-rate", "nan"], ["--at-k", "0"], ["--at-k", "5,-1"], ["--at-k", "ten"],
])
def test_numeric_options_are_usage_errors_before_reading_data(tmp_path, capsys, argv):
    # the files do not exist: a usage error (2) proves the option was checked before reading
    with pytest.raises(SystemExit) as exc:
        main(["evaluate", str(tmp_path / "missing.csv"), "--eval", str(tmp_path / "t.csv"),
              *argv])
    assert exc.value.code == 2
    assert argv[0] in capsys.readouterr().err


def _typed_files(tmp_path, true_labels, given=None, ids=None):
    rng = np.random.default_rng(0)
    n = len(true_labels)
    ids = list(range(60, 60 + n)) if ids is None else ids
    given = [0, 1] * (n // 2) if given is None else given
    pd.DataFrame({"id": ids, "label": given, "score_loss": rng.random(n)}).to_csv(
        tmp_path / "issues.csv", index=False)
    with open(tmp_path / "truth.jsonl", "w") as fh:
        for i, t in zip(ids, true_labels, strict=True):
            fh.write(json.dumps({"id": i, "gold": t}) + "\n")
    return [str(tmp_path / "issues.csv"), "--eval", str(tmp_path / "truth.jsonl"),
            "--true-label", "gold"]


@pytest.mark.parametrize(("true_labels", "shown"), [
    (["neg", "pos"] * 10, "'neg', 'pos'; str"),
    (["0.0", "1.0"] * 10, "'0.0', '1.0'; str"),
])
def test_true_label_type_mismatch_is_named(tmp_path, capsys, true_labels, shown):
    args = _typed_files(tmp_path, true_labels)
    assert main(["evaluate", *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("labelaudit evaluate: error:") and len(err.strip().splitlines()) == 1
    assert "share no value" in err and "no clean items" not in err
    assert "(--label 'label' of" in err and ": 0, 1; int)" in err and shown in err
    assert "same label values" in err


def test_true_label_numbers_as_strings_still_match(tmp_path, capsys):
    true_labels = ["0", "1"] * 10
    true_labels[3] = "0"  # one error: item 63 was given 1
    args = _typed_files(tmp_path, true_labels)
    assert main(["evaluate", *args, "--format", "json", "-q"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["n_items"] == 20 and row["n_errors"] == 1


def test_ids_print_plainly_not_as_numpy_reprs(tmp_path, capsys):
    args = _typed_files(tmp_path, [0, 1] * 10)
    pd.read_json(tmp_path / "truth.jsonl", lines=True).head(5).to_json(
        tmp_path / "short.jsonl", orient="records", lines=True)
    args[2] = str(tmp_path / "short.jsonl")
    assert main(["evaluate", *args]) == 1
    err = capsys.readouterr().err
    assert "ids 65, 66, 67, 68, 69 and 10 more" in err
    assert "np.int64" not in err and "'65'" not in err
    issues = pd.read_csv(tmp_path / "issues.csv")
    issues.loc[8, "score_loss"] = None
    issues.to_csv(tmp_path / "issues.csv", index=False)
    assert main(["evaluate", str(tmp_path / "issues.csv"), "--eval",
                 str(tmp_path / "truth.jsonl"), "--true-label", "gold"]) == 1
    assert "not finite at id 68" in capsys.readouterr().err
