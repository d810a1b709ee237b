"""No run damages a user's file: every file a command writes (a sidecar too) is checked as
``--out`` is, two outputs of one run are never the same file, nothing is written inside an
input folder, a folder output's parts follow the single file's rule, a checkpoint folder
the user made stays, and a name that cannot be written is refused before "exists"."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.cli import main
from labelaudit.models import fold_checkpoints


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def annotations(tmp_path):
    rows = [{"item": i, "annotator": f"a{a}", "label": "x" if (i + a) % 4 else "y"}
            for i in range(12) for a in range(3)]
    path = tmp_path / "votes.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _agreement(source, *extra):
    return main(["agreement", str(source), "--bootstrap", "0", "--quiet", *extra])


def test_a_sidecar_never_replaces_a_users_file(annotations, tmp_path, capsys):
    mine = tmp_path / "g3.noise.json"
    mine.write_text("my notes\n")
    before = mine.read_bytes()
    for extra in ([], ["--overwrite"]):  # not labelaudit's: never replaced
        assert _agreement(annotations, "--gold-out", str(tmp_path / "g3.jsonl"), *extra) == 1
        line = _one_line(capsys.readouterr().err)
        assert "the --gold-out sidecar" in line and "did not write it" in line
        assert "--overwrite" not in line
        assert mine.read_bytes() == before
    assert not (tmp_path / "g3.jsonl").exists()
    # once the user's file is gone, the sidecar is written; a rerun replaces its own
    mine.unlink()
    assert _agreement(annotations, "--gold-out", str(tmp_path / "g3.jsonl")) == 0
    capsys.readouterr()
    assert json.loads(mine.read_text())["gold_file"] == "g3.jsonl"
    assert _agreement(annotations, "--gold-out", str(tmp_path / "g3.jsonl")) == 0


def test_a_sidecar_never_replaces_the_input(annotations, tmp_path, capsys):
    source = tmp_path / "x.noise.json"
    source.write_text(pd.read_csv(annotations).to_json(orient="records"))
    before = source.read_bytes()
    for extra in ([], ["--overwrite"]):
        assert _agreement(source, "--gold-out", str(tmp_path / "x.jsonl"), *extra) == 1
        assert "is an input file" in _one_line(capsys.readouterr().err)
        assert source.read_bytes() == before
    assert not (tmp_path / "x.jsonl").exists()


def test_a_sidecar_and_another_output_are_never_one_file(annotations, tmp_path, capsys):
    code = _agreement(annotations, "--out", str(tmp_path / "g5.noise.json"), "--gold-out",
                      str(tmp_path / "g5.jsonl"), "--overwrite")
    assert code == 1
    line = _one_line(capsys.readouterr().err)
    assert "--out and the --gold-out sidecar both write" in line
    assert list(tmp_path.iterdir()) == [annotations]


@pytest.fixture
def saved_dataset(tmp_path):
    datasets = pytest.importorskip("datasets")
    frame = make_topic_frame(6)
    ds = datasets.Dataset.from_pandas(frame[["text", "label"]], preserve_index=False)
    folder = tmp_path / "hfds"
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(folder))
    return folder


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.parametrize("target", ["train/state.json", "train/dataset_info.json",
                                    "test/issues.parquet", "issues.csv", "parts/"])
def test_nothing_is_written_inside_an_input_folder(saved_dataset, capsys, target):
    before = _snapshot(saved_dataset)
    out = f"{saved_dataset}/{target}"
    for extra in ([], ["--overwrite"]):
        code = main(["scan", f"{saved_dataset}:train", "--scorers", "tfidf", "--out", out,
                     "--quiet", *extra])
        assert code == 1
        line = _one_line(capsys.readouterr().err)
        assert "inside the input folder" in line and "--overwrite" not in line
        assert _snapshot(saved_dataset) == before


@pytest.mark.parametrize("argv", [["train", "--out", "model"],
                                  ["scan", "--scorers", "tfidf", "--checkpoint-dir", "ck"]])
def test_a_folder_written_inside_an_input_folder_is_refused(saved_dataset, capsys, argv):
    before = _snapshot(saved_dataset)
    command, *options, folder = argv
    code = main([command, f"{saved_dataset}:train", *options, str(saved_dataset / folder),
                 "--quiet"])
    assert code == 1
    assert "inside the input folder" in _one_line(capsys.readouterr().err)
    assert sorted(p.name for p in saved_dataset.iterdir()) == ["dataset_dict.json", "test",
                                                               "train"]
    assert _snapshot(saved_dataset) == before


@pytest.mark.parametrize(("name", "content", "said"), [
    ("train/state.json", "[1, 2]", "not an object"),
    ("train/state.json", '{"_data_files": 5}', "_data_files"),
    ("train/dataset_info.json", "[1]", "not an object"),
    ("train/dataset_info.json", "{not json", "not valid JSON"),
    ("dataset_dict.json", '{"splits": 3}', "splits"),
])
def test_a_damaged_saved_dataset_is_one_line_naming_the_file(saved_dataset, tmp_path, capsys,
                                                              name, content, said):
    (saved_dataset / name).write_text(content)
    code = main(["scan", f"{saved_dataset}:train", "--scorers", "tfidf", "--quiet"])
    assert code == 1
    line = _one_line(capsys.readouterr().err)
    assert str(saved_dataset / name) in line and said in line


def test_an_edited_part_of_a_folder_output_is_refused_like_a_file(tmp_path, capsys):
    data = tmp_path / "data.csv"
    make_topic_frame(10).to_csv(data, index=False)
    out = f"{tmp_path / 'parts'}/"
    argv = ["scan", str(data), "--scorers", "tfidf", "--out", out, "--quiet"]
    assert main(argv) == 0
    assert main(argv) == 0  # its own parts, unchanged: replaced
    part = tmp_path / "parts" / "part-00000.parquet"
    pd.read_parquet(part).head(3).to_parquet(part)
    edited = part.read_bytes()
    capsys.readouterr()
    assert main(argv) == 1
    line = _one_line(capsys.readouterr().err)
    assert "part-00000.parquet exists and was changed since labelaudit wrote it" in line
    assert part.read_bytes() == edited
    assert main([*argv, "--overwrite"]) == 0
    assert part.read_bytes() != edited


def test_a_checkpoint_folder_the_user_made_stays(tmp_path):
    mine = tmp_path / "emptyck"
    mine.mkdir()
    with fold_checkpoints(mine) as store:
        store.save("k", 0, [0, 1], pd.DataFrame([[0.5, 0.5]] * 2).to_numpy())
    assert mine.is_dir() and not any(mine.iterdir())
    made = tmp_path / "new" / "ck"
    with fold_checkpoints(made):
        pass
    assert not made.exists()


def test_a_checkpoint_folder_the_user_made_stays_after_a_scan(tmp_path):
    data = tmp_path / "data.csv"
    make_topic_frame(10).to_csv(data, index=False)
    mine = tmp_path / "emptyck"
    mine.mkdir()
    assert main(["scan", str(data), "--scorers", "tfidf", "--checkpoint-dir", str(mine),
                 "--quiet"]) == 0
    assert mine.is_dir() and not any(mine.iterdir())


@pytest.mark.parametrize(("argv", "code", "said"), [
    (["train", "{data}", "--eval", "{data}", "--metrics-out", "{mine}"], 2,
     "the metrics are written as JSON"),
    (["consistency", "{data}", "--suspect", "{data}", "--plot-out", "{mine}"], 1,
     "cannot plot to .txt"),
    (["agreement", "{votes}", "--items-out", "{mine}"], 1, "cannot write .txt"),
])
def test_a_name_that_cannot_be_written_is_refused_before_exists(tmp_path, annotations, capsys,
                                                                argv, code, said):
    data = tmp_path / "data.csv"
    make_topic_frame(10).to_csv(data, index=False)
    mine = tmp_path / "precious.txt"
    mine.write_text("keep me\n")
    filled = [a.format(data=data, votes=annotations, mine=mine) for a in argv]
    assert main([*filled, "--quiet"]) == code
    line = _one_line(capsys.readouterr().err)
    assert said in line and "exists" not in line
    assert mine.read_text() == "keep me\n"


@pytest.fixture
def scanned(tmp_path):
    """A dataset, its scan output and a review project, all but the dataset written by
    labelaudit."""
    data = tmp_path / "data.csv"
    make_topic_frame(10).to_csv(data, index=False)
    issues, db = tmp_path / "issues.csv", tmp_path / "r.sqlite"
    assert main(["scan", str(data), "--scorers", "tfidf", "--out", str(issues), "--quiet"]) == 0
    assert main(["review", "init", str(issues), "--db", str(db), "--top", "3", "--quiet"]) == 0
    return {"data": data, "issues": issues, "db": db, "tmp": tmp_path}


def _fill(argv, files, mine):
    return [a.format(**files, mine=mine) for a in argv]


# Each names a file of the user's ({mine}) as an output: --out, a sidecar (--gold-out's
# .noise.json), --summary-out, review init's --db, and a part of a folder output.
USER_FILE_OUTPUTS = {
    "--out": (["scan", "{data}", "--scorers", "tfidf", "--out", "{mine}"], "mine.csv"),
    "--summary-out": (["noise", "inject", "{data}", "--method", "uniform", "--rate", "0.2",
                       "--out", "{tmp}/noised.csv", "--summary-out", "{mine}"],
                      "x.noise.json"),
    "review results --out": (["review", "results", "--db", "{db}", "--out", "{mine}"],
                             "truth.csv"),
    "--db": (["review", "init", "{issues}", "--db", "{mine}", "--top", "3"], "reviews.csv"),
    "a folder part": (["scan", "{data}", "--scorers", "tfidf", "--out", "{tmp}/parts/"],
                      "parts/part-00000.parquet"),
}


@pytest.mark.parametrize("case", list(USER_FILE_OUTPUTS))
def test_a_users_file_is_never_replaced_even_with_overwrite(scanned, capsys, case):
    argv, name = USER_FILE_OUTPUTS[case]
    mine = scanned["tmp"] / name
    mine.parent.mkdir(exist_ok=True)
    if name.endswith(".parquet"):
        make_topic_frame(2).to_parquet(mine)
    else:
        mine.write_text("id,label\n1,mine\n")
    before = mine.read_bytes()
    capsys.readouterr()
    for extra in ([], ["--overwrite"]):
        assert main([*_fill(argv, scanned, mine), "--quiet", *extra]) == 1
        line = _one_line(capsys.readouterr().err)
        assert "exists and labelaudit did not write it: choose another" in line, line
        assert "move or delete the file yourself" in line and "--overwrite" not in line
        assert mine.read_bytes() == before


# Each writes an output ({mine}) that a person then edits.
OWN_OUTPUTS = {
    "--out": ["scan", "{data}", "--scorers", "tfidf", "--out", "{mine}"],
    "--summary-out": ["noise", "inject", "{data}", "--method", "uniform", "--rate", "0.2",
                      "--out", "{tmp}/noised.csv", "--summary-out", "{mine}"],
    "review results --out": ["review", "results", "--db", "{db}", "--out", "{mine}"],
}


@pytest.mark.parametrize("case", list(OWN_OUTPUTS))
def test_an_edited_output_is_replaced_only_with_overwrite(scanned, capsys, case):
    mine = scanned["tmp"] / ("out.json" if case == "--summary-out" else "out.csv")
    argv = [*_fill(OWN_OUTPUTS[case], scanned, mine), "--quiet"]
    assert main(argv) == 0
    assert main(argv) == 0  # its own, unchanged: a rerun just works
    with mine.open("a") as handle:
        handle.write("\nedited by hand\n")
    edited = mine.read_bytes()
    capsys.readouterr()
    assert main(argv) == 1
    line = _one_line(capsys.readouterr().err)
    assert "was changed since labelaudit wrote it" in line and "--overwrite" in line
    assert mine.read_bytes() == edited
    assert main([*argv, "--overwrite"]) == 0
    assert mine.read_bytes() != edited


def test_an_edited_review_database_is_replaced_only_with_overwrite(scanned, capsys):
    import sqlite3

    db = scanned["db"]
    argv = ["review", "init", str(scanned["issues"]), "--db", str(db), "--top", "2", "--quiet"]
    assert main(argv) == 1  # its own: replaced only with --overwrite, as before
    assert "already exists" in _one_line(capsys.readouterr().err)
    with sqlite3.connect(db) as conn:  # a person's change: the file is no longer as written
        conn.execute("CREATE TABLE notes (x TEXT)")
    conn.close()
    edited = db.read_bytes()
    assert main(argv) == 1
    assert "was changed since labelaudit wrote it" in _one_line(capsys.readouterr().err)
    assert db.read_bytes() == edited
    assert main([*argv, "--overwrite"]) == 0
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert "notes" not in tables
