"""What a TF-IDF scan costs as the data grows, next to scikit-learn + cleanlab on the same rows.

Three parts, each printed as a table (run from the project root):

``--sizes``: the cost curve of ``labelaudit.scan(..., out=...)`` on the seeded datasets of
:mod:`benchmarks.make_big` (built into ``/tmp/labelaudit_big`` when missing): wall time,
peak memory and the average precision (AP) of the ranking against the planted errors, for
the out-of-core hashed model (``tfidf="hashing"``, every size) and for today's in-memory
model (``tfidf="memory"``, what ``labelaudit scan --scorers tfidf`` runs, sizes up to
``--tfidf-max``). Every run is a fresh subprocess; its peak memory is the peak of the
proportional set size (PSS, shared pages split between the processes sharing them) summed
over the process and all its children (Ray's workers included), sampled every 0.2 s.

``--ray-size``: the same hashed run with ``engine="ray"`` (a local Ray with every core):
time, the overhead ratio to the plain engine, and the Spearman correlation of the two
rankings.

``--peer-sizes``: the peer, what a scikit-learn + cleanlab user writes: ``cross_val_predict``
(5 folds) of ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)`` +
``LogisticRegression(C=10, max_iter=1000)`` and cleanlab's ``find_label_issues``, ranked by
self-confidence. A peer run is stopped at ``--peer-timeout`` seconds or ``--peer-max-gb`` of
memory and reported as such.

``--tune``: the quality of the hashed model against today's vectoriser on the sets with
known errors in ``../shared/data`` (20 Newsgroups' 22 verified errors, the same set with 10%
planted flips, ChaosNLI-SNLI, RTE) and on ``big_100000``, for the default options and one
change at a time (alpha, epochs, n_features, n-grams, sublinear tf).

``--embed-size``: the streamed embed member's cost on generated rows, local and on Ray.

``--embed``: the embed member of a streamed scan on the same real sets: the in-memory
scan's tfidf + embed ensemble next to the streamed one (hashed TF-IDF, embedding heads
fitted by logistic regression on the gathered embeddings, and out of core on minibatches),
with TF-IDF alone as the bar. MiniLM embeddings come from the embedding cache (the first run
encodes: about 15 minutes for 20 Newsgroups on two cores).

Examples::

    python -m benchmarks.scale_cost --sizes 10000,100000 --ray-size 100000 --peer-sizes 10000
    python -m benchmarks.scale_cost --sizes 1000000 --peer-sizes 1000000 --peer-timeout 1800
    python -m benchmarks.scale_cost --tune
    python -m benchmarks.scale_cost --embed
    python -m benchmarks.scale_cost --embed-size 10000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
BIG = Path("/tmp/labelaudit_big")
WORK = Path(tempfile.gettempdir()) / "labelaudit_scale_cost"


# --------------------------------------------------------------------------- measuring
def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry))
    return tree


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_pss_mb(root: int) -> float:
    tree, todo, total = _children(), [root], 0
    while todo:
        pid = todo.pop()
        total += _pss_kb(pid)
        todo.extend(tree.get(pid, []))
    return total / 1024.0


def measured(command: list[str], *, timeout: float, max_gb: float,
             threads: int | None = None) -> dict[str, Any]:
    """Run ``command`` (which prints one JSON line last), sampling its process tree's
    memory; stopped past ``timeout`` seconds or ``max_gb``; ``threads``: its
    ``LABELAUDIT_THREADS`` (None: as this process's environment says)."""
    started = time.perf_counter()
    env = dict(os.environ, **({} if threads is None else {"LABELAUDIT_THREADS": str(threads)}))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=REPO, start_new_session=True, env=env)
    peak = [0.0]
    stopped: list[str] = []

    def sample() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], _tree_pss_mb(process.pid))
            elapsed = time.perf_counter() - started
            if peak[0] > max_gb * 1024 or elapsed > timeout:
                why = "timeout" if elapsed > timeout else "memory"
                stopped.append(f"stopped ({why}) at {elapsed:.0f} s, {peak[0] / 1024:.1f} GB")
                os.killpg(process.pid, 9)
                return
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = process.communicate()
    except BaseException:  # interrupted (Ctrl-C, or SIGTERM where the caller's main makes
        # it an exit, as many_classes' does): stop the run too
        os.killpg(process.pid, 9)
        raise
    sampler.join()
    seconds = time.perf_counter() - started
    if stopped or process.returncode != 0:
        tail = " ".join(err.strip().splitlines()[-1:]) if err.strip() else ""
        return {"error": stopped[0] if stopped else f"exit {process.returncode}: {tail}",
                "seconds": round(seconds, 1), "peak_gb": round(peak[0] / 1024, 2)}
    result = json.loads(out.strip().splitlines()[-1])
    warned = [line for line in err.splitlines() if "Warning" in line]
    result.update(seconds=round(seconds, 1), peak_gb=round(peak[0] / 1024, 2),
                  warnings=sorted(set(warned))[:3])
    return result


