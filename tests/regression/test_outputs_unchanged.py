"""The safety net of refactors: every command's output files, compared with stored ones.

Each case runs one command (sometimes a few invocations of it) through
``labelaudit.cli.main([...])`` exactly as a user would, with ``-q``, on small seeded inputs
that this module writes itself (nothing is read from ``../shared``), inside the test's
``tmp_path`` with relative paths. Every file the command writes is compared with
``tests/regression/expected/<case>/<file>`` after the few normalisations below, as described
under "How outputs are compared" (on a mismatch the normalised file is kept under
``tmp_path/actual/`` to look at). A case also fails when a command writes a file it did not
write before, or stops writing one, and when what its commands print on stdout changes (kept
in ``expected/<case>/stdout.txt`` when not empty: only ``evaluate`` prints its table there,
even with ``--out`` and ``-q``).

Cases that need another command's output first (``evaluate`` a scan, ``predict`` with a
trained model...) run that command too and check its files against its own expected files
first, so a change upstream is reported as such and not as a change of the downstream command.

What is normalised, and why (nothing else is)
---------------------------------------------
- wall-clock times: the JSON fields ``seconds`` (``train`` model folder, ``select``) and
  ``train_seconds`` (``train --metrics``); in the HTML of ``scan --report`` the "Scan time"
  note and the "seconds" column of the scorer table (:func:`wall_clock`,
  :func:`scan_report_times`);
- labelaudit's own version, so that a release does not count as a change: the JSON field
  ``labelaudit_version`` and the "Made by labelaudit X" footer of the HTML reports
  (:func:`own_version`);
- matplotlib's version, written into every PNG as a ``Software`` text chunk: the PNG text and
  time chunks are dropped before storing and comparing (:func:`png_pixels_only`);
- the test's temporary folder, should an absolute path ever appear in an output
  (:func:`tmp_paths`, on every file but the PNGs; the commands are given relative paths, so
  none does today).

How outputs are compared (:func:`difference`)
----------------------------------------------
The last digits of floating point results depend on the CPU (AVX2 or AVX-512 kernels, another
BLAS code path), even with the same library versions, and iterative fits carry that noise on
to where they stop. So numbers are compared within a tolerance, and everything else exactly:

- text files (CSV, JSON, JSON lines, HTML, stdout) token by token: each number token (an
  integer, a decimal, an exponent form) is compared with the one at the same place; integers
  (counts, ranks, ids, seeds, sizes) exactly, floats within the tolerance, a float never
  against an integer; every other character is compared exactly. So the column names and
  their order, the row count, the ORDER OF THE ROWS (the ranking), ids, labels, flags, keys
  and markup are compared byte for byte, and a swapped pair of rows, a changed label or an
  extra column fails (:func:`text_difference`);
- ``.pt`` files loaded on CPU: the same types, keys in the same order, shapes and dtypes;
  floating tensors and floats within the tolerance, everything else equal
  (:func:`value_difference`);
- PNG plots decoded: the same size and channels, every channel of every pixel within
  :data:`PIXEL_ATOL` (:func:`png_difference`); how zlib compressed the pixels does not count;
- any other file byte for byte.

The tolerance, stated once (:data:`RTOL`, :data:`ATOL`, :data:`ROUNDED_DIGITS`): two floats
match when ``|a - b| <= max(ATOL, RTOL * max(|a|, |b|))``, RTOL = 1e-3 and ATOL = 5e-4.
Measured between two x86 CPUs with the same environment: the scores of the float32 TF-IDF
members' fits (``scan``'s default members, ``--scorers tfidf,tfidf-char``) moved by up to
1.3e-4 absolute (1e-3 relative on a probability near 0.08); float32 transformer outputs
(``scan-tokens``, ``train``, ``predict``) by ~1e-6 relative (5e-8 absolute near zero); float64
numpy (``agreement``) not at all. The tolerance leaves a margin of 5 over the worst of these
and still fails a change of a formula, a default or a rounding (``0.5`` against ``0.51``).
A number printed rounded to a few digits (a table's 4 decimals, a report's 3 significant
digits) may round the other way: one unit of its last printed digit is also allowed when the
finer of the two has at least ROUNDED_DIGITS significant digits. The ranking, the labels and
every count stay exact, which is where most real changes show. ``test_output_comparison.py``
checks that every stored file with its floats moved in their last digits still matches, and
that a changed rounding, rank, label or column does not.

Determinism on one machine: torch and BLAS run on one thread here
(``LABELAUDIT_THREADS=1`` and threadpoolctl), because the number of threads labelaudit picks
by default depends on the machine's load. The expected files are tied to the library versions
of the project's environment (numpy, scikit-learn, torch, transformers, matplotlib...); after
an upgrade of those they may differ beyond the tolerance and must be regenerated on purpose.
Every output written today is deterministic once the fields above are normalised; none is
skipped.

Not covered (too slow for this test, or not an output file): ``--engine ray``, the ``finetune``
and ``embed`` scorers of ``scan`` (``train --method filter`` runs ``embed``), ``review``,
``tapt``, ``train-bench``. The encoders are a tiny random BERT built here, not MiniLM.

Regenerating the expected files
-------------------------------
``LABELAUDIT_REGEN_EXPECTED=1 pytest tests/regression`` writes the expected files instead of
comparing them, and then FAILS every case with a message saying so, so that a regeneration
run can never pass as a check. Regenerate only for an intended change of the outputs (a new
column, a fixed bug), review the diff of ``tests/regression/expected/`` and say why in the
commit. Never regenerate to make a refactor pass: a refactor must not change these files.
Regenerate the whole module at once, with one worker (cases run in order and read nothing
from each other's expected files).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import shutil
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from labelaudit import __version__
from labelaudit.cli import main

EXPECTED = Path(__file__).resolve().parent / "expected"
REGEN_VARIABLE = "LABELAUDIT_REGEN_EXPECTED"


# --- normalisation ---------------------------------------------------------------------------

Normaliser = Callable[[bytes, Path], bytes]

_SECONDS = re.compile(rb'("(?:seconds|train_seconds)": )-?[0-9][0-9.eE+-]*')


def wall_clock(data: bytes, root: Path) -> bytes:
    """JSON fields ``seconds`` and ``train_seconds``: wall-clock time, different every run."""
    return _SECONDS.sub(rb'\1"<seconds>"', data)


_SCAN_TIME = re.compile(rb'<p class="note">Scan time: [0-9.,]+ s\.</p>')
_MEMBER_TABLE = re.compile(rb'<th class="num">seconds</th></tr></thead><tbody>.*?</tbody>', re.S)
_LAST_CELL = re.compile(rb'<td class="num">[^<]*</td></tr>')


def scan_report_times(data: bytes, root: Path) -> bytes:
    """HTML of ``scan --report``: the "Scan time: X s." note and the "seconds" column of the
    scorer table (the last cell of each row) are wall-clock times."""
    data = _SCAN_TIME.sub(b'<p class="note">Scan time: &lt;seconds&gt;</p>', data)
    return _MEMBER_TABLE.sub(
        lambda m: _LAST_CELL.sub(b'<td class="num">&lt;seconds&gt;</td></tr>', m.group(0)), data)


def own_version(data: bytes, root: Path) -> bytes:
    """labelaudit's version: the JSON field ``labelaudit_version`` and the footer "Made by
    labelaudit X." of the HTML reports."""
    version = re.escape(__version__.encode())
    data = re.sub(rb'("labelaudit_version": )"' + version + b'"', rb'\1"<version>"', data)
    return re.sub(rb"Made by labelaudit " + version + rb"\.",
                  b"Made by labelaudit &lt;version&gt;.", data)


