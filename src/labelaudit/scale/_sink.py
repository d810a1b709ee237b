"""Write a scan's output chunk by chunk, most suspect first, without holding it all.

:class:`RankSorter` is an external sort: each output chunk (in input order) is split by
rank range into small Parquet pieces, one folder per range; the ranges are then read back
one at a time, sorted, and appended to the output by :class:`ChunkWriter`, which writes a
temporary file beside the target and renames it into place when done.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit.io._write import _SUFFIX_FORMAT as SUFFIXES

__all__ = ["ChunkWriter", "FolderWriter", "RankSorter", "check_output", "is_folder_output",
           "is_scan_output", "writer_for"]

# Columns every scan output has; a file without them is not ours to overwrite.
SIGNATURE = ("id", "label", "suggested_label", "given_prob", "rank", "flagged")


def _header(path: Path, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except Exception:  # not a Parquet file at all
            return []
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
    except (OSError, UnicodeDecodeError):
        return []
    if fmt in ("jsonl", "json"):
        try:
            record = json.loads(first.strip().lstrip("[").rstrip(","))
        except json.JSONDecodeError:
            return []
        return list(record) if isinstance(record, dict) else []
    return first.rstrip("\r\n").split("\t" if fmt == "tsv" else ",")


def is_scan_output(path: str | Path) -> bool:
    """Whether an existing file is a labelaudit scan output (it has the columns
    ``id, label, suggested_label, given_prob, rank, flagged``)."""
    target = Path(path)
    fmt = SUFFIXES.get(target.suffix.lower())
    return fmt is not None and set(SIGNATURE) <= set(_header(target, fmt))


def is_folder_output(out: str | Path) -> bool:
    """Whether ``out`` names a folder of Parquet parts: a path ending in ``/``, or a URI
    (``s3://bucket/issues``) without a file suffix."""
    text = str(out)
    return text.endswith("/") or ("://" in text and
                                  Path(text).suffix.lower() not in SUFFIXES)


def check_output(out: str | Path, inputs: Sequence[str]) -> str:
    """Check the output path before any work; return its format (``"parts"`` for a
    folder of Parquet files).

    Refused with :class:`InvalidParameterError`: an unknown suffix, an input file, an
    unwritable folder, and an existing file or folder that is not a labelaudit scan output.
    """
    from labelaudit.io import check_output_paths
    from labelaudit.io._write import format_of

    if is_folder_output(out):
        FolderWriter(out).check()
        return "parts"
    target = Path(out)
    fmt = format_of(target)
    check_output_paths([("out", str(out))], [("an input file", p) for p in inputs])
    if target.exists() and not is_scan_output(target):
        raise InvalidParameterError(
            f"out {out} exists and is not a labelaudit scan output (it lacks the columns "
            f"{', '.join(SIGNATURE)}); remove it or choose another file")
    return fmt


class ChunkWriter:
    """Append DataFrames to one output file, written atomically.

    Parquet goes through one :class:`pyarrow.parquet.ParquetWriter` (one row group per
    chunk, every chunk cast to the first chunk's schema widened by later ones), CSV/TSV and
    JSON lines are appended as text, JSON as one array. Use as a context manager; the file
    appears under its name only when the block ends without an error.

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
        self.path = Path(path)
        self.format = SUFFIXES[self.path.suffix.lower()]
        self.schema = schema
        self._tmp: Path | None = None
        self._stack: Any = None
        self._handle: IO[str] | None = None
        self._parquet: Any = None
        self._rows = 0

    def __enter__(self) -> ChunkWriter:
        from contextlib import ExitStack

        from labelaudit.io import atomic_path

        self._stack = ExitStack()
        self._tmp = self._stack.enter_context(atomic_path(self.path))
        if self.format != "parquet":
            self._handle = open(self._tmp, "w", encoding="utf-8", newline="")  # noqa: SIM115
            if self.format == "json":
                self._handle.write("[")
        return self

    def write(self, frame: pd.DataFrame) -> None:
        """Append rows."""
        from labelaudit.io._write import _flat_cells, _write_jsonl

        if self.format == "parquet":
            self.write_table(_to_arrow(frame, self.schema))
            return
        assert self._handle is not None
        if self.format in ("csv", "tsv"):
            _flat_cells(frame).to_csv(self._handle, index=False, header=self._rows == 0,
                                      sep="\t" if self.format == "tsv" else ",")
        elif self.format == "jsonl":
            _write_jsonl(frame, self._handle)
        else:
            import io

            buffer = io.StringIO()
            _write_jsonl(frame, buffer)
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
        except BaseException:
            self._stack.__exit__(*sys.exc_info())  # atomic_path removes the temporary file
            raise
        # atomic_path renames the file into place, or removes it after an error
        self._stack.__exit__(kind, value, traceback)

    def _close(self, *, failed: bool) -> None:
        if self._handle is not None:
            if self.format == "json":
                self._handle.write("\n]\n")
            self._handle.close()
        if self.format == "parquet":
            if self._parquet is None and not failed:  # no rows: an empty table
                import pyarrow.parquet as pq

                pq.write_table(self.schema.empty_table() if self.schema is not None
                               else _to_arrow(pd.DataFrame(), None), self._tmp)
            elif self._parquet is not None:
                self._parquet.close()


class FolderWriter:
    """Write output chunks as ``part-00000.parquet``, ``part-00001.parquet``, ... in a
    folder, local or remote (any URI :func:`pyarrow.fs.FileSystem.from_uri` opens, such
    as ``s3://bucket/issues/``), in order: reading the folder gives the rows most suspect
    first. A local folder is written beside the target and renamed into place; a remote
    one gets a ``_SUCCESS`` marker last. An existing folder is replaced only if it holds
    nothing but such parts.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = str(pathlib.Path(tempfile.mkdtemp()) / "issues") + "/"
    >>> with FolderWriter(folder) as writer:
    ...     writer.write(pd.DataFrame({"rank": [1, 2]}))
    ...     writer.write(pd.DataFrame({"rank": [3]}))
    >>> pd.read_parquet(folder)["rank"].tolist()
    [1, 2, 3]
    """

    def __init__(self, out: str | Path, *, schema: Any = None) -> None:
        self.out = str(out).rstrip("/")
        self.remote = "://" in self.out
        self.schema = schema
        self._parts = 0
        self._staging: Path | None = None

    def _filesystem(self) -> tuple[Any, str]:
        import pyarrow.fs as pafs

        if not self.remote:
            return pafs.LocalFileSystem(), str(Path(self.out).resolve())
        try:
            return pafs.FileSystem.from_uri(self.out)
        except Exception as exc:  # pyarrow raises several types
            raise InvalidParameterError(f"out {self.out}: cannot open ({exc})") from None

    def check(self) -> None:
        """Refuse an existing folder that holds anything but labelaudit parts."""
        import pyarrow.fs as pafs

        fs, path = self._filesystem()
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return
        if info.type != pafs.FileType.Directory:
            raise InvalidParameterError(
                f"out {self.out} is a file; give a folder for parts (ending in /) or a file "
                "with a suffix")
        names = [Path(i.path).name for i in fs.get_file_info(pafs.FileSelector(path))]
        foreign = [n for n in names if not (n == "_SUCCESS" or (n.startswith("part-")
                                                                and n.endswith(".parquet")))]
        if foreign:
            raise InvalidParameterError(
                f"out {self.out} exists and is not a labelaudit output folder (it holds "
                f"{', '.join(sorted(foreign)[:3])}); remove it or choose another folder")

    def __enter__(self) -> FolderWriter:
        if not self.remote:
            target = Path(self.out)
            target.parent.mkdir(parents=True, exist_ok=True)
            self._staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.",
                                                  dir=target.parent))
        else:
            fs, path = self._filesystem()
            fs.create_dir(path, recursive=True)
            fs.delete_dir_contents(path, missing_dir_ok=True)
        return self

    def write(self, frame: pd.DataFrame) -> None:
        self.write_table(_to_arrow(frame, self.schema))

    def write_table(self, table: Any) -> None:
        import pyarrow.parquet as pq

        self.schema = self.schema or table.schema
        if table.schema != self.schema:
            table = table.select(self.schema.names).cast(self.schema)
        name = f"part-{self._parts:05d}.parquet"
        self._parts += 1
        if self._staging is not None:
            pq.write_table(table, self._staging / name)
        else:
            fs, path = self._filesystem()
            pq.write_table(table, f"{path}/{name}", filesystem=fs)

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        from labelaudit.io._write import replace_folder

        if self._staging is not None:
            if kind is None:
                if self._parts == 0 and self.schema is not None:
                    self.write_table(self.schema.empty_table())
                replace_folder(self._staging, Path(self.out))
            else:
                shutil.rmtree(self._staging, ignore_errors=True)
        elif kind is None:
            fs, path = self._filesystem()
            with fs.open_output_stream(f"{path}/_SUCCESS"):
                pass


def writer_for(out: str | Path, *, schema: Any = None) -> Any:
    """A :class:`FolderWriter` for a folder output, else a :class:`ChunkWriter`."""
    if is_folder_output(out):
        return FolderWriter(out, schema=schema)
    return ChunkWriter(out, schema=schema)


def _to_arrow(frame: pd.DataFrame, schema: Any) -> Any:
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if schema is not None and table.schema != schema:
        table = table.select(schema.names).cast(schema)
    return table


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
