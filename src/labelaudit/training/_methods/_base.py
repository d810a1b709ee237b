"""The hook object every learning-with-noisy-labels method implements, and an option check.

The training loop (:func:`labelaudit.models.train_networks`) owns the networks, the
optimiser, the batches and the epochs; a :class:`~labelaudit.models.Method` only says how
one batch turns into a loss, and what to remember between epochs and rounds. The default
hooks do nothing, so :class:`~labelaudit.models.Method` itself is plain cross-entropy
training. It lives with the loop in the models floor and is re-exported here for the
methods of this package.
"""

from __future__ import annotations

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.models import Method

__all__ = ["Method", "check_positive"]


def check_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """``value`` as a float > 0 (or >= 0 with ``allow_zero``), else an error."""
    number = float(value)
    if not (number > 0 or (allow_zero and number == 0)) or not np.isfinite(number):
        sign = ">= 0" if allow_zero else "> 0"
        raise InvalidParameterError(f"{name} must be a finite number {sign}, got {value!r}")
    return number
