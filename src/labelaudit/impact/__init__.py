"""What verified label errors do to model accuracy and ranking, and noisy or corrected
validation data to model selection (``labelaudit impact`` and ``select``)."""

from labelaudit.impact._impact import EmptyCorrectableWarning as EmptyCorrectableWarning
from labelaudit.impact._impact import ImpactResult, measure_impact, measure_impact_tokens
from labelaudit.impact._impact import PendingVerdictWarning as PendingVerdictWarning
from labelaudit.impact._impact import RetokenisedWarning as RetokenisedWarning
from labelaudit.impact._impact import check_impact_options as check_impact_options
from labelaudit.impact._ladder import ladder_predictions, token_ladder_predictions
from labelaudit.impact._ladder import model_ladder as model_ladder
from labelaudit.impact._select import SWEEP_SCORERS as SWEEP_SCORERS
from labelaudit.impact._select import ModelConfig as ModelConfig
from labelaudit.impact._select import SelectionResult as SelectionResult
from labelaudit.impact._select import select_models
from labelaudit.impact._select import sweep_configs as sweep_configs

__all__ = [
    "ImpactResult",
    "ladder_predictions",
    "measure_impact",
    "measure_impact_tokens",
    "select_models",
    "token_ladder_predictions",
]
