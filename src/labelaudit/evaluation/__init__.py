"""``labelaudit evaluate`` and ``evaluate-tokens``: how well a ranking of suspect items finds
the real label errors (conventions: :mod:`labelaudit.evaluation._metrics`).

>>> from labelaudit.evaluation import detection_report
>>> detection_report([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]).roc_auc
0.75
"""

from labelaudit.evaluation._evaluate import (  # noqa: F401 - also for the other packages
    CutoffWarning,
    EvaluationResult,
    ScoreDirectionWarning,
    class_metrics,
    draw_precision_recall,
    evaluate,
    is_label_set_output,
    plot_precision_recall,
)
from labelaudit.evaluation._metrics import (  # noqa: F401 - also for the other packages
    DetectionReport,
    HeadlineMetrics,
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
from labelaudit.evaluation._tokens import (  # noqa: F401 - also for the other packages
    TokenEvaluation,
    evaluate_tokens,
    read_token_issues,
)

__all__ = [
    "EvaluationResult",
    "TokenEvaluation",
    "aupr_score",
    "average_precision_score",
    "detection_report",
    "evaluate",
    "evaluate_tokens",
    "precision_at_k",
    "precision_recall_curve",
    "recall_at_k",
    "roc_auc_score",
    "truncated_aupr_score",
    "verified_precision",
    "CutoffWarning",
    "ScoreDirectionWarning",
]
