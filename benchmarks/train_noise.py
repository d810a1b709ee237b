"""Training under injected noise: detect-then-train (the ``filter`` methods) against the
noise-robust methods, with an ablation of the filter steps and what ``--method auto`` picks.

NoisywikiHow (158 classes, 50 training items each; head backbone over MiniLM embeddings):
uniform and instance-dependent noise at 20 % and 40 %, ``--seeds`` seeds, top-1 on the
clean test set. 20 Newsgroups (labelerrors_20news, corrected labels): a stratified half for
training with 40 % uniform noise injected into its corrected labels, the other half for
evaluation against its corrected labels. Every figure is produced here from the runs;
nothing is typed in.

    python -m benchmarks.train_noise [--data-dir ../shared/data] [--seeds 3]
        [--ablation-seeds 1] [--auto-seeds 1] [--out benchmarks/results/train_noise]

About an hour on 2 CPU cores (the embeddings cached). It runs unchanged on a GPU
machine; ``--backbone finetune`` fine-tunes MiniLM instead (for a GPU).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
OUT = Path(__file__).resolve().parent / "results" / "train_noise"
NOISY_WIKIHOW = ("uniform:0.2,0.4", "instance-dependent:0.2,0.4")
METHODS = ("base", "mixup", "co-teaching", "seal", "filter", "filter+seal", "filter-relabel",
           "filter-relabel+seal")
# The ablation ladder: each row adds one step to the one above it.
LADDER = (("base", "no cleaning"),
          ("filter", "scan detector (LR on embeddings), cleanlab's count, drop, base"),
          ("filter [seal detector]", "+ cross-fitted SEAL head detector, mixture count"),
          ("filter-relabel", "+ soft relabel instead of drop"),
          ("filter-relabel+seal", "+ SEAL training on the result"),
          ("filter-relabel-iterate+seal", "+ a second detection round"))
TARGET_GAIN = 1.0  # points of top-1 over SEAL the best filter method must reach
AUTO_SLACK = 0.5   # points of top-1 auto's pick may be below the best of the table


def _bench(train: pd.DataFrame, test: pd.DataFrame, noise, methods, seeds: int,
           backbone: str, model: str | None, **options) -> pd.DataFrame:
    from labelaudit.training import train_bench

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = train_bench(train, test, noise=list(noise), methods=list(methods),
                             seeds=seeds, backbone=backbone, model=model, progress=True,
                             **options)
    return result.runs


def _twenty_news(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A stratified half of labelerrors_20news with its corrected labels for training, the
    other half for evaluation."""
    from sklearn.model_selection import train_test_split

    frame = pd.read_json(folder / "test.jsonl", lines=True)
    frame = frame.assign(label=frame["true_label"].astype(str))[["id", "text", "label"]]
    fit, held = train_test_split(np.arange(len(frame)), test_size=0.5,
                                 stratify=frame["label"], random_state=0)
    return frame.iloc[np.sort(fit)].reset_index(drop=True), frame.iloc[np.sort(held)]


def _auto_picks(train: pd.DataFrame, table: pd.DataFrame, noise, seeds: int,
                backbone: str, model: str | None, dataset: str) -> list[dict]:
    """What --method auto's screen chooses in each cell (the training labels noised as
    train_bench noises them), and the clean top-1 of its pick against the table's best."""
    from labelaudit.io import prepare_text_dataset
    from labelaudit.noise import noisy_labels
    from labelaudit.training import choose_method, parse_noise_grid

    classes = prepare_text_dataset(train, text="text", label="label").classes
    rows = []
    for spec in noise:
        method, rates = parse_noise_grid(spec)
        for rate in rates:
            cell = table[(table["noise"] == method) & (table["rate"] == rate)]
            means = cell.groupby("method")["top1"].mean()
            for seed in range(seeds):
                labels = noisy_labels(train, label="label", method=method, rate=rate,
                                      classes=classes, text="text", text_pair=None,
                                      random_state=seed)
                started = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    screen = choose_method(train.assign(label=classes[labels]),
                                           backbone=backbone, model=model,
                                           random_state=seed)
                pick = screen.winner
                rows.append({"data": dataset, "noise": method, "rate": rate, "seed": seed,
                             "pick": pick, "pick_top1": float(means.get(pick, np.nan)),
                             "best": str(means.idxmax()), "best_top1": float(means.max()),
                             "screen": screen.table.to_dict(orient="records"),
                             "seconds": time.perf_counter() - started})
                print(f"auto {dataset} {method} {rate:.0%} seed {seed}: {pick} "
                      f"({rows[-1]['seconds']:.0f} s)", flush=True)
    return rows