def _average_precision(out: Path, truth: Path) -> tuple[float, Any]:
    import pandas as pd
    from sklearn.metrics import average_precision_score

    ranked = pd.read_parquet(out, columns=["id", "score_ensemble"])
    known = pd.read_parquet(truth, columns=["id", "is_error"])
    joined = ranked.merge(known, on="id")
    return float(average_precision_score(joined["is_error"], -joined["score_ensemble"])), joined


# --------------------------------------------------------------------------- one run each
def run_ours(spec: dict[str, Any]) -> dict[str, Any]:
    """One streamed scan (in this process); spec: data, truth, out, scorer, engine, options."""
    import warnings

    from labelaudit.engine import EmbedOptions, HashingOptions
    from labelaudit.scanning import scan

    warnings.simplefilter("ignore")
    options = dict(spec.get("options", {}))
    if "ngram_range" in options:
        options["ngram_range"] = tuple(options["ngram_range"])
    started = time.perf_counter()
    result = scan(spec["data"], out=spec["out"],
                         tfidf="memory" if spec["scorer"] == "tfidf" else spec["scorer"],
                         scorers=spec.get("scorers", ["tfidf"]),
                         embed=EmbedOptions(**spec.get("embed", {})),
                         engine=spec["engine"], hashing=HashingOptions(**options),
                         progress=False, text=spec.get("text", "text"),
                         text_pair=spec.get("text_pair"), label=spec.get("label", "label"))
    seconds = time.perf_counter() - started
    ap, _ = _average_precision(Path(spec["out"]), Path(spec["truth"]))
    return {"scan_seconds": seconds, "ap": ap, "accuracy": result.accuracy,
            "n_items": result.n_items, "model": result.model, "weights": result.weights}


def run_peer(spec: dict[str, Any]) -> dict[str, Any]:
    """scikit-learn cross_val_predict + cleanlab on the same rows."""
    import pandas as pd
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline

    started = time.perf_counter()
    frame = pd.read_parquet(spec["data"])
    classes, labels = np.unique(frame["label"].to_numpy(), return_inverse=True)
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
                          LogisticRegression(C=10.0, max_iter=1000))
    probs = cross_val_predict(model, frame["text"].tolist(), labels, cv=5,
                              method="predict_proba")
    issues = find_label_issues(labels, probs, return_indices_ranked_by="self_confidence")
    scores = get_label_quality_scores(labels, probs)
    seconds = time.perf_counter() - started
    truth = pd.read_parquet(spec["truth"], columns=["id", "is_error"])
    is_error = frame[["id"]].merge(truth, on="id", how="left")["is_error"].to_numpy()
    return {"scan_seconds": seconds, "ap": float(average_precision_score(is_error, -scores)),
            "n_flagged": len(issues), "accuracy": float((probs.argmax(1) == labels).mean())}


def _one(kind: str, spec: dict[str, Any], *, timeout: float = 3600,
         max_gb: float = 16) -> dict[str, Any]:
    return measured([sys.executable, "-m", "benchmarks.scale_cost", f"--run-{kind}",
                     json.dumps(spec)], timeout=timeout, max_gb=max_gb)


def _data(rows: int) -> tuple[Path, Path]:
    from benchmarks.make_big import build, paths

    data, truth = paths(rows, BIG)
    if not (data.exists() and truth.exists()):
        build(rows, out=BIG)
    return data, truth


# --------------------------------------------------------------------------- tables
def _row(name: str, rows: int, result: dict[str, Any], base: float | None = None) -> str:
    if "error" in result:
        return f"{name:<24}{rows:>9,}  {result['error']}"
    ratio = f"{result['seconds'] / base:8.1f}x" if base else " " * 9
    return (f"{name:<24}{rows:>9,}{result['seconds']:>9.1f}{ratio}"
            f"{result['peak_gb']:>9.2f}{result['ap']:>8.4f}{result['accuracy']:>8.3f}")


