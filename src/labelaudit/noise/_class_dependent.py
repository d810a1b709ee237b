"""Class-dependent label noise from a row-stochastic noise matrix."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.detect import import_cleanlab
from labelaudit.io import clean_label
from labelaudit.noise._common import Flips, NoiseData, Shortfall, allocate

if TYPE_CHECKING:
    import pandas as pd


def random_noise_matrix(n_classes: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Draw a row-stochastic noise matrix of shape (n_classes, n_classes) with mean rate ``rate``.

    ``T[i, j] = P(noisy j | clean i)`` with trace ``n_classes * (1 - rate)``: classes differ
    in noise, every diagonal entry below 1. Drawn by cleanlab's
    ``generate_noise_matrix_from_trace`` (transposed), seeded from ``rng``; numpy's global
    random state, which cleanlab uses, is restored afterwards.

    Examples
    --------
    >>> matrix = random_noise_matrix(3, 0.1, np.random.default_rng(0))
    >>> matrix.shape, bool(np.allclose(matrix.sum(axis=1), 1))
    ((3, 3), True)
    >>> round(float(np.trace(matrix)), 6)
    2.7
    """
    if n_classes < 2 or rate <= 0:
        return np.eye(n_classes)
    generation = import_cleanlab("cleanlab.benchmarking.noise_generation")
    seed = int(rng.integers(2**32 - 1))
    state = np.random.get_state()  # noqa: NPY002 - cleanlab's draws must not leak out
    try:
        matrix = generation.generate_noise_matrix_from_trace(
            n_classes, n_classes * (1.0 - rate), max_trace_prob=1.0 - rate / 2,
            valid_noise_matrix=False, seed=seed)
    finally:
        np.random.set_state(state)  # noqa: NPY002
    return np.asarray(matrix, dtype=float).T


def _key(value: object) -> str:
    """A class as text, so that 1, 1.0 and ``np.int64(1)`` name the same class."""
    return str(clean_label(value))


def check_noise_matrix(matrix: np.ndarray | pd.DataFrame, classes: np.ndarray) -> np.ndarray:
    """Validate a noise matrix ``T[i, j] = P(noisy label j | clean label i)``; a DataFrame is
    aligned with ``classes`` by index and columns, an array must be in their order.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame([[0.1, 0.9], [1.0, 0.0]], index=["b", "a"], columns=["a", "b"])
    >>> check_noise_matrix(frame, np.array(["a", "b"])).tolist()
    [[1.0, 0.0], [0.1, 0.9]]
    """
    import pandas as pd
    n_classes = len(classes)
    if isinstance(matrix, pd.DataFrame):
        wanted = [_key(c) for c in np.asarray(classes).tolist()]
        rows = {_key(r): i for i, r in enumerate(matrix.index.tolist())}
        cols = {_key(c): j for j, c in enumerate(matrix.columns.tolist())}
        missing = sorted({w for w in wanted if w not in rows or w not in cols})
        if missing:
            raise InvalidParameterError(
                f"the noise matrix has no row or column for the classes {missing}; it needs "
                f"one row and one column per class of {wanted} (row = clean, column = noisy)"
            )
        extra = sorted((set(rows) | set(cols)) - set(wanted))
        if extra:
            raise InvalidParameterError(
                f"the noise matrix names classes that are not labels of the data: {extra}")
        values = matrix.to_numpy()
        try:
            matrix = np.asarray(values[np.ix_([rows[w] for w in wanted],
                                              [cols[w] for w in wanted])], dtype=float)
        except (TypeError, ValueError):
            raise InvalidParameterError("the noise matrix must hold numbers") from None
    else:
        matrix = np.asarray(matrix, dtype=float)
    if matrix.shape != (n_classes, n_classes):
        raise InvalidParameterError(
            f"the noise matrix must have shape ({n_classes}, {n_classes}), one row and column "
            f"per class; got {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)) or matrix.min(initial=0.0) < 0:
        raise InvalidParameterError("the noise matrix must hold finite, non-negative numbers")
    sums = matrix.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1) > 1e-6)
    if len(bad):
        raise InvalidParameterError(
            "every row of the noise matrix must sum to 1 (row = clean class, column = noisy "
            f"class); rows {np.asarray(classes)[bad].tolist()} sum to {sums[bad].round(4).tolist()}"
        )
    return matrix


def class_dependent_flips(data: NoiseData, eligible: np.ndarray, count: int,
                          rng: np.random.Generator) -> Flips:
    """Flip exactly ``count`` items following the noise matrix ``T``.

    ``T[i, j] = P(y~ = j | y = i)`` is the class-conditional noise model of Angluin &
    Laird (1988) and Natarajan et al. (2013), the "class-based noise" of Chong, Hong &
    Manning (2022, table 5). To hit the count exactly, class ``i`` gets a share of the
    flips proportional to ``n_i (1 - T[i, i])`` (its expected number of flips under
    ``T``), and its flips are split among the other classes in proportion to ``T[i, j]``,
    each by largest-remainder rounding; the items are drawn at random within their class.
    """
    matrix = data.noise_matrix
    if matrix is None:  # pragma: no cover - inject_noise always sets one
        raise InvalidParameterError("class-dependent noise needs a noise matrix")
    labels, k = data.labels, data.n_classes
    sizes = np.bincount(labels[eligible], minlength=k)
    flip = 1.0 - np.diag(matrix)
    caps = np.where(flip > 1e-12, sizes, 0)
    if count > caps.sum():
        raise Shortfall(int(caps.sum()), "classes the noise matrix never flips are left out")
    per_class = allocate(count, sizes * flip, caps)
    items, new = [], []
    for i in range(k):
        if per_class[i] == 0:
            continue
        pool = np.flatnonzero(eligible & (labels == i))
        chosen = rng.choice(pool, size=per_class[i], replace=False)
        others = np.array([j for j in range(k) if j != i])
        targets = np.repeat(others, allocate(int(per_class[i]), matrix[i, others]))
        items.append(chosen)
        new.append(rng.permutation(targets))
    return Flips.gathered(items, new)