def tmp_paths(data: bytes, root: Path) -> bytes:
    """The test's temporary folder (absolute, different every run), as written and as JSON
    escapes it, becomes ``<tmp>``."""
    for path in sorted({str(root), str(root.resolve())}, key=len, reverse=True):
        for form in (path, json.dumps(path)[1:-1]):
            data = data.replace(form.encode(), b"<tmp>")
    return data


def png_pixels_only(data: bytes, root: Path) -> bytes:
    """A PNG without its text and time chunks (tEXt, iTXt, zTXt, tIME): matplotlib writes its
    own version there ("Software"). The image chunks are kept as they are."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    out, i = [data[:8]], 8
    while i < len(data):
        (length,) = struct.unpack(">I", data[i:i + 4])
        kind = data[i + 4:i + 8]
        if kind not in (b"tEXt", b"iTXt", b"zTXt", b"tIME"):
            out.append(data[i:i + 12 + length])
        i += 12 + length
    return b"".join(out)


# --- cases -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Out:
    """One output file of a case: its path relative to the working folder and the normalisers
    applied before comparing (after :func:`tmp_paths`, which applies to all but PNGs)."""

    path: str
    normalise: tuple[Normaliser, ...] = ()


PNG = (png_pixels_only,)
HTML = (own_version,)


@dataclass(frozen=True)
class Case:
    name: str
    run: Callable[[], None]
    outputs: tuple[Out, ...]
    needs: str | None = None  # a case whose commands (and outputs) come first


def cli(*argv: str) -> None:
    """Run one command as a user would, quietly; it must succeed."""
    code = main([*argv, "-q"])
    assert code == 0, f"labelaudit {' '.join(argv)} exited with {code}"


def run_scan() -> None:
    # the default members (word and char TF-IDF, screened on a sample), in memory
    cli("scan", "data.csv", "--out", "issues.csv", "--report-out", "report.html")


def run_scan_stream() -> None:
    # --scorers tfidf with --out on a file streams by itself (the local chunked engine)
    cli("scan", "data.csv", "--scorers", "tfidf", "--chunk-size", "64", "--out", "issues.csv")


def run_scan_datalab() -> None:
    cli("scan", "data.csv", "--scorers", "tfidf,tfidf-char", "--folds", "3", "--seeds", "2",
        "--methods", "loss,margin,confident_learning", "--rank-by", "confident_learning",
        "--top", "15", "--datalab", "--out", "issues.csv")


def run_scan_score() -> None:
    # test-set audit: models fitted on DATA score another file; JSON lines out
    cli("scan", "data.csv", "--score", "test.csv", "--scorers", "tfidf,tfidf-char",
        "--threshold", "0.4", "--no-keep-columns", "--out", "test_issues.jsonl")


def run_scan_tokens() -> None:
    cli("scan-tokens", "tokens.conll", "--model", "bert", "--scorers", "encoder",
        "--folds", "3", "--scheme", "iob2", "--cache-dir", "cache", "--out", "tokens.jsonl")


def run_evaluate_tokens() -> None:
    cli("evaluate-tokens", "tokens.jsonl", "--eval", "tokens.fixed.conll", "--at-k", "5,10",
        "--out", "token_metrics.json")


def run_evaluate() -> None:
    cli("evaluate", "issues.csv", "--eval", "truth.csv", "--at-k", "5,20",
        "--out", "metrics.json", "--plot-out", "pr.png")
    cli("evaluate", "issues.csv", "--eval", "truth.csv", "--true-label", "true_label",
        "--scores", "score_loss_tfidf,score_margin", "--error-rate", "0.1",
        "--out", "metrics.csv")


def run_noise() -> None:
    cli("noise", "data.csv", "--method", "class-dependent", "--rate", "0.1", "--seed", "3",
        "--out", "noisy.csv", "--summary-out", "noisy.summary.json")
    cli("noise", "data.csv", "--id", "id", "--annotations-file", "votes.csv",
        "--recipe", "dissenting-worker:0.8,dissenting-label:0.2", "--rate", "0.08",
        "--out", "crowd_noisy.jsonl", "--summary-out", "crowd_noisy.summary.json")
    cli("noise", "realism", "noisy.csv", "--scorers", "tfidf", "--folds", "3",
        "--out", "realism.csv", "--plot-out", "realism.png")


def run_agreement() -> None:
    cli("agreement", "votes.csv", "--item", "item_id", "--annotator", "annotator_id",
        "--gold", "expert", "--bootstrap", "200", "--out", "agreement.json",
        "--gold-out", "gold.csv", "--items-out", "items.csv", "--annotators-out",
        "annotators.csv")
    cli("agreement", "measure", "votes.csv", "--method", "dawid-skene", "--min-share", "0.75",
        "--bootstrap", "0", "--out", "agreement_ds.csv", "--items-out", "items_ds.jsonl")
    cli("agreement", "compare", "--n", "900", "--noise-rate", "0.139", "--delta", "35",
        "--out", "compare.json")
    cli("agreement", "noise", "--n", "1000", "--disagreements", "100", "--p-chance", "0.5",
        "--out", "noise_bound.json")
    cli("agreement", "tolerate", "--n", "1000", "--p-chance", "0.5", "--gamma", "0.05",
        "--out", "tolerate.csv")


def run_train() -> None:
    # the head backbone over the frozen tiny sentence encoder, and two other methods' losses
    cli("train", "data.jsonl", "--model", "st", "--epochs", "10", "--hidden", "16",
        "--eval", "test.jsonl", "--cache-dir", "cache", "--out", "model",
        "--metrics-out", "metrics.json")
    cli("train", "data.jsonl", "--model", "st", "--method", "co-teaching", "--noise-rate",
        "0.1", "--epochs", "5", "--hidden", "16", "--eval", "test.jsonl", "--cache-dir", "cache",
        "--out", "co_teaching", "--metrics-out", "co_teaching.json")
    # filter: a cross-fitted scan (tfidf and embed) first, then the same loop on a linear head
    cli("train", "data.jsonl", "--model", "st", "--method", "filter", "--filter", "relabel",
        "--epochs", "5", "--hidden", "0", "--eval", "test.jsonl", "--cache-dir", "cache",
        "--out", "filter", "--metrics-out", "filter.json")


def run_predict() -> None:
    cli("predict", "model", "test.jsonl", "--top-k", "2", "--out", "predictions.csv")


def run_consistency() -> None:
    cli("consistency", "train.csv", "--suspect", "suspect.csv", "--corrected", "fixed.csv",
        "--text", "text", "--size", "20", "--repeats", "3", "--points", "4",
        "--out", "consistency.json", "--plot-out", "curves.png")


def run_impact() -> None:
    cli("impact", "corrected.csv", "--train", "train.csv", "--text", "text",
        "--scorers", "tfidf", "--out", "impact.json", "--plot-out", "impact.png")
    cli("impact", "tokens.fixed.conll", "--original", "tokens.conll",
        "--predictions", "given=tokens.conll", "--predictions", "fixed=tokens.fixed.conll",
        "--out", "impact_tokens.csv")


def run_select() -> None:
    cli("select", "select_train.jsonl", "--val", "select_val.jsonl", "--eval",
        "select_test.jsonl", "--noise", "uniform:0.2", "--sweep", "3", "--seeds", "2",
        "--out", "selection.json")


def run_report() -> None:
    cli("report", "issues.csv", "--eval", "truth.csv", "--annotations-file", "votes.csv",
        "--item", "item_id", "--annotator", "annotator_id", "--top", "40",
        "--title", "Regression", "--out", "report.html")


def run_report_tokens() -> None:
    cli("report", "tokens.jsonl", "--eval", "tokens.fixed.conll", "--top", "10",
        "--out", "tokens_report.html")


def model_folder(name: str) -> tuple[Out, ...]:
    """The files of a model folder written by ``train --out``."""
    return (Out(f"{name}/head.pt"), Out(f"{name}/labelaudit-model.json", (wall_clock, own_version)),
            Out(f"{name}/labelaudit-output.json", (own_version,)))


CASES = [
    Case("scan", run_scan, (Out("issues.csv"),
                            Out("report.html", (scan_report_times, *HTML)))),
    Case("scan-stream", run_scan_stream, (Out("issues.csv"),)),
    Case("scan-datalab", run_scan_datalab, (Out("issues.csv"),)),
    Case("scan-score", run_scan_score, (Out("test_issues.jsonl"),)),
    Case("scan-tokens", run_scan_tokens, (Out("tokens.jsonl"),)),
    Case("evaluate-tokens", run_evaluate_tokens, (Out("token_metrics.json"),),
         needs="scan-tokens"),
    Case("evaluate", run_evaluate, (Out("metrics.json"), Out("pr.png", PNG),
                                    Out("metrics.csv")), needs="scan-stream"),
    Case("noise", run_noise, (Out("noisy.csv"), Out("noisy.summary.json"),
                              Out("crowd_noisy.jsonl"), Out("crowd_noisy.summary.json"),
                              Out("realism.csv"), Out("realism.png", PNG))),
    Case("agreement", run_agreement, (Out("agreement.json"), Out("gold.csv"),
                                      Out("gold.noise.json"), Out("items.csv"),
                                      Out("annotators.csv"), Out("agreement_ds.csv"),
                                      Out("items_ds.jsonl"), Out("compare.json"),
                                      Out("noise_bound.json"), Out("tolerate.csv"))),
    Case("train", run_train, (*model_folder("model"), Out("metrics.json", (wall_clock,)),
                              *model_folder("co_teaching"), Out("co_teaching.json", (wall_clock,)),
                              *model_folder("filter"), Out("filter.json", (wall_clock,)))),
    Case("predict", run_predict, (Out("predictions.csv"),), needs="train"),
    Case("consistency", run_consistency, (Out("consistency.json"),
                                          Out("curves.png", PNG))),
    Case("impact", run_impact, (Out("impact.json"), Out("impact.png", PNG),
                                Out("impact_tokens.csv"))),
    Case("select", run_select, (Out("selection.json", (wall_clock,)),)),
    Case("report", run_report, (Out("report.html", HTML),), needs="scan-stream"),
    Case("report-tokens", run_report_tokens, (Out("tokens_report.html", HTML),),
         needs="scan-tokens"),
]
BY_NAME = {case.name: case for case in CASES}


# --- inputs ----------------------------------------------------------------------------------

CLASSES = ("food", "sport", "tech")
TOPIC_WORDS = {
    "sport": ["match", "goal", "team", "coach", "league", "score", "cup", "player"],
    "food": ["pasta", "sauce", "cook", "recipe", "bake", "spicy", "soup", "chef"],
    "tech": ["chip", "software", "laptop", "code", "robot", "network", "cloud", "app"],
}
SUFFIXES = ["", "", "s", "ing", "ed"]  # word forms that character n-grams see through


def topic_frame(n_per_class: int, *, seed: int, n_errors: int = 0) -> pd.DataFrame:
    """Short texts of three topic words (in several forms) and a distractor word from any
    topic; ``n_errors`` given labels moved to another class. Columns: id, text, label,
    true_label, is_error."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in CLASSES:
        for _ in range(n_per_class):
            words = [str(w) + str(rng.choice(SUFFIXES))
                     for w in rng.choice(TOPIC_WORDS[c], size=3, replace=False)]
            words.append(str(rng.choice(TOPIC_WORDS[str(rng.choice(CLASSES))])))
            order = rng.permutation(len(words))
            rows.append((" ".join(words[i] for i in order) + f" {rng.integers(100)}", c))
    rows = [rows[i] for i in rng.permutation(len(rows))]
    frame = pd.DataFrame(rows, columns=["text", "true_label"])
    frame.insert(0, "id", [f"s{seed}-{i}" for i in range(len(frame))])
    labels = frame["true_label"].to_numpy(copy=True)
    for i in rng.choice(len(frame), size=n_errors, replace=False):
        others = [c for c in CLASSES if c != labels[i]]
        labels[i] = others[int(rng.integers(len(others)))]
    frame["label"] = labels
    frame["is_error"] = frame["label"] != frame["true_label"]
    return frame[["id", "text", "label", "true_label", "is_error"]]


