"""Chunked reading of Parquet, CSV/TSV and JSON-lines datasets (one file, a folder or a glob).

Nothing here holds more than one chunk of rows at a time: Parquet is read batch by batch
(``pyarrow.parquet.ParquetFile.iter_batches``), CSV with ``pandas.read_csv(chunksize=...)``
(the options and the leading-zero rule of :func:`labelaudit.io.read_table`, so values parse
the same; the first chunk decides which columns are text, and every chunk follows), JSON lines
line by line. The files are those of a :class:`~labelaudit.engine._source.Source`; URIs
are opened through :mod:`labelaudit.engine._uri`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.engine._source import Source, is_streamable, resolve_source
from labelaudit.engine._uri import one_line, open_binary, split_query
from labelaudit.io import zero_padded_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Source", "check_chunk_size", "check_columns", "first_rows",
           "first_rows_hold_label_sets", "is_streamable", "iter_frames", "resolve_source",
           "split_query"]


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
    with (open_binary(path) as raw,
          io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as handle):
        if fmt == "jsonl":
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InvalidInputError(
                            f"{path}: line {number} is not valid JSON ({exc})") from None
                    if not isinstance(record, dict):
                        raise InvalidInputError(f"{path}: line {number} is not a JSON object")
                    return [(str(k), None) for k in record]
            return []
        header = next(csv.reader(handle, delimiter="\t" if fmt == "tsv" else ","), [])
    return [(name, None) for name in header]


def check_columns(source: Source, required: Sequence[str]) -> list[str]:
    """Check that every file has the ``required`` columns and the same columns as the
    first; return the first file's column names.

    A file whose columns (or, for Parquet, the types of the required columns) differ from
    the first file's is named in an :class:`InvalidInputError`.
    """
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
    """The rows of every file in order, as DataFrames of at most ``chunk_size`` rows.

    Parameters
    ----------
    source : Source
    columns : sequence of str, optional
        The columns to read (all by default), in this order.
    chunk_size : int
    text : sequence of str
        Columns a CSV or TSV holds as text whatever their values (the id column), so
        that no chunk reads ``068`` as 68 and every chunk gives them the same type. The
        other columns follow :func:`labelaudit.io.read_table`'s rule, decided on the first
        chunk of the first file: a column of numbers one of which is written with a
        leading zero is text in every chunk.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.jsonl"
    >>> _ = path.write_text("".join(f'{{"text": "t{i}", "label": {i % 2}}}\\n' for i in range(5)))
    >>> [len(f) for f in iter_frames(resolve_source(path), chunk_size=2)]
    [2, 2, 1]
    """
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
        raise InvalidInputError(
            f"{path}: not a readable Parquet file ({one_line(exc)})") from None
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
    """The columns every chunk reads as text: ``text``, and those that the first chunk
    holds as numbers written with a leading zero (:func:`labelaudit.io.zero_padded_columns`)."""
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
            records.append(record)
            if len(records) == chunk_size:
                yield _records_frame(records, columns)
                records = []
    if records:
        yield _records_frame(records, columns)


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
    """``chunk_size`` as a positive whole number, or :class:`InvalidParameterError`."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InvalidParameterError(
            f"chunk_size must be a whole number of rows >= 1; got {chunk_size!r}")
    return chunk_size


def first_rows(source: str | Path | Sequence[str | Path], *,
               columns: Sequence[str] | None = None, rows: int = 1000) -> pd.DataFrame | None:
    """The first ``rows`` rows of a streamable source (of ``columns``, default all), read
    cheaply; None when they cannot be read (the reader that follows says why).

    Examples
    --------
    >>> first_rows("no/such/file.jsonl") is None
    True
    """
    from labelaudit._errors import LabelAuditError

    if not is_streamable(source):
        return None
    try:
        return next(iter_frames(resolve_source(source), columns=columns, chunk_size=rows), None)
    except (LabelAuditError, KeyError, OSError, ValueError):
        return None


def first_rows_hold_label_sets(source: str | Path | Sequence[str | Path], column: str,
                               *, rows: int = 1000) -> bool:
    """Whether the first ``rows`` rows of a file's ``column`` hold label sets (lists);
    False when they cannot be read (the reader that follows says why).

    Examples
    --------
    >>> first_rows_hold_label_sets("no/such/file.jsonl", "label")
    False
    """
    from labelaudit.io import holds_label_sets

    first = first_rows(source, columns=[column], rows=rows)
    return first is not None and holds_label_sets(first[column])
