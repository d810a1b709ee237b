"""Per-item feature arrays shared with worker processes through one memory-mapped file
instead of a copy pickled to each worker."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


class MappedRows(list):
    """A list of per-item 2-D arrays, views of one read-only memory-mapped ``.npy`` file;
    pickled as the file's name and offsets, so every worker maps the same pages.

    Examples
    --------
    >>> import pickle
    >>> rows = [np.ones((2, 3), np.float32), np.zeros((1, 3), np.float32)]
    >>> with mapped_rows(rows, enabled=True) as shared:
    ...     again = pickle.loads(pickle.dumps(shared))
    ...     [r.shape for r in again], float(again[0].sum())
    ([(2, 3), (1, 3)], 6.0)
    """

    def __init__(self, path: str | Path, offsets: Sequence[int]) -> None:
        self.path, self.offsets = str(path), [int(o) for o in offsets]
        data = np.load(self.path, mmap_mode="r")
        super().__init__(data[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:],
                                                   strict=True))

    def __reduce__(self) -> tuple[Any, ...]:
        return MappedRows, (self.path, self.offsets)


@contextmanager
def mapped_rows(rows: Any, *, enabled: bool) -> Iterator[Any]:
    """``rows`` as :class:`MappedRows` in a temporary file within the block, when
    ``enabled`` and they are 2-D arrays of one width and dtype; else as they are."""
    if not (enabled and _mappable(rows)):
        yield rows
        return
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    with tempfile.TemporaryDirectory(prefix="labelaudit-rows-") as folder:
        path = Path(folder) / "rows.npy"
        out = np.lib.format.open_memmap(path, mode="w+", dtype=rows[0].dtype,
                                        shape=(int(offsets[-1]), rows[0].shape[1]))
        for row, start in zip(rows, offsets[:-1], strict=True):
            out[start:start + len(row)] = row
        out.flush()
        del out
        yield MappedRows(path, offsets.tolist())


def _mappable(rows: Any) -> bool:
    if not isinstance(rows, list) or not rows:
        return False
    first = rows[0]
    return all(isinstance(r, np.ndarray) and r.ndim == 2 and r.shape[1] == first.shape[1]
               and r.dtype == first.dtype for r in rows)
