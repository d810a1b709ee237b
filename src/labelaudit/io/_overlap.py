"""Checks that two sets a command compares are two sets: not one file given twice, and not
mostly the same items."""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from pathlib import Path

from labelaudit._errors import InvalidParameterError, LabelAuditWarning
from labelaudit.io._paths import same_file

__all__ = ["OVERLAP_WARN_SHARE", "OverlapWarning", "check_distinct_files", "warn_overlap"]

# The share of one set's items found in the other above which a comparison is suspect.
OVERLAP_WARN_SHARE = 0.1


class OverlapWarning(LabelAuditWarning):
    """Many items of one set are also in the set it is compared with."""


def check_distinct_files(sources: Sequence[tuple[str, object]], *, why: str) -> None:
    """Refuse one file given as two sets that are compared.

    Parameters
    ----------
    sources : sequence of (name, source)
        Each set's name in a message (a parameter such as ``suspect``) and what was given:
        a path is compared with the other paths; a DataFrame or dataset is skipped.
    why : str
        Why the comparison needs two sets, the end of the message.

    Examples
    --------
    >>> check_distinct_files([("train", "a.csv"), ("suspect", "b.csv")], why="...")
    >>> check_distinct_files([("train", "a.csv"), ("suspect", "./a.csv")], why="...")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: train and suspect are the same file (a.csv): ...
    """
    paths = [(name, source) for name, source in sources if isinstance(source, (str, Path))]
    for i, (first, a) in enumerate(paths):
        for second, b in paths[i + 1:]:
            if same_file(a, b):  # type: ignore[arg-type]
                raise InvalidParameterError(
                    f"{first} and {second} are the same file ({a}): {why}")


def warn_overlap(first: tuple[str, Sequence[Hashable]], second: tuple[str, Sequence[Hashable]],
                 *, why: str, same: str = "text", share: float = OVERLAP_WARN_SHARE) -> float:
    """Warn (:class:`OverlapWarning`) when more than ``share`` of the second set's items
    are also in the first set; returns the share found.

    Parameters
    ----------
    first, second : (name, keys)
        Each set's name in the message and a key per item (its text, or its text and
        text pair, or its tokens as a tuple): equal keys are the same item.
    why : str
        What the overlap does to the result, the end of the message.
    same : str
        What equal keys share, for the message (``"text"``, ``"tokens"``).
    share : float
        The share above which to warn.

    Examples
    --------
    >>> warn_overlap(("training", ["a", "b", "c"]), ("suspect", ["d", "e"]), why="...")
    0.0
    """
    name, keys = second
    if not len(keys):
        return 0.0
    seen = set(first[1])
    shared = sum(key in seen for key in keys)
    found = shared / len(keys)
    if found > share:
        warnings.warn(OverlapWarning(
            f"{shared} of the {len(keys)} {name} items ({found:.0%}) are also in the "
            f"{first[0]} set (the same {same}): {why}"), stacklevel=3)
    return found
