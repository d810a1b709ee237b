"""The options of ``scan``: the ranking methods, the flag rule, ensemble weights, and the
options that cannot go with the user's own probabilities, all checked before any work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_choice, check_fraction, check_int
from labelaudit.models import check_cache_dir
from labelaudit.registry import RANKING_METHODS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_METHOD", "DEFAULT_METHODS", "METHODS", "MODEL_MEMBERS", "Method",
           "check_flagging", "check_given_probs", "check_member_options", "check_options",
           "check_preset", "check_weights", "id_column"]

Method = Literal["loss", "ensemble", "self_confidence", "margin", "entropy", "max_prob",
                 "confident_learning", "crowdlab"]
METHODS: tuple[str, ...] = RANKING_METHODS.names()
DEFAULT_METHOD = "ensemble"
# self_confidence ranks exactly as ensemble does (-log p is monotone in p), so it is
# computed only when asked for; crowdlab only with annotations.
DEFAULT_METHODS: tuple[str, ...] = (*RANKING_METHODS.default, "crowdlab")
# The members that an encoder (model=) configures, and those that encode sentence pairs
# as pair_mode= says.
MODEL_MEMBERS: tuple[str, ...] = ("embed", "finetune", "knn", "dynamics")
PAIR_MODE_MEMBERS: tuple[str, ...] = ("embed", "dynamics")
# The members that keep their embeddings under cache_dir=.
CACHE_MEMBERS: tuple[str, ...] = ("embed", "knn", "dynamics")


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
                f"weights must be 'auto', 'equal' or numbers; got {weights!r}", param="weights")
        if weights == "equal" and len(scorers) < 2:
            raise InvalidParameterError(
                "weights='equal' needs at least two scorers; with one there is nothing to weigh",
                param="weights")
        return
    values = list(weights)  # type: ignore[call-overload]
    if len(scorers) < 2:
        raise InvalidParameterError(
            "ensemble weights need at least two scorers; with one there is nothing to weigh",
            param="weights")
    if len(values) != len(scorers):
        raise InvalidParameterError(
            f"give one weight per scorer: {len(values)} weights for {len(scorers)} scorers "
            f"({', '.join(scorers)})", param="weights")
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidParameterError(f"weights must be numbers; got {values!r}",
                                    param="weights") from None
    if any(not np.isfinite(v) or v < 0 for v in numbers) or sum(numbers) <= 0:
        raise InvalidParameterError(
            f"weights must be non-negative numbers with a positive sum; got {numbers}",
            param="weights")


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
            "let labelaudit fit its own models", param=(*conflicts, "pred_probs"))


def check_member_options(members: Sequence[Any], *, model: object, pair_mode: object,
                         text_pair: object, embeds: bool = False, long_texts: object = None,
                         tuning: Sequence[str] = (), sweep: int = 0,
                         cache_dir: object = None) -> None:
    """Options that the members would ignore are refused before any work, each naming the
    members that take it: ``model`` when no member (nor ``embeds``, Datalab's embedding
    features) takes an encoder, ``pair_mode`` for single texts (no ``text_pair``) or when no
    member encodes pairs, ``long_texts`` without embed, ``tuning`` (the names of the
    fine-tuning options given) and ``sweep`` without finetune, ``cache_dir`` when no member
    (nor ``embeds``) encodes texts. ``members`` are names or scorers."""
    names = [m if isinstance(m, str) else str(getattr(m, "name", "")) for m in members]

    def refuse(given: Sequence[str], what: str, takers: Sequence[str], add: str) -> None:
        if given and not set(names) & set(takers):
            named = ", ".join(f"{name}=" for name in given)
            raise InvalidParameterError(
                f"{named} {'sets' if len(given) == 1 else 'set'} {what}; the members "
                f"({', '.join(names)}) take none: add {add} to scorers=, or drop "
                f"{named if len(given) == 1 else 'them'}", param=(*given, "scorers"))

    if not embeds:
        refuse(["model"] if model is not None else [],
               "the encoder of the embed, finetune, knn and dynamics scorers", MODEL_MEMBERS,
               "one")
    if pair_mode is not None and text_pair is None:
        raise InvalidParameterError(
            "pair_mode= sets how sentence pairs are encoded; without text_pair= the texts "
            "are single: give text_pair=, or drop pair_mode=", param=("pair_mode", "text_pair"))
    refuse(["pair_mode"] if pair_mode is not None else [],
           "how the embed and dynamics scorers encode sentence pairs", PAIR_MODE_MEMBERS,
           "embed")
    refuse(["long_texts"] if long_texts is not None else [],
           "how the embed scorer reads texts longer than its encoder's window", ("embed",),
           "embed")
    refuse(list(tuning), "the fine-tuning of the finetune scorer", ("finetune",), "finetune")
    refuse(["sweep"] if sweep else [], "the fine-tuning sweep of the finetune scorer",
           ("finetune",), "finetune")
    if cache_dir is not None and not embeds:
        refuse(["cache_dir"], "where the embed, knn and dynamics scorers keep their "
               "embeddings", CACHE_MEMBERS, "one")
    if cache_dir is not None and (embeds or set(names) & set(CACHE_MEMBERS)):
        check_cache_dir(cache_dir)


def check_flagging(top: int | None, threshold: float | None) -> None:
    """The flag rule's options: at most one of ``top`` (a count) and ``threshold``."""
    if top is not None and threshold is not None:
        raise InvalidParameterError("give at most one of top and threshold",
                                    param=("top", "threshold"))
    if top is not None:
        check_int(top, "top", minimum=0)
    if threshold is not None:
        check_fraction(threshold, "threshold")


