"""``labelaudit evaluate`` and ``evaluate-tokens``: how well a ranking of suspect items finds
the real label errors.

Every metric takes the truth ``is_error`` (boolean, or float with NaN for unverified
items) and label-quality ``scores`` where **lower means more suspect**. Unverified items
must be resolved explicitly with ``unknown="exclude"`` or ``unknown="clean"``. Tied scores
are never split by row order (see :mod:`labelaudit.evaluation._metrics`). :func:`evaluate`
joins a scan output with a truth table by id and measures every ranking in it;
:func:`evaluate_tokens` does the same for a ``scan-tokens`` output.

>>> from labelaudit.evaluation import detection_report
>>> detection_report([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]).roc_auc
0.75
"""

from labelaudit.evaluation._evaluate import (
    CutoffWarning,
    EvaluationResult,
    ScoreDirectionWarning,
    evaluate,
    plot_precision_recall,
)
from labelaudit.evaluation._evaluate import class_metrics as class_metrics
from labelaudit.evaluation._evaluate import draw_precision_recall as draw_precision_recall
from labelaudit.evaluation._metrics import (
    DetectionReport,
    PrecisionRecallCurve,
    VerifiedPrecision,
    aupr_score,
    average_precision_score,
    detection_report,
    loss_wasserstein_distance,
    precision_at_k,
    precision_recall_curve,
    rank_from_ids,
    recall_at_k,
    roc_auc_score,
    truncated_aupr_score,
    verified_precision,
)
from labelaudit.evaluation._metrics import HeadlineMetrics as HeadlineMetrics
from labelaudit.evaluation._tokens import TokenEvaluation, evaluate_tokens, read_token_issues

__all__ = [
    "CutoffWarning",
    "DetectionReport",
    "EvaluationResult",
    "PrecisionRecallCurve",
    "ScoreDirectionWarning",
    "TokenEvaluation",
    "VerifiedPrecision",
    "aupr_score",
    "average_precision_score",
    "detection_report",
    "evaluate",
    "evaluate_tokens",
    "loss_wasserstein_distance",
    "plot_precision_recall",
    "precision_at_k",
    "precision_recall_curve",
    "rank_from_ids",
    "read_token_issues",
    "recall_at_k",
    "roc_auc_score",
    "truncated_aupr_score",
    "verified_precision",
]
