"""``scan``: the options become one checked :class:`ScanOptions`, then the data runs through
the in-memory pipeline (:mod:`._pipeline`), the multi-label scan (:mod:`._label_sets`) or,
with ``out``, the streamed engine (:mod:`._streaming`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from labelaudit.engine import EmbedOptions, HashingOptions
from labelaudit.io import (
    check_distinct_files,
    holds_label_sets,
    read_data,
    refuse_single_label_options,
)
from labelaudit.models import Scorer
from labelaudit.scanning._label_sets import MULTI_LABEL_SCAN_TAKES, scan_label_sets
from labelaudit.scanning._options import ScanOptions, check_options
from labelaudit.scanning._pipeline import SCORE_SPLIT_WHY, scan_frame
from labelaudit.scanning._results import LabelSetScanResult, ScanResult, StreamScanResult
from labelaudit.scanning._streaming import stream_scan

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.scanning._pipeline import Data, GivenProbs


def scan(
    data: Data, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    split: str | None = None, score: Data | None = None,
    pred_probs: GivenProbs | None = None, classes: Sequence[object] | None = None,
    keep_columns: bool = True,
    scorers: Sequence[str | Scorer] | None = None, preset: str | None = None,
    methods: Sequence[str] | None = None, rank_by: str | None = None,
    annotations: str | None = None,
    weights: Literal["auto", "equal"] | Sequence[float] = "auto", n_folds: int | None = None,
    n_seeds: int = 1, random_state: int | None = 0, top: int | None = None,
    threshold: float | None = None, model: str | Sequence[str] | None = None,
    pair_mode: Literal["features", "joint"] | None = None,
    cache_dir: str | Path | None = None, long_texts: Literal["truncate", "windows"] | None = None,
    epochs: int | None = None, max_length: int | None = None, batch_size: int | None = None,
    learning_rate: float | None = None, devices: Sequence[str] | None = None,
    progress: bool | None = None,
    sweep: int = 0, keep: int | None = None, screen: int = 2000, datalab: bool = False,
    datalab_features: Literal["tfidf", "embed"] | None = None, evidence: bool = True,
    top_classes: int | None = None, engine: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
    checkpoint_dir: str | Path | None = None, resume: bool = True,
    label_sep: str | None = None, out: str | Path | None = None, chunk_size: int = 100_000,
    overwrite: bool = False, tfidf: Literal["auto", "memory", "hashing"] = "auto",
    hashing_threshold: int | None = None, hashing: HashingOptions | None = None,
    embed: EmbedOptions | None = None,
) -> ScanResult | LabelSetScanResult | StreamScanResult:
    """Rank every item by how likely its given label is wrong.

    Each scorer gives out-of-sample probabilities: stratified k-fold cross-fitting or, with
    ``score``, a model fitted on ``data`` scores the ``score`` split (the test-set audit of
    Northcutt et al. 2021). The members are averaged with weights fitted to their
    out-of-sample log loss, and every ranking method is computed.

    Parameters
    ----------
    data : DataFrame, path, datasets.Dataset, datasets.DatasetDict or hub name
        The labelled table (the training split with ``score``): a CSV, TSV, JSONL, JSON or
        Parquet file, a ``save_to_disk`` folder, or a hub name that is not a path
        (``"imdb"``). ``ClassLabel`` columns are read as names; id -1 is a missing label.
    text, label, text_pair, id
        Column names; ``id`` defaults to a column named ``id``, else the row number.
    split
        The split of ``data`` when it has several; ``"folder:split"``, ``"name:split"`` too.
    score : same kinds as ``data``, optional
        A second split to rank with models fitted on all of ``data``.
    pred_probs : ndarray, DataFrame or path, optional
        Your own out-of-sample probabilities (n_samples, n_classes), as an array, ``.npy``
        or a table (:func:`labelaudit.io.read_table`, rows matched by ``id`` if it has it).
        They replace the ensemble (member ``pred_probs``); each row non-negative, finite
        and summing to 1 within 1e-3 (not logits). Not with the models' options.
    classes
        The class of each column of ``pred_probs`` (a class no item has is kept). Default:
        a table's column names as text; for an array, the ``ClassLabel`` names in id order,
        else the sorted label values.
    keep_columns
        Carry the input's (with ``score``, the scored split's) other columns to
        ``ScanResult.extra``, after the scan's own (a clashing one as ``input_<name>``).
    scorers : sequence of {"tfidf", "embed", "finetune"} or Scorer objects, optional
        The members; the first is the model behind ``loss``. Default: word and character
        TF-IDF with ``screen``. A name is configured by ``model``, ``pair_mode`` and
        ``cache_dir``; several objects of one kind form an FME (``finetune[model]``).
    preset : {"fast", "default", "best"}, optional
        A set of members instead of ``scorers`` (:data:`labelaudit.scanning.PRESETS`;
        ``best`` fine-tunes ``model`` on every fold, for a GPU).
    methods
        Any of :data:`labelaudit.detect.RANKING_METHODS` (``crowdlab`` needs
        ``annotations``). Default: every one that applies but ``self_confidence``, which
        ranks as ``ensemble`` does (``-log p`` is monotone).
    rank_by
        The method that orders the output (default ``crowdlab`` with ``annotations``, else
        ``ensemble``).
    annotations
        A column of per-item lists of annotators' labels (plain, or ``{"worker": id,
        "label": value}``), for ``crowdlab``.
    weights
        Ensemble weights (:func:`labelaudit.detect.ensemble_pred_probs`): one number per
        scorer; anything but "auto" needs at least two scorers.
    n_folds, n_seeds, random_state
        Folds (None: 5, fewer with a warning when a class is smaller; a number given is
        refused above the smallest class); repeats with other folds and seeds (FME
        members). With ``score`` there are no folds.
    top, threshold
        Flag the ``top`` most suspect items, or those whose given label has ensemble
        probability below ``threshold``; by default, as many as cleanlab estimates.
    model, pair_mode, cache_dir, long_texts
        Options of the ``embed``/``finetune`` members (``model`` a list: one member per
        model); ``long_texts``: how ``embed`` reads texts longer than its window.
    epochs, max_length, batch_size, learning_rate, devices
        Options of the ``finetune`` member (default: the scorer's; a preset's own).
    screen
        With the default members and more items, a member whose weight on a stratified
        sample of ``screen`` items is below 0.05 is not run on the rest. 0: off.
    sweep, keep
        With ``sweep`` > 0, every ``finetune`` member runs ``sweep`` configurations and the
        ``keep`` (default 3) of lowest out-of-sample log loss are averaged (Chong et al.).
    datalab, datalab_features
        Also run cleanlab's Datalab (:func:`labelaudit.detect.datalab_issues`): near
        duplicates, outliers, non-IID, on TF-IDF (default) or the embed member's features.
    evidence
        Why each flagged item is flagged (:meth:`ScanResult.explain`, the output's
        ``evidence`` column): its words that push the first TF-IDF member's out-of-fold
        model toward the suggested label, its 3 nearest items with that label, and items
        with the same (or nearly the same) text and another label. With ``pred_probs``
        there is no member: neighbours and duplicates only.
    top_classes
        Keep each item's ``top_classes`` likeliest classes (and its given label's
        probability) instead of every class's, so memory grows with the items, not items x
        classes (:class:`labelaudit.detect.TopKProbs`: every ranking, the suggested label
        and the flags exact but entropy, the members' temperatures and cleanlab's counts,
        which take the rest as spread evenly). None (default): all classes up to 256, the
        32 likeliest above; a number at least the class count keeps all. Not with
        ``pred_probs`` (yours, used as given).
    progress, engine, ray_address
        Progress on stderr (default on: bars on a terminal or in Jupyter, plain lines
        elsewhere, at most one per stage every 30 s; False: none). Fit the folds in this
        process (one per GPU with ``devices``) or as Ray tasks (the ``scale`` extra) on a
        local Ray or the cluster at ``ray_address``; same result.
    checkpoint_dir, resume
        Save every finished fold there and take those of an interrupted run of the same
        scan (``resume=False`` starts over); removed when the scan succeeds.
    label_sep
        The label column holds label sets as text (``"sports|politics"``); a column of
        lists needs no ``label_sep``. Multi-label data runs :func:`scan_label_sets`.
    out : path or URI, optional
        Stream the scan (docs/commands/scale.md, "Big data"): read files in chunks of
        ``chunk_size`` rows and write every item, most suspect first, to this file or
        folder of Parquet parts.
        Up to ``hashing_threshold`` items (default 200,000) this is the scan in memory;
        above, out of core. An option that needs every item in memory is refused first.
    chunk_size, tfidf, hashing_threshold, hashing, embed, overwrite
        With ``out``: rows per chunk (no effect on the result); ``"memory"`` or
        ``"hashing"`` forces a path; the hashed TF-IDF and embed members' options; replace
        labelaudit's own earlier output even if changed (never an input or another file).

    Returns
    -------
    ScanResult, LabelSetScanResult (multi-label data) or StreamScanResult (with ``out``)

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models (FML, FME). Northcutt, Athalye & Mueller (2021), Pervasive Label Errors in Test
    Sets Destabilize Machine Learning Benchmarks.

    Examples
    --------
    >>> import pandas as pd
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
    options = ScanOptions(**{name: value for name, value in locals().items() if name != "data"})
    return run_scan(data, options)


