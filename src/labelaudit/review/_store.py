"""The review project: one SQLite file in WAL mode (items, reviewers, answers) and the queue.

Every answer is its own committed transaction (``synchronous=FULL``): a killed server loses
nothing it acknowledged. A new reviewer first answers the qualification items, then is
``active`` if their share correct reaches the pass mark, else ``failed``. An active reviewer
gets the most suspect review item they have not answered that still needs votes (answers not
excluded plus items leased on other screens for ``lease_seconds``, so no item goes to more
reviewers than it needs); a sentinel after every ``sentinel_every`` answers. Once
``min_sentinels`` are answered, accuracy below ``sentinel_threshold`` (``unsure`` is wrong)
suspends the reviewer: their answers stay, ``excluded``, their items go back to the queue.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import check_replaceable, record_output
from labelaudit.review._protocol import ProjectConfig

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SCHEMA_VERSION = 1
ItemKind = Literal["review", "sentinel", "qualification"]

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
    evidence TEXT,
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

# columns added to ``items`` after SCHEMA_VERSION 1 was released: (name, type); opening an
# older project adds them (ReviewStore.open), so the version stays 1 and old files open
_ADDED_COLUMNS = (("evidence", "TEXT"),)


def hash_token(token: str) -> str:
    """SHA-256 of a reviewer token (tokens are 256-bit random, so no slow hash is needed).

    >>> hash_token("abc")[:12]
    'ba7816bf8f01'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Reviewer:
    """A person with a token: a reviewer or an admin."""

    reviewer_pk: int
    name: str
    role: str
    status: str
    source: str = "invite"


class ReviewStore:
    """A review project's SQLite file; :meth:`connect`: one connection per thread or request."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._config: ProjectConfig | None = None

    # -- creation and connections -------------------------------------------------------
    @classmethod
    def create(cls, path: str | Path, config: ProjectConfig, items: pd.DataFrame, *,
               overwrite: bool = False) -> ReviewStore:
        """Write a project file of ``items``; replaces only labelaudit's file, on ``overwrite``."""
        target = Path(path)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            check_replaceable(target, name="--db", overwrite=overwrite,
                              what="choose another --db")
            if target.exists() and not overwrite:
                raise InvalidInputError(
                    f"{target} already exists; choose another --db or pass --overwrite")
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
                "folder you can write") from None
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
                       "known_label", "suggested_label", "suggested_prob", "score", "rank",
                       "evidence"]
            rows = items.reindex(columns=columns).astype(object)
            rows = rows.where(pd.notna(rows), None)
            conn.executemany(
                f"INSERT INTO items ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                rows.itertuples(index=False, name=None))
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
                f"{store.path}: no such review database; create it with `labelaudit review init`")
        try:
            store.config  # noqa: B018 - reads and validates the project table
        except sqlite3.DatabaseError as exc:
            raise InvalidInputError(
                f"{store.path}: not a labelaudit review database ({exc})") from None
        store._add_missing_columns()
        return store

    def _add_missing_columns(self) -> None:
        """Bring a project made by an earlier labelaudit up to date: columns added since
        (``items.evidence``) are added, empty; a file it cannot write is read as it is."""
        with closing(self.connect()) as conn:
            have = {row["name"] for row in conn.execute("PRAGMA table_info(items)")}
            for column, kind in _ADDED_COLUMNS:
                if column not in have:
                    try:
                        conn.execute(f"ALTER TABLE items ADD COLUMN {column} {kind}")
                    except sqlite3.OperationalError:  # read-only: readers allow its absence
                        pass

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
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on error. ``durable=False`` may lose
        the last commits on power loss: only for what is on whose screen, never for answers."""
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

    def _row(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
        """The first row of one query, on a connection of its own."""
        with closing(self.connect()) as conn:
            return conn.execute(sql, params).fetchone()

    def _meta(self, key: str) -> Any:
        row = self._row("SELECT value FROM project WHERE key = ?", (key,))
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
                    f"version {SCHEMA_VERSION}")
            self._config = ProjectConfig(**self._meta("config"))
        return self._config

    @property
    def secret(self) -> bytes:
        """The project's signing secret for CSRF tokens."""
        return bytes.fromhex(self._meta("secret"))

    @property
    def review_id(self) -> str:
        """Public id (16 hex digits, hiding the secret) marking the tasks ``review push`` sends."""
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
        """Create a reviewer (or renew its token); return it and the token, kept only hashed."""
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
                        "their link (the old one stops working)")
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
            "VALUES (?, 'reviewer', NULL, 'active', 'import', ?)", (name, time.time()))
        return int(cursor.lastrowid or 0)

    def reviewer(self, reviewer_pk: int) -> Reviewer | None:
        """The reviewer with this id, or None."""
        return _reviewer(self._row("SELECT * FROM reviewers WHERE reviewer_pk = ?",
                                   (reviewer_pk,)))

    def reviewer_by_token(self, token: str | None) -> Reviewer | None:
        """The reviewer holding this token, or None for a missing or unknown token."""
        if not token or len(token) > 200:
            return None
        return _reviewer(self._row("SELECT * FROM reviewers WHERE token_hash = ?",
                                   (hash_token(token),)))

    def _n_items(self, kind: ItemKind) -> int:
        row = self._row("SELECT COUNT(*) FROM items WHERE kind = ?", (kind,))
        return int(row[0]) if row is not None else 0

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
            "status_at FROM reviewers ORDER BY reviewer_pk")

    def answers_frame(self) -> pd.DataFrame:
        """Every answer with its item and reviewer, excluded ones included (``excluded``)."""
        return self._frame(
            "SELECT a.answer_pk, i.item_pk, i.item_id, i.kind, r.reviewer_pk, r.name AS reviewer,"
            " a.answer, a.shown_at, a.answered_at, a.seconds, a.source, a.excluded,"
            " a.exclusion_reason FROM answers a JOIN items i USING (item_pk)"
            " JOIN reviewers r USING (reviewer_pk) ORDER BY a.answer_pk")

    def _frame(self, sql: str) -> pd.DataFrame:
        import pandas as pd
        with closing(self.connect()) as conn:
            cursor = conn.execute(sql)
            names = [d[0] for d in cursor.description]
            return pd.DataFrame([tuple(r) for r in cursor.fetchall()], columns=names)


