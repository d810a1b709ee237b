"""Time ``labelaudit consistency`` on CoNLL-2003 (14k training sentences, 3,250 suspect)
next to one plain ``scan-tokens`` run of the suspect set, in the same process.

Issue 31's targets: the identify test (train against dev) at most 10x one plain
``scan-tokens`` of the dev set, validating against CleanCoNLL (``--corrected``) at most
25x, with the verdicts of the full runs. Consistency's token scorer (each word's own MiniLM
vector, ``--window 0``, and a CRF head) warm-starts each curve point from the one before;
``--no-warm-start`` fits every point afresh. Word vectors are cached on disk: ``--cold``
clears a private cache first so that encoding counts. ``--cost-curve`` runs the identify
test on 25 %, 50 % and 100 % of the training and the dev sentences, each beside
``scan-tokens`` of its dev part.

    python -m benchmarks.consistency_speed [--data ../shared/data/conll2003_dev]
        [--corrected] [--repeats 5] [--points 10] [--workers 2] [--no-warm-start]
        [--fixed-repeats] [--fraction 1.0] [--cost-curve] [--window 0] [--model-seed 0] [--cold]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2003_dev"


def _part(data: Any, fraction: float) -> Any:
    """The first ``fraction`` of a token dataset's sentences."""
    from labelaudit.tokens import make_token_dataset

    if fraction >= 1.0:
        return data
    keep = int(round(fraction * len(data.tokens)))
    return make_token_dataset(data.tokens[:keep], data.tags[:keep])


def run_once(args: argparse.Namespace, fraction: float) -> dict[str, Any]:
    """One scan-tokens run and one consistency run on ``fraction`` of the sentences."""
    from labelaudit.consistency_check import consistency
    from labelaudit.models import make_token_scorer
    from labelaudit.scanning import scan_tokens
    from labelaudit.tokens import read_tokens

    cache = tempfile.mkdtemp(prefix="labelaudit-bench-") if args.cold else None
    options = {"cache_dir": cache} if cache else {}
    training = _part(read_tokens(args.data / "train.orig.conll"), fraction)
    dev = _part(read_tokens(args.data / "dev.orig.conll"), fraction)
    corrected = None
    if args.corrected:
        corrected = _part(read_tokens(args.data / "dev.cleanconll.conll"), fraction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        scan_tokens(dev, scorer=make_token_scorer("encoder", **options))
        scan_s = time.perf_counter() - start
        start = time.perf_counter()
        settings = {**options, "random_state": args.model_seed, "window": args.window}
        model = make_token_scorer("encoder", **settings)
        result = consistency(training, dev, corrected, scorer=model,
                             repeats=args.repeats, n_points=args.points, progress=True,
                             workers=args.workers, adaptive=args.adaptive,
                             warm_start=args.warm_start,
                             on_plan=lambda line: print(line, file=sys.stderr))
        cons_s = time.perf_counter() - start
    return {"fraction": fraction, "train": len(training.tokens), "dev": len(dev.tokens),
            "scan_s": scan_s, "consistency_s": cons_s, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--corrected", action="store_true",
                        help="also validate against dev.cleanconll.conll (the 8 schemes)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2,
                        help="processes fitting the curve points (default: 2, the cores here)")
    parser.add_argument("--fixed-repeats", dest="adaptive", action="store_false",
                        help="always draw --repeats (the run before adaptive repeats)")
    parser.add_argument("--no-warm-start", dest="warm_start", action="store_false",
                        help="fit every curve point afresh (the run before warm starts)")
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="use this share of the training and the dev sentences")
    parser.add_argument("--cost-curve", action="store_true",
                        help="identify on 25 %%, 50 %% and 100 %% of the sentences")
    parser.add_argument("--window", type=int, default=0,
                        help="neighbouring words whose vectors each word's features append "
                        "in consistency's scorer (default: 0, consistency's own; "
                        "scan-tokens appends 1)")
    parser.add_argument("--model-seed", type=int, default=0,
                        help="random state of consistency's CRF head (its initial weights and "
                        "batch order; the draws stay those of seed 0)")
    parser.add_argument("--cold", action="store_true", help="start from an empty cache")
    args = parser.parse_args()

    runs = [run_once(args, f) for f in ((0.25, 0.5, 1.0) if args.cost_curve
                                        else (args.fraction,))]
    print("| share | training sentences | dev sentences | scan-tokens | consistency | fits "
          "| repeats | ratio | TestTrain vs PureTrain | TrainTest vs PureTrain |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in runs:
        result = run["result"]
        cells = [f"{v.gap:+.4f} [{v.ci_low:+.4f}, {v.ci_high:+.4f}] {v.verdict}"
                 for v in (result.verdicts["TestTrain"], result.verdicts["TrainTest"])]
        print(f"| {run['fraction']:.0%} | {run['train']} | {run['dev']} | "
              f"{run['scan_s']:.1f} s | {run['consistency_s']:.1f} s | {result.n_fits} | "
              f"{result.repeats} of {args.repeats} | "
              f"{run['consistency_s'] / run['scan_s']:.1f}x | {cells[0]} | {cells[1]} |")
    for run in runs:
        print(f"\n{run['fraction']:.0%}, {args.workers} workers, window {args.window}, warm "
              f"start {'on' if args.warm_start else 'off'}:\n{run['result'].summary()}")


if __name__ == "__main__":
    main()
