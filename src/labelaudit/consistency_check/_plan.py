"""The plan of a consistency run, said before the fits start: how many fits, and about how
long they take, from one fit timed here."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from labelaudit.consistency_check._data import Pool

__all__ = ["describe_plan"]


def _cost(model: Any, n_items: int, warm: bool) -> float:
    """A fit's cost in the scorer's units (:meth:`fit_cost`), else its number of items."""
    cost = getattr(model, "fit_cost", None)
    return float(cost(n_items, warm=warm)) if cost is not None else float(n_items)


def _fits(tasks: list, warm: bool) -> list[tuple[int, bool]]:
    """(items fed, warm-started) of every fit of a repeat's tasks."""
    if not warm:
        return [(len(train), False) for train, _ in tasks]
    return [(len(prefix), parent >= 0) for _, nodes in tasks for _, prefix, parent in nodes]


def _timed(pool: Pool, model: Any, features: Any, train: np.ndarray,
           test: np.ndarray) -> tuple[float, float]:
    """Seconds of one fresh fit on ``train`` and of scoring the new test set with it."""
    from labelaudit.models._base import take

    start = time.perf_counter()
    fitted = model.clone().fit(take(features, train), take(pool.labels, train),
                               n_classes=len(pool.classes))
    middle = time.perf_counter()
    fitted.predict_proba(take(features, test))
    return middle - start, time.perf_counter() - middle


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def describe_plan(pool: Pool, model: Any, features: Any, tasks: list, *, warm: bool,
                  n_schemes: int, n_points: int, repeats: tuple[int, int], workers: int,
                  engine: str) -> str:
    """One line: the schemes, points and fits of a repeat (``tasks``, as planned for the
    first repeat), the range of repeats, and about how long it takes: every fit's cost
    (:meth:`fit_cost` of the scorer, else its items) priced by one fresh fit of the
    smallest prefix timed here, plus scoring the new test set once per fit, shared by
    ``workers`` processes (no time for Ray, whose cluster size is not known here).

    The timed fit is one more fit than the run makes, on the smallest prefix.
    """
    fits = _fits(tasks, warm)
    low, high = repeats
    counts = (f"{len(fits)} fits a repeat" + (" (each curve warm-started)" if warm else "")
              + (f", {low} to {high} repeats ({low * len(fits)} to {high * len(fits)} fits)"
                 if low < high else f", {high} repeats ({high * len(fits)} fits)"))
    text = f"plan: {n_schemes} schemes x {n_points} points, {counts}"
    if engine == "ray":
        return text + "; on Ray"
    trains = [train for train, _ in tasks] if not warm else \
        [prefix for _, nodes in tasks for _, prefix, parent in nodes if parent < 0]
    test = tasks[0][1] if not warm else tasks[0][0]
    smallest = min(trains, key=len)
    fit_s, score_s = _timed(pool, model, features, smallest, test)
    per_unit = fit_s / max(_cost(model, len(smallest), False), 1e-9)
    repeat_s = sum(per_unit * _cost(model, n, w) + score_s for n, w in fits) / max(workers, 1)
    span = (_duration(low * repeat_s) + " to " + _duration(high * repeat_s)
            if low < high else _duration(high * repeat_s))
    return (f"{text}; about {span} on {workers} worker{'s' if workers > 1 else ''} (priced "
            "by one fit timed now)")
