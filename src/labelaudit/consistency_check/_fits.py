"""The fits of the learning curves (fresh or warm-started chains, as trees of shared
points, each fit once, checkpointed when asked) and the plan of a run, said before it."""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit.consistency_check._data import Pool
from labelaudit.models import Engine, WorkerPool, claim_checkpoint_folder, run_fits, take
from labelaudit.tokens import decode_tags, span_f1_counts


def settings_key(scorer: Any) -> str:
    """A checkpoint key's text: the plain-valued fields of a dataclass scorer."""
    plain = (str, int, float, bool, type(None))

    def is_plain(value: Any) -> bool:
        if isinstance(value, (list, tuple)):
            return all(is_plain(v) for v in value)
        if isinstance(value, dict):
            return all(isinstance(k, str) and is_plain(v) for k, v in value.items())
        return isinstance(value, plain)

    if not dataclasses.is_dataclass(scorer):
        return type(scorer).__name__
    return repr(sorted((f.name, getattr(scorer, f.name)) for f in dataclasses.fields(scorer)
                       if f.name not in ("progress", "cache_dir")
                       and is_plain(getattr(scorer, f.name))))


def fit_point(pool: Pool, scorer: Any, features: Any, metric: str, train: np.ndarray,
              test: np.ndarray, init: Any = None) -> tuple[float, Any]:
    """One curve point: the scorer fitted on the prefix ``train`` (from ``init``, the previous
    point's fit, when given) and its score on the new test set."""
    labels = take(pool.labels, train)
    seen = np.unique(labels) if pool.kind == "text" else None
    if seen is not None and len(seen) < 2:
        predicted = np.full(len(test), seen[0])  # one class seen: it is the prediction
        model = None
    else:
        model = scorer.clone().fit(take(features, train), labels, n_classes=len(pool.classes),
                                   **({"init": init} if init is not None else {}))
        probs = model.predict_proba(take(features, test))
        if pool.kind == "tokens":
            return _span_f1(pool, probs, test), model
        predicted = np.asarray(probs).argmax(axis=1)
    truth = np.asarray(pool.labels)[test]
    if metric == "macro_f1":
        from sklearn.metrics import f1_score

        return float(f1_score(truth, predicted, average="macro")), model
    return float(np.mean(predicted == truth)), model


def fit_tree(shared: tuple[Pool, Any, Any, str], _slot: Any, test: np.ndarray,
             nodes: list[tuple[str, np.ndarray, int]], store: FitStore | None) -> list[float]:
    """The points of one tree (a task of :func:`run_fits`): ``nodes`` are ``(key, prefix,
    parent)``, a parent (its position, -1 for the root) before its children; each point
    starts from its parent's fit. With ``store``, each point's score (and the fit of a
    parent) is kept as it finishes, and those kept are read instead of fitted."""
    pool, scorer, features, metric = shared
    parents = {parent for _, _, parent in nodes}
    models: dict[int, Any] = {}
    scores = []
    for i, (key, train, parent) in enumerate(nodes):
        saved = store.load(key, model=i in parents) if store else None
        if saved is None:
            saved = fit_point(pool, scorer, features, metric, train, test,
                              init=models.get(parent))
            if store is not None:
                store.save(key, saved[0], saved[1] if i in parents else None)
        scores.append(saved[0])
        if i in parents:
            models[i] = saved[1]
    return scores


def _span_f1(pool: Pool, probs: list[np.ndarray], test: np.ndarray) -> float:
    tags = [decode_tags(np.asarray(p), pool.classes, spans=not pool.plain) for p in probs]
    gold = [pool.data.iob2_tags[i] for i in test]
    num, den = span_f1_counts(tags, gold, plain=pool.plain)
    return float(num.sum() / den.sum()) if den.sum() > 0 else float("nan")


class FitStore:
    """One small pickle per finished point in ``folder`` (its score, and its fit when a
    warm-started point starts from it), named by a hash of the data, the scorer and its
    settings, the metric and the point; a rerun of an interrupted run reads them instead of
    fitting again."""

    def __init__(self, folder: str | Path, pool: Pool, scorer: str, metric: str,
                 variant: str = "") -> None:
        self.folder = claim_checkpoint_folder(folder)
        labels = [np.asarray(y).tobytes() for y in pool.labels] if pool.kind == "tokens" \
            else np.asarray(pool.labels).tobytes()
        items = getattr(pool.data, "texts", None) or getattr(pool.data, "tokens", None)
        self.run = hashlib.sha1(pickle.dumps((pool.kind, scorer, metric, labels, items, variant)),
                                usedforsecurity=False).hexdigest()

    def _path(self, key: str) -> Path:
        digest = hashlib.sha1(f"{self.run}|{key}".encode(), usedforsecurity=False).hexdigest()
        return self.folder / f"consistency-point-{digest}.pkl"

    def load(self, key: str, *, model: bool) -> tuple[float, Any] | None:
        """A point's score, and its fit when ``model`` (else None): None when it is not
        kept (or half-written by an interrupted run), or kept without the fit asked for."""
        try:
            saved = pickle.loads(self._path(key).read_bytes())  # noqa: S301 - our own file
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, KeyError):
            return None
        if model and saved["model"] is None:
            return None
        return float(saved["score"]), saved["model"]

    def save(self, key: str, score: float, model: Any) -> None:
        path = self._path(key)
        partial = path.with_suffix(".part")
        partial.write_bytes(pickle.dumps({"score": score, "model": model}))
        partial.replace(path)


