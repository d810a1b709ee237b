"""How realistic is each noise method? Loss-distribution distances on Snow et al.'s RTE crowd.

Reproduces the realism comparison of Chong, Hong & Manning (2022, table 5) on the RTE-1 test
set with Snow et al. (2008)'s 10 crowd labels per item (worker ids included) and the expert
gold. Starting from the expert gold as the clean labels, each noise method noises ``--rate``
of the items (crowd-majority: at most that many); TF-IDF and sentence-embedding scorers (the
scan's default members until #26, weighted ensemble) are cross-fitted on the noisy labels, and the
Wasserstein distance between the out-of-sample losses of noised and clean items is reported.
"Real errors" are the dataset's own crowd-majority labels (ties broken to 0) where they differ
from the expert gold. Every noising is repeated for ``--seeds`` seeds (noise and folds).

The paper's ordering on TweetNLP: uniform > class-based > dissenting label > dissenting worker
> crowd majority (and real errors close to crowd majority). Results go to stdout and, as JSON
and a histogram PNG, to ``--out-dir``.

Examples::

    python benchmarks/noise_realism.py --seeds 3               # the closing-note table (~13 min)
    python benchmarks/noise_realism.py --seeds 1 --scorers tfidf  # quick
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LABELAUDIT_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
# run as a script, this folder comes first on sys.path and its datasets.py would shadow the
# Hugging Face `datasets` package that sentence-transformers imports
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "snow2008_rte" / "rte.jsonl"
DEFAULT_OUT = REPO / "benchmarks" / "results"
METHODS = ("uniform", "class-dependent", "dissenting-label", "dissenting-worker",
           "minority-split", "crowd-majority", "instance-dependent", "instance-dependent-swap")
PAPER_ORDER = ("uniform", "class-dependent", "dissenting-label", "dissenting-worker",
               "crowd-majority", "real errors")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python benchmarks/noise_realism.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the RTE JSONL file")
    p.add_argument("--rate", type=float, default=0.05, help="noise rate (default: 0.05)")
    p.add_argument("--seeds", type=int, default=2, help="repetitions (default: 2)")
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods")
    p.add_argument("--scorers", default="tfidf,embed", help="scorers (default: tfidf,embed)")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--cache-dir", type=Path, help="embedding cache (default: labelaudit's)")
    p.add_argument("--out-dir", type=Path, default=DEFAULT_OUT)
    return p


def _noisings(frame, methods, rate, seed, cache_dir):
    """Yield (name, noisy labels, per-item method names, texts) for every noising."""
    import numpy as np

    from labelaudit.noise import inject_noise

    clean = frame["true_label"]
    pairs = list(zip(frame["text_a"], frame["text_b"], strict=True))
    for name in methods:
        method = "instance-dependent" if name.startswith("instance-dependent") else name
        swap = name == "instance-dependent-swap"
        result = inject_noise(
            clean, method=method, rate=rate, random_state=seed,
            annotations=frame["annotator_labels"], texts=pairs, swap_input=swap,
            cache_dir=cache_dir)
        marks = np.where(result.is_noisy, name, None)
        texts_a, texts_b = frame["text_a"].to_numpy(), frame["text_b"].to_numpy()
        if swap:
            source = np.where(result.text_source >= 0, result.text_source, np.arange(len(frame)))
            texts_a, texts_b = texts_a[source], texts_b[source]
        yield name, result.labels, marks, texts_a, texts_b
    real = frame["is_error"].astype(bool).to_numpy()
    yield ("real errors", frame["label"].to_numpy(), np.where(real, "real errors", None),
           frame["text_a"].to_numpy(), frame["text_b"].to_numpy())


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import numpy as np
    import pandas as pd

    from labelaudit.io import prepare_text_dataset, read_table, write_json
    from labelaudit.models import cross_val_pred_probs
    from labelaudit.noise import noise_realism, plot_loss_histograms

    if not args.data.exists():
        print(f"no data at {args.data}", file=sys.stderr)
        return 1
    frame = read_table(args.data)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()]
    rows, first_runs = [], []
    started = time.time()
    for seed in range(args.seeds):
        for name, labels, marks, texts_a, texts_b in _noisings(frame, methods, args.rate, seed,
                                                               args.cache_dir):
            table = pd.DataFrame({"a": texts_a, "b": texts_b, "label": labels})
            data = prepare_text_dataset(table, text="a", text_pair="b", label="label")
            probs = cross_val_pred_probs(data, scorers=scorers, n_folds=args.folds,
                                         random_state=seed, cache_dir=args.cache_dir)
            realism = noise_realism(data.labels, probs, noise_method=marks)
            row = realism.to_frame().iloc[0].to_dict()
            row.update(seed=seed, accuracy_vs_noisy=float(
                (probs.argmax(axis=1) == data.labels).mean()))
            rows.append(row)
            if seed == 0:
                first_runs.append(realism)
            print(f"seed {seed} {name:26s} n={row['n_noisy']:3d} "
                  f"W={row['wasserstein_distance']:.3f} ({time.time() - started:.0f}s)",
                  file=sys.stderr)
    runs = pd.DataFrame(rows)
    summary = (runs.groupby("method", sort=False)
               .agg(n_noisy=("n_noisy", "mean"), w_mean=("wasserstein_distance", "mean"),
                    w_sd=("wasserstein_distance", "std"),
                    noisy_loss=("noisy_loss_mean", "mean"), clean_loss=("clean_loss_mean", "mean"))
               .sort_values("w_mean", ascending=False).reset_index())
    from scipy.stats import kendalltau

    present = [m for m in PAPER_ORDER if m in set(summary["method"])]
    observed = summary.set_index("method").loc[present, "w_mean"].to_numpy()
    tau = (kendalltau(np.arange(len(present))[::-1], observed).statistic
           if len(present) > 2 else None)
    print(f"\nRTE (n={len(frame)}), rate {args.rate}, {args.seeds} seed(s), scorers "
          f"{'+'.join(scorers)}; Wasserstein distance between noised and clean losses")
    with pd.option_context("display.width", 160):
        print(summary.round(3).to_string(index=False))
    if tau is not None:
        print(f"Kendall tau against the paper's order ({' > '.join(present)}): {tau:.2f}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    stem = args.out_dir / f"noise_realism_rte_{args.rate * 100:g}pct"
    write_json({"data": str(args.data), "rate": args.rate, "seeds": args.seeds,
                "scorers": scorers, "folds": args.folds, "summary": summary.to_dict("records"),
                "runs": runs.to_dict("records"), "kendall_tau_vs_paper": tau,
                "seconds": round(time.time() - started, 1)}, stem.with_suffix(".json"))
    plot_loss_histograms(first_runs, stem.with_suffix(".png"),
                         title=f"RTE, rate {args.rate:g}, seed 0: noised vs clean losses")
    print(f"wrote {stem.with_suffix('.json')} and {stem.with_suffix('.png')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    raise SystemExit(main())
