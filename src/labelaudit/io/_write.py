"""Write tables atomically, choosing the format by the file suffix."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io._ledger import record_output
from labelaudit.registry import FORMATS as _FORMATS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMATS", "OUTPUT_SUFFIXES", "SUFFIX_FORMAT", "atomic_path", "current_umask", "emit",
           "flat_cells", "format_of", "render_table", "replace_folder", "write_json",
           "write_jsonl", "write_table"]

OUTPUT_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")



@contextmanager
def atomic_path(path: str | Path, *, record: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place on success.

    An interrupted write leaves either the old file or the new one, never half a file.
    With ``record`` (outputs, not caches), the file is noted as labelaudit's own, so a
    later run may replace it without ``--overwrite`` (see :mod:`labelaudit.io._ledger`).
    """
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


def _json_default(value: object) -> object:
    import pandas as pd
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (pd.Timestamp,)):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def write_jsonl(frame: pd.DataFrame, handle: IO[str]) -> None:
    """Write ``frame`` to ``handle`` as JSON lines, one object per row (NaN as null)."""
    for record in frame.to_dict(orient="records"):
        clean = {k: (None if _is_missing(v) else v) for k, v in record.items()}
        handle.write(json.dumps(clean, ensure_ascii=False, default=_json_default) + "\n")


def _is_missing(value: object) -> bool:
    return isinstance(value, float) and np.isnan(value)


# Output formats by name; every command writes tables through write_table or emit.
FORMATS: tuple[str, ...] = _FORMATS.names()
# The format each output suffix names (see format_of).
SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
                  ".ndjson": "jsonl", ".json": "json", ".parquet": "parquet", ".pq": "parquet"}


def format_of(path: str | Path) -> str:
    """The file format a path's suffix names (``csv``, ``tsv``, ``jsonl``, ``json``,
    ``parquet``), or :class:`InvalidParameterError` naming the suffixes there are."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIX_FORMAT:
        raise InvalidParameterError(
            f"{path}: cannot write {suffix or 'a file without a suffix'}; "
            f"use one of {' '.join(OUTPUT_SUFFIXES)}")
    return SUFFIX_FORMAT[suffix]


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    return [{k: (None if _is_missing(v) else v) for k, v in r.items()}
            for r in frame.to_dict(orient="records")]


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


def _write_text(frame: pd.DataFrame, handle: IO[str], fmt: str, max_colwidth: int) -> None:
    if fmt == "table":
        handle.write(render_table(frame, max_colwidth=max_colwidth) + "\n")
    elif fmt in ("csv", "tsv"):
        flat_cells(frame).to_csv(handle, index=False, sep="\t" if fmt == "tsv" else ",")
    elif fmt == "jsonl":
        write_jsonl(frame, handle)
    elif fmt == "json":
        json.dump(_records(frame), handle, ensure_ascii=False, default=_json_default, indent=1)
        handle.write("\n")
    else:  # pragma: no cover - callers check the name
        raise InvalidParameterError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")


@contextmanager
def parquet_refusal() -> Iterator[None]:
    """Inside the block, a table that Parquet (Arrow) cannot hold, such as a column with
    values of several types, is bad data in one line instead of pyarrow's error."""
    import pyarrow as pa

    try:
        yield
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise InvalidInputError(
            f"cannot write Parquet ({' '.join(str(exc).split())}): the column mixes value "
            "types; write .csv or .jsonl, or leave the column out") from None


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` atomically as CSV, TSV, JSONL, JSON or Parquet.

    The suffix picks the format. Lists and dicts in cells are written as JSON text in
    CSV and TSV.

    Examples
    --------
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
    """Write a result table to ``out`` (format by suffix) or to standard output.

    Parameters
    ----------
    frame : DataFrame
    out : path, optional
        A file, written atomically; its suffix picks the format.
    format : {"table", "csv", "tsv", "jsonl", "json", "parquet"}, optional
        The format on standard output (default ``table``); with ``out`` it must agree
        with the suffix. Parquet goes to stdout only when it is not a terminal.

    Returns
    -------
    Path or None
        The file written, if any.
    """
    import sys

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
        import io

        buffer = io.BytesIO()
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


def _with_text(path: Path, body: Callable[[IO[str]], None]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        body(handle)


def write_json(data: object, path: str | Path) -> Path:
    """Write ``data`` as indented JSON atomically."""
    target = Path(path)
    with atomic_path(target) as tmp:
        _with_text(tmp, lambda h: json.dump(data, h, indent=2, default=_json_default))
    return target


FIGURE_FORMATS = {".png": "png", ".svg": "svg"}


def figure_path(path: str | Path) -> tuple[Path, str]:
    """``path`` and its figure format from the suffix (.png or .svg); checked before any
    drawing, so a wrong suffix fails fast.

    Examples
    --------
    >>> figure_path("curves.SVG")
    (PosixPath('curves.SVG'), 'svg')
    """
    from labelaudit._errors import InvalidParameterError

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


def replace_folder(staging: Path, target: Path) -> Path:
    """Rename a finished ``staging`` folder (made beside ``target``) to ``target``,
    replacing an existing one: the old folder is moved aside first and put back if the
    rename fails, so an interruption leaves the old folder or the new one, never a mix."""
    import shutil

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
