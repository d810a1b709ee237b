"""Confident learning: cleanlab's flags, ranking and error count (:func:`confident_learning`),
and the count from a scan output's two top probabilities alone (:func:`count_label_issues`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.detect._cleanlab import import_cleanlab
from labelaudit.detect._scores import Probs, check_pred_probs, label_quality_scores
from labelaudit.detect._topk import TopKProbs


@dataclass(frozen=True)
class ConfidentLearning:
    """cleanlab's verdict on a dataset.

    Attributes
    ----------
    is_issue : ndarray of bool, shape (n_samples,)
        cleanlab's ``find_label_issues`` flags.
    scores : ndarray of shape (n_samples,)
        Lower = more suspect: flagged items first, then the rest by ``ranked_by``.
    n_issues : int
        cleanlab's ``num_label_issues``.
    """

    is_issue: np.ndarray
    scores: np.ndarray
    n_issues: int


def confident_learning(labels: np.ndarray, pred_probs: Probs, *,
                       ranked_by: str = "self_confidence",
                       n_jobs: int | None = None) -> ConfidentLearning:
    """Run cleanlab's ``find_label_issues`` and ``num_label_issues``.

    ``n_jobs`` goes to ``find_label_issues``. None: one process. cleanlab's pool forks this
    process, and a fork copies the locks that other threads hold (Ray's, OpenMP's, torch's):
    a child then hangs for ever; the result is the same either way.

    A :class:`TopKProbs` (many classes) goes through cleanlab's low-memory confident
    learning instead, ``LabelInspector`` (what ``find_label_issues_batched`` runs), its
    batches the kept classes with the rest spread evenly: it flags the
    ``num_label_issues`` items of lowest self-confidence.

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
    if n_jobs is None:
        n_jobs = 1
    if isinstance(pred_probs, TopKProbs):
        is_issue, n_issues = _low_memory(pred_probs)
    else:
        is_issue = np.asarray(find_label_issues(labels, pred_probs, n_jobs=n_jobs),
                              dtype=bool)
        n_issues = int(num_label_issues(labels, pred_probs))
    ranked = label_quality_scores(labels, pred_probs, method=ranked_by)
    # Flagged items sit below every unflagged one, keeping cleanlab's order among them.
    span = ranked.max(initial=0) - ranked.min(initial=0) + 1.0
    scores = np.where(is_issue, ranked - span, ranked)
    return ConfidentLearning(is_issue, scores, n_issues)


def _low_memory(probs: TopKProbs) -> tuple[np.ndarray, int]:
    """cleanlab's ``LabelInspector`` over batches of rows made dense: its flags and count."""
    batched = import_cleanlab("cleanlab.experimental.label_issues_batched")
    inspector = batched.LabelInspector(num_class=probs.n_classes, verbose=False, n_jobs=1)
    n = len(probs)
    blocks = TopKProbs.blocks(n, probs.n_classes)
    for rows in blocks:
        inspector.update_confident_thresholds(probs.labels[rows], probs.dense(rows))
    for rows in blocks:
        inspector.score_label_quality(probs.labels[rows], probs.dense(rows))
    is_issue = np.zeros(n, dtype=bool)
    if n:
        is_issue[inspector.get_label_issues()] = True
    return is_issue, int(inspector.get_num_issues(silent=True)) if n else 0


# cleanlab's tolerances (cleanlab.internal.constants): a class is confident when its
# probability reaches its threshold less _TOL; the given label wins a near tie by _TOL.
_TOL = 1e-6
_MIN_THRESHOLD = 2e-6  # CONFIDENT_THRESHOLDS_LOWER_BOUND
_NO_ITEMS = 2.0  # the threshold of a class no item carries: no probability reaches it


@dataclass(frozen=True)
class IssueCount:
    """Confident learning's estimate of the number of label errors.

    Attributes
    ----------
    n_issues : int
        cleanlab's ``num_label_issues`` (``estimation_method="off_diagonal"``).
    n_undecided : int
        Items the two top probabilities cannot decide (a third class could reach its
        threshold). Not counted in ``n_issues``; 0 in practice.
    thresholds : ndarray of shape (n_classes,)
        Each class's mean probability over the items labelled with it (2.0 for none).
    """

    n_issues: int
    n_undecided: int
    thresholds: np.ndarray


def count_label_issues(labels: np.ndarray, given_prob: np.ndarray,
                       suggested_labels: np.ndarray, suggested_prob: np.ndarray, *,
                       n_classes: int) -> IssueCount:
    """Count label issues as confident learning does, from what a scan output keeps of
    the probabilities: the given label's and the most probable other label's.

    Class ``j``'s threshold is the mean probability of ``j`` over the items labelled ``j``
    (equation 2 of the paper),

    .. math:: t_j = \\frac{1}{|X_{\\tilde y = j}|}
              \\sum_{x \\in X_{\\tilde y = j}} \\hat p(\\tilde y = j; x, \\theta),

    and an item labelled ``i`` goes to the confident joint's cell ``(i, j)`` for the most
    probable ``j`` among the classes reaching their threshold (equation 1). cleanlab's
    ``num_label_issues`` counts the items off the diagonal whose most probable label, then
    the suggested label ``s``, is not the given one: the item counts when ``s`` reaches its
    threshold; when it falls short, the two top probabilities leave it undecided only when
    the remaining mass could exceed a third class's threshold (``n_undecided``). With full
    ``pred_probs`` the result equals ``cleanlab.count.num_label_issues`` up to those items.

    Parameters
    ----------
    labels : ndarray of int, shape (n_samples,)
        Given labels as class indices ``0..n_classes-1``.
    given_prob : ndarray of shape (n_samples,)
        The out-of-sample probability of each item's given label.
    suggested_labels, suggested_prob : ndarray of shape (n_samples,)
        The most probable other label (:func:`suggest_labels`) and its probability.
    n_classes : int

    Returns
    -------
    IssueCount

    References
    ----------
    Northcutt, Jiang & Chuang (2021), Confident Learning: Estimating Uncertainty in
    Dataset Labels, JAIR 70, equations 1 and 2. Implementation:
    ``cleanlab.count.num_label_issues``.

    Examples
    --------
    >>> labels = np.array([0, 0, 0, 1, 1, 1])
    >>> given = np.array([0.9, 0.8, 0.2, 0.7, 0.9, 0.8])
    >>> count = count_label_issues(labels, given, 1 - labels, 1 - given, n_classes=2)
    >>> count.n_issues, count.thresholds.round(2).tolist()
    (1, [0.63, 0.8])
    """
    labels = np.asarray(labels, dtype=np.int64)
    suggested_labels = np.asarray(suggested_labels, dtype=np.int64)
    given = np.asarray(given_prob, dtype=float)
    other = np.asarray(suggested_prob, dtype=float)
    if not labels.shape == suggested_labels.shape == given.shape == other.shape:
        raise InvalidInputError("labels, given_prob, suggested_labels and suggested_prob "
                                "must have the same shape (n_samples,)")
    if labels.size and (min(labels.min(), suggested_labels.min()) < 0
                        or max(labels.max(), suggested_labels.max()) >= n_classes):
        raise InvalidInputError(f"labels must lie in 0..{n_classes - 1}")
    totals = np.bincount(labels, weights=given, minlength=n_classes)
    counts = np.bincount(labels, minlength=n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        thresholds = np.where(counts > 0, totals / np.maximum(counts, 1), _NO_ITEMS)
    thresholds = np.clip(thresholds, _MIN_THRESHOLD, None)
    prefers_other = other > given + _TOL
    confident = other >= thresholds[suggested_labels] - _TOL
    n_issues = int((prefers_other & confident).sum())
    # A third class k (neither given nor suggested) has p_k <= min(p_s, 1 - p_i - p_s).
    order = np.sort(thresholds)
    lowest_third = _lowest_excluding(order, thresholds[labels], thresholds[suggested_labels])
    could = lowest_third - _TOL <= np.minimum(other, 1.0 - given - other)
    n_undecided = int((prefers_other & ~confident & could).sum()) if n_classes > 2 else 0
    return IssueCount(n_issues=n_issues, n_undecided=n_undecided, thresholds=thresholds)


def _lowest_excluding(ordered: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per item, the smallest of ``ordered`` (sorted thresholds) once one copy of ``a``
    and one of ``b`` are taken out (the given and the suggested class)."""
    out = np.full(a.shape, np.inf)
    for k in range(min(3, len(ordered))):
        value = ordered[k]
        taken = (a == value).astype(int) + (b == value).astype(int)
        # ordered[k] survives when fewer of its copies among ordered[:k+1] are taken out
        same = (ordered[: k + 1] == value).sum()
        free = np.isinf(out) & (taken < same)
        out[free] = value
    return out
