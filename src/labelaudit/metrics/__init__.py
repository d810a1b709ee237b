"""Detection metrics: how well a ranking of suspect items finds the real label errors.

Every function takes the truth ``is_error`` (boolean, or float with NaN for unverified
items) and label-quality ``scores`` where **lower means more suspect**. Unverified items
must be resolved explicitly with ``unknown="exclude"`` or ``unknown="clean"``. Tied scores
are never split by row order (see :mod:`labelaudit.metrics._ranking`). :func:`evaluate`
joins a scan output with a truth table by id and measures every ranking in it.

>>> from labelaudit.metrics import detection_report
>>> detection_report([1, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]).roc_auc
0.75
"""

from labelaudit.metrics._distance import loss_wasserstein_distance
from labelaudit.metrics._evaluate import CutoffWarning, EvaluationResult, evaluate
from labelaudit.metrics._impact import (
    EmptyCorrectableWarning,
    flip_point,
    impact,
    impact_curve,
)
from labelaudit.metrics._impact_models import (
    LadderMember,
    ladder_predictions,
    model_ladder,
    token_ladder_predictions,
    token_model_ladder,
)
from labelaudit.metrics._impact_result import ImpactCurve, ImpactResult, RankFlip
from labelaudit.metrics._impact_sets import PendingVerdictWarning
from labelaudit.metrics._impact_tokens import RetokenisedWarning, impact_tokens
from labelaudit.metrics._plot import plot_precision_recall
from labelaudit.metrics._ranking import (
    PrecisionRecallCurve,
    aupr_score,
    average_precision_score,
    precision_at_k,
    precision_recall_curve,
    recall_at_k,
    roc_auc_score,
    truncated_aupr_score,
)
from labelaudit.metrics._report import DetectionReport, detection_report
from labelaudit.metrics._select import ModelConfig, SelectionResult, select_models, sweep_configs
from labelaudit.metrics._truth import Unknown, rank_from_ids
from labelaudit.metrics._verified import VerifiedPrecision, verified_precision

__all__ = [
    "CutoffWarning",
    "DetectionReport",
    "EmptyCorrectableWarning",
    "EvaluationResult",
    "ImpactCurve",
    "ImpactResult",
    "LadderMember",
    "ModelConfig",
    "PendingVerdictWarning",
    "PrecisionRecallCurve",
    "RankFlip",
    "RetokenisedWarning",
    "SelectionResult",
    "Unknown",
    "VerifiedPrecision",
    "aupr_score",
    "average_precision_score",
    "detection_report",
    "evaluate",
    "flip_point",
    "impact",
    "impact_curve",
    "impact_tokens",
    "ladder_predictions",
    "loss_wasserstein_distance",
    "model_ladder",
    "plot_precision_recall",
    "precision_at_k",
    "precision_recall_curve",
    "rank_from_ids",
    "recall_at_k",
    "roc_auc_score",
    "select_models",
    "sweep_configs",
    "token_ladder_predictions",
    "token_model_ladder",
    "truncated_aupr_score",
    "verified_precision",
]
