"""Fold checkpoints of a long scan: ``manifest.json`` (the input's files and every option that
changes the result) and one ``<member>_fold_<k>.npz`` per finished fold; a rerun with another
manifest starts over. The folder follows :func:`labelaudit.models.claim_checkpoint_folder`."""

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
    """The checkpoint folder of one scan: ``manifest`` describes the input and options;
    ``resume`` reuses matching finished folds (False discards an earlier checkpoint)."""

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
        """The (member, fold) of every saved fold labelaudit listed as its own."""
        found = [_FOLD.fullmatch(n) for n in checkpoint_files(self.folder)]
        return [(m[1], int(m[2])) for m in found
                if m is not None and (self.folder / m[0]).is_file()]

    def finished(self, member: str = "tfidf") -> list[int]:
        return sorted(fold for name, fold in self._folds() if name == member)

    def save(self, prediction: FoldPrediction, member: str = "tfidf") -> None:
        path = own_checkpoint_file(self.folder, self._fold_path(prediction.fold, member).name)
        with atomic_path(path, record=False) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, rows=prediction.rows, probs=prediction.probs)

    def load(self, fold: int, member: str = "tfidf") -> FoldPrediction:
        with np.load(self._fold_path(fold, member)) as saved:
            return FoldPrediction(fold, saved["rows"], saved["probs"])

    def scratch(self, name: str) -> Path:
        """A new, empty folder of labelaudit's for this run's temporary files: ``name``, or
        a fresh name when something labelaudit did not make is there."""
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
        """After a failure: drop the temporary files, and the checkpoint if no fold finished."""
        if not self._folds():
            self.remove()
            return
        drop_checkpoint_files(self.folder, [n for n in checkpoint_files(self.folder)
                                            if (self.folder / n).is_dir()])

    def remove(self) -> None:
        """After success: delete labelaudit's files, and the folder if it made it."""
        release_checkpoint_folder(self.folder)
