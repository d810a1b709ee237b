"""The options of a scan: :class:`ScanOptions`, checked once (:func:`check_options`), the
presets and the members an ensemble runs. Messages name an option as ``name=value`` or
``name=``, and each error carries them (``param``), which the command line spells as flags.

The presets were chosen on real, human-verified label errors (``make bench-detection``,
``benchmarks/results/detection.md`` and ``detection_gpu.md``), on the IMDB dev half:
``fast``, word 1-2-gram TF-IDF alone (AP 0.294, 41 s on 2 cores); ``default``, with character
2-5-gram TF-IDF (0.304, about 3 minutes); ``best``, word TF-IDF and all-MiniLM-L6-v2
fine-tuned on every fold (3 epochs, 512 tokens, head+tail): AP 0.43, 1.6x the strong TF-IDF
peer, in about 4 minutes on one H100 GPU (hours on a CPU).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditWarning
from labelaudit._validation import check_choice, check_fraction, check_int
from labelaudit.detect import RANKING_METHODS
from labelaudit.engine import (
    EmbedOptions,
    HashingOptions,
    first_rows_hold_label_sets,
    is_streamable,
)
from labelaudit.models import (
    DEFAULT_SCORERS,
    check_cache_dir,
    check_engine,
    make_scorer,
    member_keys,
)

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_METHOD = "ensemble"
# Every ranking method but self_confidence, which ranks exactly as ensemble does (-log p is
# monotone in p), so it is computed only when asked for; crowdlab only with annotations.
DEFAULT_METHODS: tuple[str, ...] = tuple(m for m in RANKING_METHODS if m != "self_confidence")
# Those of a scan without annotations (and of every streamed scan): crowdlab is the last.
UNANNOTATED_METHODS: tuple[str, ...] = DEFAULT_METHODS[:-1]
#: The named sets of members (``preset=``, ``--preset``): None is scan's default.
PRESETS: Mapping[str, tuple[str, ...] | None] = {
    "fast": ("tfidf",), "default": None, "best": ("tfidf", "finetune")}
# The members a streamed scan runs (word TF-IDF hashed out of core, embeddings through a
# cache), which are its default too: character n-grams are not streamed.
STREAMED_SCORERS: tuple[str, ...] = ("tfidf", "embed")
# The members that an encoder (model=) configures, those that encode sentence pairs as
# pair_mode= says, and those that keep their embeddings under cache_dir=.
MODEL_MEMBERS: tuple[str, ...] = ("embed", "finetune", "knn", "dynamics")
PAIR_MODE_MEMBERS: tuple[str, ...] = ("embed", "dynamics")
CACHE_MEMBERS: tuple[str, ...] = ("embed", "knn", "dynamics")
#: The fine-tuning settings of ``best`` (options given by the caller take precedence).
PRESET_FINETUNE: Mapping[str, Any] = {"epochs": 3, "max_length": 512, "batch_size": 32,
                                      "learning_rate": 5e-5}
_TUNING = ("epochs", "max_length", "batch_size", "learning_rate", "devices")


class SlowPresetWarning(LabelAuditWarning):
    """A preset built for a GPU runs on a CPU."""


@dataclass(frozen=True)
class ScanOptions:
    """Every option of :func:`labelaudit.scan`, documented there; :func:`check_options`
    checks them once, and the steps of a scan read them from here."""

    text: str = "text"
    label: str = "label"
    text_pair: str | None = None
    id: str | None = None
    split: str | None = None
    score: Any = None
    pred_probs: Any = None
    classes: Sequence[object] | None = None
    keep_columns: bool = True
    scorers: Sequence[Any] | None = None
    preset: str | None = None
    methods: Sequence[str] | None = None
    rank_by: str | None = None
    annotations: str | None = None
    weights: Any = "auto"
    n_folds: int | None = None
    n_seeds: int = 1
    random_state: int | None = 0
    top: int | None = None
    threshold: float | None = None
    model: str | Sequence[str] | None = None
    pair_mode: Literal["features", "joint"] | None = None
    cache_dir: str | Path | None = None
    long_texts: Literal["truncate", "windows"] | None = None
    epochs: int | None = None
    max_length: int | None = None
    batch_size: int | None = None
    learning_rate: float | None = None
    devices: Sequence[str] | None = None
    progress: bool | None = None
    sweep: int = 0
    keep: int | None = None
    screen: int = 2000
    datalab: bool = False
    datalab_features: Literal["tfidf", "embed"] | None = None
    evidence: bool = True
    top_classes: int | None = None
    engine: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    checkpoint_dir: str | Path | None = None
    resume: bool = True
    label_sep: str | None = None
    out: str | Path | None = None
    chunk_size: int = 100_000
    overwrite: bool = False
    tfidf: Literal["auto", "memory", "hashing"] = "auto"
    hashing_threshold: int | None = None
    hashing: HashingOptions | None = None
    embed: EmbedOptions | None = None

    def given(self, *names: str) -> list[str]:
        """Those of ``names`` set to another value than their default."""
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        return [n for n in names if _differs(getattr(self, n), defaults[n])]

    @property
    def first_model(self) -> str | None:
        """The one encoder of embed (the first ``model``)."""
        if isinstance(self.model, str) or self.model is None:
            return self.model
        return self.model[0] if self.model else None

    def tuning(self) -> dict[str, Any]:
        """The fine-tuning options given."""
        return {k: getattr(self, k) for k in _TUNING if getattr(self, k) is not None}


def _differs(value: Any, default: Any) -> bool:
    if value is None or default is None:
        return value is not default
    return not isinstance(value, type(default)) or bool(value != default)


def _named(given: Sequence[str]) -> str:
    """Options named alone (``epochs=, n_seeds=``), as the messages say them."""
    return ", ".join(name if "=" in name else f"{name}=" for name in given)


def id_column(frame: pd.DataFrame, id: str | None) -> str | None:  # noqa: A002
    """The id column to use: ``id`` when given, else a column named ``id`` if the table
    has one, else None (row numbers)."""
    if id is not None:
        return id
    return "id" if "id" in frame.columns else None


def check_method(method: str, param: str) -> str:
    """``method`` if it is one of :data:`labelaudit.detect.RANKING_METHODS`."""
    if method not in RANKING_METHODS:
        raise InvalidParameterError(f"unknown ranking method {method!r}; choose from "
                                    f"{', '.join(RANKING_METHODS)}", param=param)
    return method


def check_flagging(top: int | None, threshold: float | None) -> None:
    """The flag rule's options: at most one of ``top`` (a count) and ``threshold``."""
    if top is not None and threshold is not None:
        raise InvalidParameterError("give at most one of top and threshold",
                                    param=("top", "threshold"))
    if top is not None:
        check_int(top, "top", minimum=0)
    if threshold is not None:
        check_fraction(threshold, "threshold")


