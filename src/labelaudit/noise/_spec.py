"""Noise given as text (``"uniform:0.05"``) and a label column noised by it: what ``select``
and ``train-bench`` share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.io import encode_labels

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["noisy_labels", "parse_noise"]


def parse_noise(noise: str) -> tuple[str, float]:
    """``"method:rate"`` as ``(method, rate)``, checked against the noise methods.

    Examples
    --------
    >>> parse_noise("uniform:0.05")
    ('uniform', 0.05)
    """
    from labelaudit.noise._inject import NOISE_METHODS

    method, sep, rate_text = str(noise).strip().rpartition(":")
    if not sep or not method:
        raise InvalidParameterError(
            f"noise must be METHOD:RATE such as 'uniform:0.05'; got {noise!r}", param="noise")
    if method not in NOISE_METHODS:
        raise InvalidParameterError(
            f"unknown noise method {method!r} in noise={noise!r}; choose from "
            f"{', '.join(NOISE_METHODS)}", param="noise")
    try:
        rate = float(rate_text)
    except ValueError:
        raise InvalidParameterError(
            f"the rate of noise={noise!r} is not a number; write e.g. 'uniform:0.05'",
            param="noise") from None
    if not 0.0 < rate < 1.0:
        raise InvalidParameterError(f"the rate of noise={noise!r} must be in (0, 1)",
                                    param="noise")
    return method, rate


def noisy_labels(frame: pd.DataFrame, *, label: str, method: str, rate: float,
                 classes: np.ndarray, text: str, text_pair: str | None,
                 random_state: int, options: dict[str, Any] | None = None) -> np.ndarray:
    """The ``label`` column noised at ``rate`` by ``method``, as indices into ``classes``."""
    import pandas as pd

    from labelaudit.noise._result import NoiseResult
    from labelaudit.noise._table import inject_noise_table

    result = inject_noise_table(frame, label=label, method=method,  # type: ignore[arg-type]
                                rate=rate, random_state=random_state, text=text,
                                text_pair=text_pair, **(options or {}))
    assert isinstance(result, NoiseResult)  # noqa: S101 - the callers read one label per item
    return encode_labels(pd.Series(result.labels), np.arange(len(frame)), column=label,
                         classes=classes)[0]