def annotations(frame: pd.DataFrame, *, seed: int) -> pd.DataFrame:
    """Long annotations of the items of ``frame`` by five annotators of different accuracy,
    the last three skipping some items; ``expert`` holds the true label of every third item."""
    rng = np.random.default_rng(seed)
    accuracy = {"a1": 0.95, "a2": 0.7, "a3": 0.85, "a4": 0.65, "a5": 0.5}
    rows = []
    for k, (item, truth) in enumerate(zip(frame["id"], frame["true_label"], strict=True)):
        for annotator, p in accuracy.items():
            if annotator not in ("a1", "a2") and rng.random() < 0.4:
                continue
            label = truth if rng.random() < p else str(rng.choice(CLASSES))
            rows.append((item, annotator, label, truth if k % 3 == 0 else None))
    return pd.DataFrame(rows, columns=["item_id", "annotator_id", "label", "expert"])


PEOPLE = ["John", "Mary", "Peter", "Anna", "Paul", "Laura"]
SURNAMES = ["Smith", "Jones", "Brown", "Miller", "Davis", "Wilson"]
CITIES = ["Paris", "London", "Berlin", "Madrid", "Rome", "Vienna"]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"]
TEMPLATES = [
    ["P", "visited", "C", "on", "monday", "."],
    ["K", "opened", "an", "office", "in", "C", "."],
    ["P", "joined", "K", "last", "year", "."],
    ["the", "mayor", "of", "C", "met", "P", "."],
    ["shares", "of", "K", "rose", "sharply", "."],
]
SLOTS = {"P": (PEOPLE, "PER"), "C": (CITIES, "LOC"), "K": (COMPANIES, "ORG")}


