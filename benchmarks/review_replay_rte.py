"""Replay real crowd workers through ``labelaudit review`` on Snow et al. (2008) RTE.

The RTE-1 test pairs come with 10 Mechanical Turk labels each (worker ids known) and expert
gold labels. The dataset under review uses one worker's label per item (``label_single``,
20% wrong against the gold), so there are real errors to find. The script

1. scans it with labelaudit's default scan (out-of-sample, 5 folds) and keeps the ranking;
2. creates a review project: the ``--top`` most suspect items (or a random sample of the
   flagged ones), 5 reviewers per item, 3-of-5 majority, and sentinel items taken from the
   bottom of the ranking (their given label treated as correct, the default of
   ``review init``);
3. replays the real workers: every (item, worker, label) of the reviewed and sentinel items,
   in a seeded random order, goes through ``import_answers`` - the same bookkeeping as web
   answers: 5 distinct reviewers per item, sentinel accuracy, suspension and exclusion;
4. compares the verdicts with the expert gold: is a Non-Error really clean, a Correctable
   really an error with the right new label; the detector's verified precision and the
   estimated number of errors among the flagged items against their true values.

It runs without sentinels, with sentinels from the bottom of the ranking, with a sentinels
file of the same items carrying expert labels, and with ``--select random``. Run from the
repository root::

    .venv/bin/python -m benchmarks.review_replay_rte [--data-root ../shared/data] [--top 100]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def replay(scan_frame, data, args, *, select, n_sentinels, threshold, workdir,
           gold_sentinels=False):
    from labelaudit.review import import_answers, init_review, review_results

    db = Path(workdir) / f"review-{select}-{n_sentinels}-{gold_sentinels}.sqlite"
    sentinels = None
    if gold_sentinels and n_sentinels:
        # a sentinels file as a user would give it: the same least suspect items, with
        # labels checked by an expert (the gold labels)
        bottom = scan_frame.iloc[::-1].iloc[:n_sentinels]
        gold = data.set_index("id")["true_label"]
        sentinels = pd.DataFrame({"id": bottom["id"], "text": bottom["text"],
                                  "text_pair": bottom["text_pair"],
                                  "label": bottom["id"].map(gold).to_numpy()})
    store = init_review(scan_frame, db, top=args.top, select=select, n_reviewers=5,
                        n_sentinels=n_sentinels, n_qualification=0, sentinels=sentinels,
                        sentinel_threshold=threshold, min_sentinels=3,
                        random_state=args.seed, overwrite=True)
    items = store.items_frame()
    wanted = {(k, i) for k, i in zip(items["kind"], items["item_id"], strict=True)}
    rows = []
    for record in data.itertuples():
        for kind in ("review", "sentinel"):
            if (kind, record.id) in wanted:
                rows += [{"kind": kind, "item_id": record.id, "reviewer": a["worker"],
                          "answer": str(a["label"])} for a in record.annotator_labels]
    votes = pd.DataFrame(rows).sample(frac=1.0, random_state=args.seed)
    votes_path = Path(workdir) / "votes.csv"
    votes.to_csv(votes_path, index=False)
    start = time.perf_counter()
    report = import_answers(store, votes_path)
    seconds = time.perf_counter() - start
    results = review_results(store)
    truth = data.set_index("id")
    out = results.items.copy()
    out["true_label"] = out["id"].map(truth["true_label"]).astype(str)
    out["true_error"] = out["label"].astype(str) != out["true_label"]
    verdict = out["verdict"]

    def share(mask, values):
        return float(values[mask].mean()) if mask.any() else None

    flagged = scan_frame[scan_frame["flagged"]]
    true_flagged_errors = int((flagged["label"].astype(str)
                               != flagged["id"].map(truth["true_label"]).astype(str)).sum())
    sentinel_items = items[items["kind"] == "sentinel"]
    sentinel_truth = sentinel_items["item_id"].map(truth["true_label"]).astype(str)
    verified = results.verified
    stats = results.reviewers
    return {
        "select": select, "n_sentinels": n_sentinels, "sentinel_threshold": threshold,
        "sentinel_source": "gold file" if sentinels is not None else
        ("scan bottom" if n_sentinels else "none"),
        "n_items": len(out), "answers_imported": report.n_recorded,
        "import_seconds": round(seconds, 2),
        "verdicts": results.verdict_counts(),
        "fleiss_kappa": round(results.fleiss_kappa, 3),
        "non_error_truly_clean": share(verdict == "Non-Error", ~out["true_error"]),
        "correctable_truly_error": share(verdict == "Correctable", out["true_error"]),
        "correctable_right_label": share(verdict == "Correctable",
                                         out["majority_label"].astype(str) == out["true_label"]),
        "non_agreement_truly_error": share(verdict == "Non-Agreement", out["true_error"]),
        "verdict_accuracy": share(verdict != "Pending",
                                  (verdict != "Non-Error") == out["true_error"]),
        "precision_verified": None if verified is None else round(verified.precision, 3),
        "precision_ci": None if verified is None else [round(verified.ci_low, 3),
                                                       round(verified.ci_high, 3)],
        "precision_true": round(float(out["true_error"].mean()), 3),
        "n_flagged": int(len(flagged)),
        "errors_in_flagged_estimated": None if verified is None or verified.estimated_errors
        is None else round(verified.estimated_errors, 1),
        "errors_in_flagged_estimated_ci": None if verified is None or verified.estimated_errors
        is None else [round(verified.estimated_errors_low, 1),
                      round(verified.estimated_errors_high, 1)],
        "errors_in_flagged_true": true_flagged_errors,
        "sentinels_truly_correct": share(pd.Series(True, index=sentinel_items.index),
                                         sentinel_items["known_label"].astype(str)
                                         == sentinel_truth),
        "reviewers": int(len(stats)),
        "reviewers_suspended": int((stats["status"] == "suspended").sum()),
        "answers_excluded": int(stats["n_excluded"].sum()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--top", type=int, default=100, help="items to review (100)")
    parser.add_argument("--sentinels", type=int, default=100,
                        help="sentinel items; each worker labelled ~6%% of the items, so many "
                        "are needed for workers to meet several (100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scorers", default="tfidf,embed")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"
                                             / "review_replay_rte.json"))
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    torch.set_num_threads(1)
    import labelaudit
    from benchmarks.datasets import read_raw
    from labelaudit.io import write_json

    data = read_raw("snow2008_rte", args.data_root)
    if data is None:
        return 1
    data["id"] = data["id"].astype(str)
    start = time.perf_counter()
    result = labelaudit.scan(data, text="text_a", text_pair="text_b", label="label_single",
                             id="id", scorers=tuple(args.scorers.split(",")),
                             random_state=args.seed)
    scan_seconds = time.perf_counter() - start
    scan_frame = result.to_frame()
    scan_frame["id"] = scan_frame["id"].astype(str)
    print(f"scan: {len(scan_frame)} items, {int(scan_frame['flagged'].sum())} flagged, "
          f"{scan_seconds:.0f} s", file=sys.stderr)
    runs = []
    with tempfile.TemporaryDirectory() as workdir:
        for select, n_sentinels, gold in (("top", 0, False), ("top", args.sentinels, False),
                                          ("top", args.sentinels, True),
                                          ("random", args.sentinels, True)):
            runs.append(replay(scan_frame, data, args, select=select, n_sentinels=n_sentinels,
                               threshold=0.7, workdir=workdir, gold_sentinels=gold))
            print(json.dumps(runs[-1]), file=sys.stderr)
    table = pd.DataFrame([{
        "select": r["select"], "sentinels": f"{r['n_sentinels']} {r['sentinel_source']}",
        "C/NA/NE/P": "/".join(str(v) for v in r["verdicts"].values()),
        "kappa": r["fleiss_kappa"], "NE clean": r["non_error_truly_clean"],
        "C error": r["correctable_truly_error"], "C right label": r["correctable_right_label"],
        "verdict acc": r["verdict_accuracy"], "precision (CI)": f"{r['precision_verified']} "
        f"{r['precision_ci']}", "true prec": r["precision_true"],
        "est errors/flagged": f"{r['errors_in_flagged_estimated']} "
        f"{r['errors_in_flagged_estimated_ci']}", "true errors/flagged":
        f"{r['errors_in_flagged_true']}/{r['n_flagged']}",
        "suspended": f"{r['reviewers_suspended']}/{r['reviewers']}",
    } for r in runs])
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    write_json({"dataset": "snow2008_rte", "given_label": "label_single", "top": args.top,
                "scan_seconds": round(scan_seconds, 1), "scorers": args.scorers,
                "runs": runs}, args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
