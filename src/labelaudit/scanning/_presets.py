"""Named sets of scan members (``scan(preset=...)``, ``labelaudit scan --preset``).

Chosen on real, human-verified label errors (``make bench-detection``; the figures are in
``benchmarks/results/detection.md`` and ``detection_gpu.md``):

- ``fast``: word 1-2-gram TF-IDF alone (IMDB dev half: AP 0.294, 41 s on 2 cores);
- ``default``: word TF-IDF and character 2-5-gram TF-IDF (0.304, about 3 minutes);
- ``best``: word TF-IDF and all-MiniLM-L6-v2 fine-tuned on every fold (3 epochs, 512
  tokens, head+tail): AP 0.43 on the IMDB dev half, 1.6x the strong TF-IDF peer, in about
  4 minutes per scan on one H100 GPU; on a CPU the same fine-tuning takes hours.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from labelaudit._errors import InvalidParameterError, LabelAuditWarning
from labelaudit._validation import check_choice
from labelaudit.registry import PRESETS

__all__ = ["PRESETS", "PRESET_FINETUNE", "SlowPresetWarning", "preset_members", "preset_names",
           "preset_settings"]


class SlowPresetWarning(LabelAuditWarning):
    """A preset built for a GPU runs on a CPU."""


#: The fine-tuning settings of ``best`` (options given by the caller take precedence).
PRESET_FINETUNE: Mapping[str, Any] = {"epochs": 3, "max_length": 512, "batch_size": 32,
                                      "learning_rate": 5e-5}


def preset_names(preset: str) -> tuple[str, ...] | None:
    """The member names of a preset (None: scan's default members)."""
    return PRESETS[check_choice(preset, "preset", PRESETS)]


def preset_settings(preset: str, **tuning: Any) -> tuple[list[str] | None, dict[str, Any]]:
    """The member names of a preset (None: scan's default) and the settings of its
    fine-tuned member (:data:`PRESET_FINETUNE` updated by the caller's ``tuning``; empty
    without one). Warns (:class:`SlowPresetWarning`) when a fine-tuning preset finds no
    CUDA GPU."""
    names = preset_names(preset)
    given = {k: v for k, v in tuning.items() if v is not None}
    if names is None or "finetune" not in names:
        if given:
            raise InvalidParameterError(
                f"{', '.join(f'{name}=' for name in given)} set{'s' if len(given) == 1 else ''} "
                f"the fine-tuned member, which preset={preset!r} does not have: use "
                "preset='best', or name the members with scorers=", param=(*given, "preset"))
        return (None if names is None else list(names)), {}
    _warn_without_gpu(preset)
    return list(names), {**PRESET_FINETUNE, **given}


def preset_members(preset: str, *, model: str | None = None,
                   **tuning: Any) -> list[Any] | None:
    """The ``scorers`` of a preset for :func:`labelaudit.scan`: names, the fine-tuned
    member built with :func:`preset_settings`; None for ``default``."""
    names, settings = preset_settings(preset, **tuning)
    if not settings or names is None:
        return names
    from labelaudit.models import make_scorer

    return [make_scorer(n, model=model, **settings) if n == "finetune" else n for n in names]


def _warn_without_gpu(preset: str) -> None:
    import torch

    if not torch.cuda.is_available():
        warnings.warn(
            f"preset {preset!r} fine-tunes a transformer on every fold and is built for a "
            "GPU (about 4 minutes for 12,600 reviews on one H100); on this CPU it takes "
            "hours: use the default, or preset 'fast'", SlowPresetWarning, stacklevel=4)
