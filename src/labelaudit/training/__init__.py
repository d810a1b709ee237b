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

from labelaudit.training._bench import BenchResult, train_bench
from labelaudit.training._bench import parse_noise_grid as parse_noise_grid
from labelaudit.training._filter import FILTER_DETECTORS as FILTER_DETECTORS
from labelaudit.training._filter import FILTER_METHODS, FilterWarning
from labelaudit.training._filter import NOISE_RATE_CAP as NOISE_RATE_CAP
from labelaudit.training._filter import FilterPlan as FilterPlan
from labelaudit.training._filter import HeadScorer as HeadScorer
from labelaudit.training._filter import noise_share as noise_share
from labelaudit.training._metrics import TrainMetrics, evaluate_model
from labelaudit.training._metrics import read_eval_table as read_eval_table
from labelaudit.training._model import TrainedModel, load_model
from labelaudit.training._model import embed as embed
from labelaudit.training._train import (
    AUTO_CANDIDATES,
    NoiseEstimateWarning,
    Screen,
    choose_method,
    train,
)
from labelaudit.training._train import method_names as method_names
from labelaudit.training._train import training_facts as training_facts
from labelaudit.training._train import training_notes as training_notes

__all__ = [
    "AUTO_CANDIDATES",
    "FILTER_METHODS",
    "BenchResult",
    "FilterWarning",
    "NoiseEstimateWarning",
    "Screen",
    "TrainMetrics",
    "TrainedModel",
    "choose_method",
    "evaluate_model",
    "load_model",
    "train",
    "train_bench",
]
