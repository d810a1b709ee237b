"""The scan pipeline in memory (the streamed scan's too on data that fits): read the inputs,
screen and fit the members (or take the user's probabilities), rank and flag."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.detect import (
    RANKING_METHODS,
    Predictions,
    Probs,
    annotation_matrix,
    check_pred_probs,
    confident_learning,
    crowdlab,
    datalab_issues,
    dense_probs,
    ensemble_pred_probs,
    given_probs,
    resolve_top_classes,
)
from labelaudit.io import (
    CLASS_NAMES,
    TextDataset,
    align_pred_probs,
    prepare_text_dataset,
    read_data,
    read_pred_probs,
    require_columns,
    warn_overlap,
)
from labelaudit.models import (
    DEFAULT_FOLDS,
    DEFAULT_SCORERS,
    TrainingDynamics,
    WordCollector,
    datalab_features,
    default_progress,
    fold_checkpoints,
    member_keys,
    member_pred_probs,
    progress_bar,
    ray_session,
    training_dynamics,
)
from labelaudit.scanning._evidence import Evidence, build_evidence
from labelaudit.scanning._options import (
    DEFAULT_METHOD,
    DEFAULT_METHODS,
    UNANNOTATED_METHODS,
    ScanOptions,
    check_method,
    id_column,
)
from labelaudit.scanning._results import GIVEN_PROBS, ScanResult, warn_if_chance_level

if TYPE_CHECKING:  # pragma: no cover
    import datasets
    import pandas as pd

    Data: TypeAlias = pd.DataFrame | str | Path | datasets.Dataset | datasets.DatasetDict
    GivenProbs: TypeAlias = np.ndarray | pd.DataFrame | str | Path  # the user's

# Why ``score`` must be other items than ``data``, the end of the refusal and the warning.
SCORE_SPLIT_WHY = ("the scored items are ranked by models fitted on all of the data, so "
                   "those in both look right by construction; give a split of other items, "
                   "or drop score= to cross-fit the data")
SCREEN_WEIGHT = 0.05  # members below this ensemble weight on the screen are skipped


def extra_columns(frame: pd.DataFrame, used: list[str | None]) -> pd.DataFrame | None:
    """The input's columns scan does not read, aligned with its items (None if none)."""
    rest = frame.drop(columns=[c for c in dict.fromkeys(used) if c is not None])
    return rest.reset_index(drop=True) if len(rest.columns) else None


class Inputs(NamedTuple):
    train: TextDataset
    target: TextDataset | None  # the scored split; None: cross-fit
    votes: np.ndarray | None  # the annotators' votes of the scored items
    frame: pd.DataFrame  # the scored table
    id_column: str | None  # its id column
    probs: np.ndarray | None  # the user's pred_probs, columns in train.classes order


def read_inputs(train_frame: pd.DataFrame, options: ScanOptions) -> Inputs:
    """The data, the user's probabilities and the annotators' votes, all checked before
    any model work."""
    o = options
    scored_frame = train_frame
    train = prepare_text_dataset(train_frame, text=o.text, label=o.label,
                                 text_pair=o.text_pair, id=id_column(train_frame, o.id))
    target = probs = None
    if o.score is not None:
        scored_frame = read_data(o.score, what="score")
        target = prepare_text_dataset(scored_frame, text=o.text, label=o.label,
                                      text_pair=o.text_pair, id=id_column(scored_frame, o.id),
                                      classes=train.classes, min_classes=1)
        warn_overlap(("training", train.item_keys()), ("scored", target.item_keys()),
                     why=SCORE_SPLIT_WHY)
    if o.pred_probs is not None:
        path = isinstance(o.pred_probs, (str, Path))
        given = read_pred_probs(o.pred_probs) if path else o.pred_probs
        try:
            probs, train = align_pred_probs(given, train, classes=o.classes,
                                            default_classes=train_frame.attrs.get(
                                                CLASS_NAMES, {}).get(o.label),
                                            id=id_column(train_frame, o.id))
        except InvalidInputError as exc:
            if not path:
                raise
            raise InvalidInputError(f"{o.pred_probs}: {exc}") from None
    votes = None
    if o.annotations is not None:
        require_columns(scored_frame, [o.annotations])
        ids = (target if target is not None else train).ids
        votes = annotation_matrix(scored_frame[o.annotations], train.classes, ids)
    return Inputs(train, target, votes, scored_frame, id_column(scored_frame, o.id), probs)


