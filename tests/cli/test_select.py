"""``labelaudit select`` through the real entry point, on small files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_select_task


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("select")
    for name, n, seed in (("train", 60, 0), ("val", 30, 1), ("test", 30, 2)):
        make_select_task(n, seed).to_json(path / f"{name}.jsonl", orient="records", lines=True)
    return path


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-m", "labelaudit", "select", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


SPLITS = ("train.jsonl", "--val", "val.jsonl", "--eval", "test.jsonl")


def test_writes_the_json_document(folder):
    before = {p.name: p.read_bytes() for p in folder.glob("*.jsonl")}
    done = run_cli(*SPLITS, "--text", "text", "--label", "label", "--noise", "uniform:0.2",
                   "--sweep", "3", "--seeds", "2", "--out", "selection.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    document = json.loads((folder / "selection.json").read_text())
    assert document["noise"] == "uniform:0.2" and document["seeds"] == [0, 1]
    assert len(document["configs"]) == 3 and len(document["selection"]) == 6
    assert np.array(document["accuracy"]).shape == (2, 3, 6)
    assert "wrote selection.json" in done.stderr and "true acc" in done.stderr
    assert {p.name: p.read_bytes() for p in folder.glob("*.jsonl")} == before  # inputs intact


def test_same_seed_same_output(folder):
    runs = [run_cli(*SPLITS, "--noise", "uniform:0.2", "--sweep", "2", "--seeds", "1",
                    "--seed", "4", "--format", "csv", "--quiet", cwd=folder) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout and runs[0].stderr == ""
    assert runs[0].stdout.splitlines()[0].startswith("seed,validation,config,")


@pytest.mark.parametrize("argv, message", [
    (("--noise", "nope:0.1"), "unknown noise method 'nope'"),
    (("--noise", "uniform:2"), "must be in (0, 1)"),
    (("--sweep", "43"), "--sweep must be an integer from 1 to 42"),
    (("--sweep", "0"), "must be at least 1"),
    (("--scorers", "finetune"), "unknown 'finetune'"),
    (("--noise", "uniform:0.1", "--noisy-label", "label"), "not allowed with"),
    (("--out", "selection.txt"), "the suffix picks the format"),
])
def test_bad_options_are_usage_errors(folder, argv, message):
    done = run_cli(*SPLITS, *argv, cwd=folder)
    assert done.returncode == 2
    assert message in done.stderr


def test_bad_data_is_one_line(folder):
    done = run_cli(*SPLITS, "--text", "body", "--sweep", "2", "--seeds", "1", cwd=folder)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "labelaudit select: error: train: missing column 'body'; the table has 'text', 'label'"]
    done = run_cli("missing.jsonl", "--val", "val.jsonl", "--eval", "test.jsonl", cwd=folder)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1


def test_refuses_to_overwrite_an_input(folder):
    done = run_cli(*SPLITS, "--out", "val.jsonl", cwd=folder)
    assert done.returncode == 1 and "val.jsonl" in done.stderr
    assert len(pd.read_json(folder / "val.jsonl", lines=True)) == 30