def _reviewer(row: sqlite3.Row | None) -> Reviewer | None:
    if row is None:
        return None
    return Reviewer(reviewer_pk=int(row["reviewer_pk"]), name=row["name"], role=row["role"],
                    status=row["status"], source=row["source"])


def as_store(db: ReviewStore | str | Path) -> ReviewStore:
    """``db`` itself when it is a :class:`ReviewStore`, else the project file opened."""
    return db if isinstance(db, ReviewStore) else ReviewStore.open(db)


AnswerStatus = Literal["recorded", "duplicate", "item_full", "not_shown", "invalid_answer",
                       "not_allowed", "unknown_item"]


@dataclass(frozen=True)
class Assignment:
    """The item a reviewer should answer now (``state="item"``), or why not: ``done``,
    ``waiting`` (the rest is on other reviewers' screens), ``failed``, ``suspended``, ``admin``."""

    state: Literal["item", "done", "waiting", "failed", "suspended", "admin"]
    item: sqlite3.Row | None = None
    qualification_index: int = 0
    qualification_total: int = 0


@dataclass(frozen=True)
class AnswerOutcome:
    """What happened to a submitted answer, and the reviewer's status afterwards."""

    status: AnswerStatus
    reviewer_status: str
    message: str = ""

    @property
    def recorded(self) -> bool:
        return self.status == "recorded"


@dataclass(frozen=True)
class Progress:
    """Counts for the progress bar of a reviewer and of the project."""

    n_items: int
    n_complete: int
    n_answers: int
    n_needed: int
    reviewer_answers: int

    @property
    def share_complete(self) -> float:
        return self.n_answers / self.n_needed if self.n_needed else 1.0


_OPEN_ITEMS = """
SELECT i.* FROM items i
WHERE i.kind = 'review'
  AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.item_pk = i.item_pk AND a.reviewer_pk = :me)
  AND (SELECT COUNT(*) FROM answers a WHERE a.item_pk = i.item_pk AND a.excluded = 0)
    + (SELECT COUNT(*) FROM views v JOIN reviewers r ON r.reviewer_pk = v.reviewer_pk
       WHERE v.item_pk = i.item_pk AND v.reviewer_pk != :me AND v.shown_at > :since
         AND r.status = 'active'
         AND NOT EXISTS (SELECT 1 FROM answers a2
                         WHERE a2.item_pk = v.item_pk AND a2.reviewer_pk = v.reviewer_pk))
    < :need
ORDER BY i.position
LIMIT 1
"""

