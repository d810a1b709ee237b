"""Ranking and flagging methods over out-of-sample predicted probabilities."""

from labelaudit.detect._scores import (
    SCORE_METHODS,
    ScoreMethod,
    check_pred_probs,
    label_quality_scores,
    per_item_loss,
    suggest_labels,
)

__all__ = [
    "SCORE_METHODS",
    "ScoreMethod",
    "check_pred_probs",
    "label_quality_scores",
    "per_item_loss",
    "suggest_labels",
]
