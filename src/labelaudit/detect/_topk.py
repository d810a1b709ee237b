"""Out-of-sample probabilities of many classes kept sparse: each item's likeliest classes,
its given label's probability and one mass for the rest (:class:`TopKProbs`). A scan of
hundreds of thousands of items and thousands of classes keeps these instead of dense
``(n_samples, n_classes)`` arrays, so its memory grows with the items, not with items x
classes; every ranking method reads them (:mod:`labelaudit.detect._scores`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError

#: Up to this many classes a scan keeps every class's probability; above, each item's
#: :data:`TOP_CLASSES` likeliest (``scan(top_classes=...)`` sets it).
DENSE_CLASSES = 256
#: Classes kept per item above :data:`DENSE_CLASSES`.
TOP_CLASSES = 32
#: Entries (rows x their width) one block holds where rows are expanded or predicted a
#: block at a time (:meth:`TopKProbs.blocks`): 32 MB of float64.
BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True, eq=False)
class TopKProbs:
    """Each item's ``k`` likeliest classes with their probabilities, and its given label's
    probability whether listed or not; the mass of the classes not listed is ``rest``.

    Exact from these, as from the full rows: the given label's probability (loss,
    self-confidence, the confident-learning thresholds, a flag threshold), the most probable
    class (max_prob, accuracy) and the most probable class other than the given one (margin,
    the suggested label), since every class not listed is at most the k-th probability.
    What depends on the classes not listed (entropy, a temperature's normaliser, one
    member's probability of a class only another member lists, cleanlab's confident joint)
    takes ``rest`` as spread evenly over them: where ``rest`` is 0 that is exact, otherwise
    off by at most ``rest`` in probability (``rest.max()`` bounds it for a whole scan).

    Attributes
    ----------
    labels : ndarray of int, shape (n_samples,)
        The given labels, class indices.
    given : ndarray of shape (n_samples,)
        Each item's probability of its given label.
    classes : ndarray of int, shape (n_samples, k)
        The likeliest classes, most probable first; -1 pads.
    probs : ndarray of shape (n_samples, k)
        Their probabilities; 0 pads.
    n_classes : int

    Examples
    --------
    >>> dense = np.array([[0.7, 0.2, 0.06, 0.04], [0.1, 0.1, 0.3, 0.5]])
    >>> top = TopKProbs.from_dense(dense, np.array([3, 2]), k=2)
    >>> top.classes.tolist(), top.given.tolist(), top.rest.round(2).tolist()
    ([[0, 1], [3, 2]], [0.04, 0.3], [0.06, 0.2])
    >>> top.dense()[0].round(2).tolist()
    [0.7, 0.2, 0.06, 0.04]
    """

    labels: np.ndarray
    given: np.ndarray
    classes: np.ndarray
    probs: np.ndarray
    n_classes: int

    @staticmethod
    def blocks(n: int, width: int) -> list[np.ndarray]:
        """The rows ``0..n-1`` in blocks of at most :data:`BLOCK_ENTRIES` entries when each
        row is ``width`` wide (at least one row a block).

        Examples
        --------
        >>> [len(rows) for rows in TopKProbs.blocks(5, BLOCK_ENTRIES // 2)]
        [2, 2, 1]
        """
        step = max(1, BLOCK_ENTRIES // max(1, width))
        return [np.arange(start, min(n, start + step)) for start in range(0, n, step)]

    @classmethod
    def from_dense(cls, probs: np.ndarray, labels: np.ndarray, *, k: int) -> TopKProbs:
        """The ``k`` likeliest classes of dense rows (at least 2, at most all)."""
        probs = np.asarray(probs, dtype=float)
        labels = np.asarray(labels, dtype=np.int64)
        n, n_classes = probs.shape
        k = int(min(max(k, 2), n_classes))
        if k < n_classes:
            part = np.argpartition(-probs, k - 1, axis=1)[:, :k]
        else:
            part = np.broadcast_to(np.arange(n_classes), (n, n_classes))
        values = np.take_along_axis(probs, part, axis=1)
        order = np.lexsort((part, -values), axis=1)  # likeliest first, ties by class
        classes = np.take_along_axis(part, order, axis=1).astype(np.int32)
        return cls(labels=labels, given=probs[np.arange(n), labels].copy(), classes=classes,
                   probs=np.take_along_axis(values, order, axis=1), n_classes=n_classes)

    @classmethod
    def join(cls, parts: Sequence[tuple[np.ndarray, TopKProbs]], n_samples: int) -> TopKProbs:
        """One object in item order from ``(positions, part)`` pairs (folds, chunks)."""
        if not parts:
            raise InvalidInputError("no predictions to join")
        k = max(p.classes.shape[1] for _, p in parts)
        n_classes = parts[0][1].n_classes
        labels = np.zeros(n_samples, dtype=np.int64)
        given = np.zeros(n_samples)
        classes = np.full((n_samples, k), -1, dtype=np.int32)
        probs = np.zeros((n_samples, k))
        for rows, part in parts:
            width = part.classes.shape[1]
            labels[rows], given[rows] = part.labels, part.given
            classes[rows, :width], probs[rows, :width] = part.classes, part.probs
        return cls(labels=labels, given=given, classes=classes, probs=probs,
                   n_classes=n_classes)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_samples, n_classes)``, as the dense array's."""
        return len(self.labels), self.n_classes

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, rows: Any) -> TopKProbs:
        """The items at ``rows`` (positions, a mask or a slice), as ``probs[rows]`` of the
        dense rows; a class cannot be picked (``probs[i, j]``): use :meth:`dense`."""
        if isinstance(rows, tuple):
            raise InvalidParameterError("TopKProbs picks items (probs[rows]) only, not "
                                        "classes: use given, best_other() or dense(rows)",
                                        param="rows")
        return self.take(rows)

    def take(self, rows: np.ndarray) -> TopKProbs:
        """The items at ``rows``."""
        return TopKProbs(labels=self.labels[rows], given=self.given[rows],
                         classes=self.classes[rows], probs=self.probs[rows],
                         n_classes=self.n_classes)

    def _given_listed(self) -> np.ndarray:
        return (self.classes == self.labels[:, None]).any(axis=1)

    @property
    def rest(self) -> np.ndarray:
        """Each item's probability of the classes not listed (nor its given label)."""
        listed = self.probs.sum(axis=1) + np.where(self._given_listed(), 0.0, self.given)
        return np.clip(1.0 - listed, 0.0, 1.0)

    def _unlisted(self) -> np.ndarray:
        """How many classes each item does not list (its given label counts as listed)."""
        shown = (self.classes >= 0).sum(axis=1) + ~self._given_listed()
        return self.n_classes - shown

    def spread(self) -> np.ndarray:
        """Each item's even share of ``rest`` per class not listed (0 when all are)."""
        unlisted = self._unlisted()
        return np.where(unlisted > 0, self.rest / np.maximum(unlisted, 1), 0.0)

    def dense(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Rows of ``(len(rows), n_classes)``, the classes not listed at the even share."""
        part = self if rows is None else self.take(rows)
        n = len(part)
        out = np.repeat(part.spread()[:, None], self.n_classes, axis=1)
        at = np.arange(n)
        out[at, part.labels] = part.given
        ok = part.classes >= 0
        out[np.repeat(at, ok.sum(axis=1)), part.classes[ok]] = part.probs[ok]
        return out

    def argmax(self, axis: int = 1) -> np.ndarray:
        """The most probable class of each item (``axis=1`` only, as on the dense rows)."""
        _rows_only(axis)
        return self.classes[:, 0].astype(np.int64)

    def max(self, axis: int = 1) -> np.ndarray:
        """The largest probability of each item (``axis=1`` only)."""
        _rows_only(axis)
        return self.probs[:, 0].copy()

    def best_other(self) -> tuple[np.ndarray, np.ndarray]:
        """Each item's most probable class other than its given label, and its
        probability (listed whenever ``k >= 2``)."""
        other = (self.classes != self.labels[:, None]) & (self.classes >= 0)
        first = other.argmax(axis=1)
        at = np.arange(len(self))
        found = other[at, first]
        classes = np.where(found, self.classes[at, first], 0).astype(np.int64)
        probs = np.where(found, self.probs[at, first], 0.0)
        return classes, probs

    def entropy(self) -> np.ndarray:
        """Each item's entropy (nats), the classes not listed at the even share of ``rest``
        (an upper bound: the true value is at most ``rest * log(unlisted)`` lower)."""
        listed = np.clip(self.probs, 1e-300, 1.0)
        total = -(self.probs * np.log(listed)).sum(axis=1)
        given = np.clip(self.given, 1e-300, 1.0)
        total -= np.where(self._given_listed(), 0.0, self.given * np.log(given))
        spread = self.spread()
        unlisted = self._unlisted()
        total -= np.where(spread > 0, unlisted * spread * np.log(np.clip(spread, 1e-300, 1)),
                          0.0)
        return total

    def scaled(self, temperature: float) -> TopKProbs:
        """``softmax(log p / temperature)``: the listed probabilities, the given one and
        the even share of the rest raised to ``1 / temperature`` and normalised."""
        power = 1.0 / temperature
        logs = [np.log(np.clip(x, 1e-300, 1.0)) * power
                for x in (self.probs, self.given, self.spread())]
        top = np.maximum(logs[0][:, 0], logs[1])
        listed = np.where(self.classes >= 0, np.exp(logs[0] - top[:, None]), 0.0)
        given = np.exp(logs[1] - top)
        unlisted = self._unlisted()
        spread = np.where(unlisted > 0, np.exp(logs[2] - top), 0.0)
        norm = listed.sum(axis=1) + np.where(self._given_listed(), 0.0, given) \
            + unlisted * spread
        return TopKProbs(labels=self.labels, given=given / norm, classes=self.classes,
                         probs=listed / norm[:, None], n_classes=self.n_classes)

    @staticmethod
    def mix(members: Sequence[TopKProbs], weights: Sequence[float], *,
            k: int | None = None) -> TopKProbs:
        """The weighted average of several members' probabilities: each class any member
        lists gets every member's probability of it (a member that does not list it gives
        its even share of its ``rest``), and the ``k`` likeliest (default: the first
        member's width) are kept."""
        first = members[0]
        for member in members[1:]:
            if member.n_classes != first.n_classes or not np.array_equal(member.labels,
                                                                         first.labels):
                raise InvalidInputError("the members must score the same items and classes")
        w = np.asarray(weights, dtype=float)
        k = first.classes.shape[1] if k is None else k
        n = len(first)
        width = sum(m.classes.shape[1] for m in members)
        classes = np.full((n, k), -1, dtype=np.int32)
        probs = np.zeros((n, k))
        spreads = [m.spread() for m in members]
        for rows in TopKProbs.blocks(n, width * max(m.classes.shape[1] for m in members)):
            candidates = np.concatenate([m.classes[rows] for m in members], axis=1)
            # each candidate once per row: later copies of a class are dropped
            order = np.argsort(candidates, axis=1, kind="stable")
            ranked = np.take_along_axis(candidates, order, axis=1)
            repeat = np.zeros_like(ranked, dtype=bool)
            repeat[:, 1:] = ranked[:, 1:] == ranked[:, :-1]
            repeat |= ranked < 0
            total = np.zeros(ranked.shape)
            for weight, member, spread in zip(w, members, spreads, strict=True):
                total += weight * _prob_of(member, rows, ranked, spread[rows])
            total[repeat] = -1.0
            kept = min(k, ranked.shape[1])
            best = np.argsort(-total, axis=1, kind="stable")[:, :kept]
            chosen = np.take_along_axis(total, best, axis=1)
            classes[rows, :kept] = np.where(chosen >= 0,
                                            np.take_along_axis(ranked, best, axis=1), -1)
            probs[rows, :kept] = np.maximum(chosen, 0.0)
        given = sum(weight * m.given for weight, m in zip(w, members, strict=True))
        return TopKProbs(labels=first.labels, given=np.asarray(given, dtype=float),
                         classes=classes, probs=probs, n_classes=first.n_classes)


def _prob_of(member: TopKProbs, rows: np.ndarray, candidates: np.ndarray,
             spread: np.ndarray) -> np.ndarray:
    """``member``'s probability of each candidate class of the items at ``rows``."""
    listed = member.classes[rows]
    match = candidates[:, :, None] == listed[:, None, :]
    found = match.any(axis=2)
    value = np.where(found, (match * member.probs[rows][:, None, :]).sum(axis=2), 0.0)
    is_given = candidates == member.labels[rows][:, None]
    value = np.where(~found & is_given, member.given[rows][:, None], value)
    return np.where(found | is_given, value, spread[:, None])


def _rows_only(axis: int) -> None:
    if axis != 1:
        raise InvalidParameterError("TopKProbs reduces rows only (axis=1)", param="axis")


def resolve_top_classes(top_classes: int | None, n_classes: int) -> int | None:
    """How many classes a scan keeps per item: None keeps every one (dense rows).
    ``top_classes`` None: all up to :data:`DENSE_CLASSES` classes, :data:`TOP_CLASSES`
    above; a number at least ``n_classes`` keeps all.

    Examples
    --------
    >>> resolve_top_classes(None, 20), resolve_top_classes(None, 1000)
    (None, 32)
    >>> resolve_top_classes(5, 30), resolve_top_classes(50, 30)
    (5, None)
    """
    if top_classes is None:
        return TOP_CLASSES if n_classes > DENSE_CLASSES else None
    if top_classes < 2:
        raise InvalidParameterError(f"top_classes must be at least 2; got {top_classes}",
                                    param="top_classes")
    return None if top_classes >= n_classes else int(top_classes)