@dataclass(frozen=True)
class MemberFit:
    """What the members gave: the ensemble's probabilities and how it was made."""

    pred_probs: Probs
    member_probs: dict[str, Probs]
    weights: dict[str, float]
    temperatures: dict[str, float]
    seconds: dict[str, float]
    mode: str
    screened: dict[str, float] = field(default_factory=dict)
    dynamics: TrainingDynamics | None = None
    words: WordCollector | None = None
    embeddings: np.ndarray | None = None

    @classmethod
    def given(cls, probs: np.ndarray) -> MemberFit:
        """The user's probabilities (``pred_probs``) as the one member, nothing fitted."""
        return cls(pred_probs=probs, member_probs={"pred_probs": probs},
                   weights={"pred_probs": 1.0}, temperatures={"pred_probs": 1.0}, seconds={},
                   mode=GIVEN_PROBS)


def fit_members(train: TextDataset, target: TextDataset | None, labels: np.ndarray,
                options: ScanOptions, *, progress: bool) -> MemberFit:
    """Screen (the default members on a sample of ``options.screen`` items), fit and
    combine; ``labels`` are the scored items' labels (``target``'s, else ``train``'s)."""
    o = options
    scorers = list(o.scorers) if o.scorers is not None else list(DEFAULT_SCORERS)
    # the default members are screened when their weights are fitted
    screen = o.screen if o.scorers is None and o.weights == "auto" else 0
    shared = {"model": o.first_model, "pair_mode": o.pair_mode, "cache_dir": o.cache_dir}
    screened: dict[str, float] = {}
    with ray_session(o.engine, o.ray_address):
        if screen and len(train) > screen:
            scorers, screened = screen_members(train, scorers, size=screen,
                                               n_folds=o.n_folds, random_state=o.random_state,
                                               progress=progress, engine=o.engine, **shared)
        with fold_checkpoints(o.checkpoint_dir, resume=o.resume) as store:
            run = member_pred_probs(train, target, scorers=scorers, n_folds=o.n_folds,
                                    n_seeds=o.n_seeds, random_state=o.random_state,
                                    progress=progress, sweep=o.sweep, keep=o.keep,
                                    engine=o.engine, store=store, explain=o.evidence,
                                    top_classes=resolve_top_classes(o.top_classes,
                                                                    len(train.classes)),
                                    **shared)
    # Repeats of one scorer (n_seeds) are averaged first; the weights and temperatures
    # are then fitted per scorer, not per repeat.
    scorer_probs = run.per_scorer()
    ensemble = ensemble_pred_probs(list(scorer_probs.values()), labels, weights=o.weights)
    dynamics = None
    if run.epoch_logits:  # a dynamics member ran: its epochs (and repeats) together
        dynamics = training_dynamics(labels, np.concatenate(list(run.epoch_logits.values())))
    return MemberFit(
        pred_probs=ensemble.pred_probs, member_probs=run.probs,
        weights=dict(zip(scorer_probs, ensemble.weights.tolist(), strict=True)),
        temperatures=dict(zip(scorer_probs, ensemble.temperatures.tolist(), strict=True)),
        seconds=dict(run.seconds),
        mode=("fit-on-train, score-on-test" if target is not None
              else f"{run.n_folds}-fold cross-fit"),
        screened=screened, dynamics=dynamics, words=run.words, embeddings=run.embeddings)


