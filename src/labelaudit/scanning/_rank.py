"""Ranking and flagging: every method's scores from the probabilities, and the flag rule.
Both the in-memory and the streamed scan rank and flag here."""

from __future__ import annotations

import numpy as np

__all__ = ["flag_items", "method_scores"]


def method_scores(
    labels: np.ndarray, pred_probs: np.ndarray, first_member: np.ndarray,
    crowd_votes: np.ndarray | None, methods: list[str], *, n_jobs: int | None = None,
) -> tuple[dict[str, np.ndarray], int, np.ndarray | None]:
    """Every method's scores, cleanlab's estimated error count, CROWDLAB's consensus
    (``n_jobs`` for cleanlab's ``find_label_issues``)."""
    from labelaudit.detect import confident_learning, crowdlab, label_quality_scores

    cl = confident_learning(labels, pred_probs, n_jobs=n_jobs)
    crowd = None if crowd_votes is None else crowdlab(labels, pred_probs, crowd_votes)
    scores: dict[str, np.ndarray] = {}
    for method in methods:
        if method == "loss":
            scores[method] = label_quality_scores(labels, first_member)
        elif method == "ensemble":
            scores[method] = label_quality_scores(labels, pred_probs, method="loss")
        elif method == "confident_learning":
            scores[method] = cl.scores
        elif method == "crowdlab":
            assert crowd is not None
            scores[method] = crowd.scores
        else:
            scores[method] = label_quality_scores(labels, pred_probs,
                                                  method=method)  # type: ignore[arg-type]
    return scores, cl.n_issues, None if crowd is None else crowd.consensus_labels


def flag_items(labels: np.ndarray, pred_probs: np.ndarray, ranking: np.ndarray, n_issues: int, *,
          top: int | None, threshold: float | None) -> tuple[np.ndarray, str]:
    """Which items are flagged, and the rule that says so."""
    if threshold is not None:
        flagged = pred_probs[np.arange(len(labels)), labels] < threshold
        return flagged, f"given-label probability < {threshold}"
    count = n_issues if top is None else min(top, len(labels))
    flagged = np.zeros(len(labels), dtype=bool)
    flagged[np.argsort(ranking, kind="stable")[:count]] = True
    return flagged, f"top {count}" + (" (cleanlab's estimated count)" if top is None else "")
