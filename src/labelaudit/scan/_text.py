"""``scan``: rank every item of a text dataset by how likely its label is wrong."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeAlias

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_choice, check_fraction, check_int
from labelaudit.io import (
    CLASS_NAMES,
    TextDataset,
    align_pred_probs,
    prepare_text_dataset,
    read_data,
    read_pred_probs,
    require_columns,
)
from labelaudit.models import fold_checkpoints
from labelaudit.models._base import Scorer
from labelaudit.models._progress import default_progress
from labelaudit.registry import RANKING_METHODS, SCORERS
from labelaudit.scan._presets import preset_members
from labelaudit.scan._text_result import (
    GIVEN_PROBS,
    ChanceLevelWarning,
    ScanResult,
    warn_if_chance_level,
)

if TYPE_CHECKING:  # pragma: no cover
    import datasets

    Data: TypeAlias = pd.DataFrame | str | Path | datasets.Dataset | datasets.DatasetDict
    Probs: TypeAlias = np.ndarray | pd.DataFrame | str | Path

__all__ = ["METHODS", "DEFAULT_METHOD", "DEFAULT_METHODS", "ChanceLevelWarning", "ScanResult",
           "id_column", "scan"]

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


def _check_weights(weights: object, scorers: Sequence[str]) -> None:  # member names
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


def _check_given_probs(*, scorers: object, model: object, sweep: int, score: object,
                       n_seeds: int, weights: object, pair_mode: object) -> None:
    """pred_probs replace the scorers: an option that configures them is a conflict."""
    conflicts = [name for name, given in (
        ("scorers", scorers is not None), ("model", model is not None), ("sweep", bool(sweep)),
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


def _check_options(methods: Sequence[str], rank_by: str, top: int | None,
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


def scan(
    data: Data, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    split: str | None = None, score: Data | None = None,
    pred_probs: Probs | None = None, classes: Sequence[object] | None = None,
    keep_columns: bool = True,
    scorers: Sequence[str | Scorer] | None = None, preset: str | None = None,
    methods: Sequence[Method] | None = None, rank_by: Method | None = None,
    annotations: str | None = None,
    weights: Literal["auto", "equal"] | Sequence[float] = "auto", n_folds: int = 5,
    n_seeds: int = 1, random_state: int | None = 0, top: int | None = None,
    threshold: float | None = None, model: str | None = None,
    pair_mode: Literal["features", "joint"] | None = None,
    cache_dir: str | Path | None = None, progress: bool | None = None,
    sweep: int = 0, keep: int = 3, screen: int = 2000, datalab: bool = False,
    datalab_features: Literal["tfidf", "embed"] = "tfidf",
    engine: Literal["local", "ray"] = "local", ray_address: str | None = None,
    checkpoint_dir: str | Path | None = None, resume: bool = True,
) -> ScanResult:
    """Rank every item by how likely its given label is wrong.

    Each scorer produces out-of-sample probabilities: stratified k-fold cross-fitting, so
    no item is scored by a model that saw it, or, with ``score``, a model fitted on
    ``data`` scores the ``score`` split (the test-set audit of Northcutt et al. 2021).
    The members are averaged with weights fitted to their out-of-sample log loss, and
    every ranking method is computed. With ``pred_probs``, the user's own probabilities
    take the ensemble's place and no model is fitted.

    Parameters
    ----------
    data : DataFrame, path, datasets.Dataset, datasets.DatasetDict or hub name
        The labelled table (training split when ``score`` is given): a DataFrame; a CSV,
        TSV, JSONL, JSON or Parquet file; a folder written by ``save_to_disk``; a
        Hugging Face ``Dataset`` or ``DatasetDict`` (pick the split with ``split``); or a
        hub dataset name that is not an existing path (``"imdb"``), loaded with
        ``datasets.load_dataset(name, split=split)``, which needs network access or the
        dataset in the local Hugging Face cache. ``ClassLabel`` columns are read as their
        class names; an id of -1 ("no label") is a missing label.
    text, label, text_pair, id : str
        Column names; ``id`` defaults to a column named ``id`` when the table has one,
        else the row number (0-based).
    split : str, optional
        The split of ``data`` when it has several (a ``DatasetDict``, a folder of one, a
        hub dataset); ``"folder:split"`` and ``"name:split"`` work too.
    score : same kinds as ``data``, optional
        A second split to rank with models fitted on all of ``data`` (``"name:split"`` for
        a split of a hub dataset or folder).
    pred_probs : ndarray, DataFrame or path, optional
        Your own out-of-sample probabilities, shape (n_samples, n_classes), row ``i`` for
        item ``i`` of ``data``: an array, a ``.npy`` file, or a table (DataFrame or any
        file :func:`labelaudit.io.read_table` reads) with one column per class, named by
        class. They replace the ensemble (member ``pred_probs``, weight 1, no temperature)
        and every method, flag and suggestion is computed on them; they must be
        out-of-sample (from cross-validation, or a model that never saw ``data``) or the
        ranking means little. Each row must be non-negative, finite and sum to 1 within
        1e-3 (softmax outputs, not logits). Not with ``scorers``, ``model``, ``sweep``,
        ``score``, ``n_seeds``, ``weights`` or ``pair_mode``.
    classes : sequence, optional
        The class of each column of ``pred_probs``, in order; every label value must be
        one of them, and a class that no item has is kept as a column. Default: a table's
        column names, matched to the label values as text (column ``"1"`` is label
        ``1``); for an array, the ``ClassLabel`` names in id order when the label column is
        a Hugging Face ``ClassLabel``, else the sorted label values (strings
        alphabetically, numbers by value: :class:`labelaudit.io.TextDataset` order).
    keep_columns : bool, default=True
        Carry the input's other columns (all but text, text pair, label, id and
        annotations; with ``score``, those of the scored split) to ``ScanResult.extra``,
        which ``to_frame`` writes after its own columns (renaming a clashing one
        ``input_<name>``).
    scorers : sequence of {"tfidf", "embed", "finetune"} or Scorer objects, optional
        The ensemble's members; the first is the single model behind ``loss``. None (the
        default) is word and character TF-IDF (tfidf, tfidf-char) with screening
        (``screen``); named members always run. A name is
        made with ``model``, ``pair_mode`` and ``cache_dir``; an object carries its own
        options (``FinetuneScorer(model="roberta-base", epochs=3, max_length=512)``), one
        object per member, so several models of one kind form an FME (reported as
        ``finetune[model]``).
    preset : {"fast", "default", "best"}, optional
        A named set of members instead of ``scorers`` (:data:`labelaudit.scan.PRESETS`):
        ``fast`` is word TF-IDF alone, ``default`` the default, ``best`` word TF-IDF with
        ``model`` (default all-MiniLM-L6-v2) fine-tuned on every fold, for a GPU (IMDB dev
        half: AP 1.6x the strong TF-IDF peer, about 4 minutes on one H100).
    methods : sequence of str, optional
        Default: every method that applies, except ``self_confidence``, which ranks
        exactly as ``ensemble`` does (``-log p`` is monotone in ``p``). Any of ``loss``
        (FML, loss under the first scorer), ``ensemble`` (FME, loss under the weighted
        average of all members), ``self_confidence``, ``margin``, ``entropy``,
        ``max_prob`` (under the ensemble) and ``confident_learning`` (cleanlab's
        ``find_label_issues`` on the ensemble), and ``crowdlab`` (cleanlab's CROWDLAB on
        the ensemble and the annotators' labels; needs ``annotations``).
    rank_by : str, optional
        The method that orders the output: ``crowdlab`` when ``annotations`` are given,
        else ``ensemble``.
    annotations : str, optional
        A column of per-item lists of several annotators' labels (plain labels, or
        ``{"worker": id, "label": value}`` objects), for the ``crowdlab`` method.
    weights : "auto", "equal" or numbers
        Ensemble weights (see :func:`labelaudit.detect.ensemble_pred_probs`): one number
        per scorer; anything but "auto" needs at least two scorers.
    n_folds, n_seeds, random_state : int
        Folds of the cross-fitting; repeats with different folds and seeds (FME members).
        With ``score`` there are no folds, and a repeat differs only for scorers that are
        random (``finetune``).
    top, threshold : optional
        Flag the ``top`` most suspect items, or those whose given label has ensemble
        probability below ``threshold``; by default, as many as cleanlab estimates.
    model, pair_mode, cache_dir : options of the ``embed``/``finetune`` scorers named.
    screen : int, default=2000
        With the default members and more than ``screen`` items, each member is first
        cross-fitted on a stratified sample of ``screen`` items; a member whose ensemble
        weight there is below 0.05 is not run on the rest (its encoding is the slow part),
        and the summary says so. 0 turns screening off.
    sweep, keep : int
        With ``sweep`` > 0, every ``finetune`` member runs in ``sweep`` configurations
        (learning rate, epochs, seed) and the ``keep`` with the lowest out-of-sample log
        loss are averaged (the FME of Chong et al. 2022); the selection uses the same
        out-of-sample predictions the ranking then uses.
    datalab : bool, default=False
        Also run cleanlab's Datalab on the final probabilities and item features: columns
        ``is_near_duplicate``, ``near_duplicate_id``, ``near_duplicate_label_conflict``
        (a near-duplicate has another given label: one of the two labels is likely wrong),
        ``is_outlier``, ``outlier_score``, and a non-IID line in the summary (see
        :func:`labelaudit.detect.datalab_issues`).
    datalab_features : {"tfidf", "embed"}
        Features for Datalab: TF-IDF reduced to 256 dimensions (default; fast, and it found
        more near-duplicates on 20news), or the sentence embeddings of the embed member
        (free when that member ran, from the cache).
    progress : bool, optional
        Progress bars on stderr; by default shown when stderr is a terminal or in a
        Jupyter notebook.
    engine : {"local", "ray"}
        Where the folds are fitted: in this process (one process per GPU with a
        fine-tuning member's ``devices``), or each fold as a Ray task (needs the ``scale``
        extra), on Ray started with every core of this machine or on the cluster at
        ``ray_address``; a fine-tuning fold's task gets one GPU of its own when the
        cluster has GPUs. The result does not depend on the engine. For data too big for
        memory, see :func:`labelaudit.scan.scan_stream`.
    ray_address : str, optional
        A running Ray cluster (``"auto"``, ``"host:6379"``, ``"ray://host:10001"``).
    checkpoint_dir : path, optional
        Save every finished fold there, and take the folds an earlier, interrupted run of
        the same scan saved instead of fitting them again (folds run in this process);
        removed when the scan succeeds.
    resume : bool, default=True
        With ``checkpoint_dir``: reuse the folds saved there (False starts over).

    Returns
    -------
    ScanResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models (FML, FME). Northcutt, Athalye & Mueller (2021), Pervasive Label Errors in Test
    Sets Destabilize Machine Learning Benchmarks.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> words = {"sport": "match goal team", "food": "pasta sauce cook"}
    >>> rows = [(f"{words[c]} {rng.integers(100)}", c) for c in ["sport", "food"] * 20]
    >>> frame = pd.DataFrame(rows, columns=["text", "label"])
    >>> frame.loc[0, "label"] = "food"          # a planted error
    >>> result = scan(frame, scorers=["tfidf"])
    >>> int(result.to_frame()["id"].iloc[0])
    0

    Your own out-of-sample probabilities, columns in the sorted class order:

    >>> probs = np.where(frame[["label"]].to_numpy() == ["food", "sport"], 0.9, 0.1)
    >>> probs[0] = [0.1, 0.9]                   # the model disagrees with item 0
    >>> given = scan(frame, pred_probs=probs)
    >>> int(given.to_frame()["id"].iloc[0]), list(given.weights)
    (0, ['pred_probs'])
    """
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.models._registry import member_keys, member_pred_probs

    started = time.perf_counter()
    wanted: list[str] = (list(methods) if methods is not None else
                         [m for m in DEFAULT_METHODS if m != "crowdlab" or annotations is not None])
    order_by: str = (rank_by if rank_by is not None
                     else "crowdlab" if annotations is not None else DEFAULT_METHOD)
    _check_options(wanted, order_by, top, threshold, n_seeds, annotations)
    check_choice(datalab_features, "datalab_features", ("tfidf", "embed"))
    from labelaudit.engine._ray import check_engine, folds_on

    check_engine(engine, ray_address)
    given = pred_probs is not None
    if given:
        _check_given_probs(scorers=scorers, model=model, sweep=sweep, score=score,
                           n_seeds=n_seeds, weights=weights, pair_mode=pair_mode)
    elif classes is not None:
        raise InvalidParameterError(
            "classes= names the columns of pred_probs; give pred_probs too, or drop classes=")
    if preset is not None:
        if scorers is not None:
            raise InvalidParameterError("preset names the members: give preset or scorers, "
                                        "not both")
        scorers = preset_members(preset, model=model)
    named = scorers is not None
    if scorers is not None and not scorers:
        raise InvalidParameterError("give at least one scorer")
    scorers = list(scorers) if scorers is not None else list(SCORERS.default)
    if not given:
        _check_weights(weights, member_keys(scorers))
    inputs = _read_data(data, score, text=text, label=label, text_pair=text_pair, id=id,
                        annotations=annotations, split=split, pred_probs=pred_probs,
                        classes=classes)
    train, target = inputs.train, inputs.target
    scored = target if target is not None else train
    assert scored.labels is not None
    screened: dict[str, float] = {}
    if inputs.probs is not None:
        member_probs = {"pred_probs": inputs.probs}
        weight, temperature = {"pred_probs": 1.0}, {"pred_probs": 1.0}
        probs, seconds = inputs.probs, {}
        mode = GIVEN_PROBS
        dynamics = None
    else:
        from labelaudit.scan._screen import screen_members

        shown = default_progress() if progress is None else progress
        with folds_on(engine, ray_address):
            if not named and screen and len(train) > screen and weights == "auto":
                scorers, screened = screen_members(
                    train, scorers, size=screen, n_folds=n_folds, random_state=random_state,
                    progress=shown, model=model, pair_mode=pair_mode, cache_dir=cache_dir)
            with fold_checkpoints(checkpoint_dir, resume=resume):
                run = member_pred_probs(train, target, scorers=list(scorers),
                                        n_folds=n_folds, n_seeds=n_seeds,
                                        random_state=random_state, progress=shown,
                                        sweep=sweep, keep=keep, model=model,
                                        pair_mode=pair_mode, cache_dir=cache_dir)
        # Repeats of one scorer (--seeds) are averaged first; the weights and temperatures
        # are then fitted per scorer, not per repeat.
        scorer_probs = run.per_scorer()
        ensemble = ensemble_pred_probs(list(scorer_probs.values()), scored.labels,
                                       weights=weights)
        probs, member_probs, seconds = ensemble.pred_probs, run.probs, dict(run.seconds)
        weight = dict(zip(scorer_probs, ensemble.weights.tolist(), strict=True))
        temperature = dict(zip(scorer_probs, ensemble.temperatures.tolist(), strict=True))
        mode = ("fit-on-train, score-on-test" if target is not None
                else f"{run.n_folds}-fold cross-fit")
        dynamics = None
        if run.epoch_logits:  # a dynamics member ran: its epochs (and repeats) together
            from labelaudit.models import training_dynamics

            dynamics = training_dynamics(scored.labels,
                                         np.concatenate(list(run.epoch_logits.values())))
    scores, n_issues, consensus = _method_scores(
        scored.labels, probs, next(iter(member_probs.values())), inputs.votes,
        list(dict.fromkeys([*wanted, order_by])))
    warn_if_chance_level(scored.labels, probs, given=given)
    flagged, rule = _flag(scored.labels, probs, scores[order_by], n_issues, top=top,
                          threshold=threshold)
    found = None
    if datalab:
        from labelaudit.detect import datalab_features as features_for
        from labelaudit.detect import datalab_issues

        features = features_for(scored.texts, text_pairs=scored.text_pairs,
                                method=datalab_features, model=model, cache_dir=cache_dir,
                                random_state=random_state or 0,
                                progress=default_progress() if progress is None else progress)
        found = datalab_issues(scored.labels, probs, features, ids=scored.ids,
                               classes=train.classes, random_state=random_state or 0)
    return ScanResult(
        ids=scored.ids, texts=scored.texts, text_pairs=scored.text_pairs, labels=scored.labels,
        classes=train.classes, pred_probs=probs, member_probs=member_probs,
        weights=weight, temperatures=temperature, scores=scores, rank_by=order_by,
        flagged=flagged, flag_rule=rule, n_issues_estimate=n_issues,
        seconds=time.perf_counter() - started, consensus_labels=consensus,
        member_seconds=seconds, screened=screened, mode=mode,
        extra=_extra(inputs.frame, [text, text_pair, label, annotations, inputs.id_column])
        if keep_columns else None, datalab=found, dynamics=dynamics,
    )


def _extra(frame: pd.DataFrame, used: list[str | None]) -> pd.DataFrame | None:
    """The input's columns scan does not read, aligned with its items (None if none)."""
    rest = frame.drop(columns=[c for c in dict.fromkeys(used) if c is not None])
    return rest.reset_index(drop=True) if len(rest.columns) else None


