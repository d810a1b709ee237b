"""Controlled, realistic label noise for benchmarking detectors and robust training.

Synthetic noise (uniform, class-dependent) is easy to detect; the errors people make are
not (Chong, Hong & Manning 2022). :func:`inject_noise` noises a clean dataset at an exact
rate with human-originated methods built from crowd annotations (dissenting label,
dissenting worker, crowd majority, minority split), instance-dependent noise on hard cases
(NoisywikiHow, Wu et al. 2023), or recipes mixing them; :func:`noise_realism` measures how
close a noising's losses are to the clean items' (Wasserstein distance).
"""

from labelaudit.noise._common import NoiseRateWarning
from labelaudit.noise._inject import NOISE_METHODS, inject_noise, inject_noise_table
from labelaudit.noise._inject import noisy_labels as noisy_labels
from labelaudit.noise._inject import parse_noise as parse_noise
from labelaudit.noise._inject import parse_recipe as parse_recipe
from labelaudit.noise._inject import read_noise_matrix as read_noise_matrix
from labelaudit.noise._inject import read_noise_sources as read_noise_sources
from labelaudit.noise._label_sets import LabelSetNoiseResult as LabelSetNoiseResult
from labelaudit.noise._label_sets import inject_label_set_noise
from labelaudit.noise._realism import measure_noise_realism, noise_realism, plot_loss_histograms

__all__ = [
    "NOISE_METHODS",
    "NoiseRateWarning",
    "inject_label_set_noise",
    "inject_noise",
    "inject_noise_table",
    "measure_noise_realism",
    "noise_realism",
    "plot_loss_histograms",
]
