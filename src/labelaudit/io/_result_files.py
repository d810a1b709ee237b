"""Writing a result that has three faces: a text report, a JSON document and a table."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import IO

import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit.io._write import atomic_path, emit, format_of

__all__ = ["METRIC_NAMES", "emit_report", "json_number"]

# How a score is named for a person (results' summaries and plot axes).
METRIC_NAMES = {"entity_f1": "entity F1", "token_accuracy": "token accuracy",
                "accuracy": "accuracy", "macro_f1": "macro-F1"}


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
