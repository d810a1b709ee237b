"""Which ensemble members earn their place: each member's AP alone and what adding it to
the default (tfidf + embed) does, with bootstrap intervals, and the time each takes.

For every dataset with verified errors in ../shared/data (20news, SNLI, RTE) each member is
cross-fitted once on the same 5 folds; the ensemble rows reuse those probabilities with the
scan's calibrated weighting, ranked by the ensemble loss as scan's default does. AP is of
``is_error`` (unverified items count as clean); the interval is a 95 % percentile
bootstrap over items (1,000 resamples), and a "gain" is the paired bootstrap of the AP
difference against the default ensemble. Also times the default scan with and without the
screening of members (issue 16: skip a member that earns no weight on a 2,000-item
sample).

    python -m benchmarks.members [--data ../shared/data] [--datasets labelerrors_20news]
        [--members tfidf,embed,tfidf-char,knn,embed-windows] [--no-screen-timing]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.datasets import SPECS, load

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MEMBERS = ("tfidf", "embed", "tfidf-char", "knn", "embed-windows")


def _scorer(name: str):
    from labelaudit.models import make_scorer

    if name == "embed-windows":
        return make_scorer("embed", long_texts="windows")
    return make_scorer(name)


def _ap(is_error: np.ndarray, probs: np.ndarray, labels: np.ndarray) -> float:
    from labelaudit.evaluation import average_precision_score

    given = probs[np.arange(len(labels)), labels]
    return float(average_precision_score(is_error, given))


def _boot(is_error, a, b, labels, rng, n=1000) -> tuple[float, float, float, float]:
    """AP of ``a``, its 95 % interval, and the paired 95 % interval of AP(a) - AP(b)."""
    from labelaudit.evaluation import average_precision_score

    score_a = a[np.arange(len(labels)), labels]
    score_b = None if b is None else b[np.arange(len(labels)), labels]
    aps, diffs = [], []
    for _ in range(n):
        idx = rng.integers(0, len(labels), len(labels))
        if not is_error[idx].any():
            continue
        aps.append(average_precision_score(is_error[idx], score_a[idx]))
        if score_b is not None:
            diffs.append(aps[-1] - average_precision_score(is_error[idx], score_b[idx]))
    low, high = np.quantile(aps, [0.025, 0.975])
    d_low, d_high = (np.quantile(diffs, [0.025, 0.975]) if diffs else (np.nan, np.nan))
    return float(low), float(high), float(d_low), float(d_high)


def run_dataset(name: str, members: list[str], data_root: Path, screen_timing: bool) -> None:
    from labelaudit import scan
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.io import prepare_text_dataset
    from labelaudit.models import crossfit_pred_probs, make_folds

    data = load(SPECS[name], data_root)
    if data is None:
        print(f"{name}: not found under {data_root}, skipped")
        return
    spec = data.spec
    frame = data.frame
    dataset = prepare_text_dataset(frame, text="text", label="label",
                                   text_pair="text_pair" if spec.text_pair else None)
    labels, is_error = dataset.labels, data.is_error
    folds = make_folds(labels, n_folds=5, random_state=0, classes=dataset.classes)
    probs, seconds = {}, {}
    for member in members:
        started = time.perf_counter()
        scorer = _scorer(member)
        features = scorer.prepare(dataset)
        probs[member] = crossfit_pred_probs(scorer, features, labels, folds,
                                            n_classes=len(dataset.classes))
        seconds[member] = time.perf_counter() - started
    rng = np.random.default_rng(0)
    default = ensemble_pred_probs([probs["tfidf"], probs["embed"]], labels)
    rows = []
    for member in members:
        low, high, _, _ = _boot(is_error, probs[member], None, labels, rng)
        rows.append({"ranking": member, "AP": _ap(is_error, probs[member], labels),
                     "AP 95%": f"{low:.3f}-{high:.3f}", "gain vs default": "",
                     "weight": "", "seconds": round(seconds[member], 1)})
    low, high, _, _ = _boot(is_error, default.pred_probs, None, labels, rng)
    rows.append({"ranking": "default (tfidf+embed)", "AP": _ap(is_error, default.pred_probs,
                                                                labels),
                 "AP 95%": f"{low:.3f}-{high:.3f}", "gain vs default": "",
                 "weight": " ".join(f"{w:.2f}" for w in default.weights), "seconds": ""})
    for member in members:
        if member in ("tfidf", "embed"):
            continue
        plus = ensemble_pred_probs([probs["tfidf"], probs["embed"], probs[member]], labels)
        low, high, d_low, d_high = _boot(is_error, plus.pred_probs, default.pred_probs,
                                         labels, rng)
        rows.append({"ranking": f"default + {member}",
                     "AP": _ap(is_error, plus.pred_probs, labels),
                     "AP 95%": f"{low:.3f}-{high:.3f}",
                     "gain vs default": f"{d_low:+.3f} to {d_high:+.3f}",
                     "weight": " ".join(f"{w:.2f}" for w in plus.weights), "seconds": ""})
    print(f"\n{name}: {len(frame)} items, {int(is_error.sum())} verified errors, "
          f"{len(dataset.classes)} classes")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if screen_timing:
        text_pair = "text_pair" if spec.text_pair else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            timings = {}
            for label, options in (("screened (default)", {}), ("not screened", {"screen": 0})):
                started = time.perf_counter()
                result = scan(frame, text="text", label="label", text_pair=text_pair,
                              progress=False, **options)
                timings[label] = (time.perf_counter() - started, result)
        for label, (secs, result) in timings.items():
            given = result.pred_probs[np.arange(len(labels)), result.labels]
            from labelaudit.evaluation import average_precision_score

            print(f"scan {label}: {secs:.1f} s, members {list(result.weights)}, skipped "
                  f"{result.screened or 'none'}, AP {average_precision_score(is_error, given):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--datasets", default=",".join(SPECS))
    parser.add_argument("--members", default=",".join(MEMBERS))
    parser.add_argument("--no-screen-timing", action="store_true")
    args = parser.parse_args()
    members = args.members.split(",")
    for required in ("tfidf", "embed"):
        if required not in members:
            members.insert(0, required)
    for name in args.datasets.split(","):
        run_dataset(name, members, args.data, not args.no_screen_timing)


if __name__ == "__main__":
    main()
