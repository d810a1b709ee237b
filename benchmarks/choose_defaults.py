"""How scan's defaults were chosen: members, calibration and pair encoding, with bootstrap CIs.

For each text dataset under the data root, every candidate member is cross-fitted once on
the same 5 folds; then rankings by loss are compared by average precision (AP) against the
human-verified errors, with a paired bootstrap 95% interval of each difference (1,000
resamples of items). On 20 Newsgroups the broader verified set (``is_error_broad``, 82
errors) is reported as a second truth, because 22 errors alone give very wide intervals.

    python -m benchmarks.choose_defaults [--data ../shared/data] [--datasets NAME,...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.__main__ import DEFAULT_DATA, DEFAULT_RESULTS
from benchmarks.datasets import SPECS, load


def _ap(is_error: np.ndarray, suspicion: np.ndarray) -> float:
    from labelaudit.evaluation import average_precision_score

    return float(average_precision_score(is_error, -suspicion))


def _bootstrap(is_error, a, b, *, n=1000, seed=0) -> list[float]:
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(n):
        i = rng.integers(len(is_error), size=len(is_error))
        if is_error[i].any() and not is_error[i].all():
            diffs.append(_ap(is_error[i], a[i]) - _ap(is_error[i], b[i]))
    return np.percentile(diffs, [2.5, 97.5]).round(4).tolist()


def run(name: str, data_root: Path) -> dict:
    from labelaudit.detect import ensemble_pred_probs, per_item_loss
    from labelaudit.io import prepare_text_dataset, read_table
    from labelaudit.models import crossfit_pred_probs, make_folds, make_scorer

    spec = SPECS[name]
    loaded = load(spec, data_root)
    if loaded is None:
        return {}
    frame = loaded.frame
    data = prepare_text_dataset(frame, text="text", label="label",
                                text_pair="text_pair" if spec.text_pair else None)
    labels = data.labels
    folds = make_folds(labels, n_folds=5, random_state=0)
    members = {"tfidf": {}, "embed": {}}
    if spec.text_pair:
        members["embed (joint pairs)"] = {"pair_mode": "joint"}
    probs = {}
    for member, options in members.items():
        started = time.perf_counter()
        scorer = make_scorer(member.split()[0], **options)
        probs[member] = crossfit_pred_probs(scorer, scorer.prepare(data), labels, folds,
                                            n_classes=len(data.classes))
        print(f"[{name}] {member}: {time.perf_counter() - started:.0f}s", file=sys.stderr)
    pair = [probs["tfidf"], probs["embed"]]
    rankings = {m: per_item_loss(labels, p) for m, p in probs.items()}
    rankings["ensemble, raw weights"] = per_item_loss(
        labels, ensemble_pred_probs(pair, labels, calibrate=False).pred_probs)
    calibrated = ensemble_pred_probs(pair, labels)
    rankings["ensemble, calibrated (default)"] = per_item_loss(labels, calibrated.pred_probs)
    truths = {"is_error": loaded.is_error}
    if name == "labelerrors_20news":
        raw = read_table(data_root / spec.path)
        truths["is_error_broad"] = raw["is_error_broad"].fillna(False).astype(bool).to_numpy()
    result = {"dataset": name, "weights": calibrated.weights.tolist(),
              "temperatures": calibrated.temperatures.tolist(), "truths": {}}
    for truth, is_error in truths.items():
        aps = {m: round(_ap(is_error, r), 4) for m, r in rankings.items()}
        ci = {f"{a} - tfidf": _bootstrap(is_error, rankings[a], rankings["tfidf"])
              for a in ("ensemble, raw weights", "ensemble, calibrated (default)")}
        if "embed (joint pairs)" in rankings:
            ci["embed (joint pairs) - embed"] = _bootstrap(
                is_error, rankings["embed (joint pairs)"], rankings["embed"])
        result["truths"][truth] = {"n_errors": int(is_error.sum()), "ap": aps, "ci95": ci}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--datasets", default=",".join(SPECS))
    args = parser.parse_args(argv)
    results = []
    for name in args.datasets.split(","):
        result = run(name, args.data)
        if not result:
            print(f"[{name}] not under {args.data}: skipped", file=sys.stderr)
            continue
        results.append(result)
        print(f"== {name}: ensemble weights tfidf/embed {np.round(result['weights'], 2)}, "
              f"temperatures {np.round(result['temperatures'], 2)}")
        for truth, block in result["truths"].items():
            print(f"   truth {truth} ({block['n_errors']} errors), average precision:")
            for method, ap in block["ap"].items():
                print(f"     {method:34s} {ap:.4f}")
            for diff, ci in block["ci95"].items():
                print(f"     diff {diff}: 95% CI [{ci[0]:+.4f}, {ci[1]:+.4f}]")
    DEFAULT_RESULTS.mkdir(parents=True, exist_ok=True)
    (DEFAULT_RESULTS / "choose_defaults.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
