"""Fold checkpoints of a long scan, so an interrupted run restarts from its finished folds.

The checkpoint folder (``<out>.parts/`` by default) holds ``manifest.json`` (what the run
reads and how: the input's files with size and modification time, and every option that
changes the result) and one ``<member>_fold_<k>.npz`` per finished fold of each member (its
held-out rows and probabilities). A rerun with the same manifest loads the finished folds
instead of fitting them again; a different manifest means the old folds no longer apply:
they are discarded with a :class:`ResumeWarning`. The folder follows the in-memory scan's
rules (:func:`labelaudit.models.claim_checkpoint_folder`): a new or empty folder, or one of
labelaudit's; only the files labelaudit lists there as its own are ever deleted, and the
folder itself when the scan succeeds only if labelaudit made it and it is then empty.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import LabelAuditWarning
from labelaudit.engine._hashing import FoldPrediction
from labelaudit.io import atomic_path, plain_value
from labelaudit.models import (
    checkpoint_files,
    claim_checkpoint_folder,
    drop_checkpoint_files,
    own_checkpoint_file,
    release_checkpoint_folder,
)

MARK = "labelaudit scan_stream checkpoint"
VERSION = 1
MANIFEST = "manifest.json"
_FOLD = re.compile(r"(.+)_fold_(\d+)\.npz")


class ResumeWarning(LabelAuditWarning):
    """Finished folds of an earlier run were found but do not match this run."""


class Checkpoint:
    """The checkpoint folder of one scan.

    Parameters
    ----------
    folder : path
    manifest : dict
        JSON-serialisable description of the input and options.
    resume : bool
        Reuse matching finished folds; with False, an earlier checkpoint is discarded.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "out.parquet.parts"
    >>> point = Checkpoint(folder, {"input": "a"}, resume=True)
    >>> point.save(FoldPrediction(0, np.array([1, 2]), np.eye(2, dtype=np.float32)))
    >>> Checkpoint(folder, {"input": "a"}, resume=True).finished()
    [0]
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     Checkpoint(folder, {"input": "b"}, resume=True).finished()
    []
    >>> caught[0].category.__name__
    'ResumeWarning'
    """

    def __init__(self, folder: str | Path, manifest: dict[str, Any], *, resume: bool) -> None:
        self.folder = Path(folder)
        self.manifest = json.loads(json.dumps({"labelaudit": MARK, "version": VERSION,
                                               **manifest}, default=plain_value))
        self.resumed: list[int] = []
        claim_checkpoint_folder(self.folder)  # a new or empty folder, or one of labelaudit's
        old = self._read_manifest()
        if old is not None and old != self.manifest and resume:
            changed = sorted(k for k in set(old) | set(self.manifest)
                             if old.get(k) != self.manifest.get(k))
            warnings.warn(
                f"{self.folder}: the finished folds of an earlier run do not match "
                f"this one ({', '.join(changed)} changed); starting over",
                ResumeWarning, stacklevel=3)
        if old != self.manifest or not resume:
            drop_checkpoint_files(self.folder)  # labelaudit's files only
        # what an interrupted run left to scratch folders is of no use to this one
        drop_checkpoint_files(self.folder, [n for n in checkpoint_files(self.folder)
                                            if (self.folder / n).is_dir()])
        path = own_checkpoint_file(self.folder, MANIFEST)
        if not path.exists():
            with atomic_path(path, record=False) as tmp:
                tmp.write_text(json.dumps(self.manifest, indent=1))

    def _read_manifest(self) -> dict[str, Any] | None:
        if MANIFEST not in checkpoint_files(self.folder):
            return None
        try:
            found = json.loads((self.folder / MANIFEST).read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(found, dict) or found.get("labelaudit") != MARK:
            return None
        return found

    def _fold_path(self, fold: int, member: str) -> Path:
        return self.folder / f"{member}_fold_{fold}.npz"

    def _folds(self) -> list[tuple[str, int]]:
        """The (member, fold) of every saved fold (of those labelaudit listed as its own)."""
        found = [_FOLD.fullmatch(n) for n in checkpoint_files(self.folder)]
        return [(m[1], int(m[2])) for m in found
                if m is not None and (self.folder / m[0]).is_file()]

    def finished(self, member: str = "tfidf") -> list[int]:
        """The folds of ``member`` whose predictions are saved."""
        return sorted(fold for name, fold in self._folds() if name == member)

    def save(self, prediction: FoldPrediction, member: str = "tfidf") -> None:
        """Save one fold's held-out predictions (atomically)."""
        path = own_checkpoint_file(self.folder, self._fold_path(prediction.fold, member).name)
        with atomic_path(path, record=False) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, rows=prediction.rows, probs=prediction.probs)

    def load(self, fold: int, member: str = "tfidf") -> FoldPrediction:
        with np.load(self._fold_path(fold, member)) as saved:
            return FoldPrediction(fold, saved["rows"], saved["probs"])

    def scratch(self, name: str) -> Path:
        """A new, empty folder for temporary files of this run (inside the checkpoint
        folder, listed as labelaudit's): ``name``, or a fresh name beside it when
        something labelaudit did not make is there."""
        owned = checkpoint_files(self.folder)
        for candidate in itertools.chain([name], (f"{name}-{k}" for k in itertools.count(1))):
            path = self.folder / candidate
            if candidate in owned:
                shutil.rmtree(path, ignore_errors=True)  # an earlier run's
                break
            if not (path.exists() or path.is_symlink()):
                break
        own_checkpoint_file(self.folder, path.name)
        path.mkdir()
        return path

    def abandon(self) -> None:
        """After a failure: drop the temporary files, and the checkpoint when no fold
        finished (nothing to resume from); nothing labelaudit did not write is touched."""
        if not self._folds():
            self.remove()
            return
        drop_checkpoint_files(self.folder, [n for n in checkpoint_files(self.folder)
                                            if (self.folder / n).is_dir()])

    def remove(self) -> None:
        """After success: delete labelaudit's files, and the folder when labelaudit made
        it and it is then empty (else it stays, with a warning naming what is kept)."""
        release_checkpoint_folder(self.folder)
