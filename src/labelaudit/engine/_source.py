"""The files of a dataset: one file, a folder or a glob, local or a URI, in reading order."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidInputError
from labelaudit.engine._uri import (
    filesystem,
    not_found_hint,
    one_line,
    split_query,
    storage_hint,
)

__all__ = ["Source", "is_streamable", "resolve_source"]

_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "tsv",
            ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Source:
    """The files of a dataset, in reading order.

    Attributes
    ----------
    paths : tuple of str
        Local files or URIs (``s3://bucket/data/part-0.parquet``), sorted by name; each
        URI keeps the query (``?endpoint_override=...``) of the URI it was listed from.
    format : {"parquet", "csv", "tsv", "jsonl"}
    remote : bool
        True for a URI with a scheme (``s3://``, ``gs://``).
    """

    paths: tuple[str, ...]
    format: str
    remote: bool = False

    def fingerprint(self) -> list[list[Any]]:
        """``[path, size, mtime_ns]`` of every file, so a checkpoint can tell whether the
        input changed since it was written."""
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
    """The data files under ``folder`` (hidden and ``_``-prefixed files such as ``_SUCCESS``
    skipped), sorted by path."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in files:
            if not name.startswith((".", "_")) and _format_of(name) is not None:
                found.append(os.path.join(root, name))
    return sorted(found)


def resolve_source(source: str | Path | Sequence[str | Path]) -> Source:
    """The files a source names: a file, a folder of files, a glob, or a list of files;
    local, or a URI that :func:`pyarrow.fs.FileSystem.from_uri` opens (``s3://``,
    ``gs://``, ``hdfs://``, ``file://``), listed with pyarrow.

    Raises :class:`InvalidInputError` for a path that does not exist, a glob or folder
    that matches no data file, and files of different formats.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ["b.csv", "a.csv"]:
    ...     _ = (folder / name).write_text("text,label\\nhi,1\\n")
    >>> [pathlib.Path(p).name for p in resolve_source(folder / "*.csv").paths]
    ['a.csv', 'b.csv']
    >>> resolve_source(folder / "*.parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidInputError: no file matches .../*.parquet; ...
    """
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
    """Whether :func:`scan_stream` can read ``source`` chunk by chunk: a URI, a glob, a
    list of paths, a ``.parquet``/``.csv``/``.tsv``/``.jsonl`` file, or a folder of
    them (not a DataFrame, a ``datasets`` folder or a hub name).

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
    """Whether a listed path matches a glob; ``*`` does not cross ``/`` (as for local
    globs) unless the pattern has ``**``."""
    import fnmatch

    return fnmatch.fnmatchcase(path, pattern) and (
        "**" in pattern or path.count("/") == pattern.count("/"))


def _remote_source(uri: str) -> Source:
    """The files of a URI (a file, a folder or a glob), listed with ``pyarrow.fs`` (S3,
    GCS, HDFS, ``file://``; credentials as pyarrow finds them)."""
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
