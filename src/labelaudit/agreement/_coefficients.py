"""Agreement coefficients: observed agreement, Fleiss' kappa and Krippendorff's alpha from
the count matrix ``counts`` of shape (n_items, n_classes), ``counts[i, j]`` the number of
annotators who put item ``i`` in category ``j`` (:func:`annotation_counts` builds it; every
item needs at least 2), and Cohen's kappa from two annotators' label vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    MissingExtraError,
    format_rows,
)
from labelaudit._validation import check_choice
from labelaudit.io import Annotations, to_annotations

if TYPE_CHECKING:
    import pandas as pd

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS = get_args(Level)


def annotation_counts(
    annotations: pd.DataFrame | Annotations, *, item: str | None = None,
    annotator: str | None = None, label: str | None = None) -> pd.DataFrame:
    """How many annotators put each item (rows, by id) in each category: the input of
    :func:`fleiss_kappa`, from long-format ``annotations``.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "label": list("aabbbb")})
    >>> counts = annotation_counts(df)
    >>> counts.columns.tolist(), counts.index.tolist(), counts.to_numpy().tolist()
    (['a', 'b'], [1, 2], [[2, 1], [0, 3]])
    """
    import pandas as pd
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    frame = pd.DataFrame(ann.counts(), columns=list(ann.classes))
    frame.index = pd.Index(ann.items, name="item")
    frame.columns.name = None
    return frame


def check_counts(counts: ArrayLike, *, min_raters: int = 2) -> np.ndarray:
    """A count matrix of non-negative whole numbers, at least ``min_raters`` per item, as int64."""
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise InvalidInputError(
            f"counts must be a 2-D array (n_items, n_classes), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InvalidInputError(f"counts is empty (shape {arr.shape}): there is nothing to measure")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise InvalidInputError(f"counts must be numbers, got dtype {arr.dtype}")
    wrong = ~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))
    if wrong.any():
        bad = np.flatnonzero(wrong.any(axis=1))
        raise InvalidInputError(
            f"counts must be non-negative whole numbers; see {format_rows(bad.tolist())}")
    arr = arr.astype(np.int64)
    few = np.flatnonzero(arr.sum(axis=1) < min_raters)
    if len(few):
        raise InvalidInputError(
            f"agreement needs at least {min_raters} annotations per item; fewer in "
            f"{format_rows(few.tolist())} of counts (drop those items or collect more labels)"
        )
    return arr


def per_item_agreement(counts: ArrayLike) -> np.ndarray:
    """Share of agreeing annotator pairs on each item,
    :math:`P_{A_i} = \\sum_j \\binom{a_{ij}}{2} / \\binom{k_i}{2}`, shape (n_items,).

    >>> per_item_agreement([[3, 0], [2, 1]]).round(4).tolist()
    [1.0, 0.3333]
    """
    arr = check_counts(counts)
    k = arr.sum(axis=1)
    return (arr * (arr - 1)).sum(axis=1) / (k * (k - 1))


def observed_agreement(counts: ArrayLike) -> float:
    """Mean pairwise agreement :math:`P_A = \\frac{1}{n}\\sum_i P_{A_i}` (equation 2).

    Examples
    --------
    >>> observed_agreement([[3, 0], [2, 1]])
    0.6666666666666666
    """
    return float(per_item_agreement(counts).mean())


def fleiss_kappa(counts: ArrayLike) -> float:
    """Fleiss' kappa in the Siegel & Castellan form (K), equation 2 of the paper.

    .. math::

        \\kappa = \\frac{P_A - P_E}{1 - P_E},\\quad
        P_E = \\sum_{j=1}^m p_j^2,\\quad p_j = \\frac{\\sum_{i=1}^n a_{ij}}{nk},\\quad
        P_A = \\frac{1}{n}\\sum_{i=1}^n P_{A_i},\\quad
        P_{A_i} = \\frac{\\sum_{j=1}^m \\binom{a_{ij}}{2}}{\\binom{k}{2}}

    where ``a_ij`` is the number of annotators who put item ``i`` in category ``j``. With
    ``k_i`` annotations per item, ``P_{A_i}`` uses ``k_i`` and ``p_j`` divides by
    :math:`\\sum_i k_i` (with a constant ``k``, equation 2 and statsmodels' ``fleiss_kappa``,
    which refuses such crowd data). NaN when :math:`P_E` is 1 (one category used).

    References
    ----------
    Beigman Klebanov, B. and Beigman, E. (2009). From Annotator Agreement to Noise Models.
    Computational Linguistics 35(4), equation 2. Siegel, S. and Castellan, N. J. (1988).
    Nonparametric Statistics for the Behavioral Sciences.

    Examples
    --------
    Two annotators, 1,000 items, 900 agreements, categories equiprobable (the paper's
    section 3.1 example), gives kappa = 0.8:

    >>> round(fleiss_kappa([[2, 0]] * 450 + [[0, 2]] * 450 + [[1, 1]] * 100), 6)
    0.8
    """
    arr = check_counts(counts)
    k = arr.sum(axis=1)
    p_a = float(((arr * (arr - 1)).sum(axis=1) / (k * (k - 1))).mean())
    p_j = arr.sum(axis=0) / k.sum()
    p_e = float((p_j**2).sum())
    if np.isclose(p_e, 1.0, rtol=0, atol=1e-15):
        return float("nan")
    return (p_a - p_e) / (1.0 - p_e)


def cohen_kappa(labels_a: ArrayLike, labels_b: ArrayLike) -> float:
    """Cohen's kappa between two annotators who labelled the same items.

    .. math:: \\kappa = \\frac{P_o - P_e}{1 - P_e},\\quad
              P_e = \\sum_j p_{A}(j)\\, p_{B}(j)

    with each annotator's own category proportions (Cohen 1960; Fleiss' kappa pools them), by
    :func:`sklearn.metrics.cohen_kappa_score` on integer codes, so any label types work; the
    labels are aligned by item. NaN, without scikit-learn's warnings, where P_e is 1.

    Examples
    --------
    >>> round(cohen_kappa(["y", "y", "n", "n"], ["y", "n", "n", "n"]), 6)
    0.5
    """
    import pandas as pd
    a = np.asarray(labels_a, dtype=object)
    b = np.asarray(labels_b, dtype=object)
    if a.ndim != 1 or a.shape != b.shape:
        raise InvalidInputError(
            f"cohen_kappa needs two label vectors of the same length, got shapes "
            f"{a.shape} and {b.shape}"
        )
    if len(a) == 0:
        raise InvalidInputError("cohen_kappa needs at least one item labelled by both annotators")
    from sklearn.metrics import cohen_kappa_score

    codes, classes = pd.factorize(pd.Series(np.concatenate([a, b]), dtype=object),
                                  use_na_sentinel=False)
    if len(classes) < 2:
        return float("nan")
    return float(cohen_kappa_score(codes[:len(a)], codes[len(a):]))


def krippendorff_alpha(
    counts: ArrayLike, *, level: Level = "nominal", values: Sequence[float] | None = None) -> float:
    """Krippendorff's alpha from category counts.

    .. math:: \\alpha = 1 - \\frac{D_o}{D_e}

    the observed over the expected disagreement of pairable values (Krippendorff 2004).
    Unlike kappa it corrects for small samples: expected disagreement is computed from the
    pooled values without replacement.

    Parameters
    ----------
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement: the distance between categories.
    values : sequence of float, optional
        Numeric value of each category (column; default ``0, 1, 2, ...``); the column order
        is the order for ``"ordinal"``.

    Returns
    -------
    float
        Alpha; NaN when there is no expected disagreement (a single category used).

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
                f"values needs one number per category ({arr.shape[1]}), got {len(domain)}")
    if len(np.unique(arr.nonzero()[1])) < 2:
        return float("nan")
    try:
        import krippendorff
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise MissingExtraError("krippendorff", "agreement") from exc
    return float(
        krippendorff.alpha(value_counts=arr, value_domain=domain, level_of_measurement=level))