def run_scan(data: Data, options: ScanOptions,
             ) -> ScanResult | LabelSetScanResult | StreamScanResult:
    """:func:`scan` with its options as one object (what ``labelaudit scan`` builds from its
    flags): checked, then run in memory, on label sets, or streamed with ``out``."""
    options = check_options(data, options)
    if options.out is not None:  # the streamed engine: chunks in, ranked chunks out
        return stream_scan(data, options)
    check_distinct_files([("data", data), ("score=", options.score)], why=SCORE_SPLIT_WHY)
    frame = read_data(data, split=options.split)
    if options.label_sep is not None or (options.label in frame.columns
                                         and holds_label_sets(frame[options.label])):
        o = options
        refuse_single_label_options(
            MULTI_LABEL_SCAN_TAKES, score=o.score, annotations=o.annotations, methods=o.methods,
            weights=None if isinstance(o.weights, str) and o.weights == "auto" else o.weights,
            n_seeds=None if o.n_seeds == 1 else o.n_seeds, sweep=o.sweep or None,
            datalab=o.datalab or None, engine=None if o.engine == "local" else o.engine,
            checkpoint_dir=o.checkpoint_dir, preset=o.preset, pair_mode=o.pair_mode)
        return scan_label_sets(frame, options)
    return scan_frame(frame, options)
