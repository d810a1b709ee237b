"""How distinguishable erroneous items are from clean ones by their loss."""

from __future__ import annotations

from numpy.typing import ArrayLike

from labelaudit.evaluation._truth import Unknown, check_both_classes, check_truth

__all__ = ["loss_wasserstein_distance"]


def loss_wasserstein_distance(losses: ArrayLike, is_error: ArrayLike, *,
                              unknown: Unknown | None = None) -> float:
    """Wasserstein (earth mover's) distance between the losses of erroneous and clean items.

    Chong et al. (2022, section 7 and table 5) compare kinds of label noise by "the
    Wasserstein distances between noisy and clean loss distributions": the further apart
    the two distributions, the easier a loss ranking separates the errors. For two
    one-dimensional empirical distributions with CDFs ``U`` and ``V``,

    ``W1(U, V) = integral |U(x) - V(x)| dx``,

    computed by :func:`scipy.stats.wasserstein_distance`. It is in the units of the loss.

    Parameters
    ----------
    losses : array-like of shape (n_items,)
        Per-item losses (e.g. out-of-sample cross-entropy of the given label), any sign.
    is_error : array-like of shape (n_items,)
        True where the given label is wrong; float with NaN for unverified items.
    unknown : {"exclude", "clean"}, optional
        Required when ``is_error`` has NaN.

    Returns
    -------
    float
        ``>= 0``; 0 when both groups have the same loss distribution.

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, EMNLP, section 7 and table 5.

    Examples
    --------
    >>> loss_wasserstein_distance([3.0, 0.5, 2.0, 0.1], [True, False, True, False])
    2.2
    """
    from scipy.stats import wasserstein_distance

    truth = check_truth(is_error, losses, unknown=unknown, name="losses")
    check_both_classes(
        truth, "the Wasserstein distance needs both erroneous and clean items;"
    )
    losses_ = truth.scores
    return float(wasserstein_distance(losses_[truth.is_error], losses_[~truth.is_error]))