def ner_corpus(n_docs: int, per_doc: int, *, seed: int):
    """Sentences from templates: (tokens, clean IOB2 tags, noisy tags, document of each)."""
    rng = np.random.default_rng(seed)
    tokens, tags, docs = [], [], []
    for d in range(n_docs):
        for _ in range(per_doc):
            sent, sent_tags = [], []
            for word in TEMPLATES[int(rng.integers(len(TEMPLATES)))]:
                if word == "P":
                    sent += [str(rng.choice(PEOPLE)), str(rng.choice(SURNAMES))]
                    sent_tags += ["B-PER", "I-PER"]
                elif word in SLOTS:
                    names, kind = SLOTS[word]
                    sent.append(str(rng.choice(names)))
                    sent_tags.append(f"B-{kind}")
                else:
                    sent.append(word)
                    sent_tags.append("O")
            tokens.append(sent)
            tags.append(sent_tags)
            docs.append(d)
    noisy = [list(t) for t in tags]
    # one error of each kind, in sentences 1, 3, 5, 7 and 9 (or the next that fits)
    plants = [("B-LOC", "B-ORG"),   # wrong type
              ("I-PER", "O"),       # wrong boundary
              ("B-LOC", "O"),       # missing entity
              ("B-PER", "I-PER"),   # invalid sequence in IOB2
              ("B-ORG", "O")]       # missing entity
    start = 1
    for old, new in plants:
        i = next(i for i in range(start, len(noisy)) if old in noisy[i])
        noisy[i][noisy[i].index(old)] = new
        start = i + 2
    return tokens, tags, noisy, docs


