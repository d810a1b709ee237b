"""Krippendorff's alpha, through the ``krippendorff`` package."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import InvalidParameterError, MissingExtraError
from labelaudit._validation import check_choice
from labelaudit.agreement._kappa import check_counts

__all__ = ["krippendorff_alpha"]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(
    counts: ArrayLike, *, level: Level = "nominal", values: Sequence[float] | None = None
) -> float:
    """Krippendorff's alpha from category counts.

    .. math:: \\alpha = 1 - \\frac{D_o}{D_e}

    the observed over the expected disagreement of pairable values (Krippendorff 2004).
    Unlike kappa it corrects for small samples: expected disagreement is computed from the
    pooled values without replacement.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_classes)
        How many annotators put each item in each category; every item needs at least 2.
    level : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        Level of measurement: the distance between categories.
    values : sequence of float, optional
        The numeric value of each category (column), needed by the non-nominal levels; the
        column order is taken as the order for ``"ordinal"``. Default ``0, 1, 2, ...``.

    Returns
    -------
    float
        NaN when there is no expected disagreement (a single category used).

    References
    ----------
    Krippendorff, K. (2004). Content Analysis: An Introduction to Its Methodology, ch. 11.

    Examples
    --------
    Krippendorff's reliability data (three coders, categories 1-4; the units with fewer than
    two values, which alpha cannot pair, are left out), as in the ``krippendorff`` package:

    >>> counts = [[0, 2, 0, 0], [2, 0, 0, 0], [0, 0, 2, 0], [0, 0, 2, 1], [0, 0, 0, 3],
    ...           [1, 0, 1, 0], [0, 2, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 2, 0],
    ...           [0, 0, 2, 0], [0, 0, 1, 1]]
    >>> round(krippendorff_alpha(counts), 3)
    0.691
    >>> round(krippendorff_alpha(counts, level="interval", values=[1, 2, 3, 4]), 3)
    0.811
    """
    check_choice(level, "level", LEVELS)
    arr = check_counts(counts)
    if values is None:
        domain = np.arange(arr.shape[1], dtype=float)
    else:
        domain = np.asarray(values, dtype=float)
        if domain.shape != (arr.shape[1],):
            raise InvalidParameterError(
                f"values needs one number per category ({arr.shape[1]}), got {len(domain)}"
            )
    if len(np.unique(arr.nonzero()[1])) < 2:
        return float("nan")
    try:
        import krippendorff
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingExtraError("krippendorff", "agreement") from exc
    return float(
        krippendorff.alpha(value_counts=arr, value_domain=domain, level_of_measurement=level)
    )
