"""benchmarks/evidence.py on a fake data root (never ../shared): duplicate counts, and the
cost run's table with the examples it picks from the flagged items."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from benchmarks.evidence import main  # noqa: E402


def write_fake_imdb(root: Path) -> None:
    folder = root / "labelerrors_imdb_dev"
    folder.mkdir(parents=True)
    rows = []
    for i in range(60):
        label = i % 2
        text = ("a great fun film" if label else "a dull bad film") + f" number {i}"
        rows.append({"id": f"r{i}", "text": text, "label": label, "is_error": False})
    rows[0].update(label=1, is_error=True)  # a negative review labelled positive
    rows[1].update(text="A dull, bad film number 2!")  # r2's text, labelled 1 (r2: 0)
    with open(folder / "test.jsonl", "w") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)


def test_counts_duplicates_and_times_both_scans(tmp_path, capsys):
    write_fake_imdb(tmp_path / "data")
    results = tmp_path / "results"
    assert main(["--data", str(tmp_path / "data"), "--results", str(results)]) == 0
    saved = json.loads((results / "evidence.json").read_text())
    assert saved["duplicates"] == [{"set": "imdb_dev", "items": 60, "duplicate_groups": 1,
                                    "conflicting_groups": 1, "near_conflicting_pairs": 1}]
    cost = saved["cost"][0]
    assert cost["seconds_with"] > 0 and cost["cpu_seconds_without"] > 0
    errors = cost["examples"]["verified errors"]
    assert errors and errors[0]["id"] == "r0" and errors[0]["evidence"].startswith("toward 0: ")
    assert "| imdb_dev | 60 | 1 | 1 | 1 |" in (results / "evidence.md").read_text()
    assert main(["--data", str(tmp_path / "data"), "--results", str(results),
                 "--cost-sets"]) == 0  # duplicates only: the cost measured before stays
    assert json.loads((results / "evidence.json").read_text())["cost"] == saved["cost"]
