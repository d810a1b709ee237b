"""Fold checkpoints of an in-memory cross-fit: every finished fold's held-out
probabilities saved as it ends, so that a rerun of an interrupted scan fits only the
folds it had not finished (``scan(checkpoint_dir=...)``, ``labelaudit scan
--checkpoint-dir``). The streamed scan has its own (``labelaudit.engine``)."""

from __future__ import annotations

import glob
import hashlib
import json
import shutil
import threading
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditWarning, format_values
from labelaudit.io import atomic_path

_MARK = "labelaudit fold checkpoints"
_MANIFEST = "checkpoints.json"
_LOCK = threading.Lock()  # one update of a manifest's list of files at a time


class CheckpointWarning(LabelAuditWarning):
    """A checkpoint folder labelaudit made is kept: something it did not write is in it."""


def _digest_into(h: Any, value: Any) -> None:
    """Feed ``value`` (arrays, sparse matrices, texts, lists of them, options) to ``h``."""
    if isinstance(value, np.ndarray):
        h.update(str((value.dtype.str, value.shape)).encode())
        h.update(np.ascontiguousarray(value).tobytes() if value.dtype != object
                 else repr(value.tolist()).encode())
    elif hasattr(value, "tocsr") and hasattr(value, "data"):  # a scipy sparse matrix
        matrix = value.tocsr()
        for part in (matrix.data, matrix.indices, matrix.indptr):
            _digest_into(h, part)
    elif isinstance(value, (list, tuple)):
        h.update(f"[{len(value)}".encode())
        for item in value:
            _digest_into(h, item)
    elif isinstance(value, (str, int, float, bool, type(None))):
        h.update(repr(value).encode())
    else:  # an object option (a tokenizer, a device...): its type stands for it
        h.update(type(value).__qualname__.encode())


def fold_key(scorer: Any, features: Any, labels: Any, fold_ids: np.ndarray,
             n_classes: int) -> str:
    """What identifies one cross-fit: the scorer's kind and options, its features, the
    labels and the fold assignment."""
    h = hashlib.sha256()
    options = sorted((k, v) for k, v in vars(scorer).items()
                     if not k.startswith("_") and not k.endswith("_"))
    _digest_into(h, [type(scorer).__qualname__, scorer.name, n_classes,
                     [[k, v] for k, v in options]])
    for part in (features, labels, fold_ids):
        _digest_into(h, part)
    return h.hexdigest()[:24]


class FoldStore:
    """A folder of fold checkpoints (see :func:`fold_checkpoints`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> store = FoldStore(pathlib.Path(tempfile.mkdtemp()) / "ck")
    >>> store.save("k", 0, np.array([1, 2]), np.eye(2))
    >>> rows, probs = store.load("k", 0)
    >>> rows.tolist(), store.load("k", 1)
    ([1, 2], None)
    >>> store.remove()
    """

    def __init__(self, folder: str | Path, *, resume: bool = True) -> None:
        self.loaded = 0
        self.folder = claim_checkpoint_folder(folder)
        if not resume:
            drop_checkpoint_files(self.folder)

    def _path(self, key: str, fold: int) -> Path:
        return self.folder / f"{key}_fold_{int(fold)}.npz"

    def load(self, key: str, fold: int) -> tuple[np.ndarray, np.ndarray] | None:
        """A finished fold's held-out rows and probabilities, or None."""
        path = self._path(key, fold)
        try:
            with np.load(path) as saved:
                found = saved["rows"], saved["probs"]
        except (OSError, ValueError, KeyError):
            return None  # not there, or damaged: fitted again
        try:
            own_checkpoint_file(self.folder, path.name)  # one an older labelaudit did not list
        except InvalidParameterError:
            return None  # not labelaudit's: never read (and saving over it is refused)
        self.loaded += 1
        return found

    def save(self, key: str, fold: int, rows: np.ndarray, probs: Any) -> None:
        """Keep one fold's held-out predictions (array outputs only), atomically."""
        if not isinstance(probs, np.ndarray):
            return
        path = own_checkpoint_file(self.folder, self._path(key, fold).name)
        with atomic_path(path, record=False) as tmp, open(tmp, "wb") as f:
            np.savez(f, rows=np.asarray(rows), probs=probs)

    def remove(self) -> None:
        """Delete the checkpoints (see :func:`release_checkpoint_folder`)."""
        release_checkpoint_folder(self.folder)


def claim_checkpoint_folder(folder: str | Path) -> Path:
    """A folder for labelaudit's checkpoints (scan's folds, consistency's fits), made with
    its manifest unless it is there already; a file, or a folder holding other things and
    no manifest of labelaudit's, is refused, so no checkpoint lands among a user's files.
    The manifest says whether labelaudit made the folder (and how many of its parents):
    only then is it removed with the checkpoints, and only when it is empty; it lists the
    files labelaudit writes there (:func:`own_checkpoint_file`), the only ones removed.

    Raises
    ------
    InvalidParameterError
        ``folder`` is a file, or a folder labelaudit did not make that is not empty.
    """
    path = Path(folder)
    manifest = path / _MANIFEST
    if path.exists():
        if not path.is_dir():
            raise InvalidParameterError(f"checkpoint folder {folder} is a file")
        if any(path.iterdir()) and not _is_ours(manifest):
            raise InvalidParameterError(
                f"checkpoint folder {folder} exists and is not one of labelaudit's (no "
                f"{_MANIFEST} of its own): choose a new or empty folder")
    made = not path.exists()
    parents = 0
    if made:
        while not path.absolute().parents[parents].exists():
            parents += 1
    path.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        _write_note(path, {"labelaudit": _MARK, "made_folder": made, "made_parents": parents,
                           "files": []})
    return path