_STILL_NEEDED = """
SELECT (SELECT COUNT(*) FROM answers a WHERE a.item_pk = :item AND a.excluded = 0) < :need
"""


def _show(conn: sqlite3.Connection, item: sqlite3.Row, reviewer_pk: int, now: float,
          lease: float) -> None:
    conn.execute("INSERT OR IGNORE INTO views (item_pk, reviewer_pk, shown_at) VALUES (?, ?, ?)",
                 (item["item_pk"], reviewer_pk, now))
    conn.execute("UPDATE views SET shown_at = ? WHERE item_pk = ? AND reviewer_pk = ? "
                 "AND shown_at <= ?", (now, item["item_pk"], reviewer_pk, now - lease))


def next_item(store: ReviewStore, reviewer_pk: int, *, now: float | None = None,
              conn: sqlite3.Connection | None = None) -> Assignment:
    """Choose the item to show a reviewer now and record that it was shown."""
    config = store.config
    now = time.time() if now is None else now
    # what is on screen is bookkeeping, not data: no fsync needed (see ReviewStore.transaction)
    with store.transaction(conn, durable=False) as db:
        me = db.execute("SELECT * FROM reviewers WHERE reviewer_pk = ?", (reviewer_pk,)).fetchone()
        if me is None or me["role"] == "admin":
            return Assignment(state="admin")
        if me["status"] in ("failed", "suspended"):
            return Assignment(state=me["status"])
        if me["status"] == "qualifying":
            quals = db.execute("SELECT * FROM items WHERE kind = 'qualification' "
                               "ORDER BY position").fetchall()
            done = {r[0] for r in db.execute(
                "SELECT item_pk FROM answers WHERE reviewer_pk = ?", (reviewer_pk,))}
            for index, item in enumerate(quals):
                if item["item_pk"] not in done:
                    _show(db, item, reviewer_pk, now, config.lease_seconds)
                    return Assignment(state="item", item=item, qualification_index=index + 1,
                                      qualification_total=len(quals))
            status = _grade_qualification(db, store, reviewer_pk, now)
            if status != "active":
                return Assignment(state="failed")
        # an item already on screen comes back on reload, while it still needs votes
        pending = db.execute(
            "SELECT i.* FROM views v JOIN items i USING (item_pk) WHERE v.reviewer_pk = ? "
            "AND i.kind IN ('review', 'sentinel') AND NOT EXISTS (SELECT 1 FROM answers a "
            "WHERE a.item_pk = v.item_pk AND a.reviewer_pk = v.reviewer_pk) "
            "ORDER BY v.shown_at, i.position", (reviewer_pk,)).fetchall()
        for item in pending:
            if item["kind"] == "sentinel" or db.execute(
                    _STILL_NEEDED, {"item": item["item_pk"], "need": config.n_reviewers}
            ).fetchone()[0]:
                _show(db, item, reviewer_pk, now, config.lease_seconds)
                return Assignment(state="item", item=item)
        item = db.execute(_OPEN_ITEMS, {"me": reviewer_pk, "since": now - config.lease_seconds,
                                        "need": config.n_reviewers}).fetchone()
        if item is None:
            waiting = db.execute(
                "SELECT 1 FROM items i WHERE i.kind = 'review' AND NOT EXISTS (SELECT 1 FROM "
                "answers a WHERE a.item_pk = i.item_pk AND a.reviewer_pk = :me) AND (SELECT "
                "COUNT(*) FROM answers a WHERE a.item_pk = i.item_pk AND a.excluded = 0) < :need "
                "LIMIT 1", {"me": reviewer_pk, "need": config.n_reviewers}).fetchone()
            return Assignment(state="waiting" if waiting else "done")
        sentinel = _due_sentinel(db, reviewer_pk, config.sentinel_every)
        chosen = sentinel if sentinel is not None else item
        _show(db, chosen, reviewer_pk, now, config.lease_seconds)
        return Assignment(state="item", item=chosen)


