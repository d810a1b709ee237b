"""Time ``labelaudit consistency`` on CoNLL-2003 (14k training sentences, 3,250 suspect)
next to one plain ``scan-tokens`` run of the suspect set, in the same process.

The target (issue 14) is under 15 minutes for the identify test with 5 repeats and 10 grid
points and the default token scorer (MiniLM word vectors + CRF head). Word vectors are
cached on disk: pass --cold to clear a private cache first and include encoding.

    python -m benchmarks.consistency_speed [--data ../shared/data/conll2003_dev]
        [--corrected] [--repeats 5] [--points 10]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "conll2003_dev"


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
    parser.add_argument("--fraction", type=float, default=1.0,
                        help="use this share of the training sentences (the cost curve)")
    parser.add_argument("--cold", action="store_true", help="start from an empty cache")
    args = parser.parse_args()

    from labelaudit.consistency import consistency
    from labelaudit.models import make_token_scorer
    from labelaudit.scan import scan_tokens
    from labelaudit.tokens import read_tokens

    cache = tempfile.mkdtemp(prefix="labelaudit-bench-") if args.cold else None
    options = {"cache_dir": cache} if cache else {}
    train, dev = args.data / "train.orig.conll", args.data / "dev.orig.conll"
    training = read_tokens(train)
    if args.fraction < 1.0:
        keep = int(round(args.fraction * len(training.tokens)))
        from labelaudit.tokens import make_token_dataset

        training = make_token_dataset(training.tokens[:keep], training.tags[:keep])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        scan_tokens(read_tokens(dev), scorer=make_token_scorer("encoder", **options))
        scan_s = time.perf_counter() - start
        start = time.perf_counter()
        result = consistency(training, dev, args.data / "dev.cleanconll.conll"
                             if args.corrected else None,
                             scorer=make_token_scorer("encoder", **options),
                             repeats=args.repeats, n_points=args.points, progress=True,
                             workers=args.workers, adaptive=args.adaptive)
        cons_s = time.perf_counter() - start
    print(f"scan-tokens {dev.name} (5 folds):            {scan_s:8.1f} s")
    print(f"consistency ({result.n_fits} fits, {result.repeats} of at most {args.repeats} "
          f"repeats x {args.points} points, {args.workers} workers, "
          f"{len(training.tokens)} training sentences): {cons_s:8.1f} s  "
          f"({cons_s / scan_s:.1f}x scan-tokens)")
    print(result.summary())


if __name__ == "__main__":
    main()
