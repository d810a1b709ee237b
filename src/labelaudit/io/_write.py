"""The one output layer: every file goes through :func:`atomic_path` and is recorded (path,
size, mtime, inode) in a SQLite file under ``$LABELAUDIT_STATE_DIR`` (else
``$XDG_STATE_HOME/labelaudit``), so that only labelaudit's own outputs are replaced."""

from __future__ import annotations

import io as _stdio
import json
import math
import os
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, plain_value
from labelaudit._html_table import result_html

if TYPE_CHECKING:
    import pandas as pd

OUTPUT_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")
# The format each output suffix names (see format_of).
SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
                 ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}
FIGURE_FORMATS = {".png": "png", ".svg": "svg"}
# How a score is named for a person (results' summaries and plot axes).
METRIC_NAMES = {"entity_f1": "entity F1", "token_accuracy": "token accuracy",
                "accuracy": "accuracy", "macro_f1": "macro-F1"}


def ledger_path() -> Path:
    """Where the record of written files lives."""
    base = os.environ.get("LABELAUDIT_STATE_DIR")
    if not base:
        state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        base = str(Path(state) / "labelaudit")
    return Path(base) / "outputs.sqlite"


def _stamp(path: Path) -> tuple[str, int, int, int]:
    info = path.stat()
    return str(path.resolve()), info.st_size, info.st_mtime_ns, info.st_ino


def record_output(path: str | Path) -> None:
    """Note that labelaudit has just written ``path`` (nothing where the record cannot be);
    :func:`output_record` then tells it ``"unchanged"`` until someone edits it."""
    try:
        stamp = _stamp(Path(path))
        where = ledger_path()
        where.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(where, timeout=10)) as connection, connection:
            connection.execute("CREATE TABLE IF NOT EXISTS written (path TEXT PRIMARY KEY, "
                               "size INTEGER, mtime_ns INTEGER, inode INTEGER)")
            connection.execute("INSERT OR REPLACE INTO written VALUES (?, ?, ?, ?)", stamp)
    except (OSError, sqlite3.Error):
        return


def output_record(path: str | Path) -> str | None:
    """``"unchanged"`` or ``"changed"`` since labelaudit wrote ``path``, or None (no record)."""
    try:
        key, *stamp = _stamp(Path(path))
        where = ledger_path()
        if not where.is_file():
            return None
        with closing(sqlite3.connect(where, timeout=10)) as connection:
            row = connection.execute("SELECT size, mtime_ns, inode FROM written WHERE path = ?",
                                     (key,)).fetchone()
    except (OSError, sqlite3.Error):
        return None
    if row is None:
        return None
    return "unchanged" if list(row) == stamp else "changed"


@contextmanager
def atomic_path(path: str | Path, *, record: bool = True) -> Iterator[Path]:
    """A temporary path renamed to ``path`` on success, then noted with ``record`` (outputs)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp makes the file 0600; a finished output gets the mode any new file would.
        os.chmod(tmp_path, 0o666 & ~current_umask())
        os.replace(tmp_path, target)
        if record:
            record_output(target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def current_umask() -> int:
    """The process umask (read without changing it where /proc tells it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def replace_folder(staging: Path, target: Path) -> Path:
    """Rename ``staging`` to ``target``, the old one moved aside first (put back on failure)."""
    os.chmod(staging, 0o777 & ~current_umask())
    if not target.exists():
        os.replace(staging, target)
        return target
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    old.rmdir()
    os.replace(target, old)
    try:
        os.replace(staging, target)
    except OSError:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return target


def _json_default(value: object) -> object:
    """numpy values (:func:`plain_value`) and timestamps in a JSON document."""
    if callable(getattr(value, "isoformat", None)):
        return value.isoformat()  # type: ignore[attr-defined]
    plain = plain_value(value)
    if plain is value:
        raise TypeError(f"not JSON serialisable: {type(value).__name__}")
    return plain


def write_json(data: object, path: str | Path) -> Path:
    """Write ``data`` as indented JSON atomically."""
    target = Path(path)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, default=_json_default)
    return target


def json_number(value: float) -> float | None:
    """A float for JSON: NaN becomes null.

    >>> json_number(float("nan")), json_number(0.5)
    (None, 0.5)
    """
    return None if value is None or math.isnan(value) else float(value)


