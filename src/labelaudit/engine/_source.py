"""The input side of a streamed scan: a dataset's files (a file, a folder or a glob, local or a
URI) read one chunk of rows at a time, CSV by :func:`labelaudit.io.read_table`'s rules."""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditError
from labelaudit.io import holds_label_sets, zero_padded_columns

if TYPE_CHECKING:
    import pandas as pd


# Every filesystem comes from FileSystem.from_uri, which reads AWS_ENDPOINT_URL and the URI's
# query; the S3FileSystem() constructor does not read AWS_ENDPOINT_URL (pyarrow 26).
# a URI's query: ``?endpoint_override=localhost:9000&scheme=http`` (a ``?`` before a name
# and ``=`` starts one; any other ``?`` is a glob's one-character wildcard)
_QUERY = re.compile(r"\?[A-Za-z_][A-Za-z0-9_]*=[^?/]*$")


def split_query(uri: str) -> tuple[str, str]:
    """A URI without its query (pyarrow's options), and the query (``""`` if none).

    Examples
    --------
    >>> split_query("s3://bucket/data/?endpoint_override=localhost:9000&scheme=http")
    ('s3://bucket/data/', '?endpoint_override=localhost:9000&scheme=http')
    >>> split_query("s3://bucket/data/part-?.parquet")
    ('s3://bucket/data/part-?.parquet', '')
    """
    if "://" not in uri:
        return uri, ""
    match = _QUERY.search(uri)
    return (uri[:match.start()], match.group()) if match else (uri, "")


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (pyarrow's S3 errors span several)."""
    return " ".join(str(exc).split())


def storage_hint(uri: str) -> str:
    """What to check when an ``s3://`` URI cannot be reached or listed; else ``""``."""
    if not uri.startswith("s3://"):
        return ""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if "endpoint_override=" in uri or endpoint:
        where = "endpoint_override in the URI" if "endpoint_override=" in uri else endpoint
        return (f"; check that the storage at {where} is up, and the credentials in "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    return ("; for S3-compatible storage (MinIO, Ceph, R2) set AWS_ENDPOINT_URL "
            "(http://host:port) or add ?endpoint_override=host:port&scheme=http to the URI, "
            "and credentials in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")


def filesystem(uri: str, *, out: bool = False) -> tuple[Any, str]:
    """The pyarrow filesystem of a URI (``out``: the output) and the path inside it."""
    import pyarrow.fs as pafs

    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception as exc:  # pyarrow raises several types
        error = InvalidParameterError if out else InvalidInputError
        raise error(f"{'out ' if out else ''}{split_query(uri)[0]}: cannot open "
                    f"({one_line(exc)}){storage_hint(uri)}") from None


def not_found_hint(uri: str) -> str:
    if not uri.startswith("s3://"):
        return ""
    bucket = uri[len("s3://"):].split("/", 1)[0]
    return (f" (check the bucket {bucket!r} and the prefix, e.g. `aws s3 ls {uri}`; for "
            "S3-compatible storage set AWS_ENDPOINT_URL too)")


def open_binary(path: str) -> Any:
    """A binary file object for a local path or a URI."""
    if "://" in path:
        fs, inner = filesystem(path)
        try:
            return fs.open_input_file(inner)
        except OSError as exc:
            raise InvalidInputError(f"{split_query(path)[0]}: cannot read ({one_line(exc)})"
                                    f"{storage_hint(path)}") from None
    return open(path, "rb")  # noqa: SIM115 - the caller closes it


_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv",
            ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Source:
    """The files of a dataset in reading order: local paths, or URIs each with the query of
    the URI it was listed from (``remote``); ``format`` is parquet, csv, tsv or jsonl."""

    paths: tuple[str, ...]
    format: str
    remote: bool = False

    def fingerprint(self) -> list[list[Any]]:
        """``[path, size, mtime_ns]`` of every file: a checkpoint sees a changed input."""
        out: list[list[Any]] = []
        for p in self.paths:
            if "://" in p:
                fs, inner = filesystem(p)
                info = fs.get_file_info(inner)
                out.append([p, info.size, info.mtime_ns])
            else:
                stat = os.stat(p)
                out.append([str(Path(p).resolve()), stat.st_size, stat.st_mtime_ns])
        return out


def _format_of(path: str) -> str | None:
    return _FORMATS.get(Path(split_query(path)[0].rstrip("/")).suffix.lower())


def _data_files(folder: Path) -> list[str]:
    """The data files under ``folder``, sorted (hidden and ``_`` files, ``_SUCCESS``, skipped)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in files:
            if not name.startswith((".", "_")) and _format_of(name) is not None:
                found.append(os.path.join(root, name))
    return sorted(found)


def resolve_source(source: str | Path | Sequence[str | Path]) -> Source:
    """The files a source names: a file, a folder, a glob or a list of them, local or a URI
    (``s3://``, ``gs://``, ``hdfs://``, ``file://``); all of one format."""
    if isinstance(source, (list, tuple)):
        if not source:
            raise InvalidInputError("the list of input files is empty")
        parts = [resolve_source(s) for s in source]
        formats = {p.format for p in parts}
        if len(formats) > 1:
            raise InvalidInputError(
                f"the input files mix formats ({', '.join(sorted(formats))}); convert them "
                "to one format")
        return Source(tuple(p for part in parts for p in part.paths), formats.pop(),
                      any(p.remote for p in parts))
    text = str(source)
    if "://" in text:
        return _remote_source(text)
    if _GLOB_CHARS & set(text):
        files = sorted(f for f in glob.glob(text, recursive=True)
                       if os.path.isfile(f) and _format_of(f) is not None)
        if not files:
            raise InvalidInputError(
                f"no file matches {text}; check the pattern (quote it so the shell does not "
                "expand it) and the files' suffixes (.parquet .csv .tsv .jsonl)")
    elif os.path.isdir(text):
        files = _data_files(Path(text))
        if not files:
            raise InvalidInputError(
                f"{text}: the folder holds no .parquet, .csv, .tsv or .jsonl file")
    elif os.path.isfile(text):
        if _format_of(text) is None:
            raise InvalidInputError(
                f"{text}: cannot stream {Path(text).suffix or 'a file without a suffix'}; "
                "use .parquet, .csv, .tsv or .jsonl")
        files = [text]
    else:
        raise InvalidInputError(f"{text}: no such file or folder")
    formats = {str(_format_of(f)) for f in files}
    if len(formats) > 1:
        raise InvalidInputError(
            f"{text}: the files mix formats ({', '.join(sorted(formats))}); "
            "convert them to one format or name one kind with a glob (data/*.parquet)")
    return Source(tuple(files), formats.pop(), remote=False)


def is_streamable(source: object) -> bool:
    """Whether :func:`scan_stream` can read ``source`` in chunks (a URI, glob, data file,
    folder or list of them; not a DataFrame, ``datasets`` folder or hub name).

    Examples
    --------
    >>> is_streamable("big.parquet"), is_streamable("s3://bucket/big/"), is_streamable("imdb")
    (True, True, False)
    """
    if isinstance(source, (list, tuple)):
        return bool(source) and all(is_streamable(s) for s in source)
    if not isinstance(source, (str, os.PathLike)):
        return False
    text = os.fspath(source)
    if "://" in text or _GLOB_CHARS & set(text):
        return True
    if os.path.isdir(text):
        return bool(_data_files(Path(text)))
    return _format_of(text) is not None


def _matches(path: str, pattern: str) -> bool:
    """Whether a listed path matches a glob, ``*`` not crossing ``/`` (as locally) but ``**``."""
    import fnmatch

    return fnmatch.fnmatchcase(path, pattern) and (
        "**" in pattern or path.count("/") == pattern.count("/"))


def _remote_source(uri: str) -> Source:
    """The files of a URI (a file, a folder or a glob), listed with ``pyarrow.fs``."""
    import pyarrow.fs as pafs

    where, query = split_query(uri)
    scheme = where.split("://", 1)[0]
    glob_at = min((where.index(c) for c in _GLOB_CHARS if c in where), default=-1)
    base = where if glob_at < 0 else where[:where.rindex("/", 0, glob_at)]
    fs, root = filesystem(base + query)
    try:
        info = fs.get_file_info(root)
        if info.type == pafs.FileType.File:
            found = [root]
        elif info.type == pafs.FileType.Directory:
            found = [i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True))
                     if i.type == pafs.FileType.File]
        else:
            raise InvalidInputError(f"{where}: no such file or folder{not_found_hint(where)}")
    except OSError as exc:
        raise InvalidInputError(
            f"{where}: cannot list ({one_line(exc)}){storage_hint(where)}") from None
    pattern = None if glob_at < 0 else root.rstrip("/") + where[len(base):]
    files = sorted(f for f in found if _format_of(f) is not None
                   and not Path(f).name.startswith((".", "_"))
                   and (pattern is None or _matches(f, pattern)))
    if not files:
        raise InvalidInputError(
            f"no file matches {where}; check the pattern and the files' suffixes "
            "(.parquet .csv .tsv .jsonl)")
    formats = {str(_format_of(f)) for f in files}
    if len(formats) > 1:
        raise InvalidInputError(
            f"{where}: the files mix formats ({', '.join(sorted(formats))}); name one kind "
            "with a glob (s3://bucket/data/*.parquet)")
    prefix = "file://" if scheme == "file" else f"{scheme}://"
    return Source(tuple((prefix + f.lstrip("/") if scheme != "file" else prefix + f) + query
                        for f in files), formats.pop(), remote=True)


def _columns_of(path: str, fmt: str) -> list[tuple[str, str | None]]:
    """A file's columns as ``(name, type)``; the type only for Parquet."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            with open_binary(path) as raw:
                schema = pq.read_schema(raw)
        except InvalidInputError:
            raise
        except Exception as exc:  # pyarrow raises several types
            raise InvalidInputError(
                f"{path}: not a readable Parquet file ({one_line(exc)})") from None
        return [(field.name, str(field.type)) for field in schema]
    if fmt == "jsonl":
        return [(str(k), None) for k in next(_json_records(path), {})]
    with (open_binary(path) as raw,
          io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as handle):
        header = next(csv.reader(handle, delimiter="\t" if fmt == "tsv" else ","), [])
    return [(name, None) for name in header]


def check_columns(source: Source, required: Sequence[str]) -> list[str]:
    """The first file's column names, once every file has the ``required`` columns and the
    first one's columns (and, for Parquet, types of the required ones)."""
    first = _columns_of(source.paths[0], source.format)
    if not first:
        raise InvalidInputError(f"{source.paths[0]}: the file is empty")
    names = [name for name, _ in first]
    missing = [c for c in required if c not in names]
    if missing:
        raise InvalidInputError(
            f"{source.paths[0]}: missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(map(repr, missing))}; the table has "
            f"{', '.join(map(repr, names[:12]))}")
    types = dict(first)
    for path in source.paths[1:]:
        columns = _columns_of(path, source.format)
        other = [name for name, _ in columns]
        if set(other) != set(names):
            lacking = [c for c in names if c not in other]
            extra = [c for c in other if c not in names]
            what = "; ".join(part for part in (
                f"missing {', '.join(map(repr, lacking))}" if lacking else "",
                f"extra {', '.join(map(repr, extra))}" if extra else "") if part)
            raise InvalidInputError(
                f"{path}: its columns differ from those of {source.paths[0]} ({what}); every "
                "file of a dataset needs the same columns")
        for name, kind in columns:
            if name in required and types.get(name) != kind:
                raise InvalidInputError(
                    f"{path}: column {name!r} is {kind} but {types[name]} in "
                    f"{source.paths[0]}; every file of a dataset needs the same types")
    return names


def iter_frames(source: Source, *, columns: Sequence[str] | None = None,
                chunk_size: int = 100_000,
                text: Sequence[str] = ()) -> Iterator[pd.DataFrame]:
    """The rows of every file in order, as DataFrames of at most ``chunk_size`` rows of
    ``columns`` (default all). A CSV's ``text`` columns (the id) are read as text, and so are
    those the first chunk holds as zero-padded numbers (:func:`labelaudit.io.read_table`)."""
    as_text: list[str] | None = None
    for path in source.paths:
        if source.format == "parquet":
            yield from _parquet_frames(path, columns, chunk_size)
        elif source.format == "jsonl":
            yield from _jsonl_frames(path, columns, chunk_size)
        else:
            sep = "\t" if source.format == "tsv" else ","
            if as_text is None:
                as_text = _text_columns(path, columns, chunk_size, sep, text)
            yield from _csv_frames(path, columns, chunk_size, sep, as_text)


def _parquet_frames(path: str, columns: Sequence[str] | None,
                    chunk_size: int) -> Iterator[pd.DataFrame]:
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(open_binary(path))
    except InvalidInputError:
        raise
    except Exception as exc:  # pyarrow raises several types
        raise InvalidInputError(f"{path}: not a readable Parquet file ({one_line(exc)})") from None
    with handle:
        for batch in handle.iter_batches(batch_size=chunk_size,
                                         columns=list(columns) if columns else None):
            yield batch.to_pandas()


@contextmanager
def _csv_errors(path: str, sep: str) -> Iterator[None]:
    """pandas' parsing and decoding errors as one-line :class:`InvalidInputError`."""
    import pandas as pd
    try:
        yield
    except pd.errors.ParserError as exc:
        kind = "TSV" if sep == "\t" else "CSV"
        raise InvalidInputError(f"{path}: cannot parse as {kind}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{path}: undecodable bytes ({exc.reason}): the file is not UTF-8; convert it, "
            "e.g. `iconv -f latin1 -t utf-8`") from None


def _text_columns(path: str, columns: Sequence[str] | None, chunk_size: int, sep: str,
                  text: Sequence[str]) -> list[str]:
    """``text`` and the columns the first chunk holds as zero-padded numbers."""
    import pandas as pd
    with _csv_errors(path, sep), open_binary(path) as raw:
        first = pd.read_csv(raw, sep=sep, keep_default_na=True, dtype=str, nrows=chunk_size,
                            usecols=list(columns) if columns else None, encoding="utf-8-sig")
    return list(dict.fromkeys([*text, *zero_padded_columns(first)]))


def _csv_frames(path: str, columns: Sequence[str] | None, chunk_size: int, sep: str,
                text: Sequence[str]) -> Iterator[pd.DataFrame]:
    import pandas as pd
    with _csv_errors(path, sep):
        reader = pd.read_csv(open_binary(path), sep=sep, keep_default_na=True,
                             chunksize=chunk_size, usecols=list(columns) if columns else None,
                             dtype=dict.fromkeys(text, str), encoding="utf-8-sig")
        with reader:
            for frame in reader:
                yield frame[list(columns)] if columns else frame


def _jsonl_frames(path: str, columns: Sequence[str] | None,
                  chunk_size: int) -> Iterator[pd.DataFrame]:
    records: list[dict[str, Any]] = []
    for record in _json_records(path):
        records.append(record)
        if len(records) == chunk_size:
            yield _records_frame(records, columns)
            records = []
    if records:
        yield _records_frame(records, columns)


def _json_records(path: str) -> Iterator[dict[str, Any]]:
    """The object on each non-blank line of a JSON-lines file."""
    with open_binary(path) as raw, io.TextIOWrapper(raw, encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}: line {number} is not valid JSON ({exc})") \
                    from None
            if not isinstance(record, dict):
                raise InvalidInputError(f"{path}: line {number} is not a JSON object")
            yield record


def _records_frame(records: list[dict[str, Any]], columns: Sequence[str] | None) -> pd.DataFrame:
    import pandas as pd
    frame = pd.DataFrame.from_records(records)
    if columns:
        for name in columns:
            if name not in frame.columns:
                frame[name] = None
        frame = frame[list(columns)]
    return frame


def check_chunk_size(chunk_size: object) -> int:
    """``chunk_size``, refused unless a positive whole number."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InvalidParameterError(
            f"chunk_size must be a whole number of rows >= 1; got {chunk_size!r}")
    return chunk_size


def first_rows(source: str | Path | Sequence[str | Path], *,
               columns: Sequence[str] | None = None, rows: int = 1000) -> pd.DataFrame | None:
    """The first ``rows`` rows of a streamable source, or None if unreadable.

    Examples
    --------
    >>> first_rows("no/such/file.jsonl") is None
    True
    """
    if not is_streamable(source):
        return None
    try:
        return next(iter_frames(resolve_source(source), columns=columns, chunk_size=rows), None)
    except (LabelAuditError, KeyError, OSError, ValueError):
        return None


def first_rows_hold_label_sets(source: str | Path | Sequence[str | Path], column: str,
                               *, rows: int = 1000) -> bool:
    """Whether the first rows of ``column`` hold label sets (False if unreadable).

    Examples
    --------
    >>> first_rows_hold_label_sets("no/such/file.jsonl", "label")
    False
    """
    first = first_rows(source, columns=[column], rows=rows)
    return first is not None and holds_label_sets(first[column])