def conll(tokens, tags, docs) -> str:
    lines, previous = [], None
    for sent, sent_tags, doc in zip(tokens, tags, docs, strict=True):
        if doc != previous:
            lines += ["-DOCSTART-\tO", ""]
            previous = doc
        lines += [f"{t}\t{g}" for t, g in zip(sent, sent_tags, strict=True)]
        lines.append("")
    return "\n".join(lines) + "\n"


def write_inputs(folder: Path) -> None:
    """Every input of every case, small and seeded."""
    data = topic_frame(50, seed=0, n_errors=12)  # 150 items, 12 wrong labels
    data[["id", "text", "label"]].to_csv(folder / "data.csv", index=False)
    data[["id", "text", "label"]].to_json(folder / "data.jsonl", orient="records", lines=True)
    data[["id", "is_error", "true_label"]].to_csv(folder / "truth.csv", index=False)
    annotations(data, seed=1).to_csv(folder / "votes.csv", index=False)
    test = topic_frame(10, seed=1)[["id", "text", "label"]]
    test.to_csv(folder / "test.csv", index=False)
    test.to_json(folder / "test.jsonl", orient="records", lines=True)
    # impact: the scan's items corrected, the errors and every tenth item flagged
    flagged = data["is_error"] | (np.arange(len(data)) % 10 == 0)
    data.assign(corrected=data["true_label"], flagged=flagged)[
        ["id", "text", "label", "corrected", "flagged"]].to_csv(folder / "corrected.csv",
                                                              index=False)
    topic_frame(30, seed=2)[["id", "text", "label"]].to_csv(folder / "train.csv", index=False)
    suspect = topic_frame(10, seed=3, n_errors=6)
    suspect[["id", "text", "label"]].to_csv(folder / "suspect.csv", index=False)
    suspect.assign(label=suspect["true_label"])[["id", "text", "label"]].to_csv(
        folder / "fixed.csv", index=False)
    for name, n, seed in (("train", 20, 4), ("val", 10, 5), ("test", 10, 6)):
        topic_frame(n, seed=seed)[["text", "label"]].to_json(
            folder / f"select_{name}.jsonl", orient="records", lines=True)
    tokens, clean, noisy, docs = ner_corpus(10, 4, seed=0)
    (folder / "tokens.conll").write_text(conll(tokens, noisy, docs), encoding="utf-8")
    (folder / "tokens.fixed.conll").write_text(conll(tokens, clean, docs), encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> Path:
    """A randomly initialised 1-layer BERT (``bert``) whose word-level vocabulary holds every
    input word, and the same model as a mean-pooling sentence encoder (``st``)."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("regression-models")
    words = {w for ws in TOPIC_WORDS.values() for w in ws}
    words |= {w.lower() for t in TEMPLATES for w in t if len(w) > 1}
    words |= {w.lower() for w in PEOPLE + SURNAMES + CITIES + COMPANIES}
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "##s", "##ing", "##ed"]
    vocab += sorted(words) + [str(i) for i in range(100)]
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=37,
                        max_position_embeddings=64)
    BertModel(config).save_pretrained(folder / "bert")
    tokenizer.save_pretrained(folder / "bert")
    transformer = models.Transformer(str(folder / "bert"), max_seq_length=32)
    dim = (getattr(transformer, "get_embedding_dimension", None)
           or transformer.get_word_embedding_dimension)
    pooling = models.Pooling(dim(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder / "st"))
    return folder


# --- comparison ------------------------------------------------------------------------------

def normalised(out: Out, data: bytes, root: Path) -> bytes:
    if not out.path.endswith(".png"):
        data = tmp_paths(data, root)
    for step in out.normalise:
        data = step(data, root)
    return data


# The tolerance of every number compared; why these values: "How outputs are compared" in the
# module docstring. Between two CPUs the float32 TF-IDF fits moved scores by up to 1.3e-4
# (1e-3 relative near 0.08): ATOL and RTOL leave a margin of 5 over that.
RTOL = 1e-3
ATOL = 5e-4
# A number printed rounded (a table's 4 decimals, a report's 3 significant digits) may round
# the other way on another CPU: one unit of its last printed digit is allowed too, when it has
# at least this many significant digits (so that 0.5 against 0.6 still fails).
ROUNDED_DIGITS = 3
# A channel of a PNG pixel, in [0, 1]. The plots show ranks, counts and accuracies (exact) or
# loss distributions that move by ~1e-6 relative between CPUs: a line moves by far less than
# a hundredth of a pixel, its antialiased pixels by less than 0.01; a moved line, a changed
# text or colour changes pixels by more than this.
PIXEL_ATOL = 0.1

_NUMBER = re.compile(r"((?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?(?!\w|\.\d))")


def _digits(token: str) -> tuple[int, float]:
    """A float token's significant digits and the value of one unit in its last digit."""
    mantissa, _, exponent = token.lstrip("-").lower().partition("e")
    whole, _, decimals = mantissa.partition(".")
    significant = len((whole + decimals).lstrip("0")) or 1
    return significant, 10.0 ** (int(exponent or 0) - len(decimals))


def close(expected: float, actual: float) -> bool:
    """Whether two floats are equal within :data:`RTOL` and :data:`ATOL` (symmetric)."""
    if expected == actual or (math.isnan(expected) and math.isnan(actual)):
        return True
    return abs(expected - actual) <= max(ATOL, RTOL * max(abs(expected), abs(actual)))


def tokens_match(expected: str, actual: str) -> bool:
    """Two number tokens of a text: integers exactly (counts, ranks, ids, seeds), floats
    within the tolerance, a float never against an integer."""
    is_float = [any(c in t for c in ".eE") for t in (expected, actual)]
    if not all(is_float):
        return expected == actual
    if close(float(expected), float(actual)):
        return True
    digits, unit = max(_digits(expected), _digits(actual))  # the finer of the two
    return (digits >= ROUNDED_DIGITS
            and abs(float(expected) - float(actual)) <= unit * (1 + 1e-9))


def text_difference(name: str, expected: str, actual: str) -> str | None:
    """Where two texts differ beyond the tolerance: every number token within it (see
    :func:`tokens_match`), every other character the same, in the same order."""
    old, new = _NUMBER.split(expected), _NUMBER.split(actual)
    at_old = at_new = 0
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b and (i % 2 == 0 or not tokens_match(a, b)):
            if i % 2 == 0:  # text: point at its first different character
                same = len(os.path.commonprefix([a, b]))
                at_old, at_new, what = at_old + same, at_new + same, "text differs"
            else:
                what = f"number {a} became {b}"
            break
        at_old, at_new = at_old + len(a), at_new + len(b)
    else:
        if len(old) == len(new):
            return None
        what = "one text ends before the other"
    line = expected.count("\n", 0, at_old)
    return (f"{name}: line {line + 1}: {what}\n"
            f"  expected: {_line_at(expected, at_old)}\n"
            f"  actual:   {_line_at(actual, at_new)}")


def _line_at(text: str, at: int, width: int = 150) -> str:
    """The line of ``text`` holding position ``at``, cut to ``width`` characters either side."""
    if at >= len(text):
        return "<end of file>"
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    end = len(text) if end < 0 else end
    left, right = max(start, at - width), min(end, at + width)
    return (("..." if left > start else "") + repr(text[left:right])
            + ("..." if right < end else ""))


def value_difference(where: str, expected, actual) -> str | None:
    """Two loaded objects (a ``.pt`` file's): the same types, keys, lengths, shapes and
    dtypes; floats and floating tensors within the tolerance, everything else equal."""
    import torch

    if type(expected) is not type(actual):
        return f"{where}: expected a {type(expected).__name__}, got a {type(actual).__name__}"
    if isinstance(expected, torch.Tensor):
        if (expected.dtype, expected.shape) != (actual.dtype, actual.shape):
            return (f"{where}: expected a {expected.dtype} tensor of shape "
                    f"{tuple(expected.shape)}, got {actual.dtype} {tuple(actual.shape)}")
        old, new = expected.detach().cpu(), actual.detach().cpu()
        if not old.is_floating_point():
            return None if torch.equal(old, new) else f"{where}: values differ"
        a, b = old.double().numpy(), new.double().numpy()
        ok = (a == b) | (np.isnan(a) & np.isnan(b)) | (
            np.abs(a - b) <= np.maximum(ATOL, RTOL * np.maximum(np.abs(a), np.abs(b))))
        if ok.all():
            return None
        first = tuple(int(i) for i in np.argwhere(~ok)[0])
        return (f"{where}: {int((~ok).sum())} of {ok.size} values beyond the tolerance, "
                f"first at {first}: expected {a[first]!r}, got {b[first]!r}")
    if isinstance(expected, dict):
        if list(expected) != list(actual):
            return f"{where}: expected the keys {list(expected)}, got {list(actual)}"
        pairs = [(f"{where}[{k!r}]", expected[k], actual[k]) for k in expected]
    elif isinstance(expected, list | tuple):
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        pairs = [(f"{where}[{i}]", a, b)
                 for i, (a, b) in enumerate(zip(expected, actual, strict=True))]
    elif close(expected, actual) if isinstance(expected, float) else expected == actual:
        return None
    else:
        return f"{where}: expected {expected!r}, got {actual!r}"
    return next((d for d in (value_difference(*pair) for pair in pairs) if d), None)


def png_difference(name: str, expected: bytes, actual: bytes) -> str | None:
    """Two PNGs decoded: the same size and channels, every channel within :data:`PIXEL_ATOL`
    (how the pixels are compressed does not count)."""
    from matplotlib.image import imread

    old, new = (imread(io.BytesIO(data), format="png").astype(np.float64)
                for data in (expected, actual))
    if old.shape != new.shape:
        return f"{name}: expected an image of shape {old.shape}, got {new.shape}"
    gap = np.abs(old - new).reshape(*old.shape[:2], -1).max(axis=-1)
    if gap.max() <= PIXEL_ATOL:
        return None
    row, col = np.argwhere(gap > PIXEL_ATOL)[0]
    return (f"{name}: {int((gap > PIXEL_ATOL).sum())} pixels differ by more than {PIXEL_ATOL} "
            f"(first at row {row}, column {col}, by {gap[row, col]:.3f})")


def difference(name: str, expected: bytes, actual: bytes) -> str | None:
    """How an output differs from its expected file beyond the tolerance, or None: ``.pt``
    files loaded (:func:`value_difference`), PNGs decoded (:func:`png_difference`), text
    token by token (:func:`text_difference`), any other file byte for byte."""
    if expected == actual:
        return None
    if name.endswith(".pt"):
        import torch

        old, new = (torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
                    for data in (expected, actual))
        return value_difference(name, old, new)
    if name.endswith(".png"):
        return png_difference(name, expected, actual)
    try:
        old, new = expected.decode("utf-8"), actual.decode("utf-8")
    except UnicodeDecodeError:
        at = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
                  min(len(expected), len(actual)))
        return (f"{name}: bytes differ from offset {at} (expected {len(expected)} bytes, "
                f"got {len(actual)})")
    return text_difference(name, old, new)


