"""Learning with noisy labels: train a classifier that resists label errors.

:func:`train` fits a text classifier with one of seven published methods (base, mixup,
data parameters, sparse regularisation, co-teaching, CNLCU, SEAL), ``filter`` (ours: a
cross-fitted scan drops or relabels the flagged items, then base) and its detect-then-train
forms (``filter-relabel+seal``...), or chooses among them (``method="auto"``,
:func:`choose_method`: a screen on a held-out part of the noisy data), over frozen sentence
embeddings (``head``) or by fine-tuning (``finetune``), all through one training loop
with method hooks. :func:`train_bench` runs every method under injected noise and
measures it on a clean test set, as the NoisywikiHow benchmark does (Wu et al. 2023).
"""

from labelaudit.training._auto import AUTO_CANDIDATES, Screen, choose_method, train
from labelaudit.training._bench import BenchResult, parse_noise_grid, train_bench
from labelaudit.training._filter import (
    FILTER_METHODS,
    NO_SIGNAL_RATE,
    NOISE_RATE_CAP,
    FilterPlan,
    FilterWarning,
    noise_share,
)
from labelaudit.training._metrics import TrainMetrics, evaluate_model, read_eval_table
from labelaudit.training._model import TrainedModel, load_model
from labelaudit.training._notes import training_facts, training_notes
from labelaudit.training._train import NoiseEstimateWarning, estimate_noise_rate

__all__ = [
    "AUTO_CANDIDATES",
    "FILTER_METHODS",
    "NOISE_RATE_CAP",
    "NO_SIGNAL_RATE",
    "BenchResult",
    "FilterPlan",
    "FilterWarning",
    "NoiseEstimateWarning",
    "Screen",
    "TrainMetrics",
    "TrainedModel",
    "choose_method",
    "estimate_noise_rate",
    "evaluate_model",
    "load_model",
    "noise_share",
    "parse_noise_grid",
    "read_eval_table",
    "train",
    "train_bench",
    "training_facts",
    "training_notes",
]