def preset_settings(preset: str, **tuning: Any) -> tuple[list[str] | None, dict[str, Any]]:
    """The member names of a preset (None: scan's default) and its fine-tuned member's
    settings (:data:`PRESET_FINETUNE` and ``tuning``); warns when it finds no CUDA GPU."""
    names = PRESETS[check_choice(preset, "preset", PRESETS)]
    given = {k: v for k, v in tuning.items() if v is not None}
    if names is None or "finetune" not in names:
        if given:
            raise InvalidParameterError(
                f"{', '.join(f'{name}=' for name in given)} set{'s' if len(given) == 1 else ''} "
                f"the fine-tuned member, which preset={preset!r} does not have: use "
                "preset='best', or name the members with scorers=", param=(*given, "preset"))
        return (None if names is None else list(names)), {}
    import torch

    if not torch.cuda.is_available():
        warnings.warn(
            f"preset {preset!r} fine-tunes a transformer on every fold and is built for a "
            "GPU (about 4 minutes for 12,600 reviews on one H100); on this CPU it takes "
            "hours: use the default, or preset 'fast'", SlowPresetWarning, stacklevel=4)
    return list(names), {**PRESET_FINETUNE, **given}


def preset_members(preset: str, *, model: str | None = None, **tuning: Any) -> list[Any] | None:
    """The ``scorers`` of a preset (None for ``default``), its fine-tuned member built."""
    names, settings = preset_settings(preset, **tuning)
    if not settings or names is None:
        return names
    return [make_scorer(n, model=model, **settings) if n == "finetune" else n for n in names]