def screen_sample(labels: np.ndarray, *, size: int, random_state: int | None) -> np.ndarray:
    """Sorted positions of a stratified sample of ``size`` items (plain random when a
    class has a single item, or there are more classes than ``size``).

    Examples
    --------
    >>> screen_sample(np.array([0, 0, 0, 0, 1, 1, 1, 1]), size=4, random_state=0).size
    4
    """
    from sklearn.model_selection import train_test_split

    counts = np.bincount(labels)
    present = int((counts > 0).sum())
    # stratified when every class has two items and both parts can hold each class once
    stratify = labels if counts[counts > 0].min() >= 2 and min(
        size, len(labels) - size) >= present else None
    sample, _ = train_test_split(np.arange(len(labels)), train_size=size,
                                 random_state=random_state, stratify=stratify)
    return np.sort(sample)


def screen_members(train: TextDataset, scorers: list, *, size: int | None,
                   n_folds: int | None, random_state: int | None, progress: bool,
                   **options: Any) -> tuple[list, dict[str, float]]:
    """The default members worth running: cross-fitted on a stratified sample of ``size``
    items (None: all), a member but the first under :data:`SCREEN_WEIGHT` there is dropped."""
    assert train.labels is not None  # noqa: S101 - the caller checked
    part = train
    if size is not None:
        sample = screen_sample(train.labels, size=size, random_state=random_state)
        # a class the sample holds once cannot be held out and learned: left out of the
        # screen (with many classes, 2,000 items hold some only once)
        counts = np.bincount(train.labels[sample])
        sample = sample[counts[train.labels[sample]] >= 2]
        if len(np.unique(train.labels[sample])) < 2:  # nothing left to screen on
            return list(scorers), {}
        part = TextDataset(ids=train.ids[sample], texts=[train.texts[i] for i in sample],
                           text_pairs=None if train.text_pairs is None
                           else [train.text_pairs[i] for i in sample],
                           labels=train.labels[sample], classes=train.classes)
    # a sample's smallest class may hold fewer items than the folds the whole data takes:
    # the screen then takes fewer, without a warning that would read as the data's
    counts = np.bincount(np.asarray(part.labels))
    n_folds = int(min(DEFAULT_FOLDS if n_folds is None else n_folds,
                      max(2, counts[counts > 0].min())))
    # a stage of its own, so the fold lines that follow read as the screen's
    with progress_bar(len(scorers), f"screening {len(scorers)} members on {len(part.ids):,} "
                      f"of the {len(train.ids):,} items", unit=" members",
                      enabled=progress) as bar:
        run = member_pred_probs(part, scorers=scorers, n_folds=n_folds,
                                random_state=random_state, progress=progress, **options)
        bar.update(len(scorers))
    probs = run.per_scorer()
    weight = dict(zip(probs, ensemble_pred_probs(list(probs.values()), part.labels)
                      .weights.tolist(), strict=True))
    keys = member_keys(scorers)
    kept = [s for i, (s, key) in enumerate(zip(scorers, keys, strict=True))
            if i == 0 or weight[key] >= SCREEN_WEIGHT]
    dropped = {key: weight[key] for key in keys[1:] if weight[key] < SCREEN_WEIGHT}
    return kept, dropped


def method_scores(
    labels: np.ndarray, pred_probs: Probs, first_member: Probs,
    crowd_votes: np.ndarray | None, methods: list[str], *, n_jobs: int | None = None,
) -> tuple[dict[str, np.ndarray], int, np.ndarray | None]:
    """Every method's scores (:data:`labelaudit.detect.RANKING_METHODS`), cleanlab's
    estimated error count, CROWDLAB's consensus (``n_jobs``: cleanlab's)."""
    cl = confident_learning(labels, pred_probs, n_jobs=n_jobs)
    crowd = None if crowd_votes is None else crowdlab(labels, dense_probs(pred_probs),
                                                      crowd_votes)
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    seen = Predictions(labels, pred_probs, check_pred_probs(labels, first_member)[1], cl, crowd)
    scores = {method: RANKING_METHODS[method](seen) for method in methods}
    return scores, cl.n_issues, None if crowd is None else crowd.consensus_labels


