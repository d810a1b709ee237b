"""``python -m benchmarks.many_classes``: the TF-IDF member's solvers at many classes (issue 43).

Sets (``--sets``):

- ``<rows>x<classes>`` (e.g. ``10000x158``): a seeded synthetic intent-like set. A shared
  vocabulary of pseudo-words has Zipf frequencies (exponent 1.1); each class owns a handful
  of keywords (5) drawn from that same Zipf vocabulary (so popular words are keywords of
  several classes, and classes overlap), and every text has 6 to 15 words: 1 to 3 of its
  class's keywords, the rest shared filler (the 50 commonest words) and background words
  drawn by Zipf frequency, in random order. 5 % of the labels are flipped uniformly to
  another class: those are the planted errors. The same ``--seed`` gives the same rows.
- ``noisywikihow``: the real NoisywikiHow train split (``../shared/data/noisywikihow``, 7,900
  how-to steps, 158 intention classes), 5 % uniform flips by :func:`labelaudit.noise.inject_noise`.
- ``noisywikihow-<rows>`` (e.g. ``noisywikihow-100000``): ``rows`` NoisywikiHow-style steps
  resampled from the real train and test splits (15,800 steps, 158 classes), each word
  dropped with probability 0.1 and replaced by a random word of the corpus with probability
  0.05 (so rows are not copies), then 5 % uniform flips.

Candidates (``--candidates``): TF-IDF member configurations (:data:`CANDIDATES`), ``default``
(the default scan: its members at their defaults), ``fast`` (the scan's ``preset="fast"``:
the word member alone), ``default-dense`` and ``fast-dense`` (the same keeping every class's
probability, ``top_classes`` = the class count: above 256 classes the scan keeps each
item's 32 likeliest, and these are the dense computation to compare with), ``cli-default``
and ``cli-fast`` (``labelaudit scan DATA --id id --out issues.parquet [--preset fast]`` as a
user runs it, evidence included, scored from the file it writes), and ``peer``, the plain
scikit-learn + cleanlab recipe:
``cross_val_predict`` (5 folds) of TF-IDF word 1-2 grams +
``LogisticRegression(C=10, max_iter=1000)`` (lbfgs) and cleanlab's low-memory
``find_label_issues`` (cleanlab 2.9 spells ``low_memory=True`` as
``cleanlab.experimental.label_issues_batched.find_label_issues_batched``), ranked by
self-confidence. Every (set, candidate) runs in a fresh subprocess:
``labelaudit.scan(frame, scorers=[member], evidence=False, progress=False)`` (5 folds), or
``labelaudit.scan(frame, evidence=False, progress=False)`` for ``default`` (with
``preset="fast"`` for ``fast``), measured for
wall time, peak memory (the proportional set size summed over the process and its
children, sampled every 0.2 s) and the average precision (AP) of the ranking against the
planted flips. A run is stopped at ``--timeout`` seconds or ``--max-gb`` and reported as
such.

Writes ``benchmarks/results/many_classes.md`` and ``.json`` (with the command), merging
with the rows of earlier runs (a (set, candidate) measured again replaces its row).

Examples::

    python -m benchmarks.many_classes --sets 10000x158,noisywikihow-100000
    python -m benchmarks.many_classes --sets 100000x1000 --candidates auto,default,peer
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.scale_cost import measured  # time and peak memory of one run

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data"
DEFAULT_RESULTS = REPO / "benchmarks" / "results"
WORK = Path(tempfile.gettempdir()) / "labelaudit_many_classes"
DEFAULT_SETS = "10000x158,100000x158,100000x1000,200000x5000"
FLIP_RATE = 0.05
KEYWORDS, FILLER, ZIPF = 5, 50, 1.1

#: TF-IDF member candidates: name -> (scorer name, options). ``present`` is the member as
#: it was before the solver became an option (newton-cg to tol 1e-6 at every class count).
CANDIDATES: dict[str, tuple[str, dict[str, Any]]] = {
    "present": ("tfidf", {"solver": "newton-cg"}),
    "newton-cg-1e-4": ("tfidf", {"solver": "newton-cg", "tol": 1e-4}),
    "lbfgs-1e-4": ("tfidf", {"solver": "lbfgs", "tol": 1e-4}),
    "adagrad": ("tfidf", {"solver": "adagrad"}),
    "sgd": ("tfidf", {"solver": "sgd"}),
    "centroid": ("tfidf", {"solver": "centroid"}),
    "auto": ("tfidf", {}),
    "char-auto": ("tfidf-char", {}),
    "char-present": ("tfidf-char", {"solver": "newton-cg"}),
}
#: Candidates that are whole scans: the default members, or a preset's.
PRESET_CANDIDATES = ("default", "fast")
#: The same scans keeping every class's probability (``top_classes`` = the class count):
#: the dense computation the top-k rows are compared with where both fit.
DENSE_CANDIDATES = ("default-dense", "fast-dense")
#: The scans as a user runs them: ``labelaudit scan DATA --id id --out issues.parquet``
#: (``--preset fast`` for ``cli-fast``), evidence included, through the CLI's ``main``.
CLI_CANDIDATES = ("cli-default", "cli-fast")
#: Every name ``--candidates`` takes.
ALL_CANDIDATES = (*CANDIDATES, *PRESET_CANDIDATES, *DENSE_CANDIDATES, *CLI_CANDIDATES, "peer")


# --------------------------------------------------------------------------- data
def _pseudo_words(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct pronounceable pseudo-words (consonant-vowel syllables)."""
    consonants, vowels = list("bcdfghjklmnprstvwz"), list("aeiou")
    syllables = np.array([c + v for c in consonants for v in vowels])
    words: list[str] = []
    seen: set[str] = set()
    length = 2
    while len(words) < n:
        draws = rng.integers(len(syllables), size=(2 * n, length))
        for row in syllables[draws]:
            word = "".join(row)
            if word not in seen:
                seen.add(word)
                words.append(word)
                if len(words) == n:
                    break
        length += 1
    return np.array(words)


