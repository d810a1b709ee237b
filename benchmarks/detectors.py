"""The detectors compared, each run in its own forked process to measure time and memory.

- ``ours``: :func:`labelaudit.scan` with its defaults (members tfidf + embed, 5 folds,
  ``random_state=0``, ranked by the weighted ensemble's loss). Every ranking method the scan
  computes becomes a row (``ours:<method>``); ``ours:default`` is the ranking the scan
  outputs (its ``rank_by``), and ``ours:embed`` the single embed member's loss. Where the
  data has per-item annotator labels, ``ours:crowdlab (annotations)`` is what
  ``scan --annotations`` adds: cleanlab's CROWDLAB on the same probabilities.
- ``cleanlab:same-probs``: ``cleanlab.filter.find_label_issues(labels, pred_probs,
  return_indices_ranked_by="self_confidence")`` on the scan's own ensemble probabilities. It
  returns a flagged list only; the unflagged items tie after it (:func:`rank_from_ids`).
- ``cleanlab:tfidf+lr``: what a cleanlab user writes: scikit-learn ``TfidfVectorizer`` +
  ``LogisticRegression`` with default options, ``cross_val_predict(...,
  method="predict_proba")`` on the same folds as the scan, then the same ``find_label_issues``
  call. Sentence pairs are joined with a space.

Time and memory: each detector runs in a forked child process (imports done before the
clock starts). Wall seconds cover the call only; memory is the child's peak resident set
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) minus its value when the call started, i.e.
the extra RSS high-water the detector needed. The scan's embedding cache is a fresh,
empty folder, so encoding is included.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from benchmarks.datasets import Dataset

__all__ = ["Run", "measure", "run_ours", "run_cleanlab_same_probs", "run_tfidf_pipeline"]

MEMORY_METHOD = ("peak RSS increase of a forked child over its RSS when the call started "
                 "(resource.getrusage ru_maxrss delta)")


@dataclass
class Run:
    """What one detector produced on one dataset."""

    scores: dict[str, np.ndarray]  # row name -> label-quality scores (lower = more suspect)
    seconds: float
    memory_mb: float
    n_flagged: dict[str, int | None] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def measure(setup: Callable[[], None], call: Callable[[], tuple[dict, dict, dict]]) -> Run:
    """Run ``call`` in a forked child after ``setup``; time it and its peak memory."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child() -> None:
        try:
            setup()
            start_mb = _maxrss_mb()
            started = time.perf_counter()
            scores, flagged, extra = call()
            seconds = time.perf_counter() - started
            send.send(("ok", Run(scores, seconds, _maxrss_mb() - start_mb, flagged, extra)))
        except BaseException:  # report any failure to the parent
            send.send(("error", traceback.format_exc()))
        finally:
            send.close()

    process = ctx.Process(target=child)  # not a daemon: cleanlab starts its own pool
    process.start()
    send.close()
    message = None
    while message is None:
        ready = wait([receive, process.sentinel])
        if receive in ready:
            try:
                message = receive.recv()
            except EOFError:
                break
        elif not receive.poll():
            break
    process.join()
    if message is None:
        raise RuntimeError(f"the detector's process died (exit code {process.exitcode})")
    status, payload = message
    if status != "ok":
        raise RuntimeError(f"the detector failed:\n{payload}")
    return payload


def _pair_texts(data: Dataset) -> list[str]:
    frame = data.frame
    if "text_pair" in frame.columns:
        return (frame["text"].astype(str) + " " + frame["text_pair"].astype(str)).tolist()
    return frame["text"].astype(str).tolist()


def _encoded(data: Dataset):
    from labelaudit.io import prepare_text_dataset

    return prepare_text_dataset(data.frame, text="text", label="label",
                                text_pair="text_pair" if "text_pair" in data.frame else None,
                                id="id")


