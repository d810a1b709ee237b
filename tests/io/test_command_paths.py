"""check_command_paths: the files every command names, sorted into inputs, outputs and model
folders by the option that names them, checked before any work."""

from __future__ import annotations

import pytest

from labelaudit._errors import InvalidParameterError
from labelaudit.io import check_command_paths


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def test_an_output_that_names_an_input_is_refused_with_its_flag(tmp_path):
    data, truth = tmp_path / "data.csv", tmp_path / "truth.json"
    data.write_text("a\n1\n")
    truth.write_text('[{"a": 1}]\n')
    with pytest.raises(InvalidParameterError, match=r"is an input file"):
        check_command_paths({"data": str(data), "out": str(data)}, flag=_flag)
    with pytest.raises(InvalidParameterError, match=r"is the --eval file"):
        check_command_paths({"eval": str(truth), "metrics_out": str(truth)}, flag=_flag)
    with pytest.raises(InvalidParameterError, match="--out and --items-out both write"):
        check_command_paths({"out": str(tmp_path / "x.csv"),
                             "items_out": str(tmp_path / "x.csv")}, flag=_flag)


def test_a_missing_input_and_a_repeated_one_are_checked(tmp_path):
    with pytest.raises(InvalidParameterError, match="the --eval file .*: no such file"):
        check_command_paths({"eval": str(tmp_path / "no.csv")}, flag=_flag)
    with pytest.raises(InvalidParameterError, match="the --predictions file .*b.csv: no such"):
        (tmp_path / "a.csv").write_text("x\n")
        check_command_paths({"predictions": [("a", str(tmp_path / "a.csv")),
                                              ("b", str(tmp_path / "b.csv"))]}, flag=_flag)


def test_a_written_input_is_an_output(tmp_path):
    db = tmp_path / "review.db"
    db.write_text("not ours")
    check_command_paths({"db": str(db)}, flag=_flag)  # read: fine
    for overwrite in (False, True):  # not labelaudit's: never replaced
        with pytest.raises(InvalidParameterError, match="--db .* exists and labelaudit did not"):
            check_command_paths({"db": str(db)}, flag=_flag, writes=["db"], overwrite=overwrite)


def test_model_folders_and_remote_outputs(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(InvalidParameterError, match="is not a folder labelaudit wrote"):
        check_command_paths({"model_out": str(folder)}, flag=lambda name: "--out")
    with pytest.raises(InvalidParameterError, match="inside the model folder"):
        check_command_paths({"model": str(folder), "out": str(folder / "p.csv")}, flag=_flag)
    check_command_paths({"out": "s3://bucket/issues/"}, flag=_flag, remote=["out"])
    with pytest.raises(InvalidParameterError, match="cannot plot to .txt"):
        check_command_paths({"plot_out": str(tmp_path / "p.txt")}, flag=_flag)