def check_options(methods: Sequence[str], rank_by: str, top: int | None,
                   threshold: float | None, n_seeds: int, annotations: str | None) -> None:
    if annotations is None and "crowdlab" in [*methods, rank_by]:
        raise InvalidParameterError(
            "the crowdlab method needs several annotators' labels: give annotations=COLUMN",
            param=("rank_by" if rank_by == "crowdlab" else "methods", "annotations"))
    for method in methods:
        RANKING_METHODS.check(method)
    check_choice(rank_by, "rank_by", METHODS)
    check_flagging(top, threshold)
    check_int(n_seeds, "n_seeds", minimum=1)


def check_preset(preset: str | None, scorers: object) -> None:
    """A preset names the members: it cannot come with ``scorers``."""
    if preset is not None and scorers is not None:
        raise InvalidParameterError("preset names the members: give preset or scorers, not both",
                                    param=("preset", "scorers"))


def scan_members(*, methods: Sequence[str] | None, rank_by: str | None,
                 annotations: str | None, top: int | None, threshold: float | None,
                 n_seeds: int, datalab_features: str, engine: str, ray_address: str | None,
                 pred_probs: object, classes: object, scorers: Sequence[Any] | None,
                 preset: str | None, model: str | None, sweep: int, score: object,
                 weights: object, pair_mode: object) -> tuple[list[str], str, list[Any]]:
    """The options of a scan of single labels, checked before its inputs are read: the
    ranking methods to compute, the method that orders the output, and the members (the
    given scorers, a preset's, or the default ones)."""
    from labelaudit.engine import check_engine
    from labelaudit.models._registry import member_keys
    from labelaudit.registry import SCORERS
    from labelaudit.scanning._presets import preset_members

    wanted = (list(methods) if methods is not None else
              [m for m in DEFAULT_METHODS if m != "crowdlab" or annotations is not None])
    order_by = (rank_by if rank_by is not None
                else "crowdlab" if annotations is not None else DEFAULT_METHOD)
    check_options(wanted, order_by, top, threshold, n_seeds, annotations)
    check_choice(datalab_features, "datalab_features", ("tfidf", "embed"))
    check_engine(engine, ray_address)
    if pred_probs is not None:
        check_given_probs(scorers=scorers, model=model, sweep=sweep, score=score,
                          n_seeds=n_seeds, weights=weights, pair_mode=pair_mode,
                          preset=preset)
    elif classes is not None:
        raise InvalidParameterError(
            "classes= names the columns of pred_probs; give pred_probs too, or drop classes=",
            param=("classes", "pred_probs"))
    check_preset(preset, scorers)
    if preset is not None:
        scorers = preset_members(preset, model=model)
    if scorers is not None and not scorers:
        raise InvalidParameterError("give at least one scorer", param="scorers")
    members = list(scorers) if scorers is not None else list(SCORERS.default)
    if pred_probs is None:
        check_weights(weights, member_keys(members))
    return wanted, order_by, members
