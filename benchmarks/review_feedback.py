"""``python -m benchmarks.review_feedback``: do reviewers' verdicts, fed back into the
detector while they review, find more real label errors within the same budget?

Weber & Plank (2023) report gains from feeding reviewers' answers back (ActiveAED). For each
dev set of the detection benchmark (:data:`benchmarks.detection.DEV_SETS`, read by its
loader; a missing one is skipped) and each fold seed:

1. the default scan runs once (``labelaudit.scan``, that fold seed); its per-item outputs
   (every method's scores, each member's and the ensemble's probabilities, the ensemble's
   weights and temperatures) are kept under ``--cache`` so that a rerun skips the scans;
2. a review is replayed: reviewers are simulated by the truth (``is_error``; a confirmed
   error's correct label is ``true_label``), in batches of ``--batch`` (50) items, for a
   budget of ``--budget-factor`` (2) x the number of true errors, starting from the default
   ranking. The strategies (:data:`STRATEGIES`) choose each next batch:

   - ``static``: the default ranking, top-down (what a review app serves today);
   - ``calibrator``: a logistic regression over the scan's own per-item features
     (:func:`calibrator_features`), refitted after each batch on the items reviewed so far
     (error or not), its probability blended 30/70 with the default ranking (both
     rank-normalised); the next batch is the best unreviewed items by the blend;
   - ``calibrator per class``: the same, with each feature also copied per given label, so
     the calibrator can learn that one class's flags are mostly right and another's not;
   - ``corrections`` (ActiveAED's loop for a linear model): the word TF-IDF member is
     refitted on the same folds with every confirmed error's label replaced by its correct
     label (an error without one is left out of training), the ensemble is rebuilt with the
     scan's own weights and temperatures, and the unreviewed items are re-ranked by it.

3. per set and strategy: errors found within the budget (mean over seeds and per seed), the
   ratio to ``static``, and the AP of the final ordering (reviewed items in review order,
   then the rest by the strategy's last ranking). A strategy **wins** on a set where it
   finds more errors than ``static`` on every seed and **loses** where it finds fewer on
   every seed (no bootstrap: the seeds are the replication). Writes
   ``benchmarks/results/review_feedback.md`` and ``review_feedback.json``.

The truth columns are read only to answer as the reviewers and to score; never as features.

References
----------
Weber & Plank (2023), ActiveAED: A Human in the Loop Improves Annotation Error Detection,
Findings of ACL 2023.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.detection import (
    DEFAULT_DATA,
    DEFAULT_RESULTS,
    DEV_SETS,
    DevSet,
    _load,
    average_precision,
)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = REPO / "benchmarks" / "cache" / "review_feedback"  # ignored by git
STRATEGIES = ("static", "calibrator", "calibrator per class", "corrections")
BLEND = 0.3  # the calibrator's share of the blend; the default ranking keeps 0.7
REFIT_MEMBER = "tfidf"  # the member that ``corrections`` refits


# ---------------------------------------------------------------- the replay


@dataclass(frozen=True)
class Replay:
    """One simulated review: the items reviewed, in review order, and the final ordering
    (reviewed items first, then the rest by the strategy's last ranking)."""

    reviewed: np.ndarray
    order: np.ndarray
    found: int

    def ap(self, is_error: np.ndarray) -> float:
        """Average precision of :attr:`order` against ``is_error``."""
        suspicion = np.empty(len(self.order))
        suspicion[self.order] = len(self.order) - np.arange(len(self.order))
        return average_precision(is_error, suspicion)


Rerank = Callable[[np.ndarray, np.ndarray], np.ndarray]


def replay(prior: np.ndarray, is_error: np.ndarray, *, budget: int, batch_size: int = 50,
           rerank: Rerank | None = None) -> Replay:
    """Review ``budget`` items in batches of ``batch_size``: each batch is the most suspect
    unreviewed items by the current ranking (``prior`` first; higher = more suspect), and
    after each batch but the last ``rerank(reviewed, verdicts)`` gives the next ranking
    (all items; ``verdicts[i]`` is whether ``reviewed[i]`` is an error). Ties go to the
    earlier item.

    Examples
    --------
    >>> y = np.array([0, 1, 0, 1, 0, 0])
    >>> r = replay(np.array([6, 5, 4, 3, 2, 1.0]), y, budget=4, batch_size=2)
    >>> r.reviewed.tolist(), r.found
    ([0, 1, 2, 3], 2)
    """
    is_error = np.asarray(is_error, dtype=bool)
    n = len(is_error)
    budget = int(min(max(budget, 0), n))
    suspicion = np.asarray(prior, dtype=float)
    seen = np.zeros(n, dtype=bool)
    reviewed: list[int] = []
    while len(reviewed) < budget:
        open_ = np.flatnonzero(~seen)
        batch = open_[np.argsort(-suspicion[open_], kind="stable")][
            :min(batch_size, budget - len(reviewed))]
        reviewed += batch.tolist()
        seen[batch] = True
        if rerank is not None and len(reviewed) < budget:
            done = np.asarray(reviewed)
            suspicion = np.asarray(rerank(done, is_error[done]), dtype=float)
    done = np.asarray(reviewed, dtype=int)
    rest = np.flatnonzero(~seen)
    rest = rest[np.argsort(-suspicion[rest], kind="stable")]
    return Replay(done, np.r_[done, rest].astype(int), int(is_error[done].sum()))


def rank_normalise(values: np.ndarray) -> np.ndarray:
    """Ranks scaled to (0, 1], ties sharing their mean rank (higher value, higher rank).

    Examples
    --------
    >>> rank_normalise(np.array([0.2, 0.9, 0.2, 0.5])).tolist()
    [0.375, 1.0, 0.375, 0.75]
    """
    from scipy.stats import rankdata

    return rankdata(values) / len(values)


def calibrator(features: np.ndarray, prior: np.ndarray, *, labels: np.ndarray | None = None,
               blend: float = BLEND) -> Rerank:
    """A reranker: logistic regression of the verdicts on ``features`` (n_samples,
    n_features), fitted on the items reviewed so far, blended ``blend`` : ``1 - blend`` with
    ``prior`` after rank normalisation; with ``labels`` (given labels), the features are
    also copied per given label (a per-class calibrator sharing the common part). Until the
    reviewed items hold both verdicts, the ranking stays ``prior``."""
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(features, dtype=float)
    if labels is not None:
        onehot = np.eye(int(labels.max()) + 1)[labels]
        x = np.hstack([x, onehot, (onehot[:, :, None] * x[:, None, :]).reshape(len(x), -1)])
    base = rank_normalise(prior)

    def rerank(reviewed: np.ndarray, verdicts: np.ndarray) -> np.ndarray:
        if verdicts.all() or not verdicts.any():
            return np.asarray(prior, dtype=float)
        model = LogisticRegression(C=1.0, max_iter=2000).fit(x[reviewed], verdicts)
        return blend * rank_normalise(model.predict_proba(x)[:, 1]) + (1 - blend) * base

    return rerank


# ---------------------------------------------------------------- the scan's outputs


@dataclass(frozen=True)
class ScanOutputs:
    """What one default scan gave per item (input order), as cached."""

    ids: np.ndarray
    labels: np.ndarray  # given labels, indices into classes
    classes: np.ndarray  # the label values, as strings
    scores: dict[str, np.ndarray]  # lower = more suspect
    member_probs: dict[str, np.ndarray]
    pred_probs: np.ndarray
    weights: dict[str, float]
    temperatures: dict[str, float]
    rank_by: str
    seconds: float

    @property
    def suspicion(self) -> np.ndarray:
        """The default ranking: higher = more suspect."""
        return -self.scores[self.rank_by]

    def save(self, path: Path) -> None:
        arrays = {f"score__{k}": v for k, v in self.scores.items()}
        arrays |= {f"member__{k}": v for k, v in self.member_probs.items()}
        meta = {"weights": self.weights, "temperatures": self.temperatures,
                "rank_by": self.rank_by, "seconds": self.seconds}
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial.npz")
        arrays |= {"ids": self.ids.astype(str), "labels": self.labels,
                   "classes": self.classes.astype(str), "pred_probs": self.pred_probs,
                   "meta": np.array(json.dumps(meta))}
        np.savez(partial, **arrays)  # type: ignore[arg-type]
        partial.replace(path)

    @classmethod
    def load(cls, path: Path) -> ScanOutputs:
        with np.load(path, allow_pickle=False) as saved:
            meta = json.loads(str(saved["meta"]))
            return cls(ids=saved["ids"], labels=saved["labels"], classes=saved["classes"],
                       scores={k[7:]: saved[k] for k in saved if k.startswith("score__")},
                       member_probs={k[8:]: saved[k] for k in saved
                                     if k.startswith("member__")},
                       pred_probs=saved["pred_probs"], weights=meta["weights"],
                       temperatures=meta["temperatures"], rank_by=meta["rank_by"],
                       seconds=meta["seconds"])


def default_scan(frame: Any, spec: DevSet, seed: int) -> ScanOutputs:
    """The default scan of ``frame`` (columns of :func:`benchmarks.detection._load`)."""
    import labelaudit
    from labelaudit.scanning import ScanResult

    options: dict[str, Any] = {}
    if "evidence" in inspect.signature(labelaudit.scan).parameters:
        options["evidence"] = False  # the experiment needs the ranking only
    started = time.perf_counter()
    result = labelaudit.scan(frame, text=spec.text, text_pair=spec.text_pair, label="label",
                             id="id", random_state=seed, progress=False, keep_columns=False,
                             **options)
    seconds = time.perf_counter() - started
    if not isinstance(result, ScanResult):  # a single-label frame in memory gives one
        raise TypeError(f"expected a ScanResult, got {type(result).__name__}")
    return ScanOutputs(
        ids=np.asarray(result.ids).astype(str), labels=np.asarray(result.labels, dtype=int),
        classes=np.asarray(result.classes).astype(str),
        scores={k: np.asarray(v, dtype=float) for k, v in result.scores.items()},
        member_probs={k: np.asarray(v, dtype=float) for k, v in result.member_probs.items()},
        pred_probs=np.asarray(result.pred_probs, dtype=float), weights=dict(result.weights),
        temperatures=dict(result.temperatures), rank_by=result.rank_by, seconds=seconds)


def calibrator_features(outputs: ScanOutputs) -> np.ndarray:
    """Per-item features of the scan's own outputs, standardised (n_samples, n_features):
    every method's score; for each member and the ensemble the log probability of the given
    label, of its likeliest other class, and their difference."""
    rows = np.arange(len(outputs.labels))
    columns = list(outputs.scores.values())
    for probs in [*outputs.member_probs.values(), outputs.pred_probs]:
        logp = np.log(np.clip(probs, 1e-12, 1.0))
        given = logp[rows, outputs.labels]
        other = logp.copy()
        other[rows, outputs.labels] = -np.inf
        best_other = other.max(axis=1)
        columns += [given, best_other, best_other - given]
    x = np.column_stack(columns).astype(float)
    x[~np.isfinite(x)] = 0.0
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def ensemble_probs(outputs: ScanOutputs, members: dict[str, np.ndarray]) -> np.ndarray:
    """The scan's ensemble over ``members``: each temperature-scaled as in the scan, then
    averaged with the scan's weights."""
    from labelaudit.detect import apply_temperature

    return sum(w * apply_temperature(members[k], outputs.temperatures[k])
               for k, w in outputs.weights.items())  # type: ignore[return-value]


def corrections(outputs: ScanOutputs, frame: Any, spec: DevSet, true_labels: np.ndarray, *,
                seed: int) -> Rerank:
    """A reranker that refits the :data:`REFIT_MEMBER` member on the scan's folds with the
    confirmed errors' labels corrected (``true_labels[i]``, -1 where unknown: left out of
    training) and ranks by the rebuilt ensemble's score of the given labels."""
    from labelaudit.detect import label_quality_scores
    from labelaudit.io import TextDataset
    from labelaudit.models import make_folds, make_scorer, take

    labels = outputs.labels
    n_classes = len(outputs.classes)
    data = TextDataset(outputs.ids, frame[spec.text].astype(str).tolist(),
                       frame[spec.text_pair].astype(str).tolist() if spec.text_pair else None,
                       labels, outputs.classes)
    scorer = make_scorer(REFIT_MEMBER)
    features = scorer.prepare(data)
    folds = make_folds(labels, n_folds=None, random_state=seed, classes=outputs.classes)

    def rerank(reviewed: np.ndarray, verdicts: np.ndarray) -> np.ndarray:
        train_labels = labels.copy()
        keep = np.ones(len(labels), dtype=bool)
        errors = reviewed[verdicts]
        known = true_labels[errors] >= 0
        train_labels[errors[known]] = true_labels[errors[known]]
        keep[errors[~known]] = False
        probs = np.zeros((len(labels), n_classes))
        for fold in np.unique(folds):
            train = np.flatnonzero((folds != fold) & keep)
            held_out = np.flatnonzero(folds == fold)
            model = scorer.clone().fit(take(features, train), train_labels[train],
                                       n_classes=n_classes)
            probs[held_out] = model.predict_proba(take(features, held_out))
        members = dict(outputs.member_probs) | {REFIT_MEMBER: probs}
        return -label_quality_scores(labels, ensemble_probs(outputs, members),
                                     method=outputs.rank_by)

    return rerank


def rerankers(outputs: ScanOutputs, frame: Any, spec: DevSet, true_labels: np.ndarray, *,
              seed: int) -> dict[str, Rerank | None]:
    """Each strategy's reranker (None for ``static``)."""
    x = calibrator_features(outputs)
    out: dict[str, Rerank | None] = {
        "static": None,
        "calibrator": calibrator(x, outputs.suspicion),
        "calibrator per class": calibrator(x, outputs.suspicion, labels=outputs.labels),
    }
    if REFIT_MEMBER in outputs.weights:
        out["corrections"] = corrections(outputs, frame, spec, true_labels, seed=seed)
    return out


# ---------------------------------------------------------------- one data set


def _truth(spec: DevSet, root: Path, classes: np.ndarray) -> np.ndarray:
    """The correct label of each item as an index into ``classes`` (-1 where unknown)."""
    import pandas as pd

    raw = pd.read_json(root / spec.path, lines=True)
    if "true_label" not in raw:
        return np.full(len(raw), -1)
    index = {c: i for i, c in enumerate(classes)}
    return np.array([-1 if pd.isna(v) else index.get(str(v), -1) for v in raw["true_label"]])


def run_set(spec: DevSet, root: Path, seeds: Sequence[int], *, cache: Path | None,
            batch_size: int = 50, budget_factor: float = 2.0,
            strategies: Sequence[str] = STRATEGIES) -> dict[str, Any] | None:
    """Every strategy's replays on one data set, over the fold seeds (None: no file)."""
    loaded = _load(spec, root)
    if loaded is None:
        print(f"  {spec.name}: not under {root}, skipped", file=sys.stderr)
        return None
    frame, is_error = loaded
    n_errors = int(is_error.sum())
    budget = int(round(budget_factor * n_errors))
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in strategies}
    scan_seconds = []
    for seed in seeds:
        path = cache / spec.name / f"default_{seed}.npz" if cache else None
        if path is not None and path.exists():
            outputs = ScanOutputs.load(path)
        else:
            outputs = default_scan(frame, spec, seed)
            if path is not None:
                outputs.save(path)
        if not np.array_equal(outputs.ids, frame["id"].astype(str).to_numpy()):
            raise RuntimeError(f"{path}: the cached scan's items differ from the data; "
                               "delete the cache folder and run again")
        scan_seconds.append(outputs.seconds)
        true_labels = _truth(spec, root, outputs.classes)
        chosen = rerankers(outputs, frame, spec, true_labels, seed=seed)
        for name in strategies:
            if name not in chosen:
                continue
            started = time.perf_counter()
            result = replay(outputs.suspicion, is_error, budget=budget,
                            batch_size=batch_size, rerank=chosen[name])
            runs[name].append({"seed": seed, "found": result.found,
                               "ap": result.ap(is_error),
                               "seconds": time.perf_counter() - started})
            print(f"  {spec.name} seed {seed} {name}: {result.found}/{budget} errors, "
                  f"AP {runs[name][-1]['ap']:.3f} ({runs[name][-1]['seconds']:.0f} s)",
                  file=sys.stderr, flush=True)
    static = np.array([r["found"] for r in runs["static"]], dtype=float)
    rows = []
    for name, name_runs in runs.items():
        if not name_runs:
            continue
        found = np.array([r["found"] for r in name_runs], dtype=float)
        rows.append({
            "strategy": name, "found": float(found.mean()),
            "found_by_seed": found.astype(int).tolist(),
            "ratio": float(found.mean() / static.mean()) if static.mean() else float("nan"),
            "ap": float(np.mean([r["ap"] for r in name_runs])),
            "ap_by_seed": [r["ap"] for r in name_runs],
            "wins": bool(name != "static" and (found > static).all()),
            "loses": bool(name != "static" and (found < static).all()),
            "seconds": float(np.mean([r["seconds"] for r in name_runs]))})
    return {"dataset": spec.name, "items": len(is_error), "errors": n_errors,
            "budget": budget, "batches": int(np.ceil(budget / batch_size)),
            "scan_seconds": float(np.mean(scan_seconds)), "seeds": list(seeds), "rows": rows}


