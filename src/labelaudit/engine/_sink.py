"""The output side of a streamed scan: its rows written chunk by chunk, most suspect first,
without holding them all.

:func:`check_output` checks the output before any work: its format, whether an earlier scan
output is there, its filesystem (a local path or a URI that
:func:`pyarrow.fs.FileSystem.from_uri` opens, such as ``s3://bucket/issues.parquet``; a path
ending in ``/`` or a URI without a file suffix is a folder of Parquet parts).
:class:`RankSorter` is an external sort: each output chunk (in input order) is split by rank
range into small Parquet pieces, one folder per range; the ranges are then read back one at
a time, sorted, and appended to the output by the writer :func:`writer_for` picks:
:class:`ChunkWriter`, which writes a temporary file beside the target and renames it into
place when done (a remote target is uploaded in one piece when done), or
:class:`FolderWriter`, a folder of Parquet parts, local or remote.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditError
from labelaudit.engine._source import one_line, open_binary, split_query, storage_hint
from labelaudit.io import (
    SUFFIX_FORMAT,
    atomic_path,
    check_output_paths,
    check_replaceable,
    flat_cells,
    format_of,
    parquet_refusal,
    record_output,
    replace_folder,
    write_jsonl,
)

if TYPE_CHECKING:
    import pandas as pd


# Columns every scan output has; a file without them is not ours to overwrite.
SIGNATURE = ("id", "label", "suggested_label", "given_prob", "rank", "flagged")


def _header(path: str | Path, fmt: str) -> list[str]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            with open_binary(str(path)) as raw:
                return list(pq.read_schema(raw).names)
        except Exception:  # missing, or not a Parquet file at all
            return []
    try:
        with open_binary(str(path)) as raw:
            first = raw.readline().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError, LabelAuditError):
        return []
    if fmt in ("jsonl", "json"):
        try:
            record = json.loads(first.strip().lstrip("[").rstrip(","))
        except json.JSONDecodeError:
            return []
        return list(record) if isinstance(record, dict) else []
    return first.rstrip("\r\n").split("\t" if fmt == "tsv" else ",")


def is_scan_output(path: str | Path) -> bool:
    """Whether an existing file (a path, or a URI such as ``s3://bucket/issues.csv``) is a
    labelaudit scan output (it has the columns ``id, label, suggested_label, given_prob,
    rank, flagged``)."""
    fmt = SUFFIX_FORMAT.get(Path(split_query(str(path))[0]).suffix.lower())
    return fmt is not None and set(SIGNATURE) <= set(_header(path, fmt))


def is_folder_output(out: str | Path) -> bool:
    """Whether ``out`` names a folder of Parquet parts: a path ending in ``/``, or a URI
    (``s3://bucket/issues``) without a file suffix.

    Examples
    --------
    >>> [is_folder_output(o) for o in ["out/", "s3://b/issues", "s3://b/issues.parquet",
    ...                                "s3://b/i.csv?endpoint_override=h:9000&scheme=http"]]
    [True, True, False, False]
    """
    where = split_query(str(out))[0]
    return where.endswith("/") or ("://" in where and
                                   Path(where).suffix.lower() not in SUFFIX_FORMAT)


def is_local(fs: Any) -> bool:
    """Whether a pyarrow filesystem is this machine's."""
    return bool(fs.type_name == "local")


def path_key(path: str | Path) -> str:
    """A path to compare with others: local files (and ``file://`` URIs) resolved, other
    URIs without their query."""
    text = split_query(str(path))[0]
    if text.startswith("file://"):
        text = text[len("file://"):]
    elif "://" in text:
        return text.rstrip("/")
    return str(Path(text).resolve())


def out_filesystem(uri: str) -> tuple[Any, str]:
    """The pyarrow filesystem of an output URI, or an :class:`InvalidParameterError`."""
    import pyarrow.fs as pafs

    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception as exc:  # pyarrow raises several types
        raise InvalidParameterError(f"out {split_query(uri)[0]}: cannot open "
                                    f"({one_line(exc)}){storage_hint(uri)}") from None


def out_info(fs: Any, path: str, where: str) -> Any:
    """``fs.get_file_info(path)``; for remote storage, refuse a bucket that does not exist
    before any work is done (pyarrow would fail only when the output is written)."""
    import pyarrow.fs as pafs

    try:
        info = fs.get_file_info(path)
        if info.type != pafs.FileType.NotFound or is_local(fs):
            return info
        bucket = path.split("/", 1)[0]
        if fs.get_file_info(bucket).type != pafs.FileType.NotFound:
            return info
    except OSError as exc:
        raise InvalidParameterError(
            f"out {where}: cannot reach it ({one_line(exc)}){storage_hint(where)}") from None
    make = f", e.g. `aws s3 mb s3://{bucket}`" if where.startswith("s3://") else ""
    raise InvalidParameterError(
        f"out {where}: the bucket {bucket!r} does not exist (or these credentials cannot "
        f"see it); create it first{make}, or write elsewhere")


def to_arrow(frame: pd.DataFrame, schema: Any) -> Any:
    """``frame`` as a :class:`pyarrow.Table`, cast to ``schema`` when one is given."""
    import pyarrow as pa

    with parquet_refusal():
        table = pa.Table.from_pandas(frame, preserve_index=False)
    if schema is not None and table.schema != schema:
        table = table.select(schema.names).cast(schema)
    return table


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
    >>> import tempfile, pathlib, pandas as pd
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


class FolderWriter:
    """Write output chunks as ``part-00000.parquet``, ``part-00001.parquet``, ... in a
    folder, local or remote (any URI :func:`pyarrow.fs.FileSystem.from_uri` opens, such
    as ``s3://bucket/issues/``), in order: reading the folder gives the rows most suspect
    first. A local folder is written beside the target and renamed into place. A remote
    one (object stores have no rename) loses its ``_SUCCESS`` marker first, gets its parts
    (replacing earlier ones of the same name), then loses the earlier parts past the last
    one and gets ``_SUCCESS`` back: a remote folder without ``_SUCCESS`` is unfinished. An
    existing folder is replaced only if it holds nothing but such parts, and a local one
    only if labelaudit wrote each of them, unchanged since (or changed, with ``overwrite``):
    the rule of every output file (:func:`labelaudit.io.check_replaceable`).

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> folder = str(pathlib.Path(tempfile.mkdtemp()) / "issues") + "/"
    >>> with FolderWriter(folder) as writer:
    ...     writer.write(pd.DataFrame({"rank": [1, 2]}))
    ...     writer.write(pd.DataFrame({"rank": [3]}))
    >>> pd.read_parquet(folder)["rank"].tolist()
    [1, 2, 3]
    """

    def __init__(self, out: str | Path, *, schema: Any = None) -> None:
        where, self._query = split_query(str(out))
        self.out = where.rstrip("/")
        self.remote = "://" in self.out
        self.schema = schema
        self._parts = 0
        self._staging: Path | None = None
        self._old: set[str] = set()

    def _filesystem(self) -> tuple[Any, str]:
        import pyarrow.fs as pafs

        if not self.remote:
            return pafs.LocalFileSystem(), str(Path(self.out).resolve())
        return out_filesystem(self.out + self._query)

    def check(self, inputs: Sequence[str] = (), *, overwrite: bool = False) -> None:
        """Refuse a folder that holds an input file, and an existing folder that holds
        anything but labelaudit parts (locally: parts it wrote, unchanged since or, with
        ``overwrite``, changed)."""
        import pyarrow.fs as pafs


        inside = [p for p in inputs if path_key(p).startswith(path_key(self.out) + "/")]
        if inside:
            raise InvalidParameterError(
                f"out {self.out} holds the input file {split_query(inside[0])[0]}; labelaudit "
                "never overwrites an input: choose another folder")
        fs, path = self._filesystem()
        info = out_info(fs, path, self.out)
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
        if not self.remote:
            for name in sorted(names):
                check_replaceable(Path(self.out) / name, name="out", overwrite=overwrite,
                                  what="choose another folder")

    def __enter__(self) -> FolderWriter:
        if not self.remote:
            target = Path(self.out)
            target.parent.mkdir(parents=True, exist_ok=True)
            self._staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.",
                                                  dir=target.parent))
            return self
        import pyarrow.fs as pafs

        fs, path = self._filesystem()
        with self._writing():
            if is_local(fs):  # object stores have no folders to make
                fs.create_dir(path, recursive=True)
            listed = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
            self._old = {Path(i.path).name for i in listed if i.type == pafs.FileType.File}
            if "_SUCCESS" in self._old:
                fs.delete_file(f"{path}/_SUCCESS")
        return self

    def _writing(self) -> Any:
        """A context that turns pyarrow's errors while writing into one line."""
        from contextlib import contextmanager

        @contextmanager
        def writing() -> Iterator[None]:
            try:
                yield
            except OSError as exc:
                raise InvalidParameterError(f"out {self.out}: cannot write ({one_line(exc)})"
                                            f"{storage_hint(self.out)}") from None
        return writing()

    def write(self, frame: pd.DataFrame) -> None:
        self.write_table(to_arrow(frame, self.schema))

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
            with self._writing():
                pq.write_table(table, f"{path}/{name}", filesystem=fs)

    def __exit__(self, kind: object, value: object, traceback: object) -> None:
        if kind is None and self._parts == 0 and self.schema is not None:
            self.write_table(self.schema.empty_table())
        if self._staging is not None:
            if kind is None:
                target = replace_folder(self._staging, Path(self.out))
                for part in sorted(target.glob("part-*.parquet")):
                    record_output(part)  # ours: a rerun may replace it, unless it is edited
            else:
                shutil.rmtree(self._staging, ignore_errors=True)
        elif kind is None:
            fs, path = self._filesystem()
            written = {f"part-{i:05d}.parquet" for i in range(self._parts)}
            with self._writing():
                for name in sorted(self._old - written - {"_SUCCESS"}):
                    fs.delete_file(f"{path}/{name}")
                with fs.open_output_stream(f"{path}/_SUCCESS"):
                    pass