def check_weights(weights: object, scorers: Sequence[str]) -> list[float] | str:
    """``"auto"``, ``"equal"``, or one non-negative number per member (a comma-separated
    text of them too), returned as numbers."""
    if isinstance(weights, str) and weights in ("auto", "equal"):
        if weights == "equal" and len(scorers) < 2:
            raise InvalidParameterError(
                "weights='equal' needs at least two scorers; with one there is nothing to weigh",
                param="weights")
        return weights
    try:
        values = [w for w in weights.split(",") if w.strip()] if isinstance(weights, str) \
            else list(weights)  # type: ignore[call-overload]
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise InvalidParameterError(f"weights must be auto, equal or numbers; got {weights!r}",
                                    param="weights") from None
    if len(scorers) < 2:
        raise InvalidParameterError(
            "ensemble weights need at least two scorers; with one there is nothing to weigh",
            param="weights")
    if len(numbers) != len(scorers):
        raise InvalidParameterError(
            f"give one weight per scorer: {len(numbers)} weights for {len(scorers)} scorers "
            f"({', '.join(scorers)})", param="weights")
    if any(not np.isfinite(v) or v < 0 for v in numbers) or sum(numbers) <= 0:
        raise InvalidParameterError(
            f"weights must be non-negative numbers with a positive sum; got {numbers}",
            param="weights")
    return numbers


def check_member_options(members: Sequence[Any], options: ScanOptions) -> None:
    """Refuse, before any work, the options that the members (and Datalab's embedding
    features) would ignore, each error naming the members that take it."""
    names = [m if isinstance(m, str) else str(getattr(m, "name", "")) for m in members]
    embeds = options.datalab and options.datalab_features == "embed"

    def refuse(given: Sequence[str], what: str, takers: Sequence[str], add: str) -> None:
        if given and not set(names) & set(takers):
            named = ", ".join(f"{name}=" for name in given)
            raise InvalidParameterError(
                f"{named} {'sets' if len(given) == 1 else 'set'} {what}; the members "
                f"({', '.join(names)}) take none: add {add} to scorers=, or drop "
                f"{named if len(given) == 1 else 'them'}", param=(*given, "scorers"))

    if not embeds:
        refuse(options.given("model"),
               "the encoder of the embed, finetune, knn and dynamics scorers", MODEL_MEMBERS,
               "one")
    if options.pair_mode is not None and options.text_pair is None:
        raise InvalidParameterError(
            "pair_mode= sets how sentence pairs are encoded; without text_pair= the texts "
            "are single: give text_pair=, or drop pair_mode=", param=("pair_mode", "text_pair"))
    refuse(options.given("pair_mode"),
           "how the embed and dynamics scorers encode sentence pairs", PAIR_MODE_MEMBERS,
           "embed")
    refuse(options.given("long_texts"),
           "how the embed scorer reads texts longer than its encoder's window", ("embed",),
           "embed")
    refuse(list(options.tuning()), "the fine-tuning of the finetune scorer", ("finetune",),
           "finetune")
    refuse(options.given("sweep"), "the fine-tuning sweep of the finetune scorer",
           ("finetune",), "finetune")
    if options.cache_dir is not None and not embeds:
        refuse(["cache_dir"], "where the embed, knn and dynamics scorers keep their "
               "embeddings", CACHE_MEMBERS, "one")
    if options.cache_dir is not None and (embeds or set(names) & set(CACHE_MEMBERS)):
        check_cache_dir(options.cache_dir)


# The options only the in-memory scan has (a streamed scan refuses them).
_IN_MEMORY = ("label_sep", "split", "score", "pred_probs", "annotations", "methods", "rank_by",
              "weights", "n_seeds", "datalab", "sweep", "long_texts", *_TUNING)


def memory_needs(options: ScanOptions, *, report: bool = False) -> list[str]:
    """The options given that a streamed scan cannot run, as the messages name them
    (``report``: a report is written too)."""
    needs = options.given(*_IN_MEMORY[:10])
    needs += ["report_out"] if report else []
    needs += options.given(*_IN_MEMORY[10:])
    named = PRESETS.get(options.preset or "", options.scorers)
    other = [name for name in named or ()
             if not isinstance(name, str) or name not in STREAMED_SCORERS]
    if other:
        needs += [f"preset={options.preset!r}"] if options.preset is not None else [
            f"scorers={name}" if isinstance(name, str) else f"scorers={name!r}" for name in other]
    model = options.model
    return needs + (["model= (more than one)"] if model and not isinstance(model, str)
                    and len(model) > 1 else [])