class _Inputs(NamedTuple):
    train: TextDataset
    target: TextDataset | None  # the scored split; None: cross-fit
    votes: np.ndarray | None  # the annotators' votes of the scored items
    frame: pd.DataFrame  # the scored table
    id_column: str | None  # its id column
    probs: np.ndarray | None  # the user's pred_probs, columns in train.classes order


def _read_data(
    data: Data, score: Data | None, *, text: str, label: str, text_pair: str | None,
    id: str | None, annotations: str | None, split: str | None,  # noqa: A002
    pred_probs: Probs | None, classes: Sequence[object] | None,
) -> _Inputs:
    """The data, the user's probabilities and the annotators' votes, all checked before
    any model work."""
    from labelaudit.detect import annotation_matrix

    scored_frame = train_frame = read_data(data, split=split)
    train = prepare_text_dataset(train_frame, text=text, label=label, text_pair=text_pair,
                                 id=id_column(train_frame, id))
    target = probs = None
    if score is not None:
        scored_frame = read_data(score, what="score")
        target = prepare_text_dataset(scored_frame, text=text, label=label,
                                      text_pair=text_pair, id=id_column(scored_frame, id),
                                      classes=train.classes, min_classes=1)
    if pred_probs is not None:
        path = isinstance(pred_probs, (str, Path))
        given = (read_pred_probs(pred_probs) if isinstance(pred_probs, (str, Path))
                 else pred_probs)
        try:
            probs, train = align_pred_probs(given, train, classes=classes,
                                            default_classes=train_frame.attrs.get(
                                                CLASS_NAMES, {}).get(label))
        except InvalidInputError as exc:
            if not path:
                raise
            raise InvalidInputError(f"{pred_probs}: {exc}") from None
    votes = None
    if annotations is not None:
        require_columns(scored_frame, [annotations])
        ids = (target if target is not None else train).ids
        votes = annotation_matrix(scored_frame[annotations], train.classes, ids)
    return _Inputs(train, target, votes, scored_frame, id_column(scored_frame, id), probs)


