"""The training orders of the learning-curve test (Zeng et al., Figures 1 and 2): exclusive
subsets of the training set, the suspect set and its corrected part, as index arrays.

Identify (Figure 1): three exclusive training subsets of size x, T0 (the new test set), T1
(green) and T2 (blue), and the suspect set S (x items of it):

- ``TrainTest`` = T2 then S, ``PureTrain`` = T1 then T2, ``TestTrain`` = S then T2.

Validate (Figure 2): the suspect set splits into the items the correction changed, with
their original labels (``Mistake``, z) or corrected ones (``Correct``, z), and the unchanged
rest (``Test``, y); training subsets X (the new test set, x), Y (y), W (w) and Z (z):

- ``TestTrain{M}`` = Test, W, M;  ``PureTrain{M}`` = Y, W, M;
- ``{M}TestTrain`` = M, Test, W;  ``{M}PureTrain`` = M, Y, W   for M in Mistake, Correct;

and two references of training data only, each scheme's suspect parts replaced by training
subsets of the same size: ``PureTrainTrain`` = Y, W, Z (for the schemes that end with M)
and ``TrainPureTrain`` = Z, Y, W (for those that start with it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from labelaudit._errors import InvalidParameterError

__all__ = ["IDENTIFY", "VALIDATE", "SchemeDraw", "draw_schemes", "validate_sizes"]

IDENTIFY = {"TrainTest": "PureTrain", "TestTrain": "PureTrain"}
VALIDATE = {
    **{f"TestTrain{m}": "PureTrainTrain" for m in ("Mistake", "Correct")},
    **{f"PureTrain{m}": "PureTrainTrain" for m in ("Mistake", "Correct")},
    **{f"{m}TestTrain": "TrainPureTrain" for m in ("Mistake", "Correct")},
    **{f"{m}PureTrain": "TrainPureTrain" for m in ("Mistake", "Correct")},
}


@dataclass(frozen=True)
class SchemeDraw:
    """One repeat's draw: the new test set and each scheme's training order.

    ``schemes`` maps a scheme name to its segments ``(part, indices)`` in feeding order;
    indices point into the pool (training items first, then the suspect items, then their
    corrected copies).
    """

    test: np.ndarray
    schemes: dict[str, list[tuple[str, np.ndarray]]]

    def order(self, name: str) -> np.ndarray:
        """The scheme's items in the order they are fed."""
        return np.concatenate([part for _, part in self.schemes[name]])


def validate_sizes(n_train: int, n_suspect: int, n_mistakes: int, size: int,
                   extra: int) -> tuple[int, int, int, int]:
    """(x, y, w, z) of Figure 2, checked against the training set's size."""
    y, z = n_suspect - n_mistakes, n_mistakes
    if z == 0:
        raise InvalidParameterError(
            "the corrected file changes no label of the suspect set: there is nothing to "
            "validate")
    need = size + y + extra + z
    if need > n_train:
        room = max(0, (n_train - y - z) // 2)
        raise InvalidParameterError(
            f"validating needs exclusive training subsets of {size} + {y} + {extra} + {z} = "
            f"{need} items, the training set has {n_train}: use --size (and --train-size) so "
            f"that size + train-size <= {n_train - y - z} (e.g. --size {room})")
    return size, y, extra, z


def draw_schemes(
    n_train: int,
    n_suspect: int,
    *,
    size: int,
    rng: np.random.Generator,
    mistakes: np.ndarray | None = None,
    extra: int | None = None,
) -> SchemeDraw:
    """Draw one repeat's subsets and build the schemes (see the module docstring).

    Parameters
    ----------
    n_train, n_suspect : int
        Pool layout: training items ``0..n_train-1``, suspect items after them, and (with
        ``mistakes``) their corrected copies after those.
    size : int
        x, the size of every identify subset and of the new test set.
    mistakes : ndarray of int, optional
        Positions in the suspect set whose labels the correction changed (validate).
    extra : int, optional
        w, the training subset fed between the others in validate (default ``size``).

    Examples
    --------
    >>> draw = draw_schemes(9, 3, size=3, rng=np.random.default_rng(0))
    >>> sorted(draw.schemes), len(draw.test), len(draw.order("TestTrain"))
    (['PureTrain', 'TestTrain', 'TrainTest'], 3, 6)
    """
    if size < 1:
        raise InvalidParameterError(f"size must be at least 1, got {size}")
    if 3 * size > n_train:
        raise InvalidParameterError(
            f"identifying needs three exclusive training subsets of size {size} "
            f"({3 * size} items); the training set has {n_train}: use --size {n_train // 3} "
            "or less")
    if size > n_suspect:
        raise InvalidParameterError(
            f"size {size} is larger than the suspect set ({n_suspect} items)")
    perm = rng.permutation(n_train)
    test, t1, t2 = perm[:size], perm[size:2 * size], perm[2 * size:3 * size]
    suspect = n_train + rng.permutation(n_suspect)[:size]
    schemes: dict[str, list[tuple[str, np.ndarray]]] = {
        "TrainTest": [("T2", t2), ("S", suspect)],
        "PureTrain": [("T1", t1), ("T2", t2)],
        "TestTrain": [("S", suspect), ("T2", t2)],
    }
    if mistakes is not None:
        w = size if extra is None else extra
        x, y, w, z = validate_sizes(n_train, n_suspect, len(mistakes), size, w)
        changed = np.zeros(n_suspect, dtype=bool)
        changed[np.asarray(mistakes, dtype=int)] = True
        order = rng.permutation(n_suspect)
        wrong = n_train + order[changed[order]]
        parts = {
            "Test": n_train + order[~changed[order]],
            "Mistake": wrong,
            "Correct": wrong + n_suspect,  # the same items, corrected, in the same order
            "Y": perm[x:x + y], "W": perm[x + y:x + y + w], "Z": perm[x + y + w:x + y + w + z],
        }
        for m in ("Mistake", "Correct"):
            schemes[f"TestTrain{m}"] = [(p, parts[p]) for p in ("Test", "W", m)]
            schemes[f"PureTrain{m}"] = [(p, parts[p]) for p in ("Y", "W", m)]
            schemes[f"{m}TestTrain"] = [(p, parts[p]) for p in (m, "Test", "W")]
            schemes[f"{m}PureTrain"] = [(p, parts[p]) for p in (m, "Y", "W")]
        schemes["PureTrainTrain"] = [(p, parts[p]) for p in ("Y", "W", "Z")]
        schemes["TrainPureTrain"] = [(p, parts[p]) for p in ("Z", "Y", "W")]
    return SchemeDraw(test=test, schemes=schemes)
