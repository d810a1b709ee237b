"""An external sort of a streamed scan's output rows by rank, through small Parquet
files on disk, so the output is written most suspect first without holding it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RankSorter"]


class RankSorter:
    """An external sort of output rows by their ``rank`` column (1-based, unique).

    ``add`` splits a frame into rank ranges of ``part_size`` and writes each piece as a
    small Parquet file under ``folder/part_<p>/``; ``tables`` yields the ranges in order,
    each sorted, as :class:`pyarrow.Table` cast to one schema that fits every piece.

    Examples
    --------
    >>> import tempfile
    >>> sorter = RankSorter(tempfile.mkdtemp(), part_size=2)
    >>> sorter.add(pd.DataFrame({"rank": [3, 1], "x": ["c", "a"]}))
    >>> sorter.add(pd.DataFrame({"rank": [2], "x": ["b"]}))
    >>> [t.column("x").to_pylist() for t in sorter.tables()]
    [['a', 'b'], ['c']]
    """

    def __init__(self, folder: str | Path, *, part_size: int) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.part_size = part_size
        self._pieces = 0
        self._files: dict[int, list[Path]] = {}

    def add(self, frame: pd.DataFrame) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        part = (frame["rank"].to_numpy() - 1) // self.part_size
        table = pa.Table.from_pandas(frame, preserve_index=False)
        order = np.argsort(part, kind="stable")
        bounds = np.flatnonzero(np.diff(part[order])) + 1
        for chunk in np.split(order, bounds):
            if not len(chunk):
                continue
            p = int(part[chunk[0]])
            folder = self.folder / f"part_{p:06d}"
            folder.mkdir(exist_ok=True)
            path = folder / f"piece_{self._pieces:06d}.parquet"
            self._pieces += 1
            pq.write_table(table.take(pa.array(chunk)), path)
            self._files.setdefault(p, []).append(path)

    def schema(self) -> Any:
        """One schema that every piece can be cast to (types widened, nulls filled)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        schemas = [pq.read_schema(f) for files in self._files.values() for f in files]
        if not schemas:
            return None
        unified = pa.unify_schemas(schemas, promote_options="permissive")
        return unified.remove_metadata()

    def tables(self) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = self.schema()
        for p in sorted(self._files):
            pieces = [pq.read_table(f).select(schema.names) for f in self._files[p]]
            table = pa.concat_tables([t.cast(schema) if t.schema != schema else t
                                      for t in (t.replace_schema_metadata() for t in pieces)])
            yield table.sort_by("rank")

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
