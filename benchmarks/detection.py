"""``python -m benchmarks.detection`` (``make bench-detection``): does the default scan find
real, human-verified label errors better than a strong model a user writes in ten lines?

For each dev data set under the data root (``../shared/data``; a missing one is skipped)
and each fold seed, every candidate and both peers rank the same items on the same folds
(labelaudit's ``make_folds`` with that seed):

- ``naive peer``: unigram TF-IDF + logistic regression with scikit-learn's defaults;
- ``strong peer``: word 1-2-gram TF-IDF (sublinear tf) + logistic regression C=10 run to
  convergence (newton-cg to tol 1e-6: the optimum lbfgs reaches, faster), 5-fold
  cross-fitted, ranked by the loss of the given label;
- ``default``: ``labelaudit.scan`` with its defaults, and the other candidates of
  :data:`CANDIDATES` (scan with other members or options).

Reported per data set and candidate, as the mean over fold seeds: average precision (AP),
AP truncated at twice the number of errors, precision (= recall) at the number of errors,
the ratio of AP to the strong peer's, and a paired bootstrap over items (the same resample
for both, ``--resamples``, default 1,000) of the seed-mean AP difference to the strong
peer with its 95 % interval; a candidate counts as better only where the interval's lower
end is above 0. Wall time and peak resident memory of each run (its own process). Writes
``benchmarks/results/detection.md`` (the table), ``detection.json`` and ``detection.png``.

The truth columns (``is_error``...) are read only to score the rankings, never as features.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_RESULTS = REPO / "benchmarks" / "results"
PEER = "strong peer"


@dataclass(frozen=True)
class DevSet:
    name: str
    path: str
    text: str
    text_pair: str | None = None


DEV_SETS = (
    DevSet("imdb_dev", "labelerrors_imdb_dev/test.jsonl", "text"),
    DevSet("chaosnli_snli", "chaosnli_snli/snli.jsonl", "text_a", "text_b"),
    DevSet("labelerrors_20news", "labelerrors_20news/test.jsonl", "text"),
    DevSet("snow2008_rte", "snow2008_rte/rte.jsonl", "text_a", "text_b"),
)

# Candidates: keyword arguments of labelaudit.scan (besides the data and the fold seed).
def _old_tfidf() -> list[Any]:
    from labelaudit.models import TfidfScorer

    return [TfidfScorer(tol=1e-3, max_iter=1000)]  # the member's solver before issue #26


def _finetune_alone() -> list[Any]:
    from labelaudit.models import FinetuneScorer
    from labelaudit.scanning import PRESET_FINETUNE

    return [FinetuneScorer(**PRESET_FINETUNE)]


CANDIDATES: dict[str, dict[str, Any]] = {
    "default": {},
    "tfidf": {"scorers": ["tfidf"]},  # preset fast
    "tfidf (old solver tol 1e-3)": {"scorers": _old_tfidf},
    "tfidf x3 fold seeds": {"scorers": ["tfidf"], "n_seeds": 3},
    "tfidf + tfidf-char": {"scorers": ["tfidf", "tfidf-char"]},
    "tfidf 10 folds": {"scorers": ["tfidf"], "n_folds": 10},
    "tfidf + dynamics": {"scorers": ["tfidf", "dynamics"]},
    # for a GPU (benchmarks/gpu_detection.py runs both in one scan per seed)
    "finetune MiniLM (GPU)": {"scorers": _finetune_alone},
    "tfidf + finetune MiniLM (GPU)": {"preset": "best"},
}
# Run only where CUDA is; elsewhere taken from --cache when there, else left out.
GPU_CANDIDATES = ("finetune MiniLM (GPU)", "tfidf + finetune MiniLM (GPU)")


# ---------------------------------------------------------------- metrics


def average_precision(is_error: np.ndarray, suspicion: np.ndarray,
                      weights: np.ndarray | None = None) -> float:
    """Average precision of ranking by ``suspicion`` (higher = more suspect), with optional
    item weights (bootstrap counts); equals scikit-learn's ``average_precision_score``.

    Examples
    --------
    >>> average_precision(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.7, 0.1]))
    0.8333333333333333
    """
    y = np.asarray(is_error, dtype=float)
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float)
    order = np.argsort(-np.asarray(suspicion, dtype=float), kind="mergesort")
    y, w, s = y[order], w[order], np.asarray(suspicion, dtype=float)[order]
    # ties share one threshold, as in scikit-learn: cumulate to the last item of each tie
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]
    tp = np.cumsum(y * w)[last]
    total = np.cumsum(w)[last]
    positives = tp[-1] if len(tp) else 0.0
    if positives <= 0:
        return float("nan")
    precision = np.divide(tp, total, out=np.zeros_like(tp), where=total > 0)
    recall_step = np.diff(np.r_[0.0, tp]) / positives
    return float(np.sum(recall_step * precision))


def truncated_ap(is_error: np.ndarray, suspicion: np.ndarray, k: int) -> float:
    """AP over the top ``k``: the mean, over the errors, of the precision at each error's
    rank when it is within the top ``k`` (0 otherwise), divided by min(errors, k).

    Examples
    --------
    >>> truncated_ap(np.array([1, 0, 1, 0]), np.array([0.9, 0.8, 0.7, 0.1]), 2)
    0.5
    """
    y = np.asarray(is_error, dtype=bool)[np.argsort(-np.asarray(suspicion), kind="mergesort")]
    hits = y[:k]
    if not y.any():
        return float("nan")
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float(np.sum(precision * hits) / min(int(y.sum()), k))


def precision_at(is_error: np.ndarray, suspicion: np.ndarray, k: int) -> float:
    """Share of errors among the ``k`` most suspect items."""
    order = np.argsort(-np.asarray(suspicion), kind="mergesort")[:k]
    return float(np.asarray(is_error, dtype=bool)[order].mean()) if k else float("nan")


def paired_bootstrap(is_error: np.ndarray, ours: list[np.ndarray], peer: list[np.ndarray], *,
                     resamples: int = 1000, random_state: int = 0,
                     confidence: float = 0.95) -> tuple[float, float, float]:
    """The seed-mean AP difference ``ours - peer`` and its percentile bootstrap interval:
    each resample draws items with replacement (the same items for both rankings and every
    seed), as item weights.

    Examples
    --------
    >>> y = np.array([1, 0, 0, 1, 0, 0, 0, 0])
    >>> good, bad = np.array([8, 1, 2, 7, 3, 4, 5, 6.]), np.array([1, 8, 7, 2, 3, 4, 5, 6.])
    >>> diff, low, high = paired_bootstrap(y, [good], [bad], resamples=200)
    >>> round(diff, 3), low > 0
    (0.804, True)
    """
    rng = np.random.default_rng(random_state)
    n = len(is_error)

    def difference(weights: np.ndarray | None) -> float:
        return float(np.mean([average_precision(is_error, a, weights)
                              - average_precision(is_error, b, weights)
                              for a, b in zip(ours, peer, strict=True)]))

    point = difference(None)
    draws = []
    for _ in range(resamples):
        weights = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)
        value = difference(weights)
        if np.isfinite(value):
            draws.append(value)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(draws, [alpha, 1 - alpha]) if draws else (np.nan, np.nan)
    return point, float(low), float(high)


# ---------------------------------------------------------------- runs


def _load(spec: DevSet, root: Path) -> tuple[Any, np.ndarray] | None:
    import pandas as pd

    path = root / spec.path
    if not path.exists():
        return None
    frame = pd.read_json(path, lines=True)
    columns = ["id", spec.text] + ([spec.text_pair] if spec.text_pair else []) + ["label"]
    return frame[columns].copy(), frame["is_error"].to_numpy(dtype=bool)


def _peer_suspicion(frame: Any, spec: DevSet, labels: np.ndarray, folds: np.ndarray,
                    strong: bool) -> np.ndarray:
    """The peers, as a user writes them: TF-IDF + logistic regression on each fold."""
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    sides = [frame[spec.text].astype(str).tolist()]
    if spec.text_pair:
        sides.append(frame[spec.text_pair].astype(str).tolist())
    probs = np.zeros((len(labels), labels.max() + 1))
    for fold in np.unique(folds):
        train, test = np.flatnonzero(folds != fold), np.flatnonzero(folds == fold)
        blocks_train, blocks_test = [], []
        for side in sides:
            vectorizer = (TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True) if strong
                          else TfidfVectorizer())
            blocks_train.append(vectorizer.fit_transform([side[i] for i in train]))
            blocks_test.append(vectorizer.transform([side[i] for i in test]))
        # the strong peer's model is the regularised optimum: newton-cg reaches the optimum
        # lbfgs converges to (within 1e-3 in probability) in a fraction of the time on
        # many classes (20 Newsgroups: lbfgs took minutes per fold)
        model = LogisticRegression(C=10.0, solver="newton-cg", tol=1e-6, max_iter=500) \
            if strong else LogisticRegression(max_iter=1000)
        model.fit(sp.hstack(blocks_train).tocsr(), labels[train])
        probs[np.ix_(test, model.classes_)] = model.predict_proba(
            sp.hstack(blocks_test).tocsr())
    given = probs[np.arange(len(labels)), labels]
    return -np.log(np.clip(given, 1e-12, 1.0))


def _run_one(spec: DevSet, root: str, name: str, seed: int) -> dict[str, Any]:
    """One ranking in a process of its own: suspicion scores, seconds, peak memory."""
    import warnings

    from labelaudit.models import make_folds
    from labelaudit.scanning import scan

    warnings.simplefilter("ignore")
    # a cold embedding cache of its own: the time is what a first scan of the data costs
    os.environ["LABELAUDIT_CACHE"] = tempfile.mkdtemp(prefix="labelaudit-bench-")
    frame, _ = _load(spec, Path(root))  # type: ignore[misc]
    started = time.perf_counter()
    if name in ("naive peer", PEER):
        classes = sorted(frame["label"].astype(str).unique())
        labels = frame["label"].astype(str).map({c: i for i, c in enumerate(classes)}) \
            .to_numpy()
        folds = make_folds(labels, n_folds=5, random_state=seed)
        suspicion = _peer_suspicion(frame, spec, labels, folds, strong=name == PEER)
    else:
        options = {k: v() if callable(v) else v for k, v in CANDIDATES[name].items()}
        result = scan(frame, text=spec.text, text_pair=spec.text_pair, label="label", id="id",
                      random_state=seed, progress=False, keep_columns=False, **options)
        suspicion = -result.scores[result.rank_by]
    return {"suspicion": suspicion, "seconds": time.perf_counter() - started,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}


def run_set(spec: DevSet, root: Path, names: list[str], seeds: list[int], *,
            resamples: int, cache: Path | None,
            runner: Callable[..., dict[str, Any]] | None = None,
            cached_only: bool = False, gpu: bool = False) -> list[dict[str, Any]]:
    """Rows of one data set: every name over every seed, compared with the strong peer
    (``cached_only``: a candidate with a run missing from ``cache`` is left out, as is a
    GPU candidate without ``gpu``)."""
    loaded = _load(spec, root)
    if loaded is None:
        return []
    _, is_error = loaded
    runs: dict[str, list[dict[str, Any]]] = {}
    for name in dict.fromkeys(["naive peer", PEER, *names]):
        paths = [cache / spec.name / f"{name.replace(' ', '_')}_{seed}.npz" if cache else None
                 for seed in seeds]
        only_cached = cached_only or (name in GPU_CANDIDATES and not gpu)
        if only_cached and name != PEER and not all(p is not None and p.exists()
                                                     for p in paths):
            print(f"  {spec.name} {name}: not run (not in the cache"
                  f"{'' if cached_only else ', and no GPU here'})", file=sys.stderr)
            continue
        runs[name] = []
        for seed, path in zip(seeds, paths, strict=True):
            if path is not None and path.exists():
                with np.load(path) as saved:
                    run = {k: saved[k] if k == "suspicion" else float(saved[k]) for k in saved}
            else:
                run = (runner or _in_child)(spec, str(root), name, seed)
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    np.savez(path, **run)
            runs[name].append(run)
            print(f"  {spec.name} {name} seed {seed}: AP "
                  f"{average_precision(is_error, run['suspicion']):.3f} "
                  f"({run['seconds']:.0f} s)", file=sys.stderr, flush=True)
    n_errors = int(is_error.sum())
    peer = [r["suspicion"] for r in runs[PEER]]
    peer_ap = np.mean([average_precision(is_error, s) for s in peer])
    rows = []
    for name, name_runs in runs.items():
        scores = [r["suspicion"] for r in name_runs]
        aps = [average_precision(is_error, s) for s in scores]
        diff, low, high = (paired_bootstrap(is_error, scores, peer, resamples=resamples)
                           if name != PEER else (0.0, 0.0, 0.0))
        rows.append({
            "dataset": spec.name, "items": len(is_error), "errors": n_errors,
            "candidate": name, "ap": float(np.mean(aps)), "ap_sd": float(np.std(aps)),
            "ap_by_seed": aps,
            "ap_at_2err": float(np.mean([truncated_ap(is_error, s, 2 * n_errors)
                                         for s in scores])),
            "p_at_err": float(np.mean([precision_at(is_error, s, n_errors) for s in scores])),
            "ratio": float(np.mean(aps) / peer_ap), "diff": diff, "low": low, "high": high,
            "better": bool(low > 0), "seconds": float(np.mean([r["seconds"] for r in name_runs])),
            "peak_mb": float(max(r["peak_mb"] for r in name_runs))})
    return rows


def _in_child(spec: DevSet, root: str, name: str, seed: int) -> dict[str, Any]:
    import multiprocessing

    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                             max_tasks_per_child=1) as pool:
        return pool.submit(_run_one, spec, root, name, seed).result()


# ---------------------------------------------------------------- output


def markdown(rows: list[dict[str, Any]], seeds: list[int], resamples: int) -> str:
    lines = [f"Fold seeds {', '.join(map(str, seeds))}; paired bootstrap over items, "
             f"{resamples} resamples, 95 % interval of the seed-mean AP difference to the "
             "strong peer; **better** = the interval's lower end is above 0.", "",
             "| data (items / errors) | ranking | AP (sd over seeds) | AP / strong peer | "
             "ΔAP [95 % CI] | AP@2·err | P@err | seconds | peak MB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = " **better**" if r["better"] else (" worse" if r["high"] < 0 else "")
        interval = "" if r["candidate"] == PEER else \
            f"{r['diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]{verdict}"
        lines.append(
            f"| {r['dataset']} ({r['items']:,} / {r['errors']}) | {r['candidate']} | "
            f"{r['ap']:.3f} ({r['ap_sd']:.3f}) | {r['ratio']:.2f}x | {interval} | "
            f"{r['ap_at_2err']:.3f} | {r['p_at_err']:.3f} | {r['seconds']:.0f} | "
            f"{r['peak_mb']:.0f} |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = list(dict.fromkeys(r["dataset"] for r in rows))
    names = [n for n in dict.fromkeys(r["candidate"] for r in rows) if n != PEER]
    fig, ax = plt.subplots(figsize=(2.2 + 1.6 * len(sets), 4))
    width = 0.8 / max(len(names), 1)
    for j, name in enumerate(names):
        picked = [next((r for r in rows if r["dataset"] == s and r["candidate"] == name),
                       None) for s in sets]
        x = np.arange(len(sets)) + j * width
        y = [r["diff"] if r else np.nan for r in picked]
        err = np.array([[r["diff"] - r["low"], r["high"] - r["diff"]] if r else [0, 0]
                        for r in picked]).T
        ax.bar(x, y, width, yerr=err, capsize=3, label=name)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(sets)) + width * (len(names) - 1) / 2, sets, rotation=15)
    ax.set_ylabel("AP - strong peer's AP (95 % CI)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--datasets", default=",".join(s.name for s in DEV_SETS))
    parser.add_argument("--candidates", default=",".join(CANDIDATES))
    parser.add_argument("--seeds", default="0,1,2", help="fold seeds (at least 3 to claim)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--cache", type=Path, help="keep each run's ranking here and reuse "
                        "it (only while the code is unchanged!)")
    parser.add_argument("--cached-only", action="store_true",
                        help="with --cache: leave out the candidates not run yet")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = [n for n in args.candidates.split(",") if n]
    unknown = [n for n in names if n not in CANDIDATES]
    if unknown:
        parser.error(f"unknown candidates {unknown}; choose from {', '.join(CANDIDATES)}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    gpu = bool(torch.cuda.is_available())
    rows = []
    for spec in DEV_SETS:
        if spec.name in args.datasets.split(","):
            rows += run_set(spec, args.data_root, names, seeds, resamples=args.resamples,
                            cache=args.cache, cached_only=args.cached_only, gpu=gpu)
    if not rows:
        print(f"no dev data set under {args.data_root}", file=sys.stderr)
        return 1
    args.results.mkdir(parents=True, exist_ok=True)
    table = markdown(rows, seeds, args.resamples)
    (args.results / "detection.md").write_text(table, encoding="utf-8")
    (args.results / "detection.json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, args.results / "detection.png")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