def output_files(folder: Path) -> set[str]:
    """Files under ``folder``, relative, leaving out the embedding caches."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and p.relative_to(folder).parts[0] != "cache"}


def run_case(case: Case, work: Path) -> set[str]:
    """Run a case in ``work`` and return the files its commands wrote."""
    before = output_files(work)
    case.run()
    return output_files(work) - before


def check(case: Case, written: set[str], work: Path, root: Path, *, upstream: bool = False):
    """Compare a case's outputs with the expected ones; returns a list of failure messages."""
    where = f"input made by case {case.name!r}: " if upstream else ""
    problems = []
    declared = {out.path for out in case.outputs}
    if written != declared:
        problems.append(f"{where}the commands wrote {sorted(written)}; expected exactly "
                        f"{sorted(declared)} (new files: {sorted(written - declared)}, "
                        f"missing: {sorted(declared - written)})")
    for out in case.outputs:
        key = f"{case.name}/{out.path}"
        if out.path not in written:
            continue
        actual = normalised(out, (work / out.path).read_bytes(), root)
        path = EXPECTED / case.name / out.path
        if not path.exists():
            problems.append(f"{where}{key}: no expected file {path}")
            continue
        found = difference(key, path.read_bytes(), actual)
        if found:
            kept = root / "actual" / case.name / out.path
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_bytes(actual)
            problems.append(f"{where}{found}\n  (normalised file kept at {kept})")
    return problems


