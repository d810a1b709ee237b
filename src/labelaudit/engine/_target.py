"""Where a scan's output goes: its format, whether one is there already, its filesystem.

A local path or a URI that :func:`pyarrow.fs.FileSystem.from_uri` opens
(``s3://bucket/issues.parquet``); a path ending in ``/`` or a URI without a file suffix is a
folder of Parquet parts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidParameterError, LabelAuditError
from labelaudit.engine._uri import one_line, open_binary, split_query, storage_hint
from labelaudit.io import SUFFIX_FORMAT, parquet_refusal

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SIGNATURE", "is_folder_output", "is_local", "is_scan_output", "out_filesystem",
           "out_info", "path_key", "to_arrow"]

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