def _method_scores(
    labels: np.ndarray, pred_probs: np.ndarray, first_member: np.ndarray,
    crowd_votes: np.ndarray | None, methods: list[str], *, n_jobs: int | None = None,
) -> tuple[dict[str, np.ndarray], int, np.ndarray | None]:
    """Every method's scores, cleanlab's estimated error count, CROWDLAB's consensus
    (``n_jobs`` for cleanlab's ``find_label_issues``)."""
    from labelaudit.detect import confident_learning, crowdlab, label_quality_scores

    cl = confident_learning(labels, pred_probs, n_jobs=n_jobs)
    crowd = None if crowd_votes is None else crowdlab(labels, pred_probs, crowd_votes)
    scores: dict[str, np.ndarray] = {}
    for method in methods:
        if method == "loss":
            scores[method] = label_quality_scores(labels, first_member)
        elif method == "ensemble":
            scores[method] = label_quality_scores(labels, pred_probs, method="loss")
        elif method == "confident_learning":
            scores[method] = cl.scores
        elif method == "crowdlab":
            assert crowd is not None
            scores[method] = crowd.scores
        else:
            scores[method] = label_quality_scores(labels, pred_probs,
                                                  method=method)  # type: ignore[arg-type]
    return scores, cl.n_issues, None if crowd is None else crowd.consensus_labels


def _flag(labels: np.ndarray, pred_probs: np.ndarray, ranking: np.ndarray, n_issues: int, *,
          top: int | None, threshold: float | None) -> tuple[np.ndarray, str]:
    """Which items are flagged, and the rule that says so."""
    if threshold is not None:
        flagged = pred_probs[np.arange(len(labels)), labels] < threshold
        return flagged, f"given-label probability < {threshold}"
    count = n_issues if top is None else min(top, len(labels))
    flagged = np.zeros(len(labels), dtype=bool)
    flagged[np.argsort(ranking, kind="stable")[:count]] = True
    return flagged, f"top {count}" + (" (cleanlab's estimated count)" if top is None else "")
