"""The record of files labelaudit wrote, so that it replaces only its own outputs.

Every table, JSON document, plot and report that labelaudit writes through
:func:`labelaudit.io.atomic_path` is recorded here: its resolved path, size, modification
time and inode. An existing output file is replaced without ``--overwrite`` only while it
still matches its record; one that labelaudit wrote and a person changed since is replaced
only with ``--overwrite``; a file it has no record of (it did not write it) never is (see
:func:`labelaudit.io.check_replaceable`).

The record is a SQLite database in ``$LABELAUDIT_STATE_DIR`` (default
``$XDG_STATE_HOME/labelaudit``, else ``~/.local/state/labelaudit``). Where it cannot be
written, nothing is recorded, and an earlier output is then a file labelaudit has no record
of: a rerun over it is refused until it is moved or deleted.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

__all__ = ["ledger_path", "output_record", "record_output", "wrote_output"]

_NAME = "outputs.sqlite"


def ledger_path() -> Path:
    """Where the record of written files lives."""
    base = os.environ.get("LABELAUDIT_STATE_DIR")
    if base:
        return Path(base) / _NAME
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "labelaudit" / _NAME


def _connect(create: bool) -> sqlite3.Connection | None:
    path = ledger_path()
    if not path.exists():
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=10)
    connection.execute("CREATE TABLE IF NOT EXISTS written (path TEXT PRIMARY KEY, "
                       "size INTEGER, mtime_ns INTEGER, inode INTEGER)")
    return connection


def _stamp(path: Path) -> tuple[str, int, int, int]:
    info = path.stat()
    return str(path.resolve()), info.st_size, info.st_mtime_ns, info.st_ino


def record_output(path: str | Path) -> None:
    """Note that labelaudit has just written ``path`` (a local file).

    Examples
    --------
    >>> import os, tempfile, pathlib
    >>> saved = dict(os.environ)
    >>> os.environ["LABELAUDIT_STATE_DIR"] = tempfile.mkdtemp()
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.csv"
    >>> _ = target.write_text("a\\n1\\n")
    >>> wrote_output(target)
    False
    >>> record_output(target)
    >>> wrote_output(target)
    True
    >>> _ = target.write_text("a\\n2 edited by hand\\n")
    >>> wrote_output(target)
    False
    >>> os.environ.clear(); os.environ.update(saved)
    """
    try:
        stamp = _stamp(Path(path))
        connection = _connect(create=True)
        if connection is None:  # pragma: no cover - create=True always connects
            return
        with closing(connection), connection:
            connection.execute("INSERT OR REPLACE INTO written VALUES (?, ?, ?, ?)", stamp)
    except (OSError, sqlite3.Error):
        return  # no record: a rerun over this file is refused (labelaudit did not write it)


def output_record(path: str | Path) -> str | None:
    """What the record says of the file ``path``: ``"unchanged"`` (labelaudit wrote it and
    nobody changed it since), ``"changed"`` (labelaudit wrote it, and it was changed or
    replaced since), or None (no record: labelaudit did not write it, or the record cannot
    be read).

    Examples
    --------
    >>> output_record("/no/such/file.csv") is None
    True
    """
    try:
        key, size, mtime, inode = _stamp(Path(path))
        connection = _connect(create=False)
        if connection is None:
            return None
        with closing(connection):
            row = connection.execute("SELECT size, mtime_ns, inode FROM written WHERE path = ?",
                                     (key,)).fetchone()
    except (OSError, sqlite3.Error):
        return None
    if row is None:
        return None
    return "unchanged" if tuple(row) == (size, mtime, inode) else "changed"


def wrote_output(path: str | Path) -> bool:
    """Whether ``path`` is a file labelaudit wrote and nobody changed since."""
    return output_record(path) == "unchanged"
