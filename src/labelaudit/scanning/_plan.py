"""What the options of a scan decide before any work: its members (a preset, the scorers and
their fine-tuning options), whether it streams, and the ensemble weights.

Messages name an option as ``name=value`` or, alone, as ``name=`` (the command line spells
them as its flags, see :func:`labelaudit.cli._common.as_flags`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from labelaudit._errors import InvalidParameterError
from labelaudit.registry import SCORERS, STREAMED_SCORERS
from labelaudit.scanning._options import check_member_options
from labelaudit.scanning._presets import preset_settings

__all__ = ["ScanPlan", "memory_needs", "plan_scan"]

_TUNING = ("epochs", "max_length", "batch_size", "learning_rate", "devices")
# The options that configure labelaudit's models, and their values when not given.
_MODEL_OPTIONS = {"scorers": None, "preset": None, "model": None, "epochs": None,
                  "max_length": None, "batch_size": None, "learning_rate": None,
                  "devices": None, "sweep": 0, "long_texts": None, "pair_mode": None,
                  "score": None, "n_seeds": 1, "weights": "auto", "keep": None}
# The options only the in-memory scan has, and their values when not given.
_IN_MEMORY = {"label_sep": None, "split": None, "score": None, "pred_probs": None,
              "annotations": None,
              "methods": None, "rank_by": None, "weights": "auto", "n_seeds": 1,
              "datalab": False, "report_out": None, "sweep": 0, "long_texts": None,
              **{name: None for name in _TUNING}}


@dataclass(frozen=True)
class ScanPlan:
    """How a scan runs, as :func:`plan_scan` decided it from its options.

    Attributes
    ----------
    streams : bool
        Whether the scan streams (:func:`~labelaudit.scanning.scan` with ``out``) rather than runs
        in memory (:func:`~labelaudit.scanning.scan`).
    scorers : list of str or None
        The member names, a preset's when one was given; None for scan's default members.
    members : list or None
        The ``scorers`` of :func:`~labelaudit.scanning.scan`: a name per member, or a
        configured scorer where a model or a fine-tuning option applies (one per model for
        embed and finetune); None for the default members (which scan screens), for given
        probabilities and for a streamed scan.
    weights : str or list of float
        The ensemble weights: ``"auto"``, ``"equal"`` or one number per member.
    embed : EmbedOptions or None
        The encoder of a streamed scan's embed member (the first ``model``, ``pair_mode``,
        ``cache_dir``); None for a scan in memory.
    """

    streams: bool
    scorers: list[str] | None
    members: list[Any] | None
    weights: Literal["auto", "equal"] | list[float]
    embed: Any = None


def plan_scan(data: str | Path | Sequence[str | Path], *, label: str = "label",
              out: str | None = None,
              scorers: Sequence[str] | None = None, preset: str | None = None,
              model: Sequence[str] | None = None, epochs: int | None = None,
              max_length: int | None = None, batch_size: int | None = None,
              learning_rate: float | None = None, devices: Sequence[str] | None = None,
              sweep: int = 0, keep: int | None = None, long_texts: str | None = None,
              pair_mode: str | None = None, cache_dir: str | Path | None = None,
              score: object = None,
              pred_probs: object = None, classes: Sequence[str] | None = None,
              n_seeds: int = 1, weights: str | Sequence[float] = "auto",
              label_sep: str | None = None, split: str | None = None,
              annotations: str | None = None, methods: Sequence[str] | None = None,
              rank_by: str | None = None, datalab: bool = False, report_out: object = None,
              engine: str | None = None, ray_address: str | None = None,
              n_folds: int = 5, text_pair: str | None = None,
              datalab_features: str | None = None) -> ScanPlan:
    """Decide, before any work, how a scan of ``data`` runs with these options (those of
    ``labelaudit scan``; ``report_out``: a report is written too), and refuse options that
    would be ignored or cannot go together.

    A scan streams with ``engine`` and nothing that needs every item in memory, or when it
    is a TF-IDF scan of a streamable file written to ``out`` (``engine`` None). ``engine``
    ``"ray"`` with what needs memory runs in memory, its folds as Ray tasks.

    Parameters
    ----------
    data : str or path
        What the scan reads: a file whose first rows say whether it holds label sets.
    preset : str, optional
        A measured set of members (:data:`~labelaudit.scanning.PRESETS`) instead of
        ``scorers``; its fine-tuning settings give way to those given here.
    model : list of str, optional
        The encoders of embed and finetune, one member per model.
    epochs, max_length, batch_size, learning_rate, devices : optional
        The fine-tuning options of the finetune member.
    sweep, keep : int, optional
        The configurations of the finetune member's sweep, and how many of them are kept
        (None: not given, as ``keep`` matters only with a sweep).
    weights : str or sequence of float
        ``"auto"``, ``"equal"``, numbers, or a comma-separated text of numbers.

    The other options are those of :func:`~labelaudit.scanning.scan` and
    :func:`~labelaudit.scanning.scan_stream`.

    Returns
    -------
    ScanPlan

    Raises
    ------
    InvalidParameterError
        An option given without the one it goes with, or with one it cannot go with
        (each names its options, ``param``: a usage error on the command line).

    Examples
    --------
    >>> plan_scan("data.csv", scorers=["tfidf"], epochs=3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: epochs= sets the fine-tuning of the finetune ...
    >>> plan = plan_scan("data.csv", scorers=["tfidf", "tfidf-char"], weights="1,2")
    >>> plan.streams, plan.members, plan.weights
    (False, ['tfidf', 'tfidf-char'], [1.0, 2.0])
    """
    options = {"scorers": scorers, "preset": preset, "model": model, "sweep": sweep,
               "keep": keep,
               "long_texts": long_texts, "pair_mode": pair_mode, "score": score,
               "n_seeds": n_seeds, "weights": weights, "label_sep": label_sep, "split": split,
               "pred_probs": pred_probs, "annotations": annotations, "methods": methods,
               "rank_by": rank_by, "datalab": datalab, "report_out": report_out}
    tuning = {"epochs": epochs, "max_length": max_length, "batch_size": batch_size,
              "learning_rate": learning_rate, "devices": devices}
    _check_pred_probs(pred_probs, classes, {**options, **tuning})
    if keep is not None and not sweep:
        raise InvalidParameterError("keep= sets how many configurations of the sweep are "
                                    "kept, and no sweep runs: give sweep=, or drop keep=",
                                    param=("keep", "sweep"))
    if preset is not None:
        if scorers is not None:
            raise InvalidParameterError("preset= names the members: give preset= or "
                                        "scorers=, not both", param=("preset", "scorers"))
        scorers, settings = preset_settings(
            preset, **{k: v for k, v in tuning.items() if k != "devices"})
        tuning.update(settings)
        options["scorers"] = scorers
    streams = _streams(data, label=label, out=out, engine=engine, ray_address=ray_address,
                       n_folds=n_folds, options={**options, **tuning})
    if pred_probs is None:
        check_member_options(
            list(scorers or (STREAMED_SCORERS if streams else SCORERS.default)), model=model,
            pair_mode=pair_mode, text_pair=text_pair,
            embeds=datalab and datalab_features == "embed", long_texts=long_texts,
            tuning=[name for name, value in tuning.items() if value is not None],
            sweep=sweep, cache_dir=cache_dir)
    if not streams and ("://" in str(out or "") or str(out or "").endswith("/")):
        raise InvalidParameterError(
            f"out={out!r}: only a streamed scan writes to a folder or a URI (engine='local' "
            "or ray, with the tfidf and embed members and nothing that needs every item in "
            "memory); write a local file")
    if isinstance(weights, str) and weights not in ("auto", "equal"):
        try:
            weights = [float(w) for w in weights.split(",") if w.strip()]
        except ValueError:
            raise InvalidParameterError(
                f"weights= must be auto, equal or numbers; got {weights!r}",
                param="weights") from None
    members = None if streams or pred_probs is not None else _members(
        scorers, model=model, sweep=sweep, long_texts=long_texts, pair_mode=pair_mode,
        cache_dir=cache_dir, tuning={k: v for k, v in tuning.items() if v is not None})
    from labelaudit.engine import EmbedOptions

    embed = EmbedOptions(model=model[0] if model else None,
                         pair_mode=cast(Any, pair_mode or "features"),
                         cache_dir=cache_dir) if streams else None
    return ScanPlan(streams=streams, scorers=None if scorers is None else list(scorers),
                    members=members, weights=list(weights) if not isinstance(weights, str)
                    else "equal" if weights == "equal" else "auto", embed=embed)


def _named(given: Sequence[str]) -> str:
    """Options named alone (``epochs=, n_seeds=``), as the messages say them."""
    return ", ".join(name if "=" in name else f"{name}=" for name in given)


def _given(options: dict[str, Any], unset: dict[str, Any]) -> list[str]:
    """The names of ``unset`` (option: its value when not given) that ``options`` gives
    another value (an array or a list too; a missing option is not given)."""
    def given(value: Any, default: Any) -> bool:
        if value is None or default is None:
            return value is not default
        return not isinstance(value, type(default)) or bool(value != default)

    return [name for name, default in unset.items() if given(options.get(name, default),
                                                               default)]


def _check_pred_probs(pred_probs: object, classes: object, options: dict[str, Any]) -> None:
    """Given probabilities replace the models: refuse the options that configure them."""
    if pred_probs is None:
        if classes is not None:
            raise InvalidParameterError("classes= names the columns of pred_probs=; give "
                                        "pred_probs= too, or drop classes=",
                                        param=("classes", "pred_probs"))
        return
    given = _given(options, _MODEL_OPTIONS)
    if given:
        raise InvalidParameterError(
            f"pred_probs= replaces labelaudit's models, so {_named(given)} cannot be given "
            "with it; drop " + ("them" if len(given) > 1 else "it") + ", or drop pred_probs=",
            param=(*given, "pred_probs"))


def memory_needs(options: dict[str, Any]) -> list[str]:
    """The options in ``options`` (a scan's, by name) that need every item in memory, so
    that a streamed scan cannot run them, named as the messages name them: the options of
    :data:`_IN_MEMORY` given, a member that does not stream, more than one ``model``."""
    scorers, model = options.get("scorers"), options.get("model")
    needs = _given(options, _IN_MEMORY)
    needs += [f"scorers={name!r}" for name in scorers or ()
              if not isinstance(name, str) or name not in STREAMED_SCORERS]
    return needs + (["model= (more than one)"] if model and not isinstance(model, str)
                    and len(model) > 1 else [])


def _streams(data: str | Path | Sequence[str | Path], *, label: str, out: str | None,
             engine: str | None, ray_address: str | None, n_folds: int,
             options: dict[str, Any]) -> bool:
    """Whether the scan streams: ``engine`` with nothing that needs every item in memory,
    or a TF-IDF scan of a streamable file written to ``out``."""
    scorers = options["scorers"]
    given = memory_needs(options)
    if engine is None:
        if ray_address:
            raise InvalidParameterError("ray_address= is for engine='ray': add it",
                                        param=("ray_address", "engine"))
        if given or list(scorers or ()) != ["tfidf"] or not out or n_folds < 2:
            return False
        from labelaudit.engine import first_rows_hold_label_sets, is_streamable

        return is_streamable(data) and not first_rows_hold_label_sets(data, label)
    from labelaudit.engine import first_rows_hold_label_sets

    if first_rows_hold_label_sets(data, label):
        raise InvalidParameterError(
            f"engine= streams one label per item, and column {label!r} holds label sets "
            "(multi-label), which scan in memory: drop engine=", param="engine")
    if given:
        if engine == "ray":
            return False  # in memory, with its folds as Ray tasks
        raise InvalidParameterError(
            f"engine='local' streams the tfidf and embed members: {_named(given)} "
            f"need{'s' if len(given) == 1 else ''} every item in memory; drop "
            f"{'it' if len(given) == 1 else 'them'}, drop engine=, or use engine='ray' "
            "(in memory, its folds as Ray tasks)",
            param=("engine", *dict.fromkeys(name.split("=")[0] for name in given)))
    if not out:
        raise InvalidParameterError("engine= writes its output in chunks: give out=",
                                    param=("engine", "out"))
    return True


def _members(scorers: Sequence[str] | None, *, model: Sequence[str] | None, sweep: int,
             long_texts: str | None, pair_mode: str | None, cache_dir: str | Path | None,
             tuning: dict[str, Any]) -> list[Any] | None:
    """The ensemble: a name per scorer, or a configured scorer object where a model or the
    fine-tuning options apply (one per model for embed and finetune); None for the default
    members, which scan screens."""
    from labelaudit.models import make_scorer

    if scorers is None and not (tuning or model or long_texts or sweep):
        return None
    names = scorers or list(SCORERS.default)  # checked by check_member_options
    models: list[str | None] = [*model] if model else [None]
    out: list[Any] = []
    for name in names:
        if name not in ("embed", "finetune"):
            out.append(name)
            continue
        for each in models:
            options = (dict(tuning) if name == "finetune" else
                       {"long_texts": long_texts} if long_texts else {})
            out.append(make_scorer(name, model=each, pair_mode=pair_mode,
                                   cache_dir=cache_dir, **options))
    return out
