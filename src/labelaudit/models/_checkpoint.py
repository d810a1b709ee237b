"""Fold checkpoints of an in-memory cross-fit: every finished fold's held-out
probabilities saved as it ends, so that a rerun of an interrupted scan fits only the
folds it had not finished (``scan(checkpoint_dir=...)``, ``labelaudit scan
--checkpoint-dir``). The streamed scan has its own (``labelaudit.engine``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError

__all__ = ["FoldStore", "active_fold_store", "claim_checkpoint_folder", "fold_checkpoints"]

_MARK = "labelaudit fold checkpoints"
_MANIFEST = "checkpoints.json"
_STORE: ContextVar[FoldStore | None] = ContextVar("labelaudit_fold_store", default=None)


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
            self.remove()
            self.folder = claim_checkpoint_folder(folder)

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
        self.loaded += 1
        return found

    def save(self, key: str, fold: int, rows: np.ndarray, probs: Any) -> None:
        """Keep one fold's held-out predictions (array outputs only), atomically."""
        if not isinstance(probs, np.ndarray):
            return
        from labelaudit.io import atomic_path

        with atomic_path(self._path(key, fold), record=False) as tmp, open(tmp, "wb") as f:
            np.savez(f, rows=np.asarray(rows), probs=probs)

    def remove(self) -> None:
        """Delete the checkpoints, and the folder when labelaudit made it and nothing else
        is in it (a folder the user gave, even empty, stays)."""
        made = _made_folder(self.folder / _MANIFEST)
        for path in self.folder.glob("*_fold_*.npz"):
            path.unlink(missing_ok=True)
        (self.folder / _MANIFEST).unlink(missing_ok=True)
        if not made:
            return
        try:
            self.folder.rmdir()
        except OSError:
            pass


def claim_checkpoint_folder(folder: str | Path) -> Path:
    """A folder for labelaudit's checkpoints (scan's folds, consistency's fits), made with
    its manifest unless it is there already; a file, or a folder holding other things and
    no manifest of labelaudit's, is refused, so no checkpoint lands among a user's files.
    The manifest says whether labelaudit made the folder: only then is it removed with the
    checkpoints.

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
    path.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        manifest.write_text(json.dumps({"labelaudit": _MARK, "made_folder": made}),
                            encoding="utf-8")
    return path


def _is_ours(manifest: Path) -> bool:
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("labelaudit") == _MARK
    except (OSError, ValueError, AttributeError):
        return False


def _made_folder(manifest: Path) -> bool:
    """Whether labelaudit made the folder of ``manifest`` (an older manifest, without the
    note, counts as not: the folder stays)."""
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("made_folder") is True
    except (OSError, ValueError, AttributeError):
        return False


def active_fold_store() -> FoldStore | None:
    """The store of the enclosing :func:`fold_checkpoints` block, if any."""
    return _STORE.get()


@contextmanager
def fold_checkpoints(folder: str | Path | None, *,
                     resume: bool = True) -> Iterator[FoldStore | None]:
    """Within the block, every cross-fit saves each finished fold to ``folder`` and takes
    a fold saved there by an earlier, interrupted run of the same cross-fit (same scorer
    options, features, labels and folds) instead of fitting it again. The checkpoints are
    removed when the block ends without an error; ``None`` does nothing. With
    ``resume=False`` the checkpoints of an earlier run are discarded first."""
    if folder is None:
        yield None
        return
    store = FoldStore(folder, resume=resume)
    token = _STORE.set(store)
    try:
        yield store
    finally:
        _STORE.reset(token)
    store.remove()