def streams(data: Any, options: ScanOptions, *, engine: str | None, report: bool) -> bool:
    """Whether ``labelaudit scan`` streams: with ``--engine`` and nothing that needs every
    item in memory, or (``engine`` None) as a TF-IDF scan of a streamable file to ``--out``;
    ``--engine ray`` with what needs memory runs in memory, its folds as Ray tasks."""
    given = memory_needs(options, report=report)
    out = str(options.out or "")
    if engine is None:
        streamed = (not given and list(options.scorers or ()) == ["tfidf"] and bool(out)
                    and (options.n_folds or 5) >= 2 and is_streamable(data)
                    and not first_rows_hold_label_sets(data, options.label))
    elif first_rows_hold_label_sets(data, options.label):
        raise InvalidParameterError(
            f"engine= streams one label per item, and column {options.label!r} holds label "
            "sets (multi-label), which scan in memory: drop engine=", param="engine")
    elif given and engine == "ray":
        streamed = False  # in memory, with its folds as Ray tasks
    elif given:
        raise InvalidParameterError(
            f"engine='local' streams the tfidf and embed members: {_named(given)} "
            f"need{'s' if len(given) == 1 else ''} every item in memory; drop "
            f"{'it' if len(given) == 1 else 'them'}, drop engine=, or use engine='ray' "
            "(in memory, its folds as Ray tasks)",
            param=("engine", *dict.fromkeys(name.split("=")[0] for name in given)))
    elif not out:
        raise InvalidParameterError("engine= writes its output in chunks: give out=",
                                    param=("engine", "out"))
    else:
        streamed = True
    if not streamed and ("://" in out or out.endswith("/")):
        raise InvalidParameterError(
            f"out={out!r}: only a streamed scan writes to a folder or a URI (engine='local' "
            "or ray, with the tfidf and embed members and nothing that needs every item in "
            "memory); write a local file")
    return streamed


def check_options(data: Any, options: ScanOptions) -> ScanOptions:
    """Every rule between the options of a scan, checked once before any work; returns them
    with the members resolved (a preset's, configured) and the weights as numbers."""
    _check_given_probs(options)
    if options.keep is not None and not options.sweep:
        raise InvalidParameterError("keep= sets how many configurations of the sweep are "
                                    "kept, and no sweep runs: give sweep=, or drop keep=",
                                    param=("keep", "sweep"))
    if options.preset is not None and options.scorers is not None:
        raise InvalidParameterError("preset= names the members: give preset= or scorers=, "
                                    "not both", param=("preset", "scorers"))
    if options.datalab_features is not None and not options.datalab:
        raise InvalidParameterError("datalab_features= sets the features of datalab=True: add "
                                    "datalab=True, or drop datalab_features=",
                                    param=("datalab_features", "datalab"))
    if options.score is not None and options.n_folds is not None:
        raise InvalidParameterError(
            "n_folds= sets the cross-fitting of the data; with score= the models are fitted "
            "on all of the data and rank the score= items, with no folds: drop n_folds=",
            param=("n_folds", "score"))
    methods = options.methods if options.methods is not None else []
    if options.annotations is None and "crowdlab" in [*methods, options.rank_by]:
        raise InvalidParameterError(
            "the crowdlab method needs several annotators' labels: give annotations=COLUMN",
            param=("rank_by" if options.rank_by == "crowdlab" else "methods", "annotations"))
    for method in methods:
        check_method(method, "methods")
    check_flagging(options.top, options.threshold)
    check_int(options.n_seeds, "n_seeds", minimum=1)
    check_int(options.screen, "screen", minimum=0)
    if options.top_classes is not None:
        check_int(options.top_classes, "top_classes", minimum=2)
    if options.n_folds is not None:
        check_int(options.n_folds, "n_folds", minimum=2)
    if options.datalab_features is not None:
        check_choice(options.datalab_features, "datalab_features", ("tfidf", "embed"))
    check_engine(options.engine, options.ray_address)
    if options.out is not None:
        _check_streamed(data, options)
    scorers: Sequence[Any] | None = options.scorers
    tuning = options.tuning()
    if options.preset is not None:
        scorers, settings = preset_settings(
            options.preset, **{k: v for k, v in tuning.items() if k != "devices"})
        tuning.update(settings)
    if scorers is not None and not scorers:
        raise InvalidParameterError("give at least one scorer", param="scorers")
    if options.pred_probs is not None:
        return options
    default = STREAMED_SCORERS if options.out is not None else DEFAULT_SCORERS
    check_member_options(list(scorers or default), options)
    weights = check_weights(options.weights, member_keys(list(scorers or default)))
    members = _members(scorers, options, tuning) if options.out is None else scorers
    return dataclasses.replace(options, scorers=members, weights=weights)


