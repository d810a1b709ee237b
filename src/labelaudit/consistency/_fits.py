"""The fits of the learning curves: one fresh model per curve point, each fit once, run
through the shared executor, and kept per fit in a checkpoint folder when asked."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit.consistency._data import Pool
from labelaudit.engine import run_fits

__all__ = ["FitStore", "curve_fits", "fit_all", "fit_score"]


def fit_score(shared: tuple[Pool, Any, Any, str], _slot: Any, train: np.ndarray,
               test: np.ndarray) -> float:
    """One point of a curve (a task of :func:`run_tasks`): a fresh copy of the scorer
    fitted on the prefix ``train``, scored on the new test set."""
    from labelaudit.models._base import take

    pool, scorer, features, metric = shared
    labels = take(pool.labels, train)
    seen = np.unique(np.concatenate([np.asarray(y).ravel() for y in labels])
                     if pool.kind == "tokens" else labels)
    if len(seen) < 2 and pool.kind == "text":
        predicted = np.full(len(test), seen[0])  # one class seen: it is the prediction
    else:
        model = scorer.clone().fit(take(features, train), labels, n_classes=len(pool.classes))
        probs = model.predict_proba(take(features, test))
        if pool.kind == "tokens":
            return _span_f1(pool, probs, test)
        predicted = np.asarray(probs).argmax(axis=1)
    truth = np.asarray(pool.labels)[test]
    if metric == "macro_f1":
        from sklearn.metrics import f1_score

        return float(f1_score(truth, predicted, average="macro"))
    return float(np.mean(predicted == truth))


def _span_f1(pool: Pool, probs: list[np.ndarray], test: np.ndarray) -> float:
    from labelaudit.tokens._spans import decode_tags, span_f1_counts

    tags = [decode_tags(np.asarray(p), pool.classes, spans=not pool.plain) for p in probs]
    gold = [pool.data.iob2_tags[i] for i in test]
    num, den = span_f1_counts(tags, gold, plain=pool.plain)
    return float(num.sum() / den.sum()) if den.sum() > 0 else float("nan")


class FitStore:
    """One small JSON file per finished fit in ``folder``, named by a hash of the data,
    the scorer, the metric and the fit's items: a rerun of an interrupted run reads them
    instead of fitting again."""

    def __init__(self, folder: str | Path, pool: Pool, scorer: str, metric: str) -> None:
        import pickle

        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        labels = [np.asarray(y).tobytes() for y in pool.labels] if pool.kind == "tokens" \
            else np.asarray(pool.labels).tobytes()
        items = getattr(pool.data, "texts", None) or getattr(pool.data, "tokens", None)
        self.run = hashlib.sha1(pickle.dumps((pool.kind, scorer, metric, labels, items)),
                                usedforsecurity=False).hexdigest()

    def _path(self, train: np.ndarray, test: np.ndarray) -> Path:
        key = hashlib.sha1(self.run.encode() + test.tobytes() + b"|" + train.tobytes(),
                           usedforsecurity=False).hexdigest()
        return self.folder / f"consistency-fit-{key}.json"

    def load(self, train: np.ndarray, test: np.ndarray) -> float | None:
        path = self._path(train, test)
        if not path.is_file():
            return None
        try:
            return float(json.loads(path.read_text())["score"])
        except (ValueError, KeyError, OSError):
            return None  # a half-written file of an interrupted run: fit again

    def save(self, train: np.ndarray, test: np.ndarray, score: float) -> None:
        path = self._path(train, test)
        partial = path.with_suffix(".part")
        partial.write_text(json.dumps({"score": score}))
        partial.replace(path)


def fit_all(tasks: list[tuple[np.ndarray, np.ndarray]], store: FitStore | None, *,
             shared: tuple, workers: int, engine: str, ray_address: str | None,
             bar: Any) -> list[float]:
    """Every fit's score: from the checkpoint where a finished run saved it, else fitted
    (and saved as it finishes)."""
    scores: list[float | None] = [store.load(*t) if store else None for t in tasks]
    todo = [i for i, s in enumerate(scores) if s is None]
    bar.update(len(tasks) - len(todo))

    def finished(index: int, score: float) -> None:
        scores[todo[index]] = score
        if store is not None:
            store.save(*tasks[todo[index]], score)
        bar.update(1)

    run_fits(fit_score, [tasks[i] for i in todo], shared=shared, workers=workers,
             engine=engine, ray_address=ray_address, on_result=finished)
    return [float(s) for s in scores]  # type: ignore[arg-type]


def curve_fits(draws: list, names: list[str], grids: dict[str, np.ndarray],
                ) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[tuple[str, int, int], int]]:
    """The fits the curves need, each once (a prefix two schemes share is one fit), and
    which fit gives each point: ``(scheme, repeat, point) -> task``."""
    tasks: list[tuple[np.ndarray, np.ndarray]] = []
    first: dict[bytes, int] = {}
    where = {}
    for r, draw in enumerate(draws):
        for name in names:
            order = draw.order(name)
            for k, n in enumerate(grids[name]):
                key = hashlib.sha1(draw.test.tobytes() + b"|" + order[:n].tobytes()).digest()
                if key not in first:
                    first[key] = len(tasks)
                    tasks.append((order[:n], draw.test))
                where[name, r, k] = first[key]
    return tasks, where
