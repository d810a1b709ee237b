"""The output side of a streamed scan: rows sorted by rank out of core (:class:`RankSorter`)
and written chunk by chunk to one file (:class:`ChunkWriter`) or a folder of Parquet parts
(:class:`FolderWriter`), local or a URI, checked before any work (:func:`check_output`)."""

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
from labelaudit.engine._source import (
    filesystem,
    one_line,
    open_binary,
    split_query,
    storage_hint,
)
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
    """Whether an existing file (a path or a URI) has the :data:`SIGNATURE` columns."""
    fmt = SUFFIX_FORMAT.get(Path(split_query(str(path))[0]).suffix.lower())
    return fmt is not None and set(SIGNATURE) <= set(_header(path, fmt))


def is_folder_output(out: str | Path) -> bool:
    """Whether ``out`` names a folder of Parquet parts: ending in ``/``, or a URI without a
    file suffix.

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
    return bool(fs.type_name == "local")


def path_key(path: str | Path) -> str:
    """A path to compare: local ones (``file://`` too) resolved, URIs without their query."""
    text = split_query(str(path))[0]
    if text.startswith("file://"):
        text = text[len("file://"):]
    elif "://" in text:
        return text.rstrip("/")
    return str(Path(text).resolve())


def out_info(fs: Any, path: str, where: str) -> Any:
    """``fs.get_file_info(path)``, refusing a missing bucket now (pyarrow fails only at the end)."""
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
    """``frame`` as a :class:`pyarrow.Table` of ``schema`` (when given)."""
    import pyarrow as pa

    with parquet_refusal():
        table = pa.Table.from_pandas(frame, preserve_index=False)
    return table if schema is None else conform(table, schema)


def conform(table: Any, schema: Any) -> Any:
    """``table`` with the columns and types of ``schema``."""
    return table if table.schema == schema else table.select(schema.names).cast(schema)


class ChunkWriter:
    """A context manager appending DataFrames to one output file, which appears only when the
    block ends without an error (a remote one is uploaded in one piece then). Parquet gets a
    row group per chunk, cast to the first chunk's schema; JSON is one array."""

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
            fs, inner = filesystem(self.target, out=True)
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
        import pyarrow.parquet as pq

        if self.format != "parquet":
            self.write(table.to_pandas())
            return
        if self._parquet is None:
            self.schema = self.schema or table.schema
            self._parquet = pq.ParquetWriter(self._tmp, self.schema)
        self._parquet.write_table(conform(table, self.schema))
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
        """Upload the finished file (an object store shows it only once it is whole)."""
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
    """Output chunks as ``part-00000.parquet``, ... in a folder, local (renamed into place)
    or remote (``_SUCCESS`` removed first and written last: without it, unfinished).

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
        return filesystem(self.out + self._query, out=True)

    def check(self, inputs: Sequence[str] = (), *, overwrite: bool = False) -> None:
        """Refuse a folder holding an input file, or anything but parts (locally: parts
        that :func:`labelaudit.io.check_replaceable` lets replace)."""
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
            self._staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
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
        table = conform(table, self.schema)
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
    """An external sort by the ``rank`` column: ``add`` writes each rank range of
    ``part_size`` as Parquet pieces under ``folder/part_<p>/``; ``tables`` yields the ranges
    in order, each sorted, cast to one schema."""

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
            yield pa.concat_tables([conform(pq.read_table(f).replace_schema_metadata(), schema)
                                    for f in self._files[p]]).sort_by("rank")

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def check_output(out: str | Path, inputs: Sequence[str], *, overwrite: bool = False) -> str:
    """Check the output (local or a URI) before any work and return its format (``"parts"``
    for a folder): the rule of :func:`labelaudit.io.check_replaceable` locally, and remote
    files must be scan outputs."""
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

    fs, path = filesystem(text, out=True)
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
