"""The review project: one SQLite file in WAL mode holding items, reviewers and answers.

Every answer is its own committed transaction (``synchronous=FULL``), so a server killed
at any moment loses nothing it has acknowledged. Reviewer tokens are stored only as
SHA-256 hashes; the per-project secret signs the CSRF tokens of answer forms (see
:mod:`labelaudit.review._security`). The project's settings are a
:class:`~labelaudit.review._protocol.ProjectConfig`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.review._protocol import ProjectConfig
from labelaudit.review._security import hash_token

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Reviewer", "ReviewStore", "as_store"]

SCHEMA_VERSION = 1
ItemKind = Literal["review", "sentinel", "qualification"]
ReviewerStatus = Literal["qualifying", "active", "failed", "suspended"]

_SCHEMA = """
CREATE TABLE project (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE items (
    item_pk INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('review', 'sentinel', 'qualification')),
    position INTEGER NOT NULL,
    text TEXT NOT NULL,
    text_pair TEXT,
    given_label TEXT NOT NULL,
    known_label TEXT,
    suggested_label TEXT,
    suggested_prob REAL,
    score REAL,
    rank INTEGER,
    UNIQUE (kind, item_id)
);
CREATE INDEX items_kind_position ON items (kind, position);
CREATE TABLE reviewers (
    reviewer_pk INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('reviewer', 'admin')),
    token_hash TEXT UNIQUE,
    status TEXT NOT NULL
        CHECK (status IN ('qualifying', 'active', 'failed', 'suspended')),
    status_reason TEXT,
    source TEXT NOT NULL DEFAULT 'invite',
    created_at REAL NOT NULL,
    status_at REAL
);
CREATE TABLE answers (
    answer_pk INTEGER PRIMARY KEY,
    item_pk INTEGER NOT NULL REFERENCES items (item_pk),
    reviewer_pk INTEGER NOT NULL REFERENCES reviewers (reviewer_pk),
    answer TEXT NOT NULL,
    shown_at REAL,
    answered_at REAL NOT NULL,
    seconds REAL,
    source TEXT NOT NULL DEFAULT 'web',
    excluded INTEGER NOT NULL DEFAULT 0,
    exclusion_reason TEXT,
    UNIQUE (item_pk, reviewer_pk)
);
CREATE INDEX answers_reviewer ON answers (reviewer_pk);
CREATE TABLE views (
    item_pk INTEGER NOT NULL REFERENCES items (item_pk),
    reviewer_pk INTEGER NOT NULL REFERENCES reviewers (reviewer_pk),
    shown_at REAL NOT NULL,
    PRIMARY KEY (item_pk, reviewer_pk)
);
"""


@dataclass(frozen=True)
class Reviewer:
    """A person with a token: a reviewer or an admin."""

    reviewer_pk: int
    name: str
    role: str
    status: str
    source: str = "invite"


class ReviewStore:
    """Access to a review project's SQLite file.

    Open connections with :meth:`connect` (one per thread or request); the queue and the
    answer logic live in :mod:`labelaudit.review._queue`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._config: ProjectConfig | None = None

    # -- creation and connections -------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, config: ProjectConfig, items: pd.DataFrame, *,
               overwrite: bool = False) -> ReviewStore:
        """Write a new project file with ``items`` (columns as the ``items`` table). An
        existing file is replaced only when labelaudit wrote it and ``overwrite`` is given
        (a file labelaudit did not write never is: :func:`labelaudit.io.check_replaceable`).
        """
        from labelaudit.io import check_replaceable, record_output

        target = Path(path)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            check_replaceable(target, name="--db", overwrite=overwrite,
                              what="choose another --db")
            if target.exists() and not overwrite:
                raise InvalidInputError(
                    f"{target} already exists; choose another --db or pass --overwrite"
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            cls._write_new(tmp, config, items)
            # the old project (and its write-ahead log) goes only once the new one is whole
            for suffix in ("-wal", "-shm"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
            tmp.replace(target)
            record_output(target)  # labelaudit's own: --overwrite may replace it later
        except (OSError, sqlite3.Error) as exc:
            raise InvalidParameterError(
                f"cannot create the review database {target} ({exc}): choose a --db in a "
                "folder you can write"
            ) from None
        finally:
            for leftover in ("", "-journal", "-wal", "-shm"):
                try:
                    Path(f"{tmp}{leftover}").unlink(missing_ok=True)
                except OSError:
                    pass
        return cls(target)

    @staticmethod
    def _write_new(tmp: Path, config: ProjectConfig, items: pd.DataFrame) -> None:
        """Write a whole project to the file ``tmp`` (not yet in its place)."""
        import pandas as pd
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(_SCHEMA)
            conn.execute("BEGIN")
            meta = {"schema_version": SCHEMA_VERSION, "secret": secrets.token_hex(32),
                    "config": asdict(config), "created_at": time.time()}
            conn.executemany("INSERT INTO project (key, value) VALUES (?, ?)",
                             [(k, json.dumps(v)) for k, v in meta.items()])
            columns = ["item_id", "kind", "position", "text", "text_pair", "given_label",
                       "known_label", "suggested_label", "suggested_prob", "score", "rank"]
            rows = items.reindex(columns=columns).astype(object)
            rows = rows.where(pd.notna(rows), None)
            conn.executemany(
                f"INSERT INTO items ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                rows.itertuples(index=False, name=None),
            )
            conn.execute("COMMIT")
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()

    @classmethod
    def open(cls, path: str | Path) -> ReviewStore:
        """Open an existing project, checking it is one."""
        store = cls(path)
        if not store.path.is_file():
            raise InvalidInputError(
                f"{store.path}: no such review database; create it with `labelaudit review init`"
            )
        try:
            store.config  # noqa: B018 - reads and validates the project table
        except sqlite3.DatabaseError as exc:
            raise InvalidInputError(
                f"{store.path}: not a labelaudit review database ({exc})"
            ) from None
        return store

    def connect(self) -> sqlite3.Connection:
        """A new connection: autocommit mode, WAL, ``synchronous=FULL``, 30 s busy wait."""
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    @contextmanager
    def transaction(self, conn: sqlite3.Connection | None = None, *, durable: bool = True,
                    ) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on error): one write, all or nothing.

        ``durable=False`` commits with ``synchronous=NORMAL``: safe when the process is
        killed, but the last commits may be lost if the machine loses power. Only the
        bookkeeping of which item is on whose screen uses it; answers are always durable.
        """
        own = conn is None
        conn = conn or self.connect()
        try:
            conn.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            if own:
                conn.close()

    def _meta(self, key: str) -> Any:
        conn = self.connect()
        try:
            row = conn.execute("SELECT value FROM project WHERE key = ?", (key,)).fetchone()
        finally:
            conn.close()
        if row is None:
            raise sqlite3.DatabaseError(f"the project table has no {key!r}")
        return json.loads(row["value"])

    @property
    def config(self) -> ProjectConfig:
        """The project settings (read once per store object)."""
        if self._config is None:
            version = self._meta("schema_version")
            if version != SCHEMA_VERSION:
                raise InvalidInputError(
                    f"{self.path}: review database version {version}, this labelaudit reads "
                    f"version {SCHEMA_VERSION}"
                )
            self._config = ProjectConfig(**self._meta("config"))
        return self._config

    @property
    def secret(self) -> bytes:
        """The project's signing secret for CSRF tokens."""
        return bytes.fromhex(self._meta("secret"))

    @property
    def review_id(self) -> str:
        """This review database's public id (16 hex digits, derived from the secret, which
        it does not reveal): it marks the Label Studio tasks ``review push`` sends. A copy
        of the file has the same id; ``review init`` makes a new one."""
        return hmac.new(self.secret, b"labelaudit review id", hashlib.sha256).hexdigest()[:16]

    def setting(self, key: str, default: Any = None) -> Any:
        """A value the commands keep in the project (like where it is served), or ``default``."""
        try:
            return self._meta(f"setting:{key}")
        except sqlite3.DatabaseError:
            return default

    def set_setting(self, key: str, value: Any) -> None:
        """Keep a JSON value in the project under ``key``."""
        with self.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO project (key, value) VALUES (?, ?)",
                         (f"setting:{key}", json.dumps(value)))

    # -- reviewers ----------------------------------------------------------------------
    def add_reviewer(self, name: str, *, role: Literal["reviewer", "admin"] = "reviewer",
                     new_token: bool = False, source: str = "invite") -> tuple[Reviewer, str]:
        """Create a reviewer (or give an existing one a new token); return it and its token.

        The token is returned once and stored only as a hash.
        """
        name = name.strip()
        if not name or len(name) > 100:
            raise InvalidParameterError("a reviewer name must be 1 to 100 characters")
        if role not in ("reviewer", "admin"):
            raise InvalidParameterError(f"role must be 'reviewer' or 'admin', got {role!r}")
        token = secrets.token_urlsafe(32)
        status = "active" if role == "admin" or not self._n_items("qualification") else \
            "qualifying"
        with self.transaction() as conn:
            existing = conn.execute("SELECT * FROM reviewers WHERE name = ?", (name,)).fetchone()
            if existing is not None:
                if not new_token:
                    raise InvalidInputError(
                        f"a reviewer named {name!r} already exists; pass --new-token to replace "
                        "their link (the old one stops working)"
                    )
                conn.execute("UPDATE reviewers SET token_hash = ? WHERE reviewer_pk = ?",
                             (hash_token(token), existing["reviewer_pk"]))
                pk = existing["reviewer_pk"]
            else:
                pk = conn.execute(
                    "INSERT INTO reviewers (name, role, token_hash, status, source, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (name, role, hash_token(token), status, source, time.time()),
                ).lastrowid
        reviewer = self.reviewer(int(pk))
        assert reviewer is not None  # just written
        return reviewer, token

    def external_reviewer(self, conn: sqlite3.Connection, name: str) -> int:
        """The id of a reviewer imported from another tool (created active, without token)."""
        row = conn.execute("SELECT reviewer_pk, source FROM reviewers WHERE name = ?",
                           (name,)).fetchone()
        if row is not None:
            return int(row["reviewer_pk"])
        cursor = conn.execute(
            "INSERT INTO reviewers (name, role, token_hash, status, source, created_at) "
            "VALUES (?, 'reviewer', NULL, 'active', 'import', ?)", (name, time.time()),
        )
        return int(cursor.lastrowid or 0)

    def reviewer(self, reviewer_pk: int) -> Reviewer | None:
        """The reviewer with this id, or None."""
        conn = self.connect()
        try:
            row = conn.execute("SELECT * FROM reviewers WHERE reviewer_pk = ?",
                               (reviewer_pk,)).fetchone()
        finally:
            conn.close()
        return _reviewer(row)

    def reviewer_by_token(self, token: str | None) -> Reviewer | None:
        """The reviewer holding this token, or None for a missing or unknown token."""
        if not token or len(token) > 200:
            return None
        conn = self.connect()
        try:
            row = conn.execute("SELECT * FROM reviewers WHERE token_hash = ?",
                               (hash_token(token),)).fetchone()
        finally:
            conn.close()
        return _reviewer(row)

    def _n_items(self, kind: ItemKind) -> int:
        conn = self.connect()
        try:
            return int(conn.execute("SELECT COUNT(*) FROM items WHERE kind = ?",
                                    (kind,)).fetchone()[0])
        finally:
            conn.close()

    # -- tables for results -------------------------------------------------------------
    def item_counts(self) -> dict[str, int]:
        """Items per kind (``review``, ``qualification``, ``sentinel``; zeros included)."""
        kinds = self.items_frame()["kind"].value_counts()
        return {kind: int(kinds.get(kind, 0)) for kind in ("review", "qualification",
                                                            "sentinel")}

    def describe(self) -> str:
        """One line: items by kind, reviewers per item and majority, labels, blind or not."""
        kinds, config = self.item_counts(), self.config
        return (f"{kinds['review']} items to review by {config.n_reviewers} reviewers each "
                f"(majority {config.majority}), {kinds['qualification']} qualification and "
                f"{kinds['sentinel']} sentinel items, labels {config.classes}, "
                f"{'labels shown' if config.show_label else 'blind'}")

    def items_frame(self) -> pd.DataFrame:
        """Every item, in queue order within each kind."""
        return self._frame("SELECT * FROM items ORDER BY kind, position")

    def reviewers_frame(self) -> pd.DataFrame:
        """Every reviewer (without token hashes)."""
        return self._frame(
            "SELECT reviewer_pk, name, role, status, status_reason, source, created_at, "
            "status_at FROM reviewers ORDER BY reviewer_pk"
        )

    def answers_frame(self) -> pd.DataFrame:
        """Every answer with its item and reviewer, excluded ones included (``excluded``)."""
        return self._frame(
            "SELECT a.answer_pk, i.item_pk, i.item_id, i.kind, r.reviewer_pk, r.name AS reviewer,"
            " a.answer, a.shown_at, a.answered_at, a.seconds, a.source, a.excluded,"
            " a.exclusion_reason FROM answers a JOIN items i USING (item_pk)"
            " JOIN reviewers r USING (reviewer_pk) ORDER BY a.answer_pk"
        )

    def _frame(self, sql: str) -> pd.DataFrame:
        import pandas as pd
        conn = self.connect()
        try:
            cursor = conn.execute(sql)
            names = [d[0] for d in cursor.description]
            return pd.DataFrame([tuple(r) for r in cursor.fetchall()], columns=names)
        finally:
            conn.close()


def _reviewer(row: sqlite3.Row | None) -> Reviewer | None:
    if row is None:
        return None
    return Reviewer(reviewer_pk=int(row["reviewer_pk"]), name=row["name"], role=row["role"],
                    status=row["status"], source=row["source"])


def as_store(db: ReviewStore | str | Path) -> ReviewStore:
    """``db`` itself when it is a :class:`ReviewStore`, else the project file opened."""
    return db if isinstance(db, ReviewStore) else ReviewStore.open(db)
