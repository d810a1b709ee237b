"""``python -m benchmarks.gpu_detection``: the fine-tuned member on a GPU, on the real-error sets.

Runs ``labelaudit.scan`` with the TF-IDF member and a cross-fitted fine-tune of
all-MiniLM-L6-v2 (:class:`labelaudit.models.FinetuneScorer`, head+tail truncation) on each
data set and fold seed, in one scan per seed, and writes the rankings in the format of
``benchmarks.detection``'s cache, under two candidate names:

- ``finetune MiniLM (GPU)``: the loss of the given label under the fine-tuned member alone;
- ``tfidf + finetune MiniLM (GPU)``: the scan's ensemble of both members.

Score them beside the peers, on the same folds, with
``python -m benchmarks.detection --cache DIR --cached-only --candidates "finetune MiniLM
(GPU),tfidf + finetune MiniLM (GPU)"``. The figures kept in ``benchmarks/results/`` came
from one H100 (see ``detection_gpu.md``; the packaged MiniLM carried as float16 and cast
back to float32 there, ``.gpu/`` holding the encoder, the data without truth columns and
the cleanlab wheel). ``--data`` holds ``<set>.jsonl[.gz]`` files with
``id``, the text column(s) and ``label`` only: no truth column travels to the GPU machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

SETS = {"imdb_dev": ("text", None), "chaosnli_snli": ("text_a", "text_b"),
        "snow2008_rte": ("text_a", "text_b")}
ALONE, BOTH = "finetune MiniLM (GPU)", "tfidf + finetune MiniLM (GPU)"


def _cache_path(cache: Path, dataset: str, name: str, seed: int) -> Path:
    return cache / dataset / f"{name.replace(' ', '_')}_{seed}.npz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", required=True, help="encoder folder or hub id")
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--datasets", default=",".join(SETS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--deadline", type=float, default=420.0,
                        help="start no new scan after this many seconds")
    args = parser.parse_args(argv)

    import pandas as pd
    import torch

    from labelaudit.models import FinetuneScorer
    from labelaudit.scanning import scan

    print(f"torch {torch.__version__}, device "
          f"{torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu'}",
          flush=True)
    started = time.perf_counter()
    log = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        for dataset in args.datasets.split(","):
            if time.perf_counter() - started > args.deadline:
                print(f"deadline: {dataset} seed {seed} not run", flush=True)
                continue
            files = sorted(args.data.glob(f"{dataset}.jsonl*"))
            if not files:
                continue
            text, text_pair = SETS[dataset]
            frame = pd.read_json(files[0], lines=True)
            member = FinetuneScorer(model=args.model, epochs=args.epochs,
                                    learning_rate=args.lr, batch_size=args.batch_size,
                                    max_length=args.max_length, random_state=seed)
            t0 = time.perf_counter()
            result = scan(frame, text=text, text_pair=text_pair, label="label", id="id",
                          scorers=["tfidf", member], random_state=seed, progress=False,
                          keep_columns=False)
            seconds = time.perf_counter() - t0
            # scan keeps the input order: row i of every array is row i of the file
            given = result.member_probs["finetune"][np.arange(len(result.labels)),
                                                    result.labels]
            alone = -np.log(np.clip(given, 1e-12, 1.0))
            both = -result.scores[result.rank_by]
            ft_seconds = float(result.member_seconds.get("finetune", seconds))
            peak = torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0
            for name, suspicion, secs in ((ALONE, alone, ft_seconds), (BOTH, both, seconds)):
                path = _cache_path(args.cache, dataset, name, seed)
                path.parent.mkdir(parents=True, exist_ok=True)
                np.savez(path, suspicion=suspicion, seconds=secs, peak_mb=peak)
            accuracy = float((result.member_probs["finetune"].argmax(1) == result.labels).mean())
            entry = {"dataset": dataset, "seed": seed, "seconds": round(seconds, 1),
                     "finetune_seconds": round(ft_seconds, 1), "finetune_accuracy": accuracy,
                     "weights": result.weights, "gpu_peak_mb": round(peak)}
            log.append(entry)
            print(json.dumps(entry), flush=True)
    (args.cache / "gpu_log.json").write_text(json.dumps(log, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
