"""Fold checkpoints of a long scan, so an interrupted run restarts from its finished folds.

The checkpoint folder (``<out>.parts/`` by default) holds ``manifest.json`` (what the run
reads and how: the input's files with size and modification time, and every option that
changes the result) and one ``<member>_fold_<k>.npz`` per finished fold of each member (its
held-out rows and probabilities). A rerun with the same manifest loads the finished folds
instead of fitting them again; a different manifest means the old folds no longer apply:
they are discarded with a :class:`ResumeWarning`. The folder is removed when the scan succeeds.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.engine._hashing import FoldPrediction
from labelaudit.io import atomic_path

__all__ = ["Checkpoint", "ResumeWarning"]

MARK = "labelaudit scan_stream checkpoint"
VERSION = 1


class ResumeWarning(UserWarning):
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
                                               **manifest}, default=_plain))
        self.resumed: list[int] = []
        if self.folder.exists():
            old = self._read_manifest()
            if old is None:
                raise InvalidParameterError(
                    f"{self.folder} exists and is not a labelaudit checkpoint folder (no "
                    "manifest.json of one); remove it or write the output elsewhere")
            if old != self.manifest:
                if resume:
                    changed = sorted(k for k in set(old) | set(self.manifest)
                                     if old.get(k) != self.manifest.get(k))
                    warnings.warn(
                        f"{self.folder}: the finished folds of an earlier run do not match "
                        f"this one ({', '.join(changed)} changed); starting over",
                        ResumeWarning, stacklevel=3)
                shutil.rmtree(self.folder)
            elif not resume:
                shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / "manifest.json"
        if not path.exists():
            with atomic_path(path, record=False) as tmp:
                tmp.write_text(json.dumps(self.manifest, indent=1))

    def _read_manifest(self) -> dict[str, Any] | None:
        try:
            found = json.loads((self.folder / "manifest.json").read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(found, dict) or found.get("labelaudit") != MARK:
            return None
        return found

    def _fold_path(self, fold: int, member: str) -> Path:
        return self.folder / f"{member}_fold_{fold}.npz"

    def finished(self, member: str = "tfidf") -> list[int]:
        """The folds of ``member`` whose predictions are saved."""
        return sorted(int(p.stem.rsplit("_", 1)[1])
                      for p in self.folder.glob(f"{member}_fold_*.npz"))

    def save(self, prediction: FoldPrediction, member: str = "tfidf") -> None:
        """Save one fold's held-out predictions (atomically)."""
        with atomic_path(self._fold_path(prediction.fold, member), record=False) as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, rows=prediction.rows, probs=prediction.probs)

    def load(self, fold: int, member: str = "tfidf") -> FoldPrediction:
        with np.load(self._fold_path(fold, member)) as saved:
            return FoldPrediction(fold, saved["rows"], saved["probs"])

    def scratch(self, name: str) -> Path:
        """A folder for temporary files of this run (inside the checkpoint folder)."""
        path = self.folder / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
        return path

    def abandon(self) -> None:
        """After a failure: drop the temporary files, and the whole folder when no fold
        finished (nothing to resume from)."""
        if not any(self.folder.glob("*_fold_*.npz")):
            self.remove()
            return
        for path in self.folder.iterdir():
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, np.ndarray)):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