HEADER = (f"{'run':<24}{'rows':>9}{'seconds':>9}{'vs 10k':>9}{'peak GB':>9}{'AP':>8}"
          f"{'acc':>8}")


def cost_curve(sizes: list[int], *, tfidf_max: int) -> dict[tuple[str, int], dict[str, Any]]:
    results: dict[tuple[str, int], dict[str, Any]] = {}
    WORK.mkdir(parents=True, exist_ok=True)
    print(HEADER)
    for rows in sizes:
        data, truth = _data(rows)
        for scorer in ("hashing", "tfidf"):
            if scorer == "tfidf" and rows > tfidf_max:
                continue
            spec = {"data": str(data), "truth": str(truth), "scorer": scorer,
                    "engine": "local", "out": str(WORK / f"ours_{scorer}_{rows}.parquet")}
            result = results[(scorer, rows)] = _one("ours", spec)
            base = results.get((scorer, min(sizes)), {}).get("seconds")
            print(_row(f"labelaudit {scorer}", rows, result,
                       base if rows != min(sizes) else None), flush=True)
    return results


def ray_run(rows: int, plain: dict[str, Any] | None) -> None:
    import pandas as pd
    from scipy.stats import spearmanr

    data, truth = _data(rows)
    plain_out = WORK / f"ours_hashing_{rows}.parquet"
    if plain is None or not plain_out.exists():
        plain = _one("ours", {"data": str(data), "truth": str(truth), "scorer": "hashing",
                              "engine": "local", "out": str(plain_out)})
    spec = {"data": str(data), "truth": str(truth), "scorer": "hashing", "engine": "ray",
            "out": str(WORK / f"ours_ray_{rows}.parquet")}
    result = _one("ours", spec)
    print(HEADER)
    print(_row("labelaudit hashing", rows, plain))
    print(_row("labelaudit hashing ray", rows, result))
    if "error" not in result and "error" not in plain:
        a = pd.read_parquet(plain_out, columns=["id", "score_ensemble"])
        b = pd.read_parquet(spec["out"], columns=["id", "score_ensemble"])
        joined = a.merge(b, on="id")
        rho = spearmanr(joined["score_ensemble_x"], joined["score_ensemble_y"]).statistic
        print(f"ray / plain time: {result['seconds'] / plain['seconds']:.2f}x "
              f"(scan only: {result['scan_seconds'] / plain['scan_seconds']:.2f}x)  "
              f"Spearman of the two rankings: {rho:.6f}")


def embed_cost(rows: int) -> None:
    """The streamed embed member on ``rows`` generated texts: hashed TF-IDF alone, with the
    embed member on the local engine, and the same on Ray (encoder actors, heads as
    tasks); the embedding cache is off, so every run encodes."""
    import pandas as pd
    from scipy.stats import spearmanr

    data, truth = _data(rows)
    base = {"data": str(data), "truth": str(truth), "scorer": "hashing"}
    both = {"scorers": ["tfidf", "embed"], "embed": {"cache_dir": False}}
    runs = [("hashed tfidf", {**base, "engine": "local"}),
            ("hashed tfidf + embed", {**base, **both, "engine": "local"}),
            ("hashed tfidf + embed ray", {**base, **both, "engine": "ray"})]
    results = {}
    print(HEADER)
    for name, spec in runs:
        spec["out"] = str(WORK / f"embed_{spec['engine']}_{len(spec.get('scorers', []))}"
                          f"_{rows}.parquet")
        results[name] = (spec, _one("ours", spec))
        print(_row(name, rows, results[name][1]) + f"  {results[name][1].get('weights', '')}",
              flush=True)
    (a_spec, a), (b_spec, b) = results["hashed tfidf + embed"], results[
        "hashed tfidf + embed ray"]
    if "error" not in a and "error" not in b:
        x = pd.read_parquet(a_spec["out"], columns=["id", "score_ensemble"])
        y = pd.read_parquet(b_spec["out"], columns=["id", "score_ensemble"])
        joined = x.merge(y, on="id")
        rho = spearmanr(joined["score_ensemble_x"], joined["score_ensemble_y"]).statistic
        print(f"ray / local time: {b['seconds'] / a['seconds']:.2f}x  Spearman of the two "
              f"rankings: {rho:.6f}")


