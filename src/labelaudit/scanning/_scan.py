"""``scan``: rank every item of a text dataset by how likely its label is wrong.

The options become one :class:`~labelaudit.scanning.ScanOptions`, checked once
(:mod:`._options`); the data then runs through the in-memory pipeline (:mod:`._pipeline`),
the multi-label scan (:mod:`._label_sets`) or, with ``out``, the streamed engine
(:mod:`._streaming`), which ranks data small enough for memory with the same pipeline.
"""

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
    from labelaudit.scanning._pipeline import Data, Probs


def scan(
    data: Data, *, text: str = "text", label: str = "label",
    text_pair: str | None = None, id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    split: str | None = None, score: Data | None = None,
    pred_probs: Probs | None = None, classes: Sequence[object] | None = None,
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
    datalab_features: Literal["tfidf", "embed"] | None = None,
    engine: Literal["local", "ray"] = "local", ray_address: str | None = None,
    checkpoint_dir: str | Path | None = None, resume: bool = True,
    label_sep: str | None = None, out: str | Path | None = None, chunk_size: int = 100_000,
    overwrite: bool = False, tfidf: Literal["auto", "memory", "hashing"] = "auto",
    hashing_threshold: int | None = None, hashing: HashingOptions | None = None,
    embed: EmbedOptions | None = None,
) -> ScanResult | LabelSetScanResult | StreamScanResult:
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
        class; a table with the data's id column (``id``) has its rows matched to the
        items by id instead of by position. They replace the ensemble (member
        ``pred_probs``, weight 1, no temperature) and every method, flag and suggestion
        is computed on them; they must be out-of-sample (from cross-validation, or a
        model that never saw ``data``) or the ranking means little. Each row must be
        non-negative, finite and sum to 1 within 1e-3 (softmax outputs, not logits). Not
        with ``scorers``, ``model``, ``sweep``, ``score``, ``n_seeds``, ``weights`` or
        ``pair_mode``.
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
        A named set of members instead of ``scorers`` (:data:`labelaudit.scanning.PRESETS`):
        ``fast`` is word TF-IDF alone, ``default`` the default, ``best`` word TF-IDF with
        ``model`` (default all-MiniLM-L6-v2) fine-tuned on every fold, for a GPU (IMDB dev
        half: AP 1.6x the strong TF-IDF peer, about 4 minutes on one H100).
    methods : sequence of str, optional
        Default: every method that applies, except ``self_confidence``, which ranks
        exactly as ``ensemble`` does (``-log p`` is monotone in ``p``). Any of
        :data:`labelaudit.detect.RANKING_METHODS`: ``loss``
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
        Folds of the cross-fitting (None: 5, fewer when a class has fewer items, with a
        warning; a number given is taken as asked, and refused when above the smallest
        class); repeats with different folds and seeds (FME members). With ``score`` there
        are no folds, and a repeat differs only for scorers that are random (``finetune``).
    top, threshold : optional
        Flag the ``top`` most suspect items, or those whose given label has ensemble
        probability below ``threshold``; by default, as many as cleanlab estimates.
    model, pair_mode, cache_dir : options of the ``embed``/``finetune`` scorers named
        (``model`` a list: one member per model).
    epochs, max_length, batch_size, learning_rate, devices : optional
        Options of the ``finetune`` member (default: the scorer's; a preset's own).
    long_texts : {"truncate", "windows"}, optional
        How the ``embed`` member reads texts longer than its encoder's window.
    screen : int, default=2000
        With the default members and more than ``screen`` items, each member is first
        cross-fitted on a stratified sample of ``screen`` items; a member whose ensemble
        weight there is below 0.05 is not run on the rest (its encoding is the slow part),
        and the summary says so. 0 turns screening off.
    sweep, keep : int
        With ``sweep`` > 0, every ``finetune`` member runs in ``sweep`` configurations
        (learning rate, epochs, seed) and the ``keep`` with the lowest out-of-sample log
        loss are averaged (the FME of Chong et al. 2022); the selection uses the same
        out-of-sample predictions the ranking then uses. ``keep`` defaults to 3, or to
        ``sweep`` when that is smaller.
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
        cluster has GPUs. The result does not depend on the engine. With ``out``, where
        the chunks are read, scored and written (``"ray"``: Ray Data and Ray tasks).
    ray_address : str, optional
        A running Ray cluster (``"auto"``, ``"host:6379"``, ``"ray://host:10001"``).
    checkpoint_dir : path, optional
        Save every finished fold there, and take the folds an earlier, interrupted run of
        the same scan saved instead of fitting them again (folds run in this process);
        removed when the scan succeeds.
    resume : bool, default=True
        With ``checkpoint_dir``: reuse the folds saved there (False starts over).
    label_sep : str, optional
        The label column holds label sets as text (``"sports|politics"`` with ``"|"``).
        A label column of lists (JSONL, Parquet, a Hugging Face ``Sequence``) is read as
        label sets without it. Multi-label data runs :func:`scan_label_sets` and returns a
        :class:`LabelSetScanResult`.
    out : path or URI, optional
        Stream the scan: read ``data`` in chunks of ``chunk_size`` rows and write every
        item, most suspect first, to this file (``.parquet``, ``.csv``, ``.tsv``,
        ``.jsonl``, ``.json``) or folder of Parquet parts (a path ending in ``/``, or a
        URI), so that data too big for memory is scanned. Up to ``hashing_threshold`` items
        this is the scan in memory, written in chunks; above, the texts are hashed chunk by
        chunk (no vocabulary, fixed memory), and each of the ``n_folds`` TF-IDF models is
        trained out of core by SGD on the rows of the other folds (folds from a seeded hash
        of the row number), so no item is scored by a model that saw it, nor by an idf that
        counted it; the embed member embeds every row once, chunk by chunk, through the
        embedding cache, and fits its heads per fold. Only labels, fold ids and the
        out-of-sample probabilities are held for every item; the output is written most
        suspect first by an external sort. So only the tfidf and embed members can be named
        (the default members are the in-memory default up to ``hashing_threshold`` items,
        else tfidf and embed, screened). ``data`` must be files (Parquet, CSV, TSV or JSON
        lines: one file, a folder, a glob, a list, or a URI that pyarrow opens, such as
        ``s3://bucket/data/``), every one with the same columns; an option that needs
        every item in memory (``score``, ``pred_probs``, ``annotations``, ``methods``,
        ``rank_by``, ``weights``, ``n_seeds``, ``sweep``, ``datalab``, ``split``,
        ``label_sep``, another member) is refused before any work.
    chunk_size : int, default=100_000
        Rows per chunk with ``out``; the result does not depend on it.
    tfidf : {"auto", "memory", "hashing"}
        With ``out``: ``"memory"`` ranks every row in memory whatever the size,
        ``"hashing"`` takes the out-of-core path whatever the size.
    hashing_threshold : int, optional
        With ``out`` and ``tfidf="auto"``: the most items ranked in memory (default
        200,000).
    hashing : HashingOptions, optional
        With ``out``: the hashed TF-IDF member's features and SGD.
    embed : EmbedOptions, optional
        With ``out``: the embed member's encoder, cache and heads (instead of ``model``,
        ``pair_mode`` and ``cache_dir``).
    overwrite : bool, default=False
        With ``out``: replace labelaudit's own earlier output even if it was changed
        since (unchanged, it is replaced anyway; a file labelaudit did not write, or an
        input, never is).

    Returns
    -------
    ScanResult, or LabelSetScanResult for multi-label data, or StreamScanResult (what was
    written to ``out``) with ``out``

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
