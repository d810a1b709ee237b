"""The in-memory scan's fold checkpoints (``--checkpoint-dir``) remove only the files
labelaudit wrote, and only the folders it made, when they are then empty: a user's file
put into the folder, whatever its name, survives, and the kept folder is named in a
warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from labelaudit.models import FoldStore, fold_checkpoints

MINE = b"my notes\x00\xff"


def _save_one(store):
    store.save("0123456789abcdef01234567", 0, np.array([1, 2]), np.eye(2))


def test_a_users_file_named_like_a_fold_survives(tmp_path):
    folder = tmp_path / "ck"
    with pytest.warns(UserWarning, match=r"kept.*my_fold_1\.npz"):
        with fold_checkpoints(folder) as store:
            _save_one(store)
            (folder / "my_fold_1.npz").write_bytes(MINE)
    assert [p.name for p in folder.iterdir()] == ["my_fold_1.npz"]
    assert (folder / "my_fold_1.npz").read_bytes() == MINE


def test_the_folders_it_made_go_when_empty(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with fold_checkpoints(tmp_path / "a" / "b" / "ck") as store:
            _save_one(store)
    assert not (tmp_path / "a").exists()


def test_a_parent_it_made_stays_when_it_holds_a_users_file(tmp_path):
    with fold_checkpoints(tmp_path / "a" / "ck") as store:
        _save_one(store)
        (tmp_path / "a" / "notes.bin").write_bytes(MINE)
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["notes.bin"]
    assert (tmp_path / "a" / "notes.bin").read_bytes() == MINE


def test_an_empty_folder_of_the_users_is_kept_empty(tmp_path):
    folder = tmp_path / "ck"
    folder.mkdir()
    with fold_checkpoints(folder) as store:
        _save_one(store)
    assert folder.is_dir() and not list(folder.iterdir())


def test_starting_over_keeps_a_users_file(tmp_path):
    folder = tmp_path / "ck"
    store = FoldStore(folder)
    _save_one(store)
    (folder / "x_fold_0.npz").write_bytes(MINE)
    store = FoldStore(folder, resume=False)
    assert store.load("0123456789abcdef01234567", 0) is None
    assert (folder / "x_fold_0.npz").read_bytes() == MINE
