"""Learning with noisy labels: train a classifier that resists label errors.

:func:`train` fits a text classifier with one of seven published methods (base, mixup,
data parameters, sparse regularisation, co-teaching, CNLCU, SEAL) or ``filter`` (ours: a
cross-fitted scan drops or relabels the flagged items, then base), over frozen sentence
embeddings (``head``) or by fine-tuning (``finetune``), all through one training loop
with method hooks. :func:`train_bench` runs every method under injected noise and
measures it on a clean test set, as the NoisywikiHow benchmark does (Wu et al. 2023).
"""

from labelaudit.robust._bench import BenchResult, parse_noise_grid, train_bench
from labelaudit.robust._model import TrainedModel, load_model
from labelaudit.robust._train import TrainMetrics, estimate_noise_rate, evaluate_model, train

__all__ = [
    "BenchResult",
    "TrainMetrics",
    "TrainedModel",
    "estimate_noise_rate",
    "evaluate_model",
    "load_model",
    "parse_noise_grid",
    "train",
    "train_bench",
]
