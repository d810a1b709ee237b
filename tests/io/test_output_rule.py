"""The overwrite rule of every command (issues #25, #40): labelaudit replaces its own
earlier outputs (one changed since only when --overwrite is given), never a file it did not
write, and never writes on an input or inside a model folder."""

from __future__ import annotations

import os

import pytest
from tests.conftest import make_topic_frame

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import main
from labelaudit.io import (
    check_output_folder,
    check_output_paths,
    output_record,
    record_output,
    write_manifest,
    write_table,
)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.csv"
    make_topic_frame(10).to_csv(path, index=False)
    return path


def _scan(data, out, *extra):
    return main(["scan", str(data), "--text", "text", "--label", "label", "--id", "id",
                 "--out", str(out), "--quiet", *extra])


@pytest.mark.parametrize("streams", [False, True], ids=["in memory", "streamed"])
def test_both_scans_follow_one_rule(data, tmp_path, capsys, streams):
    extra = ["--scorers", "tfidf"] if streams else ["--scorers", "tfidf", "--top", "5"]
    out = tmp_path / "issues.csv"
    assert _scan(data, out, *extra) == 0
    assert output_record(out) == "unchanged"
    assert _scan(data, out, *extra) == 0  # its own output: replaced on a rerun
    out.write_text(out.read_text() + "a line added by hand\n")
    assert _scan(data, out, *extra) == 1
    assert "was changed since labelaudit wrote it" in capsys.readouterr().err
    assert out.read_text().endswith("a line added by hand\n")
    assert _scan(data, out, *extra, "--overwrite") == 0  # its own, edited: --overwrite
    assert not out.read_text().endswith("a line added by hand\n")
    foreign = tmp_path / "mine.csv"
    foreign.write_text("name\nx\n")
    for overwrite in ([], ["--overwrite"]):  # not its own: never replaced
        assert _scan(data, foreign, *extra, *overwrite) == 1
        err = capsys.readouterr().err
        assert "labelaudit did not write it" in err and "--overwrite" not in err
    assert foreign.read_text() == "name\nx\n"


def test_the_record_tells_a_written_file_from_an_edited_one(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELAUDIT_STATE_DIR", str(tmp_path / "state"))
    target = tmp_path / "out.csv"
    target.write_text("a\n1\n")
    assert output_record(target) is None  # not written by labelaudit
    record_output(target)
    assert output_record(target) == "unchanged"
    target.write_text("a\n2 edited by hand\n")
    assert output_record(target) == "changed"


def test_a_link_to_an_input_is_an_input(data, tmp_path, capsys):
    link = tmp_path / "link.csv"
    os.symlink(data, link)
    before = data.read_bytes()
    assert _scan(data, link, "--overwrite") == 1
    assert "never overwrites an input" in capsys.readouterr().err
    assert data.read_bytes() == before


def test_no_output_inside_the_model_folder_being_written(data, tmp_path, capsys):
    code = main(["train", str(data), "--out", str(tmp_path / "m1"), "--eval", str(data),
                 "--metrics-out", str(tmp_path / "m1" / "labelaudit-model.json"), "--quiet"])
    assert code == 1
    assert "inside the model folder" in capsys.readouterr().err
    assert not (tmp_path / "m1").exists()


def test_a_foreign_folder_is_never_replaced(data, tmp_path, capsys):
    for overwrite in ([], ["--overwrite"]):
        code = main(["train", str(data), "--out", str(tmp_path), "--quiet", *overwrite])
        assert code == 1
        assert "holds the input" in capsys.readouterr().err
    assert data.exists()


def test_a_missing_input_and_a_bad_plot_fail_before_any_work(data, tmp_path, capsys):
    code = main(["train", str(data), "--eval", str(tmp_path / "nope.jsonl"), "--metrics-out",
                 str(tmp_path / "m.json"), "--quiet"])
    assert code == 1
    assert "--eval" in (err := capsys.readouterr().err) and "no such file" in err
    code = main(["noise", "realism", str(data), "--label", "label", "--out",
                 str(tmp_path / "n.csv"), "--plot-out", str(tmp_path / "p.gif")])
    assert code == 1
    assert "cannot plot to .gif" in capsys.readouterr().err
    assert not (tmp_path / "n.csv").exists()


def test_check_output_paths_rules(tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text("x\n")
    for overwrite in (False, True):
        with pytest.raises(InvalidParameterError, match="did not write it: choose another "
                           "name, or move or delete the file yourself$"):
            check_output_paths([("--out", str(mine))], [], overwrite=overwrite)
    write_table(make_topic_frame(2), tmp_path / "ours.csv")
    check_output_paths([("--out", str(tmp_path / "ours.csv"))], [])
    model = tmp_path / "model"
    model.mkdir()
    (model / "w.bin").write_text("0")
    write_manifest(model, kind="model")
    with pytest.raises(InvalidParameterError, match="inside the model folder"):
        check_output_paths([("--out", str(model / "new.csv"))], [], overwrite=True)
    with pytest.raises(InvalidParameterError, match="inside the model folder"):
        check_output_paths([("--out", str(tmp_path / "read" / "x.csv"))], [],
                           model_folders=[tmp_path / "read"])


def test_folders_of_another_kind_are_not_replaced(tmp_path):
    folder = tmp_path / "adapted"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    write_manifest(folder, kind="tapt")
    assert check_output_folder(folder, kind="tapt") == folder
    with pytest.raises(InvalidParameterError, match="labelaudit tapt folder, not a model"):
        check_output_folder(folder, kind="model")


@pytest.mark.parametrize("state", ["a file", "/dev/null"])
def test_an_unwritable_record_refuses_a_rerun(tmp_path, monkeypatch, state):
    """A state folder that is a file turns the record off (the README's switch): outputs
    are written, nothing is recorded, and a rerun over one is refused."""
    if state == "a file":
        state = str(tmp_path / "file-not-folder")
        (tmp_path / "file-not-folder").write_text("in the way")
    monkeypatch.setenv("LABELAUDIT_STATE_DIR", state)
    out = tmp_path / "out.csv"
    write_table(make_topic_frame(2), out)  # writes even though nothing can be recorded
    record_output(out)
    assert output_record(out) is None
    for overwrite in (False, True):  # no record of it: a file labelaudit did not write
        with pytest.raises(InvalidParameterError, match="labelaudit did not write it"):
            check_output_paths([("--out", str(out))], [], overwrite=overwrite)