def _due_sentinel(db: sqlite3.Connection, reviewer_pk: int, every: int) -> sqlite3.Row | None:
    counts = dict(db.execute(
        "SELECT i.kind, COUNT(*) FROM answers a JOIN items i USING (item_pk) "
        "WHERE a.reviewer_pk = ? GROUP BY i.kind", (reviewer_pk,)).fetchall())
    if counts.get("review", 0) < (counts.get("sentinel", 0) + 1) * every:
        return None
    return db.execute(
        "SELECT i.* FROM items i WHERE i.kind = 'sentinel' AND NOT EXISTS (SELECT 1 FROM answers "
        "a WHERE a.item_pk = i.item_pk AND a.reviewer_pk = ?) ORDER BY i.position LIMIT 1",
        (reviewer_pk,)).fetchone()


def _grade_qualification(db: sqlite3.Connection, store: ReviewStore, reviewer_pk: int,
                         now: float) -> str:
    rows = db.execute(
        "SELECT a.answer = i.known_label FROM items i LEFT JOIN answers a ON "
        "a.item_pk = i.item_pk AND a.reviewer_pk = ? WHERE i.kind = 'qualification'",
        (reviewer_pk,)).fetchall()
    if any(r[0] is None for r in rows):
        return "qualifying"
    score = sum(r[0] for r in rows) / len(rows) if rows else 1.0
    passed = score >= store.config.pass_mark - 1e-12
    status = "active" if passed else "failed"
    db.execute("UPDATE reviewers SET status = ?, status_reason = ?, status_at = ? "
               "WHERE reviewer_pk = ?",
               (status, f"qualification {score:.0%} (pass mark {store.config.pass_mark:.0%})",
                now, reviewer_pk))
    return status


def _check_sentinels(db: sqlite3.Connection, store: ReviewStore, reviewer_pk: int,
                     now: float) -> str:
    config = store.config
    rows = db.execute(
        "SELECT a.answer = i.known_label FROM answers a JOIN items i USING (item_pk) "
        "WHERE a.reviewer_pk = ? AND i.kind = 'sentinel'", (reviewer_pk,)).fetchall()
    if len(rows) < config.min_sentinels:
        return "active"
    accuracy = sum(r[0] for r in rows) / len(rows)
    if accuracy >= config.sentinel_threshold - 1e-12:
        return "active"
    reason = (f"sentinel accuracy {accuracy:.0%} over {len(rows)} sentinels is below "
              f"{config.sentinel_threshold:.0%}")
    db.execute("UPDATE reviewers SET status = 'suspended', status_reason = ?, status_at = ? "
               "WHERE reviewer_pk = ?", (reason, now, reviewer_pk))
    db.execute("UPDATE answers SET excluded = 1, exclusion_reason = 'reviewer suspended' "
               "WHERE reviewer_pk = ?", (reviewer_pk,))
    db.execute("DELETE FROM views WHERE reviewer_pk = ?", (reviewer_pk,))
    return "suspended"


