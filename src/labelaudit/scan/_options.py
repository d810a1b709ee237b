"""The options of ``scan``: the ranking methods, the flag rule, ensemble weights, and the
options that cannot go with the user's own probabilities, all checked before any work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice, check_fraction, check_int
from labelaudit.registry import RANKING_METHODS

__all__ = ["DEFAULT_METHOD", "DEFAULT_METHODS", "METHODS", "Method", "check_flagging",
           "check_given_probs", "check_options", "check_weights", "id_column"]

Method = Literal["loss", "ensemble", "self_confidence", "margin", "entropy", "max_prob",
                 "confident_learning", "crowdlab"]
METHODS: tuple[str, ...] = RANKING_METHODS.names()
DEFAULT_METHOD = "ensemble"
# self_confidence ranks exactly as ensemble does (-log p is monotone in p), so it is
# computed only when asked for; crowdlab only with annotations.
DEFAULT_METHODS: tuple[str, ...] = (*RANKING_METHODS.default, "crowdlab")


def id_column(frame: pd.DataFrame, id: str | None) -> str | None:  # noqa: A002
    """The id column to use: ``id`` when given, else a column named ``id`` if the table
    has one, else None (row numbers)."""
    if id is not None:
        return id
    return "id" if "id" in frame.columns else None


def check_weights(weights: object, scorers: Sequence[str]) -> None:  # member names
    if isinstance(weights, str):
        if weights not in ("auto", "equal"):
            raise InvalidParameterError(
                f"weights must be 'auto', 'equal' or numbers; got {weights!r}")
        if weights == "equal" and len(scorers) < 2:
            raise InvalidParameterError(
                "weights='equal' needs at least two scorers; with one there is nothing to weigh")
        return
    values = list(weights)  # type: ignore[call-overload]
    if len(scorers) < 2:
        raise InvalidParameterError(
            "ensemble weights need at least two scorers; with one there is nothing to weigh")
    if len(values) != len(scorers):
        raise InvalidParameterError(
            f"give one weight per scorer: {len(values)} weights for {len(scorers)} scorers "
            f"({', '.join(scorers)})")
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidParameterError(f"weights must be numbers; got {values!r}") from None
    if any(not np.isfinite(v) or v < 0 for v in numbers) or sum(numbers) <= 0:
        raise InvalidParameterError(
            f"weights must be non-negative numbers with a positive sum; got {numbers}")


def check_given_probs(*, scorers: object, model: object, sweep: int, score: object,
                       n_seeds: int, weights: object, pair_mode: object,
                       preset: object = None) -> None:
    """pred_probs replace the scorers: an option that configures them is a conflict."""
    conflicts = [name for name, given in (
        ("scorers", scorers is not None), ("preset", preset is not None),
        ("model", model is not None), ("sweep", bool(sweep)),
        ("score", score is not None), ("n_seeds", n_seeds != 1),
        ("weights", not isinstance(weights, str) or weights != "auto"),
        ("pair_mode", pair_mode is not None)) if given]
    if conflicts:
        raise InvalidParameterError(
            f"pred_probs replaces the scorers, so {', '.join(conflicts)} cannot be given with "
            "it; drop " + ("them" if len(conflicts) > 1 else "it") + ", or drop pred_probs to "
            "let labelaudit fit its own models")


def check_flagging(top: int | None, threshold: float | None) -> None:
    """The flag rule's options: at most one of ``top`` (a count) and ``threshold``."""
    if top is not None and threshold is not None:
        raise InvalidParameterError("give at most one of top and threshold")
    if top is not None:
        check_int(top, "top", minimum=0)
    if threshold is not None:
        check_fraction(threshold, "threshold")


def check_options(methods: Sequence[str], rank_by: str, top: int | None,
                   threshold: float | None, n_seeds: int, annotations: str | None) -> None:
    if annotations is None and "crowdlab" in [*methods, rank_by]:
        raise InvalidParameterError(
            "the crowdlab method needs several annotators' labels: give annotations=COLUMN "
            "(--annotations)")
    for method in methods:
        RANKING_METHODS.check(method)
    check_choice(rank_by, "rank_by", METHODS)
    check_flagging(top, threshold)
    check_int(n_seeds, "n_seeds", minimum=1)
