"""An interrupted hashed scan restarts from its finished folds."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from tests.conftest import make_topic_frame
from tests.engine.conftest import OPTIONS, REAL_FIT, Killed

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.engine import ResumeWarning, _hashing
from labelaudit.scanning import scan


def _counting(monkeypatch, *, fail_at=None):
    """Count calls of fit_fold (and raise on fold ``fail_at``)."""
    fitted: list[int] = []

    def fit_fold(fold, *args, **kwargs):
        if fold == fail_at:
            raise Killed(f"killed during fold {fold}")
        fitted.append(fold)
        return REAL_FIT(fold, *args, **kwargs)

    monkeypatch.setattr(_hashing, "fit_fold", fit_fold)
    return fitted


def _scan(data, out, **options):
    return scan(data, scorers=["tfidf"],
                       out=out, tfidf="hashing", hashing=OPTIONS, **options)


def test_a_rerun_fits_only_the_folds_not_finished(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    fitted = _counting(monkeypatch, fail_at=3)
    with pytest.raises(Killed):
        _scan(data, out)
    assert fitted == [0, 1, 2] and not out.exists()
    parts = tmp_path / "issues.parquet.parts"
    assert sorted(p.name for p in parts.iterdir()) == ["checkpoints.json", "manifest.json",
                                                       "tfidf_fold_0.npz", "tfidf_fold_1.npz",
                                                       "tfidf_fold_2.npz"]
    fitted = _counting(monkeypatch)
    result = _scan(data, out)
    assert fitted == [3, 4] and result.resumed_folds == 3
    assert not parts.exists()
    monkeypatch.undo()
    _scan(data, tmp_path / "fresh.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(tmp_path / "fresh.parquet"))


def test_changed_options_or_input_discard_the_old_folds(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    _counting(monkeypatch, fail_at=2)
    with pytest.raises(Killed):
        _scan(data, out)
    fitted = _counting(monkeypatch)
    with pytest.warns(ResumeWarning, match="random_state changed"):
        _scan(data, out, random_state=1)
    assert fitted == [0, 1, 2, 3, 4]
    _counting(monkeypatch, fail_at=2)
    with pytest.raises(Killed):
        _scan(data, out)
    os.utime(data, ns=(0, 0))  # the input looks changed
    fitted = _counting(monkeypatch)
    with pytest.warns(ResumeWarning, match="input changed"):
        _scan(data, out)
    assert fitted == [0, 1, 2, 3, 4]


def test_resume_false_starts_over(data, tmp_path, monkeypatch):
    out = tmp_path / "issues.parquet"
    _counting(monkeypatch, fail_at=4)
    with pytest.raises(Killed):
        _scan(data, out)
    fitted = _counting(monkeypatch)
    _scan(data, out, resume=False)
    assert fitted == [0, 1, 2, 3, 4]


def test_a_folder_that_is_not_a_checkpoint_is_left_alone(data, tmp_path):
    parts = tmp_path / "issues.parquet.parts"
    parts.mkdir()
    (parts / "notes.txt").write_text("mine")
    with pytest.raises(InvalidParameterError, match="not one of labelaudit's"):
        _scan(data, tmp_path / "issues.parquet")
    assert (parts / "notes.txt").read_text() == "mine"


def test_a_failure_before_any_fold_leaves_no_checkpoint(tmp_path):
    frame = make_topic_frame(10)
    frame.loc[3, "text"] = ""
    frame.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(InvalidInputError, match="empty or missing text"):
        _scan(tmp_path / "bad.parquet", tmp_path / "issues.parquet")
    assert list(tmp_path.iterdir()) == [tmp_path / "bad.parquet"]
