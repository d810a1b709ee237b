"""Writing a result that has three faces: a text report, a JSON document and a table; the
``write(path)`` every command's result has (:class:`ResultFiles`)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from labelaudit._errors import InvalidParameterError
from labelaudit.io._write import atomic_path, emit, format_of, write_json, write_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["METRIC_NAMES", "ResultFiles", "emit_report", "json_number"]

# How a score is named for a person (results' summaries and plot axes).
METRIC_NAMES = {"entity_f1": "entity F1", "token_accuracy": "token accuracy",
                "accuracy": "accuracy", "macro_f1": "macro-F1"}


class ResultFiles:
    """The files of a command's result (mixed into each): :meth:`write` puts its
    ``to_dict()`` document, where it has one, in a JSON file and its :meth:`file_frame`
    table in the others; the commands write ``--out`` with it."""

    def file_frame(self: Any) -> pd.DataFrame:
        """The table a table file of the result holds: ``to_frame()``, unless the result
        says otherwise."""
        return self.to_frame()

    def write(self: Any, path: str | Path) -> Path:
        """Write the result atomically to ``path``: a ``.json`` file gets the ``to_dict()``
        document (the table's rows where the result has no document), any other suffix
        (``.csv .tsv .jsonl .parquet``) the :meth:`file_frame` table. Returns the path."""
        if Path(path).suffix.lower() == ".json" and hasattr(self, "to_dict"):
            return write_json(self.to_dict(), path)
        return write_table(self.file_frame(), path)


def json_number(value: float) -> float | None:
    """A float for JSON: NaN becomes null.

    Examples
    --------
    >>> json_number(float("nan")), json_number(0.5)
    (None, 0.5)
    """
    return None if value is None or math.isnan(value) else float(value)


def _plain(value: object) -> object:
    """numpy scalars in a JSON document as the Python values they hold."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def emit_report(frame: pd.DataFrame, document: dict, text: str, out: str | Path | None = None,
                *, format: str | None = None, stdout: IO[str] | None = None) -> str:
    """Write a result to ``out`` (atomically) or to standard output, and return the format
    written: ``text`` as the ``table`` format, ``document`` as ``json``, ``frame`` in the
    other formats through :func:`emit`.

    Without ``format``, the ``out`` file's suffix picks it, and on standard output it is
    ``json`` off a terminal and ``table`` on one.

    Examples
    --------
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
        text = json.dumps(document, indent=2, ensure_ascii=False, default=_plain) + "\n"
    if out:
        with atomic_path(out) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    else:
        stream.write(text)
    return fmt
