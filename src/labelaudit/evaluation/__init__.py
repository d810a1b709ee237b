"""``labelaudit evaluate`` and ``evaluate-tokens``: how well a ranking of suspect items finds
the real label errors.

Every metric takes the truth ``is_error`` (boolean, or float with NaN for unverified
items) and label-quality ``scores`` where **lower means more suspect**. Unverified items
must be resolved explicitly with ``unknown="exclude"`` or ``unknown="clean"``. Tied scores
are never split by row order (see :mod:`labelaudit.evaluation._ranking`). :func:`evaluate`
joins a scan output with a truth table by id and measures every ranking in it;
:func:`evaluate_tokens` does the same for a ``scan-tokens`` output.

>>> from labelaudit.evaluation import detection_report
>>> detection_report([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]).roc_auc
0.75
"""

from labelaudit.evaluation._detection_report import (
    DetectionReport,
    HeadlineMetrics,
    detection_report,
)
from labelaudit.evaluation._distance import loss_wasserstein_distance
from labelaudit.evaluation._evaluate import CutoffWarning, EvaluationResult, evaluate
from labelaudit.evaluation._join import ScoreDirectionWarning, plain
from labelaudit.evaluation._label_sets import class_metrics
from labelaudit.evaluation._plot import draw_precision_recall, plot_precision_recall
from labelaudit.evaluation._ranking import (
    PrecisionRecallCurve,
    aupr_score,
    average_precision_score,
    precision_at_k,
    precision_recall_curve,
    recall_at_k,
    roc_auc_score,
    truncated_aupr_score,
)
from labelaudit.evaluation._tokens import (
    LevelMetrics,
    SpanPrecision,
    TokenEvaluation,
    evaluate_tokens,
    read_token_issues,
)
from labelaudit.evaluation._truth import Unknown, rank_from_ids
from labelaudit.evaluation._verified import VerifiedPrecision, verified_precision

__all__ = [
    "CutoffWarning",
    "DetectionReport",
    "EvaluationResult",
    "HeadlineMetrics",
    "LevelMetrics",
    "PrecisionRecallCurve",
    "ScoreDirectionWarning",
    "SpanPrecision",
    "TokenEvaluation",
    "Unknown",
    "VerifiedPrecision",
    "aupr_score",
    "average_precision_score",
    "class_metrics",
    "detection_report",
    "draw_precision_recall",
    "evaluate",
    "evaluate_tokens",
    "loss_wasserstein_distance",
    "plain",
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

