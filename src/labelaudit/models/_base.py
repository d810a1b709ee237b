"""The interface every scorer implements."""

from __future__ import annotations

import copy
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


def take(features: Any, index: np.ndarray) -> Any:
    """Rows ``index`` of features that are an array, a sparse matrix or a list."""
    if isinstance(features, list):
        return [features[i] for i in index]
    return features[index]


def full_proba(proba: np.ndarray, fitted_classes: np.ndarray, n_classes: int) -> np.ndarray:
    """Spread a model's probabilities over all ``n_classes`` columns (a class a training
    fold missed gets 0); rows sum to 1 in float64.

    Examples
    --------
    >>> full_proba(np.array([[0.3, 0.7]]), np.array([0, 2]), 3).tolist()
    [[0.3, 0.0, 0.7]]
    """
    out = np.zeros((proba.shape[0], n_classes))
    out[:, np.asarray(fitted_classes, dtype=int)] = proba
    # float32 features give float32 probabilities: sum them to 1 again in float64
    sums = out.sum(axis=1, keepdims=True)
    return out / np.where(sums > 0, sums, 1.0)


@dataclass(frozen=True)
class HeldOutWords:
    """What a fitted model says of the held-out items it scored: for each item, its model's
    likeliest classes other than the given label (``classes``, -1 where there are fewer),
    and for each the terms of the item that push most toward that class and against the
    given label (``terms``, None-padded; ``weights`` > 0, largest first; ``pair``: the
    term is from the item's second text)."""

    classes: np.ndarray  # (n, m) int
    terms: np.ndarray  # (n, m, k) object
    weights: np.ndarray  # (n, m, k) float32
    pair: np.ndarray  # (n, m, k) bool


def concat_words(parts: list[HeldOutWords | None]) -> HeldOutWords | None:
    """The :class:`HeldOutWords` of consecutive blocks of items as one (None if any is)."""
    if not parts or any(p is None for p in parts):
        return None
    kept = [p for p in parts if p is not None]
    return HeldOutWords(**{name: np.concatenate([getattr(p, name) for p in kept])
                           for name in ("classes", "terms", "weights", "pair")})


class WordCollector:
    """Gathers :class:`HeldOutWords` fold by fold for the ``n_items`` items of one member
    (``member``): each item's words come from the one fold model that did not see it."""

    def __init__(self, n_items: int, member: str) -> None:
        self.member = member
        self.n_items = n_items
        self.parts: list[tuple[np.ndarray, HeldOutWords]] = []
        self._where: dict[int, tuple[int, int]] | None = None

    def add(self, rows: np.ndarray, words: HeldOutWords | None) -> None:
        """The words of the held-out ``rows`` (positions among the items)."""
        if words is not None:
            self.parts.append((np.asarray(rows), words))
            self._where = None

    def toward(self, position: int, suggested: int) -> list[tuple[str, float, bool]] | None:
        """(term, weight, from the second text) pushing item ``position`` toward class
        ``suggested`` and against its given label; None when the item's fold model ranked
        ``suggested`` below its likeliest other classes (or gave no words)."""
        if self._where is None:
            self._where = {int(r): (p, i) for p, (rows, _) in enumerate(self.parts)
                           for i, r in enumerate(rows)}
        found = self._where.get(int(position))
        if found is None:
            return None
        words = self.parts[found[0]][1]
        slots = np.flatnonzero(words.classes[found[1]] == suggested)
        if not len(slots):
            return None
        s = found[1], int(slots[0])
        return [(str(t), float(w), bool(b)) for t, w, b in
                zip(words.terms[s], words.weights[s], words.pair[s], strict=True)
                if t is not None and w > 0]


class Scorer(ABC):
    """A model that turns items (texts, or tagged sentences) into class probabilities.

    ``prepare`` does the expensive, label-free work (encoding texts) once for all items,
    one feature row per item; ``fit`` and ``predict_proba`` take rows of those features
    (:func:`take`) per fold. Text scorers predict one row ``(n_classes,)`` per item, token
    scorers one ``(n_tokens, n_classes)`` array per sentence; :meth:`join_predictions`
    puts held-out predictions back in item order.
    """

    name: str = "scorer"
    #: whether :meth:`predict_explained` gives the words behind a model's predictions
    explains: bool = False

    @abstractmethod
    def prepare(self, data: Any, *, progress: bool = False) -> Any:
        """Compute the label-free features of every item in ``data``."""

    @abstractmethod
    def fit(self, features: Any, labels: Any, *, n_classes: int) -> Scorer:
        """Fit on feature rows and integer labels; returns ``self``."""

    @abstractmethod
    def predict_proba(self, features: Any) -> Any:
        """Probabilities of shape (n_samples, n_classes)."""

    def predict_explained(self, features: Any, labels: np.ndarray,
                          ) -> tuple[Any, HeldOutWords | None]:
        """On a fitted model: :meth:`predict_proba` of ``features`` and the words behind it
        (the items' given ``labels``), or None for a model that cannot say (the default)."""
        return self.predict_proba(features), None

    def join_predictions(self, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
                         n_classes: int) -> Any:
        """Predictions of every item, in item order, from ``(positions, predict_proba
        output)`` pairs: one array (n_samples, n_classes) with rows summing to 1."""
        pred_probs = np.full((n_samples, n_classes), np.nan)
        for positions, probs in parts:
            pred_probs[positions] = probs
        sums = pred_probs.sum(axis=1, keepdims=True)
        return pred_probs / np.where(sums > 0, sums, 1.0)

    def fold_devices(self) -> list[str]:
        """Devices to fit folds on at once, one process each (several GPUs of one
        machine); empty (the default) fits the folds in turn in this process."""
        return []

    def fold_gpus(self) -> int:
        """GPUs one fold's fit wants when folds run as Ray tasks: 0 (the default), or 1
        for a scorer that trains on a GPU."""
        return 0

    def fold_memory(self, n_items: int, n_classes: int) -> int:
        """Bytes one fold's fit on ``n_items`` items of ``n_classes`` classes holds at its
        peak, which a Ray task reserves so a node runs no more folds at once than its
        memory takes; 0 (the default): not known, nothing reserved."""
        return 0

    def on_device(self, device: str) -> Scorer:
        """An unfitted copy that fits on ``device`` (see :meth:`fold_devices`)."""
        return self.clone()

    def clone(self) -> Scorer:
        """An unfitted copy with the same options."""
        fresh = copy.copy(self)
        for key in [k for k in vars(fresh) if k.endswith("_") and not k.startswith("_")]:
            delattr(fresh, key)
        return fresh