def synthetic(rows: int, n_classes: int, *, seed: int = 0,
              flip_rate: float = FLIP_RATE) -> tuple[Any, np.ndarray]:
    """The synthetic intent-like set (see the module docstring): a frame ``id, text,
    label`` and the boolean planted-flip mask."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_vocab = max(20_000, 20 * n_classes)
    vocab = _pseudo_words(n_vocab, rng)
    zipf = 1.0 / np.arange(1, n_vocab + 1) ** ZIPF
    zipf /= zipf.sum()
    content = zipf[FILLER:] / zipf[FILLER:].sum()  # keywords and background: no filler
    keywords = np.stack([FILLER + rng.choice(n_vocab - FILLER, KEYWORDS, replace=False,
                                             p=content) for _ in range(n_classes)])
    true = rng.integers(n_classes, size=rows)
    length = rng.integers(6, 16, size=rows)
    n_key = rng.integers(1, 4, size=rows)
    width = 15
    slot = np.arange(width)[None, :]
    kind = np.where(slot < n_key[:, None], 0, np.where(rng.random((rows, width)) < 0.5, 1, 2))
    tokens = np.where(
        kind == 0, keywords[true[:, None], rng.integers(KEYWORDS, size=(rows, width))],
        np.where(kind == 1, rng.integers(FILLER, size=(rows, width)),
                 FILLER + rng.choice(n_vocab - FILLER, size=(rows, width), p=content)))
    order = np.argsort(np.where(slot < length[:, None], rng.random((rows, width)), 2.0), axis=1)
    tokens = np.take_along_axis(tokens, order, axis=1)
    words = vocab[tokens]
    texts = [" ".join(w[:k]) for w, k in zip(words, length, strict=True)]
    labels, flipped = _flip(true, n_classes, rng, flip_rate)
    names = np.array([f"intent_{k:04d}" for k in range(n_classes)])
    frame = pd.DataFrame({"id": np.arange(rows), "text": texts, "label": names[labels]})
    return frame, flipped


def _flip(true: np.ndarray, n_classes: int, rng: np.random.Generator,
          rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Exactly ``round(rate * n)`` labels moved uniformly to another class."""
    flipped = np.zeros(len(true), dtype=bool)
    flipped[rng.choice(len(true), int(round(rate * len(true))), replace=False)] = True
    labels = true.copy()
    labels[flipped] = (true[flipped] + rng.integers(1, n_classes, size=int(flipped.sum()))
                       ) % n_classes
    return labels, flipped