def curve_trees(draws: list, names: list[str], grids: dict[str, np.ndarray], *,
                warm: bool = True) -> tuple[list[tuple[np.ndarray, list]],
                                            dict[tuple[str, int, int], int]]:
    """The fits the curves need, each once, as trees of points (one task each, largest first),
    and ``(scheme, repeat, point) -> position`` in the tasks' points. Warm-started, curves are
    chains sharing common beginnings; fresh, each point is its own tree, shared prefixes once."""
    trees: list[tuple[np.ndarray, list]] = []
    found: dict[bytes, tuple[int, int]] = {}
    place: dict[tuple[str, int, int], tuple[int, int]] = {}
    for r, draw in enumerate(draws):
        for name in names:
            order, key, parent = draw.order(name), b"", (-1, -1)
            for k, n in enumerate(grids[name]):
                if not warm:
                    key, parent = b"", (-1, -1)
                key = hashlib.sha1(key + b"|" + draw.test.tobytes() + b"|"
                                   + order[:n].tobytes()).digest()
                if key not in found:
                    if parent[0] < 0:
                        trees.append((draw.test, []))
                    tree = parent[0] if parent[0] >= 0 else len(trees) - 1
                    trees[tree][1].append((key.hex(), order[:n], parent[1]))
                    found[key] = (tree, len(trees[tree][1]) - 1)
                place[name, r, k] = parent = found[key]
    ranked = sorted(range(len(trees)), key=lambda t: -sum(len(p) for _, p, _ in trees[t][1]))
    start, offset = 0, {}
    for t in ranked:
        offset[t] = start
        start += len(trees[t][1])
    where = {point: offset[t] + i for point, (t, i) in place.items()}
    return [trees[t] for t in ranked], where


def fit_all(trees: list[tuple[np.ndarray, list]], store: FitStore | None, *, shared: tuple,
            workers: int, engine: Engine, ray_address: str | None, bar: Any,
            kept: WorkerPool | None = None) -> list[float]:
    """Every point's score, tree after tree (see :func:`fit_tree`), on the processes ``kept``."""
    def finished(index: int, scores: list[float]) -> None:
        bar.update(len(scores))

    done = run_fits(fit_tree, [(test, nodes, store) for test, nodes in trees], shared=shared,
                    workers=workers, engine=engine, ray_address=ray_address,
                    on_result=finished, pool=kept)
    return [score for scores in done for score in scores]


def _cost(model: Any, n_items: int, warm: bool) -> float:
    """A fit's cost in the scorer's units (:meth:`fit_cost`), else its number of items."""
    cost = getattr(model, "fit_cost", None)
    return float(cost(n_items, warm=warm)) if cost is not None else float(n_items)


def _timed(pool: Pool, model: Any, features: Any, train: np.ndarray,
           test: np.ndarray) -> tuple[float, float]:
    """Seconds of one fresh fit on ``train`` and of scoring the new test set with it."""
    start = time.perf_counter()
    fitted = model.clone().fit(take(features, train), take(pool.labels, train),
                               n_classes=len(pool.classes))
    middle = time.perf_counter()
    fitted.predict_proba(take(features, test))
    return middle - start, time.perf_counter() - middle


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def describe_plan(pool: Pool, model: Any, features: Any, trees: list, *, warm: bool,
                  n_schemes: int, n_points: int, repeats: tuple[int, int], workers: int,
                  engine: str) -> str:
    """One line: schemes, points and fits of a repeat, the range of repeats, and the time:
    each fit's :meth:`fit_cost` priced by one fit of the smallest prefix timed here, plus
    scoring, over ``workers`` (no time for Ray, whose cluster size is unknown here)."""
    fits = [(len(prefix), parent >= 0) for _, nodes in trees for _, prefix, parent in nodes]
    low, high = repeats
    counts = (f"{len(fits)} fits a repeat" + (" (each curve warm-started)" if warm else "")
              + (f", {low} to {high} repeats ({low * len(fits)} to {high * len(fits)} fits)"
                 if low < high else f", {high} repeats ({high * len(fits)} fits)"))
    text = f"plan: {n_schemes} schemes x {n_points} points, {counts}"
    if engine == "ray":
        return text + "; on Ray"
    smallest = min((prefix for _, nodes in trees for _, prefix, parent in nodes
                    if parent < 0), key=len)
    fit_s, score_s = _timed(pool, model, features, smallest, trees[0][0])
    per_unit = fit_s / max(_cost(model, len(smallest), False), 1e-9)
    repeat_s = sum(per_unit * _cost(model, n, w) + score_s for n, w in fits) / max(workers, 1)
    span = (_duration(low * repeat_s) + " to " + _duration(high * repeat_s)
            if low < high else _duration(high * repeat_s))
    return (f"{text}; about {span} on {workers} worker{'s' if workers > 1 else ''} (priced "
            "by one fit timed now)")
