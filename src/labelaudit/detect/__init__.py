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

from labelaudit.detect._confident import ConfidentLearning, confident_learning  # noqa: E402
from labelaudit.detect._ensemble import (  # noqa: E402
    Ensemble,
    apply_temperature,
    ensemble_pred_probs,
    temperature_scale,
)

__all__ += ["ConfidentLearning", "Ensemble", "confident_learning", "ensemble_pred_probs",
            "temperature_scale", "apply_temperature"]