def peers(sizes: list[int], ours: dict[tuple[str, int], dict[str, Any]], *, timeout: float,
          max_gb: float) -> None:
    print(HEADER)
    for rows in sizes:
        data, truth = _data(rows)
        result = _one("peer", {"data": str(data), "truth": str(truth)}, timeout=timeout,
                      max_gb=max_gb)
        print(_row("sklearn+cleanlab", rows, result), flush=True)
        mine = ours.get(("hashing", rows))
        if mine and "error" not in mine and "error" not in result:
            print(f"{'':<24}ours / peer: time {mine['seconds'] / result['seconds']:.2f}x, "
                  f"memory {mine['peak_gb'] / result['peak_gb']:.2f}x, "
                  f"AP {mine['ap'] - result['ap']:+.4f}")


# --------------------------------------------------------------------------- tuning
TUNE_CHANGES: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("alpha auto C=3", {"C": 3.0}), ("alpha auto C=10", {"C": 10.0}),
    ("alpha auto C=30", {"C": 30.0}),
    ("alpha 1e-5", {"alpha": 1e-5}), ("alpha 1e-6", {"alpha": 1e-6}),
    ("epochs 3", {"epochs": 3}), ("epochs 10", {"epochs": 10}),
    ("n_features 2**18", {"n_features": 2**18}), ("n_features 2**22", {"n_features": 2**22}),
    ("ngram (1, 1)", {"ngram_range": [1, 1]}), ("sublinear_tf off", {"sublinear_tf": False}),
]


def _tune_sets(data_root: Path, *, big: bool = True) -> list[dict[str, Any]]:
    """Each set written to Parquet (data and truth) under the work folder."""
    import pandas as pd

    sets = []
    for name, path, pair in (("20news (22 verified)", "labelerrors_20news/test.jsonl", False),
                             ("chaosnli_snli", "chaosnli_snli/snli.jsonl", True),
                             ("snow2008_rte", "snow2008_rte/rte.jsonl", True)):
        source = data_root / path
        if not source.exists():
            continue
        frame = pd.read_json(source, lines=True)
        columns = ["id", "text_a", "text_b", "label"] if pair else ["id", "text", "label"]
        sets.append(_write_set(name, frame[columns], frame["is_error"].fillna(False),
                               pair=pair))
        if name.startswith("20news"):
            rng = np.random.default_rng(0)
            flipped = frame[columns].copy()
            flip = rng.random(len(frame)) < 0.10
            offset = rng.integers(1, 20, size=len(frame))
            flipped.loc[flip, "label"] = (flipped["label"][flip] + offset[flip]) % 20
            sets.append(_write_set("20news + 10% flips", flipped,
                                   pd.Series(flip) | frame["is_error"].fillna(False), pair=False))
    if big:
        data, truth = _data(100_000)
        sets.append({"name": "big_100000 (5% flips)", "data": str(data), "truth": str(truth)})
    return sets


def _write_set(name: str, frame: Any, is_error: Any, *, pair: bool) -> dict[str, Any]:
    import pandas as pd

    WORK.mkdir(parents=True, exist_ok=True)
    stem = WORK / ("tune_" + "".join(c if c.isalnum() else "_" for c in name))
    frame.to_parquet(f"{stem}.parquet", index=False)
    pd.DataFrame({"id": frame["id"], "is_error": is_error.astype(bool)}).to_parquet(
        f"{stem}.truth.parquet", index=False)
    spec = {"name": name, "data": f"{stem}.parquet", "truth": f"{stem}.truth.parquet"}
    if pair:
        spec.update(text="text_a", text_pair="text_b")
    return spec