def _cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std of top-1 (in points) per data set, method and noise cell."""
    grouped = runs.groupby(["data", "noise", "rate", "method"], sort=False)["top1"]
    return grouped.agg(mean=lambda v: v.mean() * 100, std=lambda v: v.std() * 100,
                       n=len).reset_index()


def _verdicts(cells: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (data, noise, rate), cell in cells.groupby(["data", "noise", "rate"], sort=False):
        means = cell.set_index("method")["mean"]
        filters = means[[m.startswith("filter") for m in means.index]]
        if filters.empty or "seal" not in means.index:
            continue
        best_filter = str(filters.idxmax())
        rows.append({"data": data, "noise": noise, "rate": rate, "seal": means["seal"],
                     "best_filter": best_filter, "best_filter_top1": filters.max(),
                     "gain_over_seal": filters.max() - means["seal"],
                     "target": TARGET_GAIN if data == "noisywikihow" else 0.0})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["met"] = frame["gain_over_seal"] >= frame["target"]
    return frame


def _table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """A GitHub markdown table of ``frame`` (floats to 2 or 4 decimals as given)."""
    frame = frame.reset_index() if index else frame
    cells = [[str(c) for c in frame.columns]]
    cells += [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
              for row in frame.itertuples(index=False)]
    lines = ["| " + " | ".join(row) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("---" for _ in cells[0]) + "|")
    return "\n".join(lines)


def _markdown(cells: pd.DataFrame, verdicts: pd.DataFrame, auto: pd.DataFrame,
              recommendations: list[dict], args: argparse.Namespace) -> str:
    size = f", {args.n_train} NoisywikiHow training items" if args.n_train else ""
    lines = [f"# Training under injected noise ({args.backbone} backbone{size})", "",
             "`python -m benchmarks.train_noise` (seeds: "
             f"{args.seeds}, ablation seeds: {args.ablation_seeds}, auto seeds: "
             f"{args.auto_seeds}). Top-1 accuracy (%) on the clean evaluation set, mean ± std "
             "over seeds.", ""]
    for data, part in cells.groupby("data", sort=False):
        part = part.assign(cell=[f"{m:.2f} ± {0 if np.isnan(s) else s:.2f} (n={n})"
                                 for m, s, n in zip(part["mean"], part["std"], part["n"],
                                                    strict=True)],
                           column=[f"{n} {r:.0%}" for n, r in zip(part["noise"], part["rate"],
                                                                  strict=True)])
        wide = part.pivot(index="method", columns="column", values="cell")
        wide = wide.loc[list(dict.fromkeys(part["method"])), list(dict.fromkeys(part["column"]))]
        lines += [f"## {data}", "", _table(wide), ""]
    if not verdicts.empty:
        lines += ["## Best filter method against SEAL", "",
                  _table(verdicts.round(2), index=False), ""]
    ladder = cells[cells["method"].isin([m for m, _ in LADDER])]
    if not ladder.empty:
        lines += ["## Ablation (each row adds one step)", ""]
        steps = dict(LADDER)
        for data, part in ladder.groupby("data", sort=False):
            wide = part.assign(column=[f"{n} {r:.0%}" for n, r in zip(part["noise"], part["rate"],
                                                                       strict=True)])
            wide = wide.pivot(index="method", columns="column", values="mean").round(2)
            order = [m for m, _ in LADDER if m in wide.index]
            wide = wide.loc[order]
            wide.insert(0, "step", [steps[m] for m in order])
            lines += [f"{data}:", "", _table(wide), ""]
    if not auto.empty:
        shown = auto.drop(columns=["screen"]).round(4)
        shown["within"] = (auto["best_top1"] - auto["pick_top1"]) * 100 <= AUTO_SLACK
        lines += ["## --method auto (screen: the mean over 3 disjoint held-out fifths, "
                  "noisy labels)", "",
                  _table(shown, index=False), ""]
    if recommendations:
        lines += ["## Noisy against clean accuracy (train-bench's recommendation)", "",
                  _table(pd.DataFrame(recommendations).round(4), index=False), ""]
    return "\n".join(lines)


def _remeasure_auto(sets: list, args: argparse.Namespace) -> None:
    """--auto-only: the picks measured again against the stored table (the screen changed,
    the methods did not)."""
    path = args.out.with_suffix(".json")
    doc = json.loads(path.read_text())
    runs = pd.DataFrame(doc["runs"])
    auto: list[dict] = []
    for name, fit, _, noise in sets:
        main_runs = runs[(runs["data"] == name) & runs["method"].isin(args.methods)]
        auto += _auto_picks(fit, main_runs, noise, args.auto_seeds, doc["backbone"],
                            args.model, name)
    doc["auto"], doc["auto_seeds"] = auto, args.auto_seeds
    path.write_text(json.dumps(doc, indent=1, default=float))
    for key in ("seeds", "backbone", "ablation_seeds", "auto_seeds", "n_train"):
        setattr(args, key, doc.get(key, getattr(args, key)))
    text = _markdown(pd.DataFrame(doc["cells"]), pd.DataFrame(doc["verdicts"]),
                     pd.DataFrame(auto), doc["recommendations"], args)
    args.out.with_suffix(".md").write_text(text + "\n")
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--ablation-seeds", type=int, default=1)
    parser.add_argument("--auto-seeds", type=int, default=1)
    parser.add_argument("--backbone", default="head", choices=("head", "finetune"))
    parser.add_argument("--skip-20news", action="store_true")
    parser.add_argument("--noise", action="append",
                        help="NoisywikiHow noise grid instead of uniform and instance-dependent "
                        "20 %% and 40 %% (METHOD:RATE[,RATE...], repeatable)")
    parser.add_argument("--model", help="sentence encoder (default: the packaged MiniLM)")
    parser.add_argument("--methods", type=lambda v: tuple(v.split(",")), default=METHODS,
                        help="comma-separated methods of the main table (default: "
                        f"{','.join(METHODS)})")
    parser.add_argument("--n-train", type=int,
                        help="a stratified sample of this many NoisywikiHow training items "
                        "(e.g. 2000 for the finetune backbone on a CPU)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--render", action="store_true",
                        help="only write the markdown again from --out's .json")
    parser.add_argument("--auto-only", action="store_true",
                        help="only measure --method auto's picks again, against the table "
                        "in --out's .json, and write both files again")
    args = parser.parse_args()
    if args.render:
        doc = json.loads(args.out.with_suffix(".json").read_text())
        for key in ("seeds", "backbone", "ablation_seeds", "auto_seeds", "n_train"):
            setattr(args, key, doc.get(key, getattr(args, key)))
        cells = pd.DataFrame(doc["cells"])
        text = _markdown(cells, pd.DataFrame(doc["verdicts"]), pd.DataFrame(doc["auto"]),
                         doc["recommendations"], args)
        args.out.with_suffix(".md").write_text(text + "\n")
        print(text)
        return

    from labelaudit.io import read_table
    from labelaudit.training import BenchResult

    started = time.perf_counter()
    wikihow = args.data_dir / "noisywikihow"
    train, test = read_table(wikihow / "train.jsonl"), read_table(wikihow / "test.jsonl")
    if args.n_train:
        from sklearn.model_selection import train_test_split

        keep, _ = train_test_split(np.arange(len(train)), train_size=args.n_train,
                                   stratify=train["label"], random_state=0)
        train = train.iloc[np.sort(keep)].reset_index(drop=True)
    sets = [("noisywikihow", train, test, tuple(args.noise or NOISY_WIKIHOW))]
    if not args.skip_20news:
        sets.append(("20news", *_twenty_news(args.data_dir / "labelerrors_20news"),
                     ("uniform:0.4",)))
    if args.auto_only:
        _remeasure_auto(sets, args)
        return
    runs, auto, recommendations = [], [], []
    for name, fit, held, noise in sets:
        main_runs = _bench(fit, held, noise, args.methods, args.seeds, args.backbone,
                           args.model, filter_scorers=("embed",))
        result = BenchResult(main_runs, args.backbone, len(fit), len(held))
        recommendations += [{"data": name, **row} for row in
                            result.recommend().to_dict(orient="records")]
        print(result.summary(), flush=True)
        extra = [main_runs]
        if args.ablation_seeds:
            seal_detector = _bench(fit, held, noise, ["filter"], args.ablation_seeds,
                                   args.backbone, args.model,
                                   train_options={"filter_detector": "seal"})
            extra.append(seal_detector.assign(method="filter [seal detector]"))
            extra.append(_bench(fit, held, noise, ["filter-relabel-iterate+seal"],
                                args.ablation_seeds, args.backbone, args.model))
        runs.append(pd.concat(extra).assign(data=name))
        if args.auto_seeds:
            auto += _auto_picks(fit, main_runs, noise, args.auto_seeds, args.backbone,
                                args.model, name)
    table = pd.concat(runs, ignore_index=True)
    cells = _cells(table)
    verdicts = _verdicts(cells[cells["method"].isin(args.methods)])
    auto_frame = pd.DataFrame(auto)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"backbone": args.backbone, "seeds": args.seeds,
           "ablation_seeds": args.ablation_seeds, "auto_seeds": args.auto_seeds,
           "n_train": args.n_train, "seconds":
           time.perf_counter() - started, "cells": cells.to_dict(orient="records"),
           "verdicts": verdicts.to_dict(orient="records"), "auto": auto,
           "recommendations": recommendations, "runs": table.to_dict(orient="records")}
    args.out.with_suffix(".json").write_text(json.dumps(doc, indent=1, default=float))
    text = _markdown(cells, verdicts, auto_frame, recommendations, args)
    args.out.with_suffix(".md").write_text(text + "\n")
    print(text)
    print(f"wrote {args.out.with_suffix('.md')} and .json in "
          f"{(time.perf_counter() - started) / 60:.1f} min")


if __name__ == "__main__":
    main()
