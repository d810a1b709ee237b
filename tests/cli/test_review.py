"""``labelaudit review`` through the real entry point, on small files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from labelaudit.cli import main


@pytest.fixture
def files(tmp_path):
    """A dataset (no id column) and its scan output, most suspect first."""
    rng = np.random.default_rng(0)
    n = 30
    data = pd.DataFrame({"text": [f"headline {i} <i>x</i>" for i in range(n)],
                         "label": rng.choice(["sport", "tech"], n)})
    data.to_csv(tmp_path / "data.csv", index=False)
    order = rng.permutation(n)
    scan = pd.DataFrame({
        "id": order, "text": data["text"].to_numpy()[order],
        "label": data["label"].to_numpy()[order],
        "suggested_label": rng.choice(["sport", "tech"], n),
        "suggested_prob": rng.uniform(0.5, 1, n).round(3),
        "loss": np.sort(rng.uniform(0, 3, n))[::-1].round(3), "rank": np.arange(1, n + 1),
        "score_loss": np.sort(rng.uniform(0, 1, n)).round(3),
        "flagged": np.arange(n) < 6,
    })
    scan.to_csv(tmp_path / "issues.csv", index=False)
    return tmp_path, data, scan


def vote(db, answers):
    """Reviewers answer every item they get: ``answers(reviewer, item) -> answer``."""
    from labelaudit.review import ReviewStore, next_item, record_answer

    store = ReviewStore.open(db)
    for name in ("r1", "r2", "r3"):
        reviewer, _ = store.add_reviewer(name)
        for _ in range(50):
            got = next_item(store, reviewer.reviewer_pk)
            if got.item is None:
                break
            answer = answers(name, got.item)
            assert record_answer(store, reviewer.reviewer_pk, got.item["item_pk"], answer).recorded


def flip_first_two(name, item):
    if item["kind"] != "review":
        return item["known_label"]
    other = {"sport": "tech", "tech": "sport"}[item["given_label"]]
    if item["position"] < 2:
        return other
    if item["position"] == 2:  # no majority
        return {"r1": "sport", "r2": "tech", "r3": "unsure"}[name]
    return item["given_label"]


def test_the_whole_loop(files, capsys):
    folder, data, scan = files
    db = folder / "review.sqlite"
    assert main(["review", "init", str(folder / "issues.csv"), "--db", str(db), "--top", "5",
                 "--reviewers", "3", "--sentinels", "2", "--qualification", "1"]) == 0
    assert "5 items to review" in capsys.readouterr().err

    assert main(["review", "invite", "--db", str(db), "--name", "alice",
                 "--base-url", "http://127.0.0.1:9000/"]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith("http://127.0.0.1:9000/login?token=") and len(link) > 60
    assert main(["review", "invite", "--db", str(db), "--name", "alice"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err

    vote(db, flip_first_two)
    assert main(["review", "status", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "items complete: 5 of 5" in out and "Correctable 2" in out and "Fleiss' kappa" in out
    assert main(["review", "status", "--db", str(db), "--format", "json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["verdicts"] == {"Correctable": 2, "Non-Agreement": 1, "Non-Error": 2,
                                  "Pending": 0}

    verdicts = folder / "verdicts.csv"
    summary = folder / "summary.json"
    assert main(["review", "results", "--db", str(db), "--out", str(verdicts),
                 "--summary-out", str(summary)]) == 0
    assert "estimated errors among 6 flagged" in capsys.readouterr().err
    table = pd.read_csv(verdicts)
    assert table["id"].tolist() == scan["id"].tolist()[:5]
    assert table["verdict"].tolist() == ["Correctable"] * 2 + ["Non-Agreement"] + \
        ["Non-Error"] * 2
    report = json.loads(summary.read_text())
    assert report["precision"]["n_confirmed"] == 3 and len(report["precision_at_k"]) == 5
    assert {r["reviewer"] for r in report["reviewers"]} == {"alice", "r1", "r2", "r3"}

    before = (folder / "data.csv").read_bytes()
    out_file = folder / "data.corrected.csv"
    assert main(["review", "apply", str(folder / "data.csv"), str(verdicts), "--no-id",
                 "--out", str(out_file), "--non-agreement", "drop"]) == 0
    assert (folder / "data.csv").read_bytes() == before
    corrected = pd.read_csv(out_file, keep_default_na=False)
    assert len(corrected) == len(data) - 1
    relabelled = corrected[corrected["review_action"] == "relabelled"]
    assert len(relabelled) == 2
    assert (relabelled["label"] != relabelled["review_original_label"]).all()
    flipped_rows = scan["id"].tolist()[:2]
    assert sorted(data.loc[flipped_rows, "text"]) == sorted(relabelled["text"])
    # never in place
    assert main(["review", "apply", str(folder / "data.csv"), str(verdicts), "--no-id",
                 "--out", str(folder / "data.csv")]) == 1
    assert "never overwrites an input" in capsys.readouterr().err
    assert (folder / "data.csv").read_bytes() == before


def test_export_and_import(files, capsys):
    folder, _, _ = files
    db = folder / "review.sqlite"
    assert main(["review", "init", str(folder / "issues.csv"), "--db", str(db), "--top", "4",
                 "--reviewers", "2", "--quiet"]) == 0
    for target, name in (("label-studio", "tasks.json"), ("argilla", "records.json"),
                         ("csv", "items.csv")):
        assert main(["review", "export", "--db", str(db), "--to", target,
                     "--out", str(folder / name), "--label-config-out",
                     str(folder / "config.xml")]) == 0
    assert len(json.loads((folder / "tasks.json").read_text())) == 4
    assert len(json.loads((folder / "records.json").read_text())) == 4
    assert "<Choices" in (folder / "config.xml").read_text()
    items = pd.read_csv(folder / "items.csv")
    votes = pd.DataFrame({"item_id": items["item_id"].repeat(2).to_numpy(),
                          "reviewer": ["x", "y"] * 4,
                          "answer": items["given_label"].repeat(2).to_numpy()})
    votes.to_csv(folder / "votes.csv", index=False)
    assert main(["review", "import", "--db", str(db), str(folder / "votes.csv")]) == 0
    assert "8 answers recorded from 2 reviewers" in capsys.readouterr().err
    assert main(["review", "results", "--db", str(db), "--format", "csv", "--quiet"]) == 0
    table = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert (table["verdict"] == "Non-Error").all()


@pytest.mark.parametrize(("argv", "code", "message"), [
    (["review", "init", "missing.csv", "--db", "x.sqlite", "--top", "3"], 1, "no such file"),
    (["review", "status", "--db", "missing.sqlite"], 1, "no such review database"),
    (["review", "init", "issues.csv", "--db", "x.sqlite", "--top", "3", "--reviewers", "5",
      "--majority", "2"], 2, "--majority must be more than half"),
    (["review", "init", "issues.csv", "--db", "x.sqlite", "--top", "3", "--pass-mark", "2"],
     2, "must be a number in [0, 1]; got 2"),
    (["review", "init", "issues.csv"], 2, "--db"),
    (["review"], 2, "STEP"),
])
def test_errors_and_usage(files, capsys, monkeypatch, argv, code, message):
    folder, _, _ = files
    monkeypatch.chdir(folder)
    try:  # a usage error exits 2 from argparse (SystemExit) or from the library's check
        got = main(argv)
    except SystemExit as exc:
        got = exc.code
    assert got == code
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_real_entry_point(files, capsys):
    folder, _, _ = files
    run = subprocess.run([sys.executable, "-m", "labelaudit", "review", "init",
                          str(folder / "issues.csv"), "--db", str(folder / "r.sqlite")],
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert "6 items to review" in run.stderr and run.stdout == ""
    assert main(["review", "status", "--db", str(folder / "r.sqlite")]) == 0
    assert "items complete: 0 of 6" in capsys.readouterr().out


def test_help_names_every_step(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["review", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for step in ("init", "invite", "serve", "status", "results", "apply", "export", "import"):
        assert f"    {step}" in out


def test_the_same_seed_picks_the_same_items(files, capsys):
    folder, _, _ = files
    picked = []
    for name in ("first", "second"):
        db = folder / f"{name}.sqlite"
        assert main(["review", "init", str(folder / "issues.csv"), "--db", str(db), "--top", "3",
                     "--select", "random", "--seed", "7", "--quiet"]) == 0
        picked.append(pd.read_csv(__import__("io").StringIO(_export_csv(db, folder)))["item_id"]
                      .tolist())
    assert picked[0] == picked[1]


def _export_csv(db, folder):
    out = folder / "items.csv"
    assert main(["review", "export", "--db", str(db), "--to", "csv", "--out", str(out),
                 "--quiet"]) == 0
    return out.read_text()


def test_status_and_results_share_the_output_options(files, capsys):
    folder, _, _ = files
    db = folder / "review.sqlite"
    assert main(["review", "init", str(folder / "issues.csv"), "--db", str(db), "--top", "5",
                 "--reviewers", "3", "--quiet"]) == 0
    vote(db, flip_first_two)
    assert main(["review", "status", "--db", str(db), "--format", "csv"]) == 0
    reviewers = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert reviewers["reviewer"].tolist() == ["r1", "r2", "r3"]
    assert main(["review", "status", "--db", str(db), "--out", str(folder / "status.json"),
                 "--quiet"]) == 0
    assert json.loads((folder / "status.json").read_text())["progress"]["n_complete"] == 5
    assert main(["review", "results", "--db", str(db), "--format", "json", "--quiet"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["verdict"] for r in records][:2] == ["Correctable"] * 2
    assert main(["review", "results", "--db", str(db), "--out", str(folder / "v.parquet")]) == 0
    assert "wrote 5 rows" in capsys.readouterr().err
    assert len(pd.read_parquet(folder / "v.parquet")) == 5
    with pytest.raises(SystemExit) as exc:
        main(["review", "results", "--db", str(db), "--out", str(folder / "v.xlsx")])
    assert exc.value.code == 2