def flag_items(labels: np.ndarray, pred_probs: Probs, ranking: np.ndarray, n_issues: int,
               *, top: int | None, threshold: float | None) -> tuple[np.ndarray, str]:
    """Which items are flagged, and the rule that says so."""
    if threshold is not None:
        flagged = given_probs(labels, pred_probs) < threshold
        return flagged, f"given-label probability < {threshold}"
    count = n_issues if top is None else min(top, len(labels))
    flagged = np.zeros(len(labels), dtype=bool)
    flagged[np.argsort(ranking, kind="stable")[:count]] = True
    return flagged, f"top {count}" + (" (cleanlab's estimated count)" if top is None else "")


def scan_frame(frame: pd.DataFrame, options: ScanOptions) -> ScanResult:
    """The in-memory scan of one label per item on checked ``options``: the one pipeline
    behind :func:`labelaudit.scan`, whatever the engine fitting the folds."""
    o = options
    started = time.perf_counter()
    wanted = list(o.methods if o.methods is not None else DEFAULT_METHODS
                  if o.annotations is not None else UNANNOTATED_METHODS)
    order_by = check_method(o.rank_by if o.rank_by is not None else "crowdlab"
                            if o.annotations is not None else DEFAULT_METHOD, "rank_by")
    inputs = read_inputs(frame, o)
    scored = inputs.target if inputs.target is not None else inputs.train
    assert scored.labels is not None  # noqa: S101 - prepared with a label column
    shown = default_progress() if o.progress is None else o.progress
    fit = MemberFit.given(inputs.probs) if inputs.probs is not None else fit_members(
        inputs.train, inputs.target, scored.labels, o, progress=shown)
    probs = fit.pred_probs
    scores, n_issues, consensus = method_scores(
        scored.labels, probs, next(iter(fit.member_probs.values())), inputs.votes,
        list(dict.fromkeys([*wanted, order_by])))
    warn_if_chance_level(scored.labels, probs, given=o.pred_probs is not None)
    flagged, rule = flag_items(scored.labels, probs, scores[order_by], n_issues, top=o.top,
                               threshold=o.threshold)
    found = None
    if o.datalab:
        features = datalab_features(scored.texts, text_pairs=scored.text_pairs,
                                    method=o.datalab_features or "tfidf", model=o.first_model,
                                    cache_dir=o.cache_dir, random_state=o.random_state or 0,
                                    progress=shown)
        found = datalab_issues(scored.labels, dense_probs(probs), features, ids=scored.ids,
                               classes=inputs.train.classes, random_state=o.random_state or 0)
    evidence: Evidence | None = None
    if o.evidence:
        evidence = build_evidence(scored.texts, scored.text_pairs, words=fit.words,
                                  embeddings=fit.embeddings)
        evidence.records_of(np.flatnonzero(flagged), ids=scored.ids, texts=scored.texts,
                            text_pairs=scored.text_pairs, labels=scored.labels,
                            classes=inputs.train.classes, pred_probs=probs)
    return ScanResult(
        ids=scored.ids, texts=scored.texts, text_pairs=scored.text_pairs, labels=scored.labels,
        classes=inputs.train.classes, pred_probs=probs, member_probs=fit.member_probs,
        weights=fit.weights, temperatures=fit.temperatures, scores=scores, rank_by=order_by,
        flagged=flagged, flag_rule=rule, n_issues_estimate=n_issues,
        seconds=time.perf_counter() - started, consensus_labels=consensus,
        member_seconds=fit.seconds, screened=fit.screened, mode=fit.mode,
        extra=extra_columns(inputs.frame, [o.text, o.text_pair, o.label, o.annotations,
                                           inputs.id_column]) if o.keep_columns else None,
        datalab=found, dynamics=fit.dynamics, evidence=evidence,
    )

