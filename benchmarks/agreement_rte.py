"""Crowd agreement on Snow et al. (2008) RTE: aggregators vs expert gold, and the noise bound.

For the 800 RTE-1 test pairs with 10 Mechanical Turk labels each, this measures

* the accuracy of each aggregation method (majority vote with each tie policy, Dawid-Skene,
  GLAD, MACE) against the expert gold labels;
* for several agreement thresholds, the gold standard the agreed items make: its size, the
  chance agreement ``p`` (paper's footnote 3, per-annotator and pooled), the 95% noise bound
  ``gamma`` of Beigman Klebanov & Beigman (2009), and the share of agreed items whose label
  differs from the expert's. Under the model, a hard item that surfaces as an agreement carries
  a coin-flip label, so the label error rate of the subset should stay below ``gamma``.

Run from the repository root::

    .venv/bin/python -m benchmarks.agreement_rte [--data-root ../shared/data] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", default=str(Path(__file__).resolve().parents[2]
                                                  / "shared" / "data"))
    parser.add_argument("--out", help="also write the results as JSON here")
    parser.add_argument("--skip-slow", action="store_true", help="skip GLAD and MACE")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from benchmarks.datasets import read_raw
    from labelaudit.agreement import aggregate, gold_standard
    from labelaudit.io import nested_to_long

    frame = read_raw("snow2008_rte", args.data_root)
    if frame is None:
        return 1
    long = nested_to_long(frame, item="id", annotations="annotator_labels")
    expert = dict(zip(frame["id"], frame["true_label"], strict=True))

    rows = []
    methods = [("majority", "random"), ("majority", "first"), ("majority", "abstain"),
               ("dawid-skene", None)]
    if not args.skip_slow:
        methods += [("glad", None), ("mace", None)]
    for method, ties in methods:
        start = time.perf_counter()
        agg = aggregate(long, method=method, ties=ties or "random")  # type: ignore[arg-type]
        decided = np.array([lab is not None for lab in agg.labels])
        correct = np.array([lab == expert[i] for i, lab in zip(agg.items, agg.labels,
                                                                  strict=True)])
        rows.append({
            "method": agg.method + (f" (ties: {ties})" if ties else ""),
            "labelled": int(decided.sum()),
            "accuracy_on_labelled": float(correct[decided].mean()),
            "seconds": round(time.perf_counter() - start, 2),
        })
    aggregation = pd.DataFrame(rows)

    gold_rows = []
    for share in (1.0, 0.9, 0.8, 0.7, 0.6):
        for how in ("annotators", "pooled"):
            gold = gold_standard(long, min_share=share, p_method=how)  # type: ignore[arg-type]
            wrong = np.mean([expert[i] != lab for i, lab in zip(gold.items, gold.labels,
                                                               strict=True)])
            gold_rows.append({
                "min_share": share, "p_method": how, "n_agreed": gold.noise.n_agreed,
                "p_chance": round(gold.noise.p_chance, 5),
                "gamma_95": round(gold.noise.gamma, 4),
                "expert_disagrees": round(float(wrong), 4),
            })
    gold_table = pd.DataFrame(gold_rows)

    with pd.option_context("display.width", 200):
        print("aggregation vs expert gold (800 items, 10 workers each)")
        print(aggregation.to_string(index=False))
        print()
        print("agreed subset as gold standard: 95% noise bound vs share the expert relabels")
        print(gold_table.to_string(index=False))
    if args.out:
        Path(args.out).write_text(json.dumps(
            {"aggregation": rows, "gold_standard": gold_rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
