"""Read tables from CSV, TSV, JSONL, JSON, Parquet and Hugging Face ``datasets`` folders."""

from __future__ import annotations

import io as _stdio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from labelaudit._errors import InvalidInputError

__all__ = ["TABLE_SUFFIXES", "json_lines", "read_table", "read_text", "split_lines"]

TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (a byte-order mark is dropped), or a one-line error.

    A missing file and undecodable bytes (with their line number) are
    :class:`InvalidInputError`.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{path}: is a folder, not a file") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInputError(
            f"{path}: undecodable bytes at line {line} (byte offset {exc.start}): the file is not "
            "UTF-8; convert it, e.g. `iconv -f latin1 -t utf-8`"
        ) from None


def split_lines(text: str) -> list[str]:
    r"""Lines split at ``\n`` only (a trailing ``\r`` dropped).

    Unlike :meth:`str.splitlines`, this keeps U+0085, U+2028 and U+2029 inside a line,
    where JSON strings and tokens may hold them.

    Examples
    --------
    >>> split_lines('{"a": "x\u2028y"}\r\n{"b": 1}') == ['{"a": "x\u2028y"}', '{"b": 1}']
    True
    >>> split_lines('a\u0085b\nc')
    ['a\x85b', 'c']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def json_lines(path: str | Path, text: str | None = None) -> Iterator[tuple[int, Any]]:
    """Line number and JSON value of each non-blank line, in order.

    A line that is not JSON is reported when it is reached, so a caller's own checks of
    earlier lines come first. ``text`` is the file's content when it was already read.
    """
    if text is None:
        text = read_text(path)
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"{path}: line {number} is not valid JSON ({exc.msg})") from None
        yield number, record


def _read_jsonl(path: Path, text: str) -> pd.DataFrame:
    records = []
    for number, record in json_lines(path, text):
        if not isinstance(record, dict):
            raise InvalidInputError(f"{path}: line {number} is not a JSON object")
        records.append(record)
    return pd.DataFrame.from_records(records)


def _read_hf_folder(path: Path, split: str | None) -> pd.DataFrame:
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is a core dependency
        raise InvalidInputError(f"{path}: reading a datasets folder needs `datasets`") from None
    loaded = datasets.load_from_disk(str(path))
    if isinstance(loaded, datasets.DatasetDict):
        names = list(loaded.keys())
        if split is None:
            if len(names) != 1:
                raise InvalidInputError(
                    f"{path}: a DatasetDict with splits {names}; choose one as {path}:SPLIT"
                )
            split = names[0]
        if split not in loaded:
            raise InvalidInputError(f"{path}: no split {split!r}; the splits are {names}")
        loaded = loaded[split]
    frame = loaded.to_pandas()
    # ClassLabel columns hold integers; users know their classes by name.
    for column, feature in loaded.features.items():
        if isinstance(feature, datasets.ClassLabel) and column in frame.columns:
            values = frame[column]
            known = values.notna() & (values >= 0)
            names = pd.Series(pd.NA, index=values.index, dtype=object)
            names[known] = [feature.int2str(int(v)) for v in values[known]]
            frame[column] = names
    return frame


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a data file into a DataFrame, choosing the format by its suffix.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``, ``.json`` (an array of
        objects or JSON lines), ``.parquet``, or a folder written by a Hugging Face
        ``Dataset.save_to_disk`` (``folder:split`` picks a split of a DatasetDict).

    Returns
    -------
    pandas.DataFrame
        Text columns stay strings; nothing is parsed as dates.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("text,label\\nhello,1\\n")
    >>> read_table(folder / "a.csv").to_dict("records")
    [{'text': 'hello', 'label': 1}]
    """
    text_path = str(path)
    split = None
    candidate = Path(text_path)
    if not candidate.exists() and ":" in text_path:
        base, _, maybe_split = text_path.rpartition(":")
        if Path(base).is_dir():
            candidate, split = Path(base), maybe_split
    path = candidate
    if not path.exists():
        raise InvalidInputError(f"{path}: no such file or folder")
    if path.is_dir():
        return _read_hf_folder(path, split)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several types
            raise InvalidInputError(f"{path}: not a readable Parquet file ({exc})") from None
    if suffix not in TABLE_SUFFIXES:
        raise InvalidInputError(
            f"{path}: unknown file type {suffix or '(none)'!r}; use one of "
            ".csv .tsv .jsonl .json .parquet or a datasets folder"
        )
    text = read_text(path)
    if not text.strip():
        raise InvalidInputError(f"{path}: the file is empty")
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path, text)
    if suffix == ".json":
        stripped = text.lstrip()
        if stripped.startswith("["):
            try:
                records = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}: not valid JSON ({exc})") from None
            bad = [i for i, r in enumerate(records) if not isinstance(r, dict)]
            if bad:
                kind = type(records[bad[0]]).__name__
                raise InvalidInputError(
                    f"{path}: element {bad[0]} of the JSON array is a {kind}, not an object "
                    f"({len(bad)} of {len(records)} are not); the file must be an array of "
                    'objects like [{"text": ..., "label": ...}] or JSON lines')
            return pd.DataFrame.from_records(records)
        return _read_jsonl(path, text)
    sep = "\t" if suffix in (".tsv", ".tab") else ","
    try:
        return pd.read_csv(_stdio.StringIO(text), sep=sep, keep_default_na=True)
    except pd.errors.ParserError as exc:
        kind = "TSV" if sep == "\t" else "CSV"
        raise InvalidInputError(f"{path}: cannot parse as {kind}: {exc}") from None
