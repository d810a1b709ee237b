"""Training on noisy label sets: CoNLL-2003 train sentences labelled with their set of
entity types, 10 % of the items given one class more or less (as in
``benchmarks.multilabel_detection``), trained with ``base`` (one sigmoid per class) and ``filter``
(the multi-label scan flags, then drop or relabel), measured on the dev sentences' clean
sets (CleanCoNLL's where it changed them).

    python -m benchmarks.multilabel_train [--data-dir ../shared/data] [--rate 0.1]

About 5 minutes on 2 CPU cores (MiniLM embeds the 17,000 sentences once).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import pandas as pd

from benchmarks.multilabel_detection import dev_sets, synthetic
from benchmarks.train_noise import DATA, _table

OUT = Path(__file__).resolve().parent / "results" / "multilabel_train"
RUNS = (("base", None), ("filter", "drop"), ("filter", "relabel"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--rate", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from labelaudit.training import evaluate_model, train

    dev = dev_sets(args.data_dir)
    held = dev[["id", "text"]].assign(label=dev["true_label"])
    rows = []
    for seed in range(args.seeds):
        noisy, planted = synthetic(args.data_dir, rate=args.rate, seed=seed)
        for method, mode in RUNS:
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = train(noisy, method=method, filter=mode, random_state=seed)
            metrics = evaluate_model(model, held)
            rows.append({"method": method + (f" ({mode})" if mode else ""), "seed": seed,
                         "noised_items": int(planted.sum()),
                         "flagged": model.log.get("flagged"),
                         **{k: metrics.extra[k] for k in ("micro_f1", "subset_accuracy",
                                                          "hamming_loss")},
                         "macro_f1": metrics.macro_f1,
                         "seconds": time.perf_counter() - started})
            print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    summary = frame.groupby("method", sort=False)[
        ["micro_f1", "macro_f1", "subset_accuracy", "hamming_loss"]].mean().reset_index()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps({"rate": args.rate, "runs": rows},
                                                        indent=1))
    text = "\n".join([
        "# Training on noisy label sets", "",
        f"`python -m benchmarks.multilabel_train --rate {args.rate}`: CoNLL-2003 train "
        "sentences (14,041) labelled with their entity-type sets, "
        f"{args.rate:.0%} of the items given one class more or less; head on MiniLM "
        "embeddings; measured on the 3,240 dev "
        f"sentences' clean sets; mean of {args.seeds} seeds.", "",
        _table(summary.round(4), index=False), "", "Every run:", "",
        _table(frame.round(4), index=False), ""])
    args.out.with_suffix(".md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
