"""One run of benchmarks/train_noise.py on a fake data root (never ../shared) with a tiny
random encoder: the ablation rows, the verdicts against SEAL and auto's picks come out of
the runs themselves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import make_topic_frame

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_produces_its_tables_from_runs(tiny_st_dir, tmp_path):
    data = tmp_path / "data"
    (data / "noisywikihow").mkdir(parents=True)
    (data / "labelerrors_20news").mkdir()
    make_topic_frame(20, seed=0).drop(columns=["true_label", "is_error"]).to_json(
        data / "noisywikihow" / "train.jsonl", orient="records", lines=True)
    make_topic_frame(8, seed=1).drop(columns=["true_label", "is_error"]).to_json(
        data / "noisywikihow" / "test.jsonl", orient="records", lines=True)
    make_topic_frame(16, seed=2, n_errors=5).to_json(
        data / "labelerrors_20news" / "test.jsonl", orient="records", lines=True)
    out = tmp_path / "results" / "noise"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.train_noise", "--data-dir", str(data),
         "--seeds", "2", "--noise", "uniform:0.3", "--model", str(tiny_st_dir),
         "--methods", "base,seal,filter,filter+seal,filter-relabel,filter-relabel+seal",
         "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.with_suffix(".json").read_text())
    cells = {(c["data"], c["method"]): c for c in doc["cells"]}
    for method in ("base", "filter [seal detector]", "filter-relabel-iterate+seal"):
        assert ("noisywikihow", method) in cells
    assert cells[("noisywikihow", "seal")]["n"] == 2
    assert cells[("noisywikihow", "filter [seal detector]")]["n"] == 1
    assert {v["data"] for v in doc["verdicts"]} == {"noisywikihow", "20news"}
    verdict = doc["verdicts"][0]
    best = max(c["mean"] for (d, m), c in cells.items()
               if d == "noisywikihow" and m.startswith("filter") and c["n"] == 2)
    assert abs(verdict["best_filter_top1"] - best) < 1e-9
    assert abs(verdict["gain_over_seal"] - (best - cells[("noisywikihow", "seal")]["mean"])) \
        < 1e-9
    assert len(doc["auto"]) == 2 and doc["auto"][0]["pick"] in {
        "base", "mixup", "co-teaching", "seal", "filter+seal", "filter-relabel+seal"}
    text = out.with_suffix(".md").read_text()
    assert "## Ablation (each row adds one step)" in text
    assert "+ a second detection round" in text and "--method auto" in text
