"""Learning with noisy labels: :func:`train` fits a text classifier with one of seven
published methods, our detect-then-train ``filter`` methods, or the winner of a screen on
held-out noisy data (``method="auto"``, :func:`choose_method`), over frozen sentence embeddings
or by fine-tuning, all through one training loop with method hooks. :func:`train_bench`
measures every method under injected noise on a clean test set, as NoisywikiHow does.
"""

from labelaudit.training._bench import BenchResult, train_bench
from labelaudit.training._bench import parse_noise_grid as parse_noise_grid
from labelaudit.training._filter import FILTER_DETECTORS as FILTER_DETECTORS
from labelaudit.training._filter import FILTER_METHODS as FILTER_METHODS
from labelaudit.training._filter import NOISE_RATE_CAP as NOISE_RATE_CAP
from labelaudit.training._filter import FilterPlan as FilterPlan
from labelaudit.training._filter import FilterWarning
from labelaudit.training._filter import HeadScorer as HeadScorer
from labelaudit.training._filter import noise_share as noise_share
from labelaudit.training._metrics import TrainMetrics as TrainMetrics
from labelaudit.training._metrics import evaluate_model
from labelaudit.training._metrics import read_eval_table as read_eval_table
from labelaudit.training._model import TrainedModel, load_model
from labelaudit.training._model import embed as embed
from labelaudit.training._train import AUTO_CANDIDATES as AUTO_CANDIDATES
from labelaudit.training._train import NoiseEstimateWarning, Screen, choose_method, train
from labelaudit.training._train import TrainOptions as TrainOptions
from labelaudit.training._train import method_names as method_names
from labelaudit.training._train import run_train as run_train
from labelaudit.training._train import training_facts as training_facts
from labelaudit.training._train import training_notes as training_notes

__all__ = [
    "BenchResult",
    "FilterWarning",
    "NoiseEstimateWarning",
    "Screen",
    "TrainedModel",
    "choose_method",
    "evaluate_model",
    "load_model",
    "train",
    "train_bench",
]
