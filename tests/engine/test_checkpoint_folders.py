"""A streamed scan's checkpoint folder takes a new or empty folder (the in-memory scan's
rule), and removes only the files labelaudit wrote there: a user's file put into it
survives a change of settings, a failure and a success, and a folder still holding one
is kept, with a warning naming it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from tests.engine.conftest import OPTIONS, REAL_FIT, Killed

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import main
from labelaudit.engine import Checkpoint, ResumeWarning, _hashing
from labelaudit.engine._hashing import FoldPrediction
from labelaudit.models import CheckpointWarning
from labelaudit.scanning import _streaming, scan

MINE = b"my notes\x00\xff"


def _fail_at(monkeypatch, fold):
    def fit_fold(at, *args, **kwargs):
        if at == fold:
            raise Killed(f"killed during fold {at}")
        return REAL_FIT(at, *args, **kwargs)

    monkeypatch.setattr(_hashing, "fit_fold", fit_fold)


def _scan(data, out, **options):
    return scan(data, scorers=["tfidf"], out=out, tfidf="hashing", hashing=OPTIONS,
                       **options)


def _interrupted(data, out, monkeypatch, **options):
    _fail_at(monkeypatch, 2)
    with pytest.raises(Killed):
        _scan(data, out, **options)
    monkeypatch.undo()


def test_a_users_file_survives_a_change_of_settings(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    parts = tmp_path / "issues.parquet.parts"
    _interrupted(data, out, monkeypatch)
    (parts / "notes.bin").write_bytes(MINE)
    _fail_at(monkeypatch, 0)
    with pytest.warns(ResumeWarning, match="random_state changed"), \
            pytest.warns(CheckpointWarning, match=r"kept.*notes\.bin"), pytest.raises(Killed):
        _scan(data, out, random_state=1)  # no fold finished: labelaudit's files go
    assert (parts / "notes.bin").read_bytes() == MINE
    assert not list(parts.glob("*_fold_*.npz"))  # the old folds are gone all the same


def test_no_resume_keeps_a_users_file(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    parts = tmp_path / "issues.parquet.parts"
    _interrupted(data, out, monkeypatch)
    (parts / "notes.bin").write_bytes(MINE)
    with pytest.warns(UserWarning, match="notes.bin"):
        _scan(data, out, resume=False)
    assert (parts / "notes.bin").read_bytes() == MINE


def test_success_keeps_a_users_file_and_says_so(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    parts = tmp_path / "issues.parquet.parts"
    _interrupted(data, out, monkeypatch)
    (parts / "notes.bin").write_bytes(MINE)
    (parts / "mine").mkdir()
    (parts / "mine" / "a.txt").write_bytes(MINE)
    with pytest.warns(UserWarning, match=r"kept.*notes\.bin") as caught:
        result = _scan(data, out)
    assert result.resumed_folds == 2 and out.exists()
    assert sorted(p.name for p in parts.iterdir()) == ["mine", "notes.bin"]
    assert (parts / "notes.bin").read_bytes() == MINE
    assert (parts / "mine" / "a.txt").read_bytes() == MINE
    message = [str(w.message) for w in caught if "kept" in str(w.message)]
    assert len(message) == 1 and "\n" not in message[0]


def test_an_empty_folder_of_the_users_is_taken_and_kept(data, tmp_path, monkeypatch):
    folder = tmp_path / "ck"
    folder.mkdir()
    out = tmp_path / "issues.parquet"
    _interrupted(data, out, monkeypatch, checkpoint_dir=folder)
    assert sorted(p.name for p in folder.glob("*_fold_*.npz")) == ["tfidf_fold_0.npz",
                                                                  "tfidf_fold_1.npz"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _scan(data, out, checkpoint_dir=folder)
    assert result.resumed_folds == 2
    assert folder.is_dir() and not list(folder.iterdir())


def test_labelaudits_own_folder_and_files_are_gone_after_success(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    _interrupted(data, out, monkeypatch, checkpoint_dir=tmp_path / "new" / "ck")
    _scan(data, out, checkpoint_dir=tmp_path / "new" / "ck")
    assert not (tmp_path / "new").exists()  # the parent it made too
    _scan(data, tmp_path / "other.parquet")
    assert not (tmp_path / "other.parquet.parts").exists()


def test_a_file_or_a_users_folder_is_refused_before_any_work(data, tmp_path):
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "notes.bin").write_bytes(MINE)
    with pytest.raises(InvalidParameterError, match="not one of labelaudit's"):
        _scan(data, tmp_path / "issues.parquet", checkpoint_dir=folder)
    assert [p.name for p in folder.iterdir()] == ["notes.bin"]
    assert (folder / "notes.bin").read_bytes() == MINE


def test_a_failure_keeps_a_users_folder_inside(tmp_path):
    folder = tmp_path / "ck"
    point = Checkpoint(folder, {"input": "a"}, resume=True)
    point.save(FoldPrediction(0, np.array([1, 2]), np.eye(2, dtype=np.float32)))
    point.scratch("sort")
    (folder / "mine").mkdir()
    (folder / "mine" / "a.txt").write_bytes(MINE)
    point.abandon()
    assert sorted(p.name for p in folder.iterdir()) == ["checkpoints.json", "manifest.json",
                                                        "mine", "tfidf_fold_0.npz"]
    assert (folder / "mine" / "a.txt").read_bytes() == MINE
    point = Checkpoint(folder, {"input": "a"}, resume=True)
    assert point.finished() == [0]
    with pytest.warns(UserWarning, match="kept.*mine"):
        point.remove()
    assert [p.name for p in folder.iterdir()] == ["mine"]


def test_scratch_never_empties_a_users_folder(tmp_path):
    folder = tmp_path / "ck"
    point = Checkpoint(folder, {"input": "a"}, resume=True)
    (folder / "sort").mkdir()
    (folder / "sort" / "a.txt").write_bytes(MINE)
    scratch = point.scratch("sort")
    assert scratch.is_dir() and not list(scratch.iterdir())
    assert (folder / "sort" / "a.txt").read_bytes() == MINE


def test_a_users_file_under_a_checkpoints_name_is_never_read_nor_replaced(data, tmp_path,
                                                                          monkeypatch):
    out = tmp_path / "issues.parquet"
    parts = tmp_path / "issues.parquet.parts"
    _interrupted(data, out, monkeypatch)
    (parts / "tfidf_fold_3.npz").write_bytes(MINE)
    with pytest.raises(InvalidParameterError, match=r"holds 'tfidf_fold_3\.npz', which "
                                                    "labelaudit did not write"):
        _scan(data, out)
    assert (parts / "tfidf_fold_3.npz").read_bytes() == MINE
    with pytest.warns(ResumeWarning):
        assert Checkpoint(parts, {"input": "a"}, resume=True).finished() == []
    assert (parts / "tfidf_fold_3.npz").read_bytes() == MINE


def test_the_cli_takes_an_empty_folder_and_names_a_kept_file(data, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.setattr(_streaming, "HASHING_THRESHOLD", 10)  # the hashed model, streamed
    folder = tmp_path / "ck"
    folder.mkdir()
    argv = ["scan", str(data), "--scorers", "tfidf", "--out", str(tmp_path / "a.parquet")]
    assert main([*argv, "--checkpoint-dir", str(folder), "--quiet"]) == 0
    assert folder.is_dir() and not list(folder.iterdir())
    _fail_at(monkeypatch, 2)
    with pytest.raises(Killed):
        main([*argv, "--quiet", "--debug"])
    parts = tmp_path / "a.parquet.parts"
    (parts / "notes.bin").write_bytes(MINE)
    monkeypatch.setattr(_hashing, "fit_fold", REAL_FIT)
    capsys.readouterr()
    assert main(argv) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "notes.bin" in line]
    assert len(err) == 1 and "kept" in err[0]
    assert [p.name for p in parts.iterdir()] == ["notes.bin"]
    assert (parts / "notes.bin").read_bytes() == MINE