def regenerate(case: Case, written: set[str], work: Path, root: Path) -> None:
    declared = {out.path for out in case.outputs}
    assert written == declared, (f"cannot regenerate {case.name}: its commands wrote "
                                 f"{sorted(written)}, the case declares {sorted(declared)}")
    folder = EXPECTED / case.name
    if folder.exists():
        shutil.rmtree(folder)
    for out in case.outputs:
        actual = normalised(out, (work / out.path).read_bytes(), root)
        (folder / out.path).parent.mkdir(parents=True, exist_ok=True)
        (folder / out.path).write_bytes(actual)


@pytest.fixture
def work(tmp_path, tiny_models, monkeypatch):
    """A working folder with every input, as the current directory; one thread for torch and
    BLAS; the record of written outputs and the default embedding cache in ``tmp_path``."""
    from threadpoolctl import threadpool_limits

    folder = tmp_path / "work"
    folder.mkdir()
    write_inputs(folder)
    for name in ("bert", "st"):
        shutil.copytree(tiny_models / name, folder / name)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("LABELAUDIT_THREADS", "1")
    monkeypatch.setenv("LABELAUDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("LABELAUDIT_CACHE", str(tmp_path / "embedding-cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    with threadpool_limits(limits=1):
        yield folder


STDOUT = "stdout.txt"  # what the case's commands print on stdout, stored when not empty


def check_stdout(case: Case, printed: str) -> list[str]:
    path = EXPECTED / case.name / STDOUT
    expected = path.read_bytes() if path.exists() else b""
    found = difference(f"{case.name}/{STDOUT} (stdout of its commands)", expected,
                       printed.encode())
    return [found] if found else []


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_outputs_unchanged(case: Case, work: Path, tmp_path: Path, capsys):
    regen = os.environ.get(REGEN_VARIABLE) == "1"
    problems = []
    if case.needs:
        upstream = BY_NAME[case.needs]
        written = run_case(upstream, work)
        if not regen:
            problems += check(upstream, written, work, tmp_path, upstream=True)
    capsys.readouterr()
    written = run_case(case, work)
    printed = capsys.readouterr().out
    if regen:
        regenerate(case, written, work, tmp_path)
        if printed:
            (EXPECTED / case.name).mkdir(parents=True, exist_ok=True)
            (EXPECTED / case.name / STDOUT).write_text(printed)
        pytest.fail(f"{REGEN_VARIABLE}=1: regenerated the expected files of {case.name!r} "
                    "instead of checking them; review the diff of tests/regression/expected/ "
                    f"and rerun without {REGEN_VARIABLE} to check", pytrace=False)
    problems += check(case, written, work, tmp_path)
    problems += check_stdout(case, printed)
    if problems:
        pytest.fail(f"outputs of case {case.name!r} changed:\n" + "\n".join(problems)
                    + "\n(a refactor must not change them; if the change is intended, "
                    f"regenerate with {REGEN_VARIABLE}=1, see this module's docstring)",
                    pytrace=False)
