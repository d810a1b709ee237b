"""Confident learning through cleanlab: flags, a ranking and the estimated error count."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labelaudit.detect._cleanlab import import_cleanlab
from labelaudit.detect._scores import check_pred_probs, label_quality_scores

__all__ = ["ConfidentLearning", "confident_learning"]


@dataclass(frozen=True)
class ConfidentLearning:
    """cleanlab's verdict on a dataset.

    Attributes
    ----------
    is_issue : ndarray of bool, shape (n_samples,)
        cleanlab's ``find_label_issues`` flags.
    scores : ndarray of shape (n_samples,)
        A label-quality score (lower = more suspect) that ranks flagged items first, in
        cleanlab's order, then the rest by self-confidence.
    n_issues : int
        cleanlab's estimate of the number of label errors (``num_label_issues``).
    """

    is_issue: np.ndarray
    scores: np.ndarray
    n_issues: int


def confident_learning(labels: np.ndarray, pred_probs: np.ndarray, *,
                       ranked_by: str = "self_confidence",
                       n_jobs: int | None = None) -> ConfidentLearning:
    """Run cleanlab's ``find_label_issues`` and ``num_label_issues``.

    ``n_jobs`` goes to ``find_label_issues`` (None: cleanlab's process pool, or one
    process when Ray runs in this process: the pool's ``fork`` can copy a lock one of
    Ray's threads holds, and the child then waits forever; one process too where new
    processes are not forked, as on macOS or inside a spawned worker: cleanlab's pool
    reads module globals only a forked child has, and fails with a NameError).

    References
    ----------
    Northcutt, Jiang & Chuang (2021), Confident Learning: Estimating Uncertainty in
    Dataset Labels. Implementation: ``cleanlab.filter.find_label_issues``.

    Examples
    --------
    >>> probs = np.array([[0.9, 0.1]] * 5 + [[0.1, 0.9]] * 5)
    >>> labels = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    >>> confident_learning(labels, probs).is_issue.nonzero()[0].tolist()
    [4]
    """
    num_label_issues = import_cleanlab("cleanlab.count").num_label_issues
    find_label_issues = import_cleanlab("cleanlab.filter").find_label_issues

    labels, pred_probs = check_pred_probs(labels, pred_probs)
    if n_jobs is None and (_ray_running() or not _forks()):
        n_jobs = 1
    is_issue = np.asarray(find_label_issues(labels, pred_probs, n_jobs=n_jobs),
                          dtype=bool)
    ranked = label_quality_scores(labels, pred_probs, method=ranked_by)  # type: ignore[arg-type]
    # Flagged items sit below every unflagged one, keeping cleanlab's order among them.
    span = ranked.max(initial=0) - ranked.min(initial=0) + 1.0
    scores = np.where(is_issue, ranked - span, ranked)
    return ConfidentLearning(is_issue, scores, int(num_label_issues(labels, pred_probs)))


def _forks() -> bool:
    """Whether this process starts new processes by forking (cleanlab's pool needs it)."""
    import multiprocessing

    return multiprocessing.get_start_method(allow_none=False) == "fork"


def _ray_running() -> bool:
    """Whether this process is connected to Ray (without importing it)."""
    import sys

    ray = sys.modules.get("ray")
    return bool(ray is not None and getattr(ray, "is_initialized", lambda: False)())
