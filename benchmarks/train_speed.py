"""Time every training method of ``labelaudit train`` (head backbone) on NoisywikiHow,
side by side with ``base`` in one run, and the peak memory of the process.

The target (issue 15): all 8 methods x 1 noise setting x 1 seed in under 2 minutes once
the embeddings are cached, peak memory under 2 GB. The first run embeds the 15,800 texts
(about 2 minutes with MiniLM here) into the on-disk cache; the timed run reads them back.

    python -m benchmarks.train_speed [--data ../shared/data/noisywikihow] [--noise uniform:0.2]
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "noisywikihow"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--noise", default="uniform:0.2")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import pandas as pd

    from labelaudit.io import read_table
    from labelaudit.training import embed, train_bench

    train = read_table(args.data / "train.jsonl")
    test = read_table(args.data / "test.jsonl")
    started = time.perf_counter()
    from labelaudit.io import prepare_text_dataset

    for frame in (train, test):  # fill the cache (a no-op when it is warm)
        embed(prepare_text_dataset(frame, text="text", label=None), {"encoder": None})
    warm = time.perf_counter() - started
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        result = train_bench(train, test, noise=[args.noise], seeds=1,
                             random_state=args.seed)
        total = time.perf_counter() - started
    runs = result.runs.set_index("method")
    base = float(runs.loc["base", "seconds"])
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"NoisywikiHow {len(train)} train / {len(test)} test, {args.noise}, seed "
          f"{args.seed}, head backbone (embedding cache filled or read in {warm:.1f} s)")
    print(pd.DataFrame({"seconds": runs["seconds"].round(2),
                        "x base": (runs["seconds"] / base).round(2),
                        "top1": runs["top1"].round(4), "top5": runs["top5"].round(4)})
          .to_string())
    print(f"all {len(runs)} methods: {total:.1f} s (target < 120 s); peak RSS "
          f"{peak_mb:.0f} MB (target < 2048 MB)")


if __name__ == "__main__":
    main()
