"""``labelaudit impact`` and ``select``: what verified label errors do to model accuracy and
ranking (impact), and what noisy and corrected validation data do to model selection
(select)."""

from labelaudit.impact._impact import (
    EmptyCorrectableWarning,
    ImpactResult,
    PendingVerdictWarning,
    RetokenisedWarning,
    measure_impact,
    measure_impact_tokens,
)
from labelaudit.impact._impact import check_impact_options as check_impact_options
from labelaudit.impact._ladder import ladder_predictions, token_ladder_predictions
from labelaudit.impact._ladder import model_ladder as model_ladder
from labelaudit.impact._select import SWEEP_SCORERS as SWEEP_SCORERS
from labelaudit.impact._select import ModelConfig, SelectionResult, select_models
from labelaudit.impact._select import sweep_configs as sweep_configs

__all__ = [
    "EmptyCorrectableWarning",
    "ImpactResult",
    "ModelConfig",
    "PendingVerdictWarning",
    "RetokenisedWarning",
    "SelectionResult",
    "ladder_predictions",
    "measure_impact",
    "measure_impact_tokens",
    "select_models",
    "token_ladder_predictions",
]
