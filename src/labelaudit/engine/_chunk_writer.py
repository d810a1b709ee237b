"""Append a scan's output chunks to one file, written atomically (uploaded when remote)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from labelaudit._errors import InvalidParameterError
from labelaudit.engine._target import is_local, out_filesystem, to_arrow
from labelaudit.engine._uri import one_line, split_query, storage_hint
from labelaudit.io import SUFFIX_FORMAT

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ChunkWriter"]


class ChunkWriter:
    """Append DataFrames to one output file, written atomically.

    Parquet goes through one :class:`pyarrow.parquet.ParquetWriter` (one row group per
    chunk, every chunk cast to the first chunk's schema widened by later ones), CSV/TSV and
    JSON lines are appended as text, JSON as one array. Use as a context manager; the file
    appears under its name only when the block ends without an error. A URI other than
    ``file://`` (``s3://bucket/issues.parquet``) is written to a local temporary file and
    uploaded in one piece when the block ends.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> with ChunkWriter(path) as writer:
    ...     writer.write(pd.DataFrame({"a": [1, 2]}))
    ...     writer.write(pd.DataFrame({"a": [3]}))
    >>> path.read_text().split()
    ['a', '1', '2', '3']
    """

    def __init__(self, path: str | Path, *, schema: Any = None) -> None:
        self.target = str(path)
        self.remote = "://" in self.target
        self.path: Path | str = self.target if self.remote else Path(path)
        self.format = SUFFIX_FORMAT[Path(split_query(self.target)[0]).suffix.lower()]
        self.schema = schema
        self._tmp: Path | None = None
        self._upload: tuple[Any, str] | None = None
        self._stack: Any = None
        self._handle: IO[str] | None = None
        self._parquet: Any = None
        self._rows = 0

    def __enter__(self) -> ChunkWriter:
        from contextlib import ExitStack

        from labelaudit.io import atomic_path

        self._stack = ExitStack()
        if not self.remote:
            self._tmp = self._stack.enter_context(atomic_path(self.path))
        else:
            fs, inner = out_filesystem(self.target)
            if is_local(fs):
                self._tmp = self._stack.enter_context(atomic_path(inner))
            else:
                folder = self._stack.enter_context(
                    tempfile.TemporaryDirectory(prefix="labelaudit-out-"))
                self._tmp = Path(folder) / Path(inner).name
                self._upload = (fs, inner)
        if self.format != "parquet":
            self._handle = open(self._tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115
            if self.format == "json":
                self._handle.write("[")
        return self

    def write(self, frame: pd.DataFrame) -> None:
        """Append rows."""
        from labelaudit.io import flat_cells, write_jsonl

        if self.format == "parquet":
            self.write_table(to_arrow(frame, self.schema))
            return
        assert self._handle is not None
        if self.format in ("csv", "tsv"):
            flat_cells(frame).to_csv(self._handle, index=False, header=self._rows == 0,
                                      sep="\t" if self.format == "tsv" else ",")
        elif self.format == "jsonl":
            write_jsonl(frame, self._handle)
        else:
            import io

            buffer = io.StringIO()
            write_jsonl(frame, buffer)
            lines = buffer.getvalue().splitlines()
            if lines:
                self._handle.write(("\n" if self._rows == 0 else ",\n") + ",\n".join(lines))
        self._rows += len(frame)

    def write_table(self, table: Any) -> None:
        """Append a :class:`pyarrow.Table` (Parquet output only)."""
        import pyarrow.parquet as pq

        if self.format != "parquet":
            self.write(table.to_pandas())
            return
        if self._parquet is None:
            self.schema = self.schema or table.schema
            self._parquet = pq.ParquetWriter(self._tmp, self.schema)
        if table.schema != self.schema:
            table = table.select(self.schema.names).cast(self.schema)
        self._parquet.write_table(table)
        self._rows += table.num_rows

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        try:
            self._close(failed=kind is not None)
            if kind is None and self._upload is not None:
                self._put()
        except BaseException:
            self._stack.__exit__(*sys.exc_info())  # atomic_path removes the temporary file
            raise
        # atomic_path renames the file into place, or removes it after an error
        self._stack.__exit__(kind, value, traceback)

    def _put(self) -> None:
        """Upload the finished file (an object store shows the object only once it is
        whole)."""
        assert self._upload is not None and self._tmp is not None
        fs, inner = self._upload
        try:
            with open(self._tmp, "rb") as local, fs.open_output_stream(inner) as remote:
                shutil.copyfileobj(local, remote, 8 << 20)
        except OSError as exc:
            where = split_query(self.target)[0]
            raise InvalidParameterError(
                f"out {where}: cannot write ({one_line(exc)}){storage_hint(where)}") from None

    def _close(self, *, failed: bool) -> None:
        import pandas as pd
        if self._handle is not None:
            if self.format == "json":
                self._handle.write("\n]\n")
            self._handle.close()
        if self.format == "parquet":
            if self._parquet is None and not failed:  # no rows: an empty table
                import pyarrow.parquet as pq

                pq.write_table(self.schema.empty_table() if self.schema is not None
                               else to_arrow(pd.DataFrame(), None), self._tmp)
            elif self._parquet is not None:
                self._parquet.close()

