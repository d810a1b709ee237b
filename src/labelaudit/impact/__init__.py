"""``labelaudit impact`` and ``select``: what verified label errors do to model accuracy and
ranking (impact), and what noisy and corrected validation data do to model selection
(select)."""

from labelaudit.impact._impact import EmptyCorrectableWarning, flip_point, impact, impact_curve
from labelaudit.impact._impact_models import (
    LadderMember,
    ladder_predictions,
    model_ladder,
    token_ladder_predictions,
    token_model_ladder,
)
from labelaudit.impact._impact_options import check_impact_options
from labelaudit.impact._impact_result import ImpactCurve, ImpactResult, RankFlip
from labelaudit.impact._impact_sets import PendingVerdictWarning
from labelaudit.impact._impact_tokens import RetokenisedWarning, impact_tokens
from labelaudit.impact._select import ModelConfig, SelectionResult, select_models, sweep_configs

__all__ = [
    "EmptyCorrectableWarning",
    "ImpactCurve",
    "ImpactResult",
    "LadderMember",
    "ModelConfig",
    "PendingVerdictWarning",
    "RankFlip",
    "RetokenisedWarning",
    "SelectionResult",
    "check_impact_options",
    "flip_point",
    "impact",
    "impact_curve",
    "impact_tokens",
    "ladder_predictions",
    "model_ladder",
    "select_models",
    "sweep_configs",
    "token_ladder_predictions",
    "token_model_ladder",
]
