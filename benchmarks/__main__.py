"""``python -m benchmarks``: labelaudit against cleanlab on data with human-verified label errors.

For every dataset present under the data root (default ``../shared/data``; missing ones are
skipped) it runs, on the same 5 folds: labelaudit's default scan (every ranking method of
that one scan is a row), cleanlab's ``find_label_issues`` ranking on the scan's own
probabilities, and a TF-IDF + logistic regression + cleanlab pipeline as a cleanlab user
writes it. It prints one table per dataset (AUPR, average precision, P@Err%, R@2·Err%, wall
seconds, items per second, peak memory) and the ratios ours/peer, and writes the same as
JSON under ``benchmarks/results/``. Token-level datasets join through ``benchmarks.tokens``
when that module exists (its ``run(data_root, args) -> list[dict]`` adds rows).

Examples::

    python -m benchmarks --quick                      # smoke run on small samples
    python -m benchmarks --datasets snow2008_rte      # one dataset, full size
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_RESULTS = REPO / "benchmarks" / "results"

OURS = "ours:default"
PEERS = ("cleanlab:same-probs", "cleanlab:tfidf+lr")
QUALITY = ("aupr", "average_precision", "precision_at_err", "recall_at_2err")


def build_parser() -> argparse.ArgumentParser:
    from benchmarks.datasets import SPECS

    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Detection quality and speed of labelaudit against cleanlab on datasets "
        "with human-verified label errors.",
    )
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help=f"data root (default: {os.path.relpath(DEFAULT_DATA, Path.cwd())})")
    p.add_argument("--datasets", help=f"comma-separated subset of {', '.join(SPECS)} "
                   "(and token datasets, if benchmarks.tokens exists); default: all present")
    p.add_argument("--quick", action="store_true",
                   help="smoke run on a small sample of each dataset (errors over-sampled; "
                   "numbers not comparable with a full run)")
    p.add_argument("--quick-size", type=int, default=300, help="items per dataset with --quick")
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (default: 5)")
    p.add_argument("--seed", type=int, default=0, help="random seed of folds and models")
    p.add_argument("--threads", type=int, default=1,
                   help="threads for torch/BLAS (default: 1; the machine is shared)")
    p.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                   help="folder for the JSON results (default: benchmarks/results)")
    p.add_argument("--no-tokens", action="store_true", help="skip the token-level hook")
    return p


def _ratio(ours: float | None, peer: float | None) -> float | None:
    if ours is None or peer is None or not math.isfinite(ours) or not math.isfinite(peer):
        return None
    if peer == 0:
        return None if ours == 0 else math.inf
    return ours / peer


def _rows(data, name: str, run, *, shared: bool = False) -> list[dict[str, Any]]:
    from labelaudit.evaluation import detection_report

    rows = []
    n = len(data.frame)
    for key, scores in run.scores.items():
        report = detection_report(data.is_error, scores)
        rows.append({
            "detector": f"{name}:{key}",
            "flagged": run.n_flagged.get(key),
            **{k: getattr(report, k) for k in ("aupr", "average_precision", "precision_at_err",
                                               "recall_at_err", "recall_at_2err", "roc_auc")},
            "seconds": run.seconds,
            "items_per_s": n / run.seconds if run.seconds > 0 else None,
            "memory_mb": run.memory_mb,
            "timing": "the whole scan (all its rows)" if shared else "this detector",
        })
    return rows


def _format_table(rows: list[dict[str, Any]]) -> str:
    headers = ["detector", "flagged", "AUPR", "AP", "P@Err", "R@2Err", "seconds", "items/s",
               "mem MB"]
    keys = ["detector", "flagged", "aupr", "average_precision", "precision_at_err",
            "recall_at_2err", "seconds", "items_per_s", "memory_mb"]
    body = []
    last_timing = None
    for row in rows:
        cells = []
        for key in keys:
            value = row.get(key)
            same_run = (key in ("seconds", "items_per_s", "memory_mb")
                        and row.get("timing_group") is not None
                        and row.get("timing_group") == last_timing)
            if same_run:
                cells.append('"')
            elif value is None:
                cells.append("-")
            elif isinstance(value, float):
                cells.append(f"{value:.1f}" if key in ("seconds", "items_per_s", "memory_mb")
                             else f"{value:.3f}")
            else:
                cells.append(str(value))
        last_timing = row.get("timing_group")
        body.append(cells)
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(headers, widths, strict=True)))]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
              for cells in body]
    return "\n".join(lines)


def _ratios(rows: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    by_name = {r["detector"]: r for r in rows}
    ours = by_name.get(OURS)
    out: dict[str, dict[str, float | None]] = {}
    if ours is None:
        return out
    for peer in PEERS:
        if peer not in by_name:
            continue
        other = by_name[peer]
        keys = QUALITY + (("seconds", "memory_mb") if peer == "cleanlab:tfidf+lr" else ())
        out[f"{OURS} / {peer}"] = {k: _ratio(ours[k], other[k]) for k in keys}
    return out


def _format_ratio(value: float | None) -> str:
    return "-" if value is None else ("inf" if value == math.inf else f"{value:.2f}x")


def run_dataset(data, args) -> dict[str, Any]:
    from benchmarks.detectors import run_cleanlab_same_probs, run_ours, run_tfidf_pipeline

    n = len(data.frame)
    log = sys.stderr
    print(f"[{data.name}] {n} items, {int(data.is_error.sum())} errors: labelaudit scan ...",
          file=log, flush=True)
    ours = run_ours(data, n_folds=args.folds, random_state=args.seed)
    print(f"[{data.name}] scan {ours.seconds:.1f}s; cleanlab on the same probabilities ...",
          file=log, flush=True)
    same = run_cleanlab_same_probs(ours.extra["labels"], ours.extra["pred_probs"])
    print(f"[{data.name}] TF-IDF + LR + cleanlab pipeline ...", file=log, flush=True)
    pipeline = run_tfidf_pipeline(data, n_folds=args.folds, random_state=args.seed)

    rows = _rows(data, "ours", ours, shared=True)
    for row in rows:
        row["timing_group"] = "scan"
    rows += _rows(data, "cleanlab", same) + _rows(data, "cleanlab", pipeline)
    ours_meta = {k: v for k, v in ours.extra.items() if k not in ("pred_probs", "labels")}
    return {
        "dataset": data.name,
        "note": data.spec.note,
        "quick": data.quick,
        "n_items": n,
        "n_errors": int(data.is_error.sum()),
        "n_classes": int(data.frame["label"].nunique()),
        "rows": rows,
        "ratios": _ratios(rows),
        "ours": ours_meta,
        "peer_tfidf_lr": pipeline.extra,
    }


def print_result(result: dict[str, Any]) -> None:
    title = (f"== {result['dataset']}{' (quick sample)' if result.get('quick') else ''}: "
             f"{result['n_items']} items, {result['n_errors']} errors")
    print(title)
    if result.get("note"):
        print(f"   {result['note']}")
    print(_format_table(result["rows"]))
    for name, values in result.get("ratios", {}).items():
        parts = ", ".join(f"{k} {_format_ratio(v)}" for k, v in values.items())
        print(f"   {name}: {parts}")
    ours = result.get("ours") or {}
    if ours:
        accuracy = ", ".join(f"{m} {a:.3f}" for m, a in ours.get("member_accuracy", {}).items())
        peer_acc = (result.get("peer_tfidf_lr") or {}).get("accuracy")
        print(f"   out-of-sample accuracy: ours ensemble {ours['accuracy']:.3f} ({accuracy})"
              + (f"; tfidf+lr {peer_acc:.3f}" if peer_acc is not None else ""))
    print()


def _environment(args) -> dict[str, Any]:
    import cleanlab
    import sklearn

    import labelaudit

    return {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "threads": args.threads,
        "labelaudit": labelaudit.__version__, "cleanlab": cleanlab.__version__,
        "scikit-learn": sklearn.__version__, "folds": args.folds, "seed": args.seed,
        "memory_method": _memory_method(),
        "timing": "wall seconds of the call in a forked child, imports excluded; shared 2-core "
                  "machine, so expect noise",
    }


def _memory_method() -> str:
    from benchmarks.detectors import MEMORY_METHOD

    return MEMORY_METHOD


def _token_rows(args, wanted: set[str] | None) -> list[dict[str, Any]]:
    if args.no_tokens:
        return []
    try:
        tokens = importlib.import_module("benchmarks.tokens")
    except ModuleNotFoundError as exc:
        if exc.name != "benchmarks.tokens":
            raise
        return []
    args.wanted_datasets = wanted
    return list(tokens.run(args.data, args))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from benchmarks.detectors import threads_setup

    threads_setup(args.threads)
    from benchmarks.datasets import SPECS, load, subsample
    from labelaudit.io import write_json

    wanted = None
    if args.datasets:
        wanted = {d.strip() for d in args.datasets.split(",") if d.strip()}
    names = [n for n in SPECS if wanted is None or n in wanted]
    if not args.data.is_dir():
        print(f"benchmarks: data root {args.data} not found; nothing to run", file=sys.stderr)
        return 1
    environment = _environment(args)
    suffix = "-quick" if args.quick else ""
    written = []
    started = time.perf_counter()
    for name in names:
        data = load(SPECS[name], args.data)
        if data is None:
            print(f"[{name}] not under {args.data}: skipped", file=sys.stderr)
            continue
        if args.quick:
            data = subsample(data, size=args.quick_size, n_folds=args.folds,
                             random_state=args.seed)
        result = run_dataset(data, args)
        print_result(result)
        sys.stdout.flush()
        result["environment"] = environment
        path = args.results / f"{name}{suffix}.json"
        write_json(result, path)
        written.append(path)

    token_rows = _token_rows(args, wanted)
    if token_rows:
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in token_rows:
            groups.setdefault(str(row.get("dataset", "tokens")), []).append(row)
        for dataset, rows in groups.items():
            result = {"dataset": dataset, "quick": args.quick, "rows": rows,
                      "n_items": rows[0].get("n_items", "?"),
                      "n_errors": rows[0].get("n_errors", "?"), "ratios": _ratios(rows)}
            print_result(result)
            result["environment"] = environment
            path = args.results / f"{dataset}{suffix}.json"
            write_json(result, path)
            written.append(path)

    token_names = {str(r.get("dataset", "")).split(":")[0] for r in token_rows}
    token_names |= {str(r.get("dataset", "")) for r in token_rows}
    token_names |= {name.rsplit("_", 1)[0] for name in token_names}  # conll2003_dev_tokens
    if unknown := (wanted or set()) - set(SPECS) - token_names:
        print(f"benchmarks: unknown or unavailable datasets: {', '.join(sorted(unknown))}",
              file=sys.stderr)
    print(f"memory: {environment['memory_method']}", file=sys.stderr)
    for path in written:
        print(f"wrote {os.path.relpath(path, Path.cwd())}", file=sys.stderr)
    print(f"total {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