class TrainsOnGpu:
    """Mixin of scorers that train on ``device``: a fold wants 1 GPU unless it is the CPU."""

    def fold_gpus(self) -> int:
        return 0 if str(getattr(self, "device", None) or "").startswith("cpu") else 1


def default_progress() -> bool:
    """Progress by default wherever stderr goes (the library's ``progress=None``, the CLI
    without ``--quiet``): :func:`progress_bar` draws bars on a terminal or in a Jupyter
    kernel and prints plain lines elsewhere (a file, a pipe, ``nohup``, CI). Off only when
    there is no stderr at all (``pythonw``).

    Examples
    --------
    >>> default_progress()
    True
    """
    return sys.stderr is not None


def _draws_bars() -> bool:
    """Whether stderr shows tqdm bars: a terminal, or a Jupyter kernel."""
    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        return True
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - an odd IPython
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def progress_bar(total: int | None, desc: str, *, unit: str, enabled: bool,
                 interval: float = 30.0, clock: Callable[[], float] = time.monotonic) -> Any:
    """Progress of one stage (``total`` steps of ``unit``, None when unknown) on stderr.
    Use it as a context manager; ``update(n)`` says ``n`` more steps finished.

    Not ``enabled``: silent. On a terminal or in a Jupyter kernel: a
    transient tqdm bar. Elsewhere (a file, a pipe, ``nohup``, CI): plain lines such as
    ``labelaudit [2:41] cross-fitting 5 folds (tfidf): 3/5 folds``, one when the stage
    starts, then one when a step finishes but at most one every ``interval`` seconds, and
    one when a stage of ``interval`` seconds or more ends, so its last state shows. The
    time in brackets is the stage's elapsed time (minutes:seconds, or hours:minutes:seconds),
    measured by ``clock``.

    Examples
    --------
    >>> import contextlib, sys
    >>> with contextlib.redirect_stderr(sys.stdout), progress_bar(
    ...         3, "folds", unit=" folds", enabled=True, interval=0, clock=lambda: 0.0) as bar:
    ...     bar.update(1)
    labelaudit [0:00] folds: 0/3 folds
    labelaudit [0:00] folds: 1/3 folds
    >>> with progress_bar(3, "folds", unit=" folds", enabled=False) as bar:
    ...     bar.update(1)
    """
    if not enabled:
        return _ProgressLines(total, desc, unit=unit, interval=interval, clock=clock,
                              shown=False)
    if _draws_bars():
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, leave=False)
    return _ProgressLines(total, desc, unit=unit, interval=interval, clock=clock, shown=True)


class _ProgressLines:
    """The part of tqdm's surface that our stages use (``update``, ``set_postfix_str``,
    ``close``, a context manager) as plain lines on stderr; see :func:`progress_bar`."""

    def __init__(self, total: int | None, desc: str, *, unit: str, interval: float,
                 clock: Callable[[], float], shown: bool) -> None:
        self.total, self.desc, self.unit, self.n = total, desc, unit, 0
        self._interval, self._clock, self._shown = interval, clock, shown
        self._postfix = ""
        self._lock = threading.Lock()
        self._closed = False
        self._started = self._said = clock() if shown else 0.0
        self._said_n: int | None = None
        if shown:
            self._say(self._started)

    def update(self, n: int = 1) -> None:
        if not self._shown:
            return
        with self._lock:
            self.n += n
            now = self._clock()
            if now - self._said >= self._interval:
                self._say(now)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self._postfix = str(s)

    def close(self) -> None:
        with self._lock:
            if self._shown and not self._closed:
                now = self._clock()
                if now - self._started >= self._interval and self._said_n != self.n:
                    self._say(now)
            self._closed = True

    def __enter__(self) -> _ProgressLines:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _say(self, now: float) -> None:
        count = f"{self.n:,}" if self.total is None else f"{self.n:,}/{self.total:,}"
        postfix = f", {self._postfix}" if self._postfix else ""
        print(f"labelaudit [{_elapsed(now - self._started)}] {self.desc}: {count}{self.unit}"
              f"{postfix}", file=sys.stderr, flush=True)
        self._said, self._said_n = now, self.n


def _elapsed(seconds: float) -> str:
    """``m:ss`` under an hour, ``h:mm:ss`` from one.

    Examples
    --------
    >>> _elapsed(161.7), _elapsed(3725)
    ('2:41', '1:02:05')
    """
    minutes, secs = divmod(int(max(seconds, 0.0)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