def tune(data_root: Path) -> None:
    sets = _tune_sets(data_root)
    names = [s["name"] for s in sets]
    print(f"{'model':<26}" + "".join(f"{n[:22]:>24}" for n in names))
    print(f"{'':<26}" + "".join(f"{'AP':>10}{'seconds':>14}" for _ in names))
    rows: list[tuple[str, list[dict[str, Any]]]] = []
    for label, scorer, change in [("today's tfidf (in memory)", "tfidf", {}),
                                  *[(f"hashed {n}", "hashing", c) for n, c in TUNE_CHANGES]]:
        results = []
        for spec in sets:
            run = {**spec, "scorer": scorer, "engine": "local", "options": change,
                   "out": str(WORK / "tune_out.parquet")}
            run.pop("name")
            results.append(_one("ours", run))
        rows.append((label, results))
        print(f"{label:<26}" + "".join(
            f"{'failed':>24}" if "error" in r else f"{r['ap']:>10.4f}{r['scan_seconds']:>14.1f}"
            for r in results), flush=True)
    base = rows[0][1]
    default = rows[1][1]
    print("AP of the hashed default minus today's: " + ", ".join(
        f"{n}: {d['ap'] - b['ap']:+.4f}" for n, d, b in zip(names, default, base, strict=True)
        if "error" not in d and "error" not in b))


def embed_quality(data_root: Path) -> None:
    """The streamed embed member against the in-memory ensemble, on the real sets."""
    sets = _tune_sets(data_root, big=False)
    names = [s["name"] for s in sets]
    print(f"{'members':<40}" + "".join(f"{n[:22]:>24}" for n in names))
    print(f"{'':<40}" + "".join(f"{'AP':>10}{'seconds':>14}" for _ in names))
    both = ["tfidf", "embed"]
    for label, scorer, extra in [
            ("tfidf alone, in memory (the bar)", "tfidf", {}),
            ("tfidf + embed, in memory (scan)", "tfidf", {"scorers": both}),
            ("hashed tfidf + embed, LR heads", "hashing", {"scorers": both}),
            ("hashed tfidf + embed, out-of-core heads", "hashing",
             {"scorers": both, "embed": {"head_memory_mb": 0}}),
            ("embed alone, LR heads (streamed)", "hashing", {"scorers": ["embed"]}),
            ("embed alone, out-of-core heads", "hashing",
             {"scorers": ["embed"], "embed": {"head_memory_mb": 0}})]:
        results = []
        for spec in sets:
            run = {**spec, "scorer": scorer, "engine": "local", **extra,
                   "out": str(WORK / "embed_out.parquet")}
            run.pop("name")
            results.append(_one("ours", run))
        print(f"{label:<40}" + "".join(
            f"{'failed':>24}" if "error" in r else f"{r['ap']:>10.4f}{r['scan_seconds']:>14.1f}"
            for r in results), flush=True)


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="", help="comma-separated row counts")
    parser.add_argument("--tfidf-max", type=int, default=100_000,
                        help="largest size for the in-memory tfidf run")
    parser.add_argument("--ray-size", type=int, default=0)
    parser.add_argument("--peer-sizes", default="")
    parser.add_argument("--peer-timeout", type=float, default=1800.0)
    parser.add_argument("--peer-max-gb", type=float, default=12.0)
    parser.add_argument("--tune", action="store_true")
    parser.add_argument("--embed", action="store_true")
    parser.add_argument("--embed-size", type=int, default=0)
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--run-ours", help=argparse.SUPPRESS)
    parser.add_argument("--run-peer", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_ours:
        print(json.dumps(run_ours(json.loads(args.run_ours))))
        return 0
    if args.run_peer:
        print(json.dumps(run_peer(json.loads(args.run_peer))))
        return 0
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    ours: dict[tuple[str, int], dict[str, Any]] = {}
    if args.sizes:
        ours = cost_curve([int(s) for s in args.sizes.split(",")], tfidf_max=args.tfidf_max)
        small, big = min(ours, key=lambda k: k[1])[1], max(ours, key=lambda k: k[1])[1]
        a, b = ours.get(("hashing", small), {}), ours.get(("hashing", big), {})
        if big > small and "seconds" in a and "seconds" in b:
            print(f"hashing {big:,} / {small:,} rows: {b['seconds'] / a['seconds']:.1f}x the time "
                  f"for {big / small:.0f}x the rows")
    if args.ray_size:
        ray_run(args.ray_size, ours.get(("hashing", args.ray_size)))
    if args.peer_sizes:
        peers([int(s) for s in args.peer_sizes.split(",")], ours, timeout=args.peer_timeout,
              max_gb=args.peer_max_gb)
    if args.tune:
        tune(args.data_root)
    if args.embed:
        embed_quality(args.data_root)
    if args.embed_size:
        embed_cost(args.embed_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