def format_of(path: str | Path) -> str:
    """The file format a path's suffix names, or an error naming the suffixes there are."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIX_FORMAT:
        raise InvalidParameterError(
            f"{path}: cannot write {suffix or 'a file without a suffix'}; "
            f"use one of {' '.join(OUTPUT_SUFFIXES)}")
    return SUFFIX_FORMAT[suffix]


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """The rows of ``frame`` as dicts, NaN as None."""
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in frame.to_dict(orient="records")]


def write_jsonl(frame: pd.DataFrame, handle: IO[str]) -> None:
    """Write ``frame`` as JSON lines (NaN as null)."""
    for record in _records(frame):
        handle.write(json.dumps(record, ensure_ascii=False, default=_json_default) + "\n")


def flat_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Lists and dicts in cells as JSON text, so CSV/TSV readers get them back intact."""
    def cell(value: object) -> object:
        if isinstance(value, (list, dict, tuple, np.ndarray)):
            return json.dumps(value, ensure_ascii=False, default=_json_default)
        return value

    nested = [c for c in frame.columns if frame[c].dtype == object
              and frame[c].map(lambda v: isinstance(v, (list, dict, tuple, np.ndarray))).any()]
    if not nested:
        return frame
    return frame.assign(**{str(c): frame[c].map(cell) for c in nested})


def render_table(frame: pd.DataFrame, *, max_rows: int | None = None,
                 max_colwidth: int = 60) -> str:
    """A DataFrame as an aligned text table for a person."""
    import pandas as pd
    with pd.option_context("display.max_rows", max_rows, "display.max_columns", None,
                           "display.width", 200, "display.max_colwidth", max_colwidth):
        return frame.to_string(index=False)


def _write_json(frame: pd.DataFrame, handle: IO[str], max_colwidth: int) -> None:
    json.dump(_records(frame), handle, ensure_ascii=False, default=_json_default, indent=1)
    handle.write("\n")


#: The output formats by name (``--format``, the ``--out`` suffix): each one's writer of a
#: table to a text stream, None for Parquet (binary, written by pandas).
FORMATS: dict[str, Callable[[pd.DataFrame, IO[str], int], object] | None] = {
    "table": lambda frame, handle, width: handle.write(
        render_table(frame, max_colwidth=width) + "\n"),
    "csv": lambda frame, handle, width: flat_cells(frame).to_csv(handle, index=False),
    "tsv": lambda frame, handle, width: flat_cells(frame).to_csv(handle, index=False, sep="\t"),
    "jsonl": lambda frame, handle, width: write_jsonl(frame, handle),
    "json": _write_json,
    "parquet": None,
}


def _write_text(frame: pd.DataFrame, handle: IO[str], fmt: str, max_colwidth: int) -> None:
    write = FORMATS[fmt]
    assert write is not None  # noqa: S101 - Parquet is written apart
    write(frame, handle, max_colwidth)