# ---------------------------------------------------------------- output


def markdown(sets: list[dict[str, Any]], command: str, *, batch_size: int) -> str:
    lines = [
        f"Command: `{command}`", "",
        f"Reviewers simulated by the truth, batches of {batch_size}, budget 2 x the true "
        "errors, from the default scan's ranking; fold seeds "
        f"{', '.join(map(str, sets[0]['seeds']))}. **wins**: finds more errors than static "
        "on every seed; **loses**: fewer on every seed. AP: of the final ordering (reviewed "
        "items in review order, then the rest by the strategy's last ranking).", "",
        "| data (items / errors / budget, batches) | strategy | errors found (per seed) | "
        "/ static | AP (per seed) | verdict | replay s |",
        "|---|---|---|---|---|---|---|"]
    for s in sets:
        for r in s["rows"]:
            verdict = "**wins**" if r["wins"] else "loses" if r["loses"] else ""
            lines.append(
                f"| {s['dataset']} ({s['items']:,} / {s['errors']} / {s['budget']}, "
                f"{s['batches']}) | {r['strategy']} | {r['found']:.1f} "
                f"({', '.join(map(str, r['found_by_seed']))}) | {r['ratio']:.3f} | "
                f"{r['ap']:.3f} ({', '.join(f'{a:.3f}' for a in r['ap_by_seed'])}) | "
                f"{verdict} | {r['seconds']:.0f} |")
    single = [s["dataset"] for s in sets if s["batches"] < 2]
    if single:
        lines += ["", f"{', '.join(single)}: the budget fits in one batch, so no verdict "
                  "comes back before it is spent and every strategy reviews the static "
                  "ranking's top items."]
    names = list(dict.fromkeys(r["strategy"] for s in sets for r in s["rows"]))
    lines += ["", "Verdict over the sets (the review app may serve a learned ranking only "
              "where it wins on two sets and loses on none):", ""]
    for name in names[1:]:
        won = [s["dataset"] for s in sets for r in s["rows"]
               if r["strategy"] == name and r["wins"]]
        lost = [s["dataset"] for s in sets for r in s["rows"]
                if r["strategy"] == name and r["loses"]]
        ok = len(won) >= 2 and not lost
        lines.append(f"- {name}: wins on {', '.join(won) or 'none'}; loses on "
                     f"{', '.join(lost) or 'none'} -> {'qualifies' if ok else 'does not qualify'}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--sets", default=",".join(s.name for s in DEV_SETS))
    parser.add_argument("--seeds", default="0,1,2", help="fold seeds (3 to claim a win)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--batch", type=int, default=50, help="items per review batch")
    parser.add_argument("--budget-factor", type=float, default=2.0,
                        help="items reviewed = this x the number of true errors")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help="the scans' per-item outputs, reused by reruns")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = [s for s in args.sets.split(",") if s]
    unknown = sorted(set(names) - {s.name for s in DEV_SETS})
    if unknown:
        parser.error(f"unknown sets {unknown}; choose from "
                     f"{', '.join(s.name for s in DEV_SETS)}")
    strategies = [s for s in args.strategies.split(",") if s]
    if "static" not in strategies or set(strategies) - set(STRATEGIES):
        parser.error(f"--strategies must include static and be among {', '.join(STRATEGIES)}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import warnings

    warnings.simplefilter("ignore")  # chance-level and convergence warnings of the scans
    command = ("python -m benchmarks.review_feedback "
               + " ".join(sys.argv[1:] if argv is None else argv)).strip()
    sets: list[dict[str, Any]] = []
    table = ""
    for spec in DEV_SETS:
        if spec.name not in names:
            continue
        out = run_set(spec, args.data_root, seeds, cache=args.cache, batch_size=args.batch,
                      budget_factor=args.budget_factor, strategies=strategies)
        if out is None:
            continue
        sets.append(out)
        # written after each set, so a long run's finished sets can be read while it runs
        table = markdown(sets, command, batch_size=args.batch)
        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "review_feedback.md").write_text(table, encoding="utf-8")
        (args.results / "review_feedback.json").write_text(
            json.dumps({"command": command, "batch": args.batch,
                        "budget_factor": args.budget_factor, "sets": sets}, indent=1) + "\n")
    if not sets:
        print(f"no dev data set under {args.data_root}", file=sys.stderr)
        return 1
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