def _check_given_probs(options: ScanOptions) -> None:
    """Given probabilities replace labelaudit's models: refuse the options that configure
    them, and ``classes`` (their columns) without them."""
    if options.pred_probs is None:
        if options.classes is not None:
            raise InvalidParameterError("classes= names the columns of pred_probs=; give "
                                        "pred_probs= too, or drop classes=",
                                        param=("classes", "pred_probs"))
        return
    given = options.given("scorers", "preset", "model", *_TUNING, "sweep", "keep",
                          "long_texts", "pair_mode", "score", "n_seeds", "weights", "engine",
                          "checkpoint_dir", "top_classes")
    if given:
        raise InvalidParameterError(
            f"pred_probs= replaces labelaudit's models, so {_named(given)} cannot be given "
            "with it; drop " + ("them" if len(given) > 1 else "it") + ", or drop pred_probs=",
            param=(*given, "pred_probs"))


def _check_streamed(data: Any, options: ScanOptions) -> None:
    """``out=``: the options a streamed scan takes, and data it can read in chunks."""
    needs = memory_needs(options)
    if needs:
        raise InvalidParameterError(
            f"out= streams the scan in chunks, and {_named(needs)} "
            f"need{'s' if len(needs) == 1 else ''} every item in memory: drop "
            f"{'it' if len(needs) == 1 else 'them'}, or drop out= (the scan then runs in "
            "memory; write its result with result.write(path))",
            param=("out", *dict.fromkeys(name.split("=")[0] for name in needs)))
    if not is_streamable(data):
        shown = repr(str(data)) if isinstance(data, (str, Path)) else f"a {type(data).__name__}"
        raise InvalidParameterError(
            f"out= streams the scan from files in chunks (Parquet, CSV, TSV or JSON lines: a "
            f"file, a folder, a glob or a URI); {shown} is not one: drop out= and "
            "write the result with result.write(path)", param="out")
    if options.embed is not None and options.given("model", "pair_mode", "cache_dir"):
        raise InvalidParameterError(
            "embed= configures the streamed embed member, and so do "
            f"{_named(options.given('model', 'pair_mode', 'cache_dir'))}: give one or the other",
            param=("embed", *options.given("model", "pair_mode", "cache_dir")))
    names = [options.scorers] if isinstance(options.scorers, str) else list(
        options.scorers or PRESETS.get(options.preset or "") or ())
    if len(set(names)) < len(names):
        raise InvalidParameterError(f"the ensemble names a member twice: {names}", param="scorers")
    check_choice(options.tfidf, "tfidf", ("auto", "memory", "hashing"))
    if options.hashing_threshold is not None:
        check_int(options.hashing_threshold, "hashing_threshold", minimum=0)
    if options.random_state is not None:
        check_int(options.random_state, "random_state", minimum=0)


def _members(scorers: Sequence[Any] | None, options: ScanOptions,
             tuning: dict[str, Any]) -> list[Any] | None:
    """The ensemble: a name per scorer, or a configured scorer where several models,
    ``long_texts`` or fine-tuning options apply; None for the default (screened) members."""
    models: list[str | None] = ([options.model] if isinstance(options.model, str)
                                else list(options.model or ()))
    if not (tuning or len(models) > 1 or options.long_texts):
        return None if scorers is None else list(scorers)
    out: list[Any] = []
    for name in scorers or DEFAULT_SCORERS:
        if name not in ("embed", "finetune"):
            out.append(name)
            continue
        for each in models or [None]:
            extra = (dict(tuning) if name == "finetune" else
                     {"long_texts": options.long_texts} if options.long_texts else {})
            out.append(make_scorer(name, model=each, pair_mode=options.pair_mode,
                                   cache_dir=options.cache_dir, **extra))
    return out
