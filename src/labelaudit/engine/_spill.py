"""Hashed rows kept on disk between passes: one append-only file per training bucket."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = ["FolderStore"]

_HEADER = np.dtype(np.int64)


class FolderStore:
    """The hashed rows of each bucket, appended to ``folder/bucket_<b>.bin`` as they come.

    A record is ``[n_rows, nnz, width]`` (int64), row numbers (int64), nonzeros per row
    (int32), column indices (int32) and values (float32); :meth:`read` concatenates a
    bucket's records in the order they were written (input order).

    Examples
    --------
    >>> import tempfile, scipy.sparse as sp
    >>> store = FolderStore(tempfile.mkdtemp(), n_buckets=2)
    >>> store.put(1, np.array([4, 7]), sp.csr_matrix(np.array([[0, 1.5], [2.0, 0]],
    ...                                                        dtype=np.float32)))
    >>> store.close()
    >>> matrix, rows = store.read(1)
    >>> rows.tolist(), matrix.toarray().tolist()
    ([4, 7], [[0.0, 1.5], [2.0, 0.0]])
    >>> store.read(0)[1].tolist()
    []
    """

    def __init__(self, folder: str | Path, *, n_buckets: int) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.n_buckets = n_buckets
        self.width = 0
        self._handles: dict[int, IO[bytes]] = {}

    def _path(self, bucket: int) -> Path:
        return self.folder / f"bucket_{bucket:04d}.bin"

    def put(self, bucket: int, rows: np.ndarray, matrix: Any) -> None:
        """Append rows (their row numbers and CSR matrix) to a bucket."""
        handle = self._handles.get(bucket)
        if handle is None:
            handle = self._handles[bucket] = open(self._path(bucket), "ab")  # noqa: SIM115
        self.width = matrix.shape[1]
        np.array([len(rows), matrix.nnz, matrix.shape[1]], dtype=_HEADER).tofile(handle)
        np.asarray(rows, dtype=np.int64).tofile(handle)
        np.diff(matrix.indptr).astype(np.int32).tofile(handle)
        matrix.indices.astype(np.int32).tofile(handle)
        matrix.data.astype(np.float32).tofile(handle)

    def close(self) -> None:
        """Flush every bucket file; call before reading."""
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()

    def read(self, bucket: int) -> tuple[Any, np.ndarray]:
        """A bucket's rows in the order they were added: (CSR float32 matrix, row numbers)."""
        import scipy.sparse as sp

        path = self._path(bucket)
        if not path.exists():
            return sp.csr_matrix((0, self.width), dtype=np.float32), np.zeros(0, np.int64)
        raw = path.read_bytes()
        rows: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        indices: list[np.ndarray] = []
        data: list[np.ndarray] = []
        offset, width = 0, self.width
        while offset < len(raw):
            n, nnz, width = np.frombuffer(raw, _HEADER, 3, offset)
            offset += 24
            for out, dtype, count in ((rows, np.int64, n), (lengths, np.int32, n),
                                      (indices, np.int32, nnz), (data, np.float32, nnz)):
                out.append(np.frombuffer(raw, dtype, int(count), offset))
                offset += int(count) * np.dtype(dtype).itemsize
        lengths_all = np.concatenate(lengths)
        indptr = np.zeros(len(lengths_all) + 1, dtype=np.int64)
        np.cumsum(lengths_all, out=indptr[1:])
        matrix = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                               shape=(len(lengths_all), int(width)))
        return matrix, np.concatenate(rows)

    def remove(self) -> None:
        """Delete the folder and everything in it."""
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)