def record_answer(store: ReviewStore, reviewer_pk: int, item_pk: int, answer: str, *,
                  source: Literal["web", "import"] = "web", now: float | None = None,
                  shown_at: float | None = None, seconds: float | None = None,
                  conn: sqlite3.Connection | None = None) -> AnswerOutcome:
    """Record one answer in its own transaction: web answers only for an item shown (imports
    skip that), at most ``n_reviewers`` counted answers per item, one per reviewer."""
    config = store.config
    now = time.time() if now is None else now
    with store.transaction(conn) as db:
        me = db.execute("SELECT * FROM reviewers WHERE reviewer_pk = ?", (reviewer_pk,)).fetchone()
        item = db.execute("SELECT * FROM items WHERE item_pk = ?", (item_pk,)).fetchone()
        if me is None or me["role"] != "reviewer":
            return AnswerOutcome("not_allowed", "unknown", "only reviewers answer items")
        status = me["status"]
        if item is None:
            return AnswerOutcome("unknown_item", status, "no such item")
        if answer not in config.options:  # echoed back, 80 characters at most
            shown = answer if len(answer) <= 80 else answer[:79] + "…"
            return AnswerOutcome("invalid_answer", status, f"{shown!r} is not an answer option")
        if db.execute("SELECT 1 FROM answers WHERE item_pk = ? AND reviewer_pk = ?",
                      (item_pk, reviewer_pk)).fetchone():
            return AnswerOutcome("duplicate", status, "you have already answered this item")
        expected = {"qualifying": ("qualification",), "active": ("review", "sentinel")}
        if source == "web" and item["kind"] not in expected.get(status, ()):
            return AnswerOutcome("not_allowed", status, f"a {status} reviewer cannot answer "
                                 f"a {item['kind']} item")
        view = db.execute("SELECT shown_at FROM views WHERE item_pk = ? AND reviewer_pk = ?",
                          (item_pk, reviewer_pk)).fetchone()
        if source == "web" and view is None:
            return AnswerOutcome("not_shown", status, "this item was not shown to you")
        if item["kind"] == "review" and not db.execute(
                _STILL_NEEDED, {"item": item_pk, "need": config.n_reviewers}).fetchone()[0]:
            db.execute("DELETE FROM views WHERE item_pk = ? AND reviewer_pk = ?",
                       (item_pk, reviewer_pk))
            return AnswerOutcome("item_full", status, "other reviewers completed this item "
                                 "meanwhile; here is the next one")
        if shown_at is None and view is not None:
            shown_at = float(view["shown_at"])
        if seconds is None and shown_at is not None:
            seconds = max(now - shown_at, 0.0)
        excluded = 1 if status == "suspended" else 0
        db.execute(
            "INSERT INTO answers (item_pk, reviewer_pk, answer, shown_at, answered_at, seconds, "
            "source, excluded, exclusion_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item_pk, reviewer_pk, answer, shown_at, now, seconds, source, excluded,
             "reviewer suspended" if excluded else None))
        db.execute("DELETE FROM views WHERE item_pk = ? AND reviewer_pk = ?",
                   (item_pk, reviewer_pk))
        if item["kind"] == "qualification" and status == "qualifying":
            status = _grade_qualification(db, store, reviewer_pk, now)
        elif item["kind"] == "sentinel" and status == "active":
            status = _check_sentinels(db, store, reviewer_pk, now)
    return AnswerOutcome("recorded", status)


def answered_item(store: ReviewStore, reviewer_pk: int, item_pk: int,
                  ) -> tuple[sqlite3.Row, str] | None:
    """An item this reviewer has answered, with their answer; None if they have not."""
    with closing(store.connect()) as conn:
        row = conn.execute("SELECT i.*, a.answer AS answer FROM items i JOIN answers a USING "
                           "(item_pk) WHERE i.item_pk = ? AND a.reviewer_pk = ?",
                           (item_pk, reviewer_pk)).fetchone()
    return None if row is None else (row, str(row["answer"]))


def unanswered_ids(store: ReviewStore, reviewer_pk: int) -> set[str]:
    """The ids of every item (any kind) this reviewer has not answered yet."""
    with closing(store.connect()) as conn:
        return {str(r[0]) for r in conn.execute(
            "SELECT item_id FROM items i WHERE NOT EXISTS (SELECT 1 FROM answers a WHERE "
            "a.item_pk = i.item_pk AND a.reviewer_pk = ?)", (reviewer_pk,))}


def progress(store: ReviewStore, reviewer_pk: int | None = None) -> Progress:
    """Project progress (answers counted toward ``n_reviewers`` per review item)."""
    need = store.config.n_reviewers
    with closing(store.connect()) as conn:
        per_item = [r[0] for r in conn.execute(
            "SELECT (SELECT COUNT(*) FROM answers a WHERE a.item_pk = i.item_pk "
            "AND a.excluded = 0) FROM items i WHERE i.kind = 'review'")]
        mine = 0
        if reviewer_pk is not None:
            mine = conn.execute("SELECT COUNT(*) FROM answers WHERE reviewer_pk = ?",
                                (reviewer_pk,)).fetchone()[0]
    return Progress(n_items=len(per_item), n_complete=sum(c >= need for c in per_item),
                    n_answers=sum(min(c, need) for c in per_item), n_needed=need * len(per_item),
                    reviewer_answers=int(mine))
