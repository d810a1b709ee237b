"""Learning with noisy labels: train a classifier that resists label errors.

:func:`train` fits a text classifier with one of seven published methods (base, mixup,
data parameters, sparse regularisation, co-teaching, CNLCU, SEAL) or ``filter`` (ours: a
cross-fitted scan drops or relabels the flagged items, then base), over frozen sentence
embeddings (``head``) or by fine-tuning (``finetune``), all through one training loop
with method hooks. :func:`train_bench` runs every method under injected noise and
measures it on a clean test set, as the NoisywikiHow benchmark does (Wu et al. 2023).
"""

from labelaudit._command import make_callable
from labelaudit.train._bench import BenchResult, parse_noise_grid, train_bench
from labelaudit.train._model import TrainedModel, load_model
from labelaudit.train._train import (
    NOISE_RATE_CAP,
    FilterWarning,
    NoiseEstimateWarning,
    TrainMetrics,
    estimate_noise_rate,
    evaluate_model,
    noise_share,
    train,
)

__all__ = [
    "NOISE_RATE_CAP",
    "BenchResult",
    "FilterWarning",
    "NoiseEstimateWarning",
    "TrainMetrics",
    "TrainedModel",
    "estimate_noise_rate",
    "evaluate_model",
    "load_model",
    "noise_share",
    "parse_noise_grid",
    "train",
    "train_bench",
]

make_callable(__name__)  # labelaudit.train(...) calls train(): see labelaudit._command
