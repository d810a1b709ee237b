"""Resume at any size (issue #25): an in-memory scan interrupted between folds, rerun
with the same --checkpoint-dir, fits only the folds it had not finished and gives the
same ranking as a scan that never stopped."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import main
from labelaudit.models import TfidfScorer, fold_checkpoints
from labelaudit.scanning import scan


class Interrupted(Exception):
    pass


ORIGINAL_FIT = TfidfScorer.fit


def _counting(monkeypatch, *, fail_at: int | None = None) -> list[int]:
    fits: list[int] = []
    original = ORIGINAL_FIT

    def fit(self, features, labels, *, n_classes):
        if fail_at is not None and len(fits) == fail_at:
            raise Interrupted
        fits.append(len(labels))
        return original(self, features, labels, n_classes=n_classes)

    monkeypatch.setattr(TfidfScorer, "fit", fit)
    return fits


def test_an_interrupted_scan_resumes_its_folds(tmp_path, monkeypatch):
    frame = make_topic_frame(12, n_errors=3)
    fresh = scan(frame, scorers=["tfidf"], id="id").to_frame()
    folder = tmp_path / "ck"
    _counting(monkeypatch, fail_at=3)
    with pytest.raises(Interrupted):
        scan(frame, scorers=["tfidf"], id="id", checkpoint_dir=folder)
    assert len(list(folder.glob("*_fold_*.npz"))) == 3
    fits = _counting(monkeypatch)
    resumed = scan(frame, scorers=["tfidf"], id="id", checkpoint_dir=folder).to_frame()
    assert len(fits) == 2  # folds 4 and 5 only
    pd.testing.assert_frame_equal(resumed, fresh)
    assert not folder.exists()  # removed after success


def test_other_labels_or_options_do_not_reuse_folds(tmp_path, monkeypatch):
    frame = make_topic_frame(12)
    folder = tmp_path / "ck"
    _counting(monkeypatch, fail_at=4)
    with pytest.raises(Interrupted):
        scan(frame, scorers=["tfidf"], checkpoint_dir=folder)
    changed = frame.copy()
    changed.loc[0, "label"] = "tech" if changed.loc[0, "label"] != "tech" else "food"
    fits = _counting(monkeypatch)
    scan(changed, scorers=["tfidf"], checkpoint_dir=folder)
    assert len(fits) == 5  # nothing reused: the labels differ


def test_a_foreign_checkpoint_folder_is_refused(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    with pytest.raises(InvalidParameterError, match="not one of labelaudit's"):
        with fold_checkpoints(folder):
            pass
    assert (folder / "keep.txt").read_text() == "mine"


def test_the_cli_takes_checkpoint_dir_in_memory(tmp_path, monkeypatch, capsys):
    data = tmp_path / "d.csv"
    make_topic_frame(10).to_csv(data, index=False)
    folder = tmp_path / "ck"
    _counting(monkeypatch, fail_at=2)
    argv = ["scan", str(data), "--text", "text", "--label", "label", "--scorers",
            "tfidf", "--top", "3", "--checkpoint-dir", str(folder), "--quiet", "--format",
            "csv"]
    with pytest.raises(Interrupted):
        main([*argv, "--debug"])
    fits = _counting(monkeypatch)
    assert main(argv) == 0
    assert len(fits) == 3 and not folder.exists()
    np.save(tmp_path / "p.npy", np.full((30, 3), 1 / 3))
    assert main([*argv, "--pred-probs", str(tmp_path / "p.npy")]) == 2  # a usage error


def test_a_different_scorer_option_is_another_cross_fit(tmp_path):
    frame = make_topic_frame(6)
    from labelaudit.models._folds import fold_key

    labels = np.zeros(len(frame), dtype=int)
    folds = np.arange(len(frame)) % 2
    texts = frame["text"].tolist()
    assert fold_key(TfidfScorer(), texts, labels, folds, 3) == \
        fold_key(TfidfScorer(), texts, labels, folds, 3)
    assert fold_key(TfidfScorer(C=1.0), texts, labels, folds, 3) != \
        fold_key(TfidfScorer(C=2.0), texts, labels, folds, 3)


def test_a_small_streamed_scan_resumes_when_asked(tmp_path, monkeypatch):
    data = tmp_path / "d.csv"
    make_topic_frame(10).to_csv(data, index=False)
    folder = tmp_path / "ck"
    argv = ["scan", str(data), "--text", "text", "--label", "label", "--scorers", "tfidf",
            "--out", str(tmp_path / "issues.csv"), "--checkpoint-dir", str(folder),
            "--quiet"]
    _counting(monkeypatch, fail_at=4)
    with pytest.raises(Interrupted):
        main([*argv, "--debug"])
    fits = _counting(monkeypatch)
    assert main(argv) == 0  # streams (tfidf to a file): the in-memory scan underneath
    assert len(fits) == 1 and not folder.exists()
    _counting(monkeypatch, fail_at=4)
    with pytest.raises(Interrupted):
        main([*argv, "--debug"])
    fits = _counting(monkeypatch)
    assert main([*argv, "--no-resume"]) == 0
    assert len(fits) == 5
