"""The former encoding of crowd annotations, deprecated: :class:`Crowd` and
:func:`crowd_from_annotations`.

:func:`labelaudit.io.to_annotations` with ``ids=`` and ``classes=`` replaces them and returns
an :class:`~labelaudit.io.Annotations`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from labelaudit.io import Annotations, to_annotations

__all__ = ["Crowd", "crowd_from_annotations"]


@dataclass(frozen=True)
class Crowd:
    """Deprecated: the former encoding of crowd labels; use :class:`Annotations`.

    ``items``, ``workers`` and ``labels`` are :attr:`Annotations.item_codes`,
    :attr:`~Annotations.annotator_codes` and :attr:`~Annotations.label_codes`; ``counts`` is
    :meth:`Annotations.counts` and ``n_workers`` :attr:`Annotations.n_annotators`.
    """

    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    n_workers: int

    @classmethod
    def of(cls, annotations: Annotations) -> Crowd:
        """The legacy view of encoded annotations."""
        return cls(items=annotations.item_codes, workers=annotations.annotator_codes,
                   labels=annotations.label_codes, counts=annotations.counts(),
                   n_workers=annotations.n_annotators)


def crowd_from_annotations(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *, ids: np.ndarray,
    classes: np.ndarray,
) -> Crowd:
    """Deprecated: use ``labelaudit.agreement.to_annotations(annotations, ids=, classes=)``.

    Encodes crowd annotations against the rows and the label set of a dataset (see
    :func:`labelaudit.io.to_annotations`) and returns them as the former :class:`Crowd`.
    """
    warnings.warn(
        "crowd_from_annotations is deprecated and will be removed in the next release; use "
        "labelaudit.agreement.to_annotations(annotations, ids=ids, classes=classes), which "
        "returns an Annotations", DeprecationWarning, stacklevel=2)
    return Crowd.of(to_annotations(annotations, ids=ids, classes=classes))
