"""Ranking and flagging methods over out-of-sample predicted probabilities."""

from labelaudit.detect._confident import ConfidentLearning, confident_learning
from labelaudit.detect._count import IssueCount, count_label_issues
from labelaudit.detect._datalab import DatalabIssues, datalab_features, datalab_issues
from labelaudit.detect._ensemble import (
    Ensemble,
    apply_temperature,
    ensemble_pred_probs,
    temperature_scale,
)
from labelaudit.detect._multiannotator import CrowdLab, annotation_matrix, crowdlab
from labelaudit.detect._scores import (
    SCORE_METHODS,
    ScoreMethod,
    check_pred_probs,
    label_quality_scores,
    per_item_loss,
    suggest_labels,
)
from labelaudit.detect._tokens import sentence_scores, token_scores

__all__ = [
    "DatalabIssues",
    "datalab_features",
    "datalab_issues",
    "SCORE_METHODS",
    "ConfidentLearning",
    "CrowdLab",
    "Ensemble",
    "IssueCount",
    "ScoreMethod",
    "annotation_matrix",
    "apply_temperature",
    "check_pred_probs",
    "confident_learning",
    "count_label_issues",
    "crowdlab",
    "ensemble_pred_probs",
    "label_quality_scores",
    "per_item_loss",
    "sentence_scores",
    "suggest_labels",
    "temperature_scale",
    "token_scores",
]
