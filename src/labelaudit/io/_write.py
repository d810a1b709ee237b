"""Write tables atomically, choosing the format by the file suffix."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError

__all__ = ["write_table", "atomic_path", "current_umask", "write_json", "OUTPUT_SUFFIXES"]

OUTPUT_SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place on success.

    An interrupted write leaves either the old file or the new one, never half a file.
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
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (pd.Timestamp,)):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _write_jsonl(frame: pd.DataFrame, handle: IO[str]) -> None:
    for record in frame.to_dict(orient="records"):
        clean = {k: (None if _is_missing(v) else v) for k, v in record.items()}
        handle.write(json.dumps(clean, ensure_ascii=False, default=_json_default) + "\n")


def _is_missing(value: object) -> bool:
    return isinstance(value, float) and np.isnan(value)


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` atomically as CSV, TSV, JSONL, JSON or Parquet.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "x.jsonl"
    >>> _ = write_table(pd.DataFrame({"a": [1, 2]}), out)
    >>> out.read_text()
    '{"a": 1}\\n{"a": 2}\\n'
    """
    target = Path(path)
    suffix = target.suffix.lower()
    writers: dict[str, Callable[[Path], None]] = {
        ".csv": lambda p: frame.to_csv(p, index=False),
        ".tsv": lambda p: frame.to_csv(p, index=False, sep="\t"),
        ".parquet": lambda p: frame.to_parquet(p, index=False),
        ".jsonl": lambda p: _with_text(p, lambda h: _write_jsonl(frame, h)),
        ".json": lambda p: _with_text(
            p,
            lambda h: json.dump(
                [{k: (None if _is_missing(v) else v) for k, v in r.items()}
                 for r in frame.to_dict(orient="records")],
                h, ensure_ascii=False, default=_json_default, indent=1,
            ),
        ),
    }
    if suffix not in writers:
        raise InvalidParameterError(
            f"{target}: cannot write {suffix or 'a file without a suffix'}; "
            f"use one of {' '.join(OUTPUT_SUFFIXES)}"
        )
    with atomic_path(target) as tmp:
        writers[suffix](tmp)
    return target


def _with_text(path: Path, body: Callable[[IO[str]], None]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        body(handle)


def write_json(data: object, path: str | Path) -> Path:
    """Write ``data`` as indented JSON atomically."""
    target = Path(path)
    with atomic_path(target) as tmp:
        _with_text(tmp, lambda h: json.dump(data, h, indent=2, default=_json_default))
    return target