class RankSorter:
    """An external sort of output rows by their ``rank`` column (1-based, unique).

    ``add`` splits a frame into rank ranges of ``part_size`` and writes each piece as a
    small Parquet file under ``folder/part_<p>/``; ``tables`` yields the ranges in order,
    each sorted, as :class:`pyarrow.Table` cast to one schema that fits every piece.

    Examples
    --------
    >>> import tempfile, pandas as pd
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


def check_output(out: str | Path, inputs: Sequence[str], *, overwrite: bool = False) -> str:
    """Check the output path (local, or a URI pyarrow opens) before any work; return its
    format (``"parts"`` for a folder of Parquet files).

    Refused with :class:`InvalidParameterError`: an unknown suffix, an input file (or a
    folder that holds one), an unwritable folder, a missing bucket, a local file that
    labelaudit did not write (whatever ``overwrite``) or that was changed since it wrote it
    (unless ``overwrite``: the rule of every command, see
    :func:`labelaudit.io.check_replaceable`), and a remote file or a folder that is not a
    labelaudit scan output.
    """
    if is_folder_output(out):
        FolderWriter(out).check(inputs, overwrite=overwrite)
        return "parts"
    text = str(out)
    where = split_query(text)[0]
    fmt = format_of(where)
    local_inputs = [("an input file", path_key(p)) for p in inputs
                    if "://" not in p or p.startswith("file://")]
    if "://" not in text:
        check_output_paths([("out", text)], local_inputs, overwrite=overwrite)
        return fmt
    if any(path_key(p) == path_key(text) for p in inputs):
        raise InvalidParameterError(
            f"{where} (the output) is an input file; labelaudit never overwrites an input: "
            "choose another output file")
    import pyarrow.fs as pafs

    fs, path = out_filesystem(text)
    if is_local(fs):  # file://: the local rule, --overwrite included
        check_output_paths([("out", path)], local_inputs, overwrite=overwrite)
    info = out_info(fs, path, where)
    if info.type == pafs.FileType.Directory:
        raise InvalidParameterError(
            f"out {where} is a folder; give a file with a suffix, or the folder ending in / "
            "for Parquet parts")
    if info.type == pafs.FileType.File and not is_scan_output(text):
        raise InvalidParameterError(
            f"out {where} exists and is not a labelaudit scan output (it lacks the columns "
            f"{', '.join(SIGNATURE)}); remove it or choose another file")
    return fmt


def writer_for(out: str | Path, *, schema: Any = None) -> Any:
    """A :class:`FolderWriter` for a folder output, else a :class:`ChunkWriter`."""
    if is_folder_output(out):
        return FolderWriter(out, schema=schema)
    return ChunkWriter(out, schema=schema)