def _wikihow(data_root: Path, splits: tuple[str, ...]) -> Any:
    import pandas as pd

    folder = data_root / "noisywikihow"
    frames = []
    for split in splits:
        if not (folder / f"{split}.jsonl").exists():
            raise SystemExit(f"missing {folder / split}.jsonl; see ../shared/data/README.md")
        frames.append(pd.read_json(folder / f"{split}.jsonl", lines=True))
    return pd.concat(frames, ignore_index=True)


def noisywikihow(data_root: Path, *, rows: int | None = None, seed: int = 0,
                 flip_rate: float = FLIP_RATE) -> tuple[Any, np.ndarray]:
    """The real train split with uniform flips (``rows`` None), or ``rows`` resampled and
    perturbed steps of train + test with uniform flips (see the module docstring)."""
    import pandas as pd

    from labelaudit.noise import inject_noise

    if rows is None:
        real = _wikihow(data_root, ("train",))
        noised = inject_noise(real["label"].to_numpy(), method="uniform", rate=flip_rate,
                              random_state=seed)
        frame = pd.DataFrame({"id": real["id"], "text": real["text"], "label": noised.labels})
        return frame, np.asarray(noised.is_noisy, dtype=bool)
    real = _wikihow(data_root, ("train", "test"))
    rng = np.random.default_rng(seed)
    classes, true_all = np.unique(real["label"].to_numpy(), return_inverse=True)
    split = [t.split() for t in real["text"]]
    corpus = np.array([w for words in split for w in words])
    pick = rng.integers(len(real), size=rows)
    texts = []
    for i in pick:
        words = np.array(split[i])
        keep = rng.random(len(words)) >= 0.10
        swap = rng.random(len(words)) < 0.05
        words = np.where(swap, corpus[rng.integers(len(corpus), size=len(words))], words)
        kept = words[keep] if keep.any() else words[:1]
        texts.append(" ".join(kept))
    labels, flipped = _flip(true_all[pick], len(classes), rng, flip_rate)
    frame = pd.DataFrame({"id": np.arange(rows), "text": texts, "label": classes[labels]})
    return frame, flipped


def load_set(name: str, *, data_root: Path = DEFAULT_DATA, seed: int = 0
             ) -> tuple[Any, np.ndarray]:
    """The frame and planted-flip mask of a ``--sets`` name."""
    if name == "noisywikihow":
        return noisywikihow(data_root, seed=seed)
    if name.startswith("noisywikihow-"):
        return noisywikihow(data_root, rows=int(name.split("-", 1)[1]), seed=seed)
    rows, _, classes = name.partition("x")
    try:
        return synthetic(int(rows), int(classes), seed=seed)
    except ValueError:
        raise SystemExit(f"--sets: {name!r} is not ROWSxCLASSES, noisywikihow or "
                         "noisywikihow-ROWS") from None


def _cached(name: str, data_root: Path, seed: int) -> tuple[Path, Path]:
    """The set written once to Parquet (frame) and .npy (flips) under the work folder."""
    WORK.mkdir(parents=True, exist_ok=True)
    data, truth = WORK / f"{name}_s{seed}.parquet", WORK / f"{name}_s{seed}.flips.npy"
    if not (data.exists() and truth.exists()):
        frame, flipped = load_set(name, data_root=data_root, seed=seed)
        frame.to_parquet(data, index=False)
        np.save(truth, flipped)
    return data, truth


# --------------------------------------------------------------------------- measuring
def _ap(flipped: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(flipped, -np.asarray(scores)))


def run_ours(spec: dict[str, Any]) -> dict[str, Any]:
    """One in-memory scan in this process (spec: data, truth, candidate)."""
    import pandas as pd

    import labelaudit
    from labelaudit.models import SCORERS

    frame = pd.read_parquet(spec["data"])
    flipped = np.load(spec["truth"])
    started = time.perf_counter()
    if spec["candidate"] in CLI_CANDIDATES:
        return _run_cli(spec, frame, flipped)
    if spec["candidate"] in (*PRESET_CANDIDATES, *DENSE_CANDIDATES):
        preset = spec["candidate"].split("-")[0]
        dense = {"top_classes": int(frame["label"].nunique())} if "-dense" in spec[
            "candidate"] else {}
        result = labelaudit.scan(frame, id="id", preset=None if preset == "default" else preset,
                                 evidence=False, progress=False, **dense)
    else:
        name, options = CANDIDATES[spec["candidate"]]
        member = SCORERS[name](**options)
        result = labelaudit.scan(frame, id="id", scorers=[member], evidence=False,
                                 progress=False)
    seconds = time.perf_counter() - started
    rows = pd.Index(frame["id"]).get_indexer(np.asarray(result.ids))  # each item's row
    score = np.asarray(result.scores[result.rank_by])
    return {"scan_seconds": round(seconds, 1), "ap": round(_ap(flipped[rows], score), 4),
            "accuracy": round(float((result.pred_probs.argmax(1) == result.labels).mean()), 4),
            "members": sorted(result.member_probs)}