def run_ours(data: Dataset, *, n_folds: int = 5, random_state: int = 0) -> Run:
    """labelaudit.scan with its defaults, in a child process."""

    def setup() -> None:
        import sentence_transformers  # noqa: F401

        import labelaudit.models  # noqa: F401
        import labelaudit.scanning  # noqa: F401

    def call() -> tuple[dict, dict, dict]:
        import labelaudit
        from labelaudit.detect import label_quality_scores

        with tempfile.TemporaryDirectory(prefix="labelaudit-bench-cache-") as cache:
            result = labelaudit.scan(
                data.frame, text="text", label="label", id="id",
                text_pair="text_pair" if "text_pair" in data.frame else None,
                n_folds=n_folds, random_state=random_state, cache_dir=cache,
            )
        scores = {"default": result.scores[result.rank_by]}
        scores.update(result.scores)
        if "annotations" in data.frame:
            # what --annotations adds: CROWDLAB on the same probabilities and the original
            # annotators' labels (a detector with more input than the others)
            from labelaudit.detect import annotation_matrix, crowdlab

            votes = annotation_matrix(data.frame["annotations"], result.classes, result.ids)
            scores["crowdlab (annotations)"] = crowdlab(result.labels, result.pred_probs,
                                                        votes).scores
        for member, probs in result.member_probs.items():
            if member != next(iter(result.member_probs)):  # the first member is "loss"
                scores[member] = label_quality_scores(result.labels, probs)
        flagged: dict[str, int | None] = {"default": int(result.flagged.sum())}
        extra = {
            "rank_by": result.rank_by, "weights": result.weights,
            "accuracy": result.accuracy, "n_issues_estimate": result.n_issues_estimate,
            "pred_probs": result.pred_probs, "labels": result.labels,
            "member_accuracy": {m: float((p.argmax(1) == result.labels).mean())
                                for m, p in result.member_probs.items()},
        }
        return scores, flagged, extra

    return measure(setup, call)


def _cleanlab_ranking(labels: np.ndarray, pred_probs: np.ndarray) -> tuple[np.ndarray, int]:
    from cleanlab.filter import find_label_issues

    from labelaudit.evaluation import rank_from_ids

    ranked = find_label_issues(labels, pred_probs, return_indices_ranked_by="self_confidence")
    return rank_from_ids(np.asarray(ranked).tolist(), range(len(labels))), len(ranked)


def run_cleanlab_same_probs(labels: np.ndarray, pred_probs: np.ndarray) -> Run:
    """cleanlab's find_label_issues ranking on given probabilities, in a child process."""

    def setup() -> None:
        import cleanlab.filter  # noqa: F401

    def call() -> tuple[dict, dict, dict]:
        scores, n_flagged = _cleanlab_ranking(labels, pred_probs)
        return {"same-probs": scores}, {"same-probs": n_flagged}, {}

    return measure(setup, call)


def run_tfidf_pipeline(data: Dataset, *, n_folds: int = 5, random_state: int = 0) -> Run:
    """TF-IDF + logistic regression + cleanlab, as a cleanlab user would write it."""
    from labelaudit.models import make_folds

    encoded = _encoded(data)
    labels = encoded.labels
    folds = make_folds(labels, n_folds=n_folds, random_state=random_state,
                       classes=encoded.classes)  # the scan's folds
    texts = _pair_texts(data)

    def setup() -> None:
        import cleanlab.filter  # noqa: F401
        import sklearn.linear_model  # noqa: F401
        import sklearn.model_selection  # noqa: F401

    def call() -> tuple[dict, dict, dict]:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import PredefinedSplit, cross_val_predict
        from sklearn.pipeline import make_pipeline

        pipeline = make_pipeline(TfidfVectorizer(), LogisticRegression(max_iter=1000))
        pred_probs = cross_val_predict(pipeline, texts, labels, cv=PredefinedSplit(folds),
                                       method="predict_proba")
        scores, n_flagged = _cleanlab_ranking(labels, pred_probs)
        accuracy = float((pred_probs.argmax(1) == labels).mean())
        return {"tfidf+lr": scores}, {"tfidf+lr": n_flagged}, {"accuracy": accuracy}

    return measure(setup, call)


def threads_setup(threads: int) -> None:
    """Limit every numeric library to ``threads`` threads (set before they are imported)."""
    for var in ("LABELAUDIT_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