@contextmanager
def parquet_refusal() -> Iterator[None]:
    """A table Parquet cannot hold (mixed types in a column) as bad data, not pyarrow's error."""
    import pyarrow as pa

    try:
        yield
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InvalidInputError(
            f"cannot write Parquet ({' '.join(str(exc).split())}): the column mixes value "
            "types; write .csv or .jsonl, or leave the column out") from None


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` atomically as CSV, TSV, JSONL, JSON or Parquet, by ``path``'s suffix
    (lists and dicts in cells as JSON text in CSV and TSV); returns the path.

    Examples
    --------
    >>> import pandas as pd
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = write_table(pd.DataFrame({"a": [1, 2]}), out)
    >>> out.read_text()
    '{"a": 1}\\n{"a": 2}\\n'
    """
    target = Path(path)
    fmt = format_of(target)
    with atomic_path(target) as tmp:
        if fmt == "parquet":
            with parquet_refusal():
                frame.to_parquet(tmp, index=False)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as handle:
                _write_text(frame, handle, fmt, max_colwidth=60)
    return target


def emit(frame: pd.DataFrame, out: str | Path | None = None, *, format: str | None = None,
         max_colwidth: int = 60, stdout: IO[str] | None = None) -> Path | None:
    """Write a table to ``out`` (by suffix; ``format`` must agree) and return its path, or to
    standard output in ``format`` (default ``table``; Parquet off a terminal only)."""
    if format is not None and format not in FORMATS:
        raise InvalidParameterError(f"unknown format {format!r}; choose from {', '.join(FORMATS)}")
    if out is not None:
        fmt = format_of(out)
        if format not in (None, fmt):
            raise InvalidParameterError(
                f"--format {format} does not match the output file {out} ({fmt}); "
                "the suffix picks the file's format")
        return write_table(frame, out)
    stream = stdout if stdout is not None else sys.stdout
    fmt = format or "table"
    if fmt == "parquet":
        if stream.isatty():
            raise InvalidParameterError(
                "parquet is binary: write it with --out FILE.parquet or pipe it to a file")
        buffer = _stdio.BytesIO()
        with parquet_refusal():
            frame.to_parquet(buffer, index=False)
        stream.flush()
        binary = getattr(stream, "buffer", None)
        if binary is None:
            raise InvalidParameterError("parquet needs a binary output: use --out FILE.parquet")
        binary.write(buffer.getvalue())
        binary.flush()
        return None
    _write_text(frame, stream, fmt, max_colwidth)
    return None


def figure_path(path: str | Path) -> tuple[Path, str]:
    """``path`` and its figure format from the suffix (.png or .svg), checked before drawing.

    >>> figure_path("curves.SVG")
    (PosixPath('curves.SVG'), 'svg')
    """
    target = Path(path)
    fmt = FIGURE_FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise InvalidParameterError(
            f"{target}: cannot plot to {target.suffix or 'a file without a suffix'}; "
            "use a .png or .svg file")
    return target, fmt


def save_figure(figure: object, path: str | Path, **options: object) -> Path:
    """Write a matplotlib figure to ``path`` (.png or .svg), atomically."""
    target, fmt = figure_path(path)
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format=fmt, **options)  # type: ignore[attr-defined]
    return target


class ResultFiles:
    """The files of a command's result (mixed into each): :meth:`write` puts its
    ``to_dict()`` document in a JSON file and its :meth:`file_frame` table in the others."""

    def file_frame(self: Any) -> pd.DataFrame:
        """The table of a table file: ``to_frame()`` unless overridden."""
        return self.to_frame()

    def write(self: Any, path: str | Path) -> Path:
        """Write the result atomically: ``.json`` gets ``to_dict()`` (if any), other suffixes
        the :meth:`file_frame` table."""
        if Path(path).suffix.lower() == ".json" and hasattr(self, "to_dict"):
            return write_json(self.to_dict(), path)
        return write_table(self.file_frame(), path)

    def _repr_html_(self: Any) -> str:
        """The result in a notebook: its summary line over its table, flagged rows first."""
        return result_html(self)


def emit_report(frame: pd.DataFrame, document: dict, text: str, out: str | Path | None = None,
                *, format: str | None = None, stdout: IO[str] | None = None) -> str:
    """Write ``text`` (``table``), ``document`` (``json``) or ``frame`` (:func:`emit`) and
    return the format: ``format``, else the suffix, else ``json`` off a terminal.

    >>> import pandas as pd
    >>> import io
    >>> emit_report(pd.DataFrame({"n": [3]}), {"n": 3}, "n  3\\n", format="json",
    ...             stdout=io.StringIO())
    'json'
    """
    stream = stdout if stdout is not None else sys.stdout
    if format not in (None, "table", "json"):
        emit(frame, out, format=None if out else format, stdout=stream)
        return format
    fmt = format or ("json" if out or not stream.isatty() else "table")
    if out and fmt != format_of(out):
        if format is None:
            emit(frame, out)
            return format_of(out)
        raise InvalidParameterError(
            f"--format {fmt} does not match the output file {out} "
            f"({format_of(out)}); the suffix picks the file's format")
    if fmt == "json":
        text = json.dumps(document, indent=2, ensure_ascii=False, default=_json_default) + "\n"
    if out:
        with atomic_path(out) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    else:
        stream.write(text)
    return fmt