def _run_cli(spec: dict[str, Any], frame: Any, flipped: np.ndarray) -> dict[str, Any]:
    """``labelaudit scan`` as a user runs it (its ``main``), scored from its output file."""
    import pandas as pd

    from labelaudit.cli import main as cli

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "issues.parquet"
        preset = ["--preset", "fast"] if spec["candidate"] == "cli-fast" else []
        started = time.perf_counter()
        code = cli(["scan", spec["data"], "--id", "id", "--out", str(out), "--quiet", *preset])
        seconds = time.perf_counter() - started
        if code != 0:
            raise SystemExit(f"labelaudit scan exited {code}")
        table = pd.read_parquet(out, columns=["id", "score_ensemble", "given_prob",
                                              "suggested_prob", "flagged"])
    rows = pd.Index(frame["id"]).get_indexer(table["id"].to_numpy())
    return {"scan_seconds": round(seconds, 1),
            "ap": round(_ap(flipped[rows], table["score_ensemble"].to_numpy()), 4),
            "accuracy": round(float((table["given_prob"] > table["suggested_prob"]).mean()), 4),
            "n_flagged": int(table["flagged"].sum())}


def run_peer(spec: dict[str, Any]) -> dict[str, Any]:
    """scikit-learn ``cross_val_predict`` + cleanlab's low-memory ``find_label_issues``
    (``find_label_issues_batched``: cleanlab 2.9's ``find_label_issues`` has no
    ``low_memory`` flag; the batched function is what it stands for)."""
    import pandas as pd
    from cleanlab.experimental.label_issues_batched import find_label_issues_batched
    from cleanlab.rank import get_self_confidence_for_each_label
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict
    from sklearn.pipeline import make_pipeline

    frame = pd.read_parquet(spec["data"])
    flipped = np.load(spec["truth"])
    started = time.perf_counter()
    classes, labels = np.unique(frame["label"].to_numpy(), return_inverse=True)
    model = make_pipeline(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
                          LogisticRegression(C=10.0, max_iter=1000))
    probs = cross_val_predict(model, frame["text"].tolist(), labels, cv=5,
                              method="predict_proba")
    issues = find_label_issues_batched(labels, probs, batch_size=10_000, n_jobs=1,
                                       verbose=False, return_mask=True)
    scores = get_self_confidence_for_each_label(labels, probs)
    seconds = time.perf_counter() - started
    return {"scan_seconds": round(seconds, 1), "ap": round(_ap(flipped, scores), 4),
            "accuracy": round(float((probs.argmax(1) == labels).mean()), 4),
            "n_flagged": int(np.sum(issues))}


def _one(kind: str, spec: dict[str, Any], *, timeout: float, max_gb: float,
         threads: int | None) -> dict[str, Any]:
    env_command = [sys.executable, "-m", "benchmarks.many_classes", f"--run-{kind}",
                   json.dumps(spec)]
    return measured(env_command, timeout=timeout, max_gb=max_gb, threads=threads)


# --------------------------------------------------------------------------- tables
def _cell(result: dict[str, Any]) -> str:
    if "error" in result:
        return f"| {result['error']} | | |"
    return f"| {result['seconds']:.1f} | {result['peak_gb']:.2f} | {result['ap']:.4f} |"


