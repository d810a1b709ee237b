"""Chance-corrected agreement from category counts: observed agreement and kappa.

All functions here take the count matrix ``counts`` of shape (n_items, n_classes), where
``counts[i, j]`` is the number of annotators who put item ``i`` in category ``j``
(see :func:`labelaudit.agreement.annotation_counts`), except :func:`cohen_kappa`, which takes
two label vectors.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import InvalidInputError, format_rows

__all__ = ["cohen_kappa", "fleiss_kappa", "observed_agreement", "per_item_agreement"]


def check_counts(counts: ArrayLike, *, min_raters: int = 2) -> np.ndarray:
    """Validate a count matrix and return it as int64.

    Every item needs at least ``min_raters`` annotations; counts must be non-negative
    integers.
    """
    arr = np.asarray(counts)
    if arr.ndim != 2:
        raise InvalidInputError(
            f"counts must be a 2-D array (n_items, n_classes), got shape {arr.shape}"
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InvalidInputError(f"counts is empty (shape {arr.shape}): there is nothing to measure")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise InvalidInputError(f"counts must be numbers, got dtype {arr.dtype}")
    finite = np.isfinite(arr)
    if not finite.all() or (arr < 0).any() or (arr != np.round(arr)).any():
        wrong = ~finite | (arr < 0) | (arr != np.round(arr))
        bad = np.flatnonzero(wrong.any(axis=1))
        raise InvalidInputError(
            f"counts must be non-negative whole numbers; see {format_rows(bad.tolist())}"
        )
    arr = arr.astype(np.int64)
    raters = arr.sum(axis=1)
    few = np.flatnonzero(raters < min_raters)
    if len(few):
        raise InvalidInputError(
            f"agreement needs at least {min_raters} annotations per item; fewer in "
            f"{format_rows(few.tolist())} of counts (drop those items or collect more labels)"
        )
    return arr


def per_item_agreement(counts: ArrayLike) -> np.ndarray:
    """Share of agreeing annotator pairs on each item, the paper's :math:`P_{A_i}`.

    .. math:: P_{A_i} = \\sum_{j=1}^m \\binom{a_{ij}}{2} \\Big/ \\binom{k_i}{2}

    where :math:`k_i` is the number of annotations of item ``i`` (which may differ between
    items).

    Parameters
    ----------
    counts : array-like of shape (n_items, n_classes)

    Returns
    -------
    ndarray of shape (n_items,)
        1 for a unanimous item, lower for split ones.

    Examples
    --------
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

    where ``a_ij`` is the number of annotators who put item ``i`` in category ``j``.
    When items have different numbers of annotations ``k_i``, ``P_{A_i}`` uses ``k_i`` and
    ``p_j`` divides by the total number of annotations :math:`\\sum_i k_i` (the usual
    generalisation; with a constant ``k`` it is exactly equation 2, and equal to
    ``statsmodels.stats.inter_rater.fleiss_kappa``). It is kept rather than delegated to
    statsmodels because statsmodels refuses a table whose items have different numbers of
    annotations (an ``AssertionError``), which crowd data usually is; statsmodels is also
    only a development dependency.

    Parameters
    ----------
    counts : array-like of shape (n_items, n_classes)
        Non-negative whole numbers; every item needs at least 2 annotations.

    Returns
    -------
    float
        Kappa; NaN when chance agreement :math:`P_E` is 1 (every annotation in one
        category), where the statistic is undefined.

    Raises
    ------
    InvalidInputError
        Not a 2-D count matrix, or an item with fewer than 2 annotations.

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

    with each annotator's own category proportions (Cohen 1960), unlike Fleiss' kappa, which
    pools them. Computed by :func:`sklearn.metrics.cohen_kappa_score` on the labels coded as
    integers, so labels of any (even mixed) types work; where chance agreement is 1 (both
    annotators use one and the same category) kappa is NaN, without scikit-learn's warnings.

    Parameters
    ----------
    labels_a, labels_b : array-like of shape (n_samples,)
        The two annotators' labels, aligned by item.

    Returns
    -------
    float
        NaN when chance agreement is 1.

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
