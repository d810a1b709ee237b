"""Read text files: UTF-8 text, its lines, and JSON lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidInputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["json_lines", "read_text", "split_lines"]


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


def read_jsonl(path: Path, text: str) -> pd.DataFrame:
    """The JSON-lines ``text`` of ``path`` as a table, one row per object."""
    import pandas as pd
    records = []
    for number, record in json_lines(path, text):
        if not isinstance(record, dict):
            raise InvalidInputError(f"{path}: line {number} is not a JSON object")
        records.append(record)
    return pd.DataFrame.from_records(records)