def own_checkpoint_file(folder: str | Path, name: str) -> Path:
    """``folder / name``, listed in the manifest of ``folder`` (a claimed checkpoint folder)
    as labelaudit's own before it is written, so that it is removed with the checkpoints:
    only the files so listed ever are.

    Raises
    ------
    InvalidParameterError
        Something labelaudit did not write is there under that name.
    """
    path = Path(folder)
    with _LOCK:
        note = _read_note(path)
        listed = "files" in note  # an older manifest lists nothing: its files are adopted
        files = note.setdefault("files", [])
        if name not in files:
            taken = path / name
            if listed and (taken.exists() or taken.is_symlink()):
                raise InvalidParameterError(
                    f"checkpoint folder {path} holds {name!r}, which labelaudit did not "
                    "write: move it out, or choose a new or empty folder")
            files.append(name)
            _write_note(path, note)
    return path / name


def checkpoint_files(folder: str | Path) -> list[str]:
    """The names labelaudit listed as its own in ``folder`` (:func:`own_checkpoint_file`)."""
    return [n for n in _read_note(Path(folder)).get("files", []) if _plain_name(n)]


def drop_checkpoint_files(folder: str | Path, names: Iterable[str] | None = None) -> None:
    """Delete the files (and scratch folders) labelaudit listed as its own in ``folder``:
    those of ``names`` among them, or all; anything else there stays."""
    path = Path(folder)
    with _LOCK:
        note = _read_note(path)
        files = note.get("files", [])
        gone = {n for n in (files if names is None else names) if n in files and _plain_name(n)}
        for name in gone:
            _delete(path / name)
        if gone:
            note["files"] = [n for n in files if n not in gone]
            _write_note(path, note)


def release_checkpoint_folder(folder: str | Path) -> None:
    """After a run: delete labelaudit's files in ``folder`` and its manifest, then the
    folder and the parents labelaudit made for it, each only when it is empty. A folder
    the user gave, even empty, stays; one labelaudit made that holds something it did not
    write stays too, with a :class:`CheckpointWarning` naming what is kept."""
    path = Path(folder)
    drop_checkpoint_files(path)
    note = _read_note(path)
    _delete(path / _MANIFEST)
    if note.get("made_folder") is not True:  # the user's (or an older manifest's): it stays
        return
    kept = sorted(p.name for p in path.iterdir()) if path.is_dir() else []
    if kept:
        warnings.warn(f"checkpoint folder {path} is kept: it holds what labelaudit did not "
                      f"write there ({format_values(kept)}); labelaudit's checkpoints in it "
                      "are removed", CheckpointWarning, stacklevel=3)
        return
    made = int(note.get("made_parents", 0) or 0)
    for level in [path, *list(path.absolute().parents)[:made]]:
        try:
            level.rmdir()
        except OSError:
            return  # not empty (or gone): it and those above it stay


def _read_note(folder: Path) -> dict[str, Any]:
    """The manifest of ``folder`` (empty when there is none of labelaudit's)."""
    try:
        note = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return note if isinstance(note, dict) and note.get("labelaudit") == _MARK else {}


def _write_note(folder: Path, note: dict[str, Any]) -> None:
    with atomic_path(folder / _MANIFEST, record=False) as tmp:
        tmp.write_text(json.dumps(note), encoding="utf-8")


def _delete(path: Path) -> None:
    """Delete labelaudit's file or scratch folder ``path``, and what an interrupted atomic
    write of it left beside it."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    for left in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        left.unlink(missing_ok=True)


def _plain_name(name: object) -> bool:
    """Whether ``name`` (from a manifest) names an entry of its folder, nothing outside."""
    return (isinstance(name, str) and name not in ("", ".", "..", _MANIFEST)
            and Path(name).name == name and "\\" not in name)


def _is_ours(manifest: Path) -> bool:
    return bool(_read_note(manifest.parent))


@contextmanager
def fold_checkpoints(folder: str | Path | None, *,
                     resume: bool = True) -> Iterator[FoldStore | None]:
    """The :class:`FoldStore` of ``folder`` for the block (``None`` for no folder): a
    cross-fit given it as ``store=`` saves each finished fold there and takes a fold saved
    by an earlier, interrupted run of the same cross-fit (same scorer options, features,
    labels and folds) instead of fitting it again. The checkpoints are removed when the
    block ends without an error. With ``resume=False`` those of an earlier run are
    discarded first."""
    if folder is None:
        yield None
        return
    store = FoldStore(folder, resume=resume)
    yield store
    store.remove()
