"""Controlled, realistic label noise for benchmarking detectors and robust training.

Synthetic noise (uniform, class-dependent) is easy to detect; the errors people make are
not (Chong, Hong & Manning 2022). :func:`inject_noise` noises a clean dataset at an exact
rate with human-originated methods built from crowd annotations (dissenting label,
dissenting worker, crowd majority, minority split), instance-dependent noise on hard cases
(NoisywikiHow, Wu et al. 2023), or recipes mixing them; :func:`noise_realism` measures how
close a noising's losses are to the clean items' (Wasserstein distance).
"""

from labelaudit.noise._class_dependent import check_noise_matrix, random_noise_matrix
from labelaudit.noise._common import NoiseRateWarning, allocate, check_rate, target_count
from labelaudit.noise._crowd_majority import crowd_majority_labels
from labelaudit.noise._inject import NOISE_METHODS, NoiseMethod, inject_noise, parse_recipe
from labelaudit.noise._instance_dependent import nearest_other_class
from labelaudit.noise._label_sets import (
    LABEL_SET_NOISE,
    LabelSetNoiseResult,
    inject_label_set_noise,
)
from labelaudit.noise._realism import (
    RealismResult,
    measure_noise_realism,
    noise_realism,
    plot_loss_histograms,
)
from labelaudit.noise._result import NoiseResult
from labelaudit.noise._spec import noisy_labels, parse_noise
from labelaudit.noise._table import inject_noise_table, read_noise_matrix, read_noise_sources

__all__ = [
    "LABEL_SET_NOISE",
    "LabelSetNoiseResult",
    "NOISE_METHODS",
    "NoiseMethod",
    "NoiseRateWarning",
    "NoiseResult",
    "RealismResult",
    "allocate",
    "check_noise_matrix",
    "check_rate",
    "crowd_majority_labels",
    "inject_label_set_noise",
    "inject_noise",
    "inject_noise_table",
    "measure_noise_realism",
    "nearest_other_class",
    "noise_realism",
    "noisy_labels",
    "parse_noise",
    "parse_recipe",
    "plot_loss_histograms",
    "random_noise_matrix",
    "read_noise_matrix",
    "read_noise_sources",
    "target_count",
]
