"""Who sees what next, and recording answers: the protocol's bookkeeping.

* A new reviewer first answers the qualification items (known answers) in order; when all
  are answered they become ``active`` if their share of correct answers reaches the
  pass mark, ``failed`` otherwise.
* An active reviewer gets the most suspect review item that they have not answered and
  that still needs votes: ``n_reviewers`` distinct reviewers per item, counting answers
  not excluded plus items currently shown to other reviewers (a lease of
  ``lease_seconds``, so that no item is handed to more reviewers than it needs).
* After every ``sentinel_every`` review answers, the next sentinel (known answer) comes
  instead. Once a reviewer has answered ``min_sentinels`` sentinels, a sentinel accuracy
  below ``sentinel_threshold`` suspends them: their answers stay in the database, marked
  ``excluded``, and their items go back into the queue. ``unsure`` on a sentinel counts
  as wrong.
* Each answer is one ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction; a reviewer answers an
  item at most once (a unique constraint), and only an item they were shown.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from typing import Literal

from labelaudit.review._store import ReviewStore

__all__ = ["AnswerOutcome", "Assignment", "Progress", "next_item", "progress", "record_answer"]

AnswerStatus = Literal["recorded", "duplicate", "item_full", "not_shown", "invalid_answer",
                       "not_allowed", "unknown_item"]


@dataclass(frozen=True)
class Assignment:
    """The item a reviewer should answer now (or why there is none).

    ``state`` is ``"item"`` (``item`` is set), ``"done"`` (nothing left), ``"waiting"``
    (the remaining items are shown to other reviewers right now), ``"failed"`` or
    ``"suspended"``.
    """

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


def _shorten(text: str, limit: int = 80) -> str:
    """At most ``limit`` characters of ``text`` (an answer echoed in a message).

    Examples
    --------
    >>> _shorten("x" * 100, 5)
    'xxxx…'
    """
    return text if len(text) <= limit else text[:limit - 1] + "…"


def record_answer(store: ReviewStore, reviewer_pk: int, item_pk: int, answer: str, *,
                  source: Literal["web", "import"] = "web", now: float | None = None,
                  shown_at: float | None = None, seconds: float | None = None,
                  conn: sqlite3.Connection | None = None) -> AnswerOutcome:
    """Record one answer in its own committed transaction.

    Web answers must be for an item the reviewer was shown and allowed to answer;
    imported answers (``source="import"``) skip that check. Either way an item gets at
    most ``n_reviewers`` counted answers and a reviewer answers it at most once.
    """
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
        if answer not in config.options:
            return AnswerOutcome("invalid_answer", status,
                                 f"{_shorten(answer)!r} is not an answer option")
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


def progress(store: ReviewStore, reviewer_pk: int | None = None) -> Progress:
    """Project progress (answers counted toward ``n_reviewers`` per review item)."""
    need = store.config.n_reviewers
    conn = store.connect()
    try:
        per_item = [r[0] for r in conn.execute(
            "SELECT (SELECT COUNT(*) FROM answers a WHERE a.item_pk = i.item_pk "
            "AND a.excluded = 0) FROM items i WHERE i.kind = 'review'")]
        mine = 0
        if reviewer_pk is not None:
            mine = conn.execute("SELECT COUNT(*) FROM answers WHERE reviewer_pk = ?",
                                (reviewer_pk,)).fetchone()[0]
    finally:
        conn.close()
    return Progress(n_items=len(per_item), n_complete=sum(c >= need for c in per_item),
                    n_answers=sum(min(c, need) for c in per_item), n_needed=need * len(per_item),
                    reviewer_answers=int(mine))