def write_results(rows: list[dict[str, Any]], results: Path, command: str) -> None:
    """``many_classes.json`` and ``.md``, merged with the rows already there."""
    results.mkdir(parents=True, exist_ok=True)
    path = results / "many_classes.json"
    old = json.loads(path.read_text())["runs"] if path.exists() else []
    keys = {(r["set"], r["candidate"]) for r in rows}
    merged = [r for r in old if (r["set"], r["candidate"]) not in keys] + rows
    commands = (json.loads(path.read_text()).get("commands", []) if path.exists() else [])
    commands = [c for c in commands if c != command] + [command]
    payload = {"commands": commands, "cores": os.cpu_count(), "runs": merged}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n")
    tmp.replace(path)
    lines = ["# The TF-IDF member at many classes (issue 43)", "",
             "Each row one fresh process: `labelaudit.scan(frame, scorers=[member], "
             "evidence=False, progress=False)` (5 folds; `default`, `fast`: the default "
             "scan and `preset='fast'`; `-dense`: the same keeping every class's "
             "probability; `cli-`: `labelaudit scan DATA --id id --out issues.parquet` "
             "as a user runs it, evidence included), or the scikit-learn + cleanlab recipe "
             "(`peer`), with `LABELAUDIT_THREADS` = `--threads` (rows since it was added: "
             "2). Seconds are the whole process "
             "(imports and reading the set included), scan seconds the call alone (the "
             "peer: cross_val_predict and cleanlab), peak GB the summed PSS of the process "
             "tree, AP the average precision of the ranking against the planted 5 % flips.",
             "", "Commands:", ""] + [f"    {c}" for c in commands] + [
             "", f"Cores: {os.cpu_count()}", "",
             "| set | candidate | seconds | scan seconds | peak GB | AP | accuracy |",
             "|---|---|---|---|---|---|---|"]
    for r in merged:
        if "error" in r:
            lines.append(f"| {r['set']} | {r['candidate']} | {r['error']} | | | | |")
        else:
            lines.append(f"| {r['set']} | {r['candidate']} | {r['seconds']:.1f} | "
                         f"{r['scan_seconds']:.1f} | {r['peak_gb']:.2f} | {r['ap']:.4f} | "
                         f"{r['accuracy']:.4f} |")
    md = results / "many_classes.md"
    tmp_md = md.with_suffix(".md.tmp")
    tmp_md.write_text("\n".join(lines) + "\n")
    tmp_md.replace(md)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.many_classes",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=DEFAULT_SETS,
                        help=f"comma-separated: ROWSxCLASSES, noisywikihow, noisywikihow-ROWS "
                             f"(default {DEFAULT_SETS})")
    parser.add_argument("--candidates", default="present,auto,peer",
                        help="comma-separated: " + ", ".join(ALL_CANDIDATES))
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--max-gb", type=float, default=16.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="LABELAUDIT_THREADS of each run (default: the cores; left to "
                        "itself a scan counts the load of the run before it as busy cores)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--run-ours", help=argparse.SUPPRESS)
    parser.add_argument("--run-peer", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_ours or args.run_peer:
        import warnings

        warnings.simplefilter("default")
        run = run_ours if args.run_ours else run_peer
        print(json.dumps(run(json.loads(args.run_ours or args.run_peer))))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so a killed run stops its child
    candidates = [c for c in args.candidates.split(",") if c]
    unknown = sorted(set(candidates) - set(ALL_CANDIDATES))
    if unknown:
        parser.error(f"--candidates: unknown {unknown}")
    command = "python -m benchmarks.many_classes " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]))
    rows: list[dict[str, Any]] = []
    print(f"{'set':<22}{'candidate':<16}{'seconds':>9}{'peak GB':>9}{'AP':>8}{'acc':>8}")
    for name in [s for s in args.sets.split(",") if s]:
        data, truth = _cached(name, args.data, args.seed)
        for candidate in candidates:
            spec = {"data": str(data), "truth": str(truth), "candidate": candidate}
            result = _one("peer" if candidate == "peer" else "ours", spec,
                          timeout=args.timeout, max_gb=args.max_gb, threads=args.threads)
            row = {"set": name, "candidate": candidate, "threads": args.threads, **result}
            rows.append(row)
            if "error" in result:
                print(f"{name:<22}{candidate:<16}  {result['error']}", flush=True)
            else:
                print(f"{name:<22}{candidate:<16}{result['seconds']:>9.1f}"
                      f"{result['peak_gb']:>9.2f}{result['ap']:>8.4f}"
                      f"{result['accuracy']:>8.4f}", flush=True)
            write_results(rows, args.results, command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
