"""Scans of datasets bigger than memory: chunked I/O, hashed TF-IDF trained out of core,
embedding heads on gathered or streamed embeddings, fold checkpoints, and an optional Ray
engine (``pip install 'labelaudit[scale]'``).

Examples
--------
>>> from labelaudit.engine import HashingOptions
>>> HashingOptions().n_features
1048576
"""

from labelaudit.engine._chunk_writer import ChunkWriter
from labelaudit.engine._chunks import Collector, Columns
from labelaudit.engine._fits import check_fits, keep_workers, run_fits
from labelaudit.engine._hashing import (
    FoldCounts,
    FoldPrediction,
    HashingOptions,
    fold_ids,
    hash_texts,
    tfidf_rows,
)
from labelaudit.engine._heads import EmbedOptions
from labelaudit.engine._local import LocalRunner
from labelaudit.engine._mapped_rows import MappedRows, mapped_rows
from labelaudit.engine._ray import RayRunner
from labelaudit.engine._ray_connect import check_engine, folds_on
from labelaudit.engine._resume import Checkpoint, ResumeWarning
from labelaudit.engine._sink import check_output, writer_for
from labelaudit.engine._sort import RankSorter
from labelaudit.engine._source import Source, is_streamable, resolve_source
from labelaudit.engine._stream import (
    check_chunk_size,
    check_columns,
    first_rows,
    first_rows_hold_label_sets,
    iter_frames,
)
from labelaudit.engine._target import is_folder_output, is_scan_output

__all__ = [
    "Checkpoint",
    "ChunkWriter",
    "Collector",
    "Columns",
    "EmbedOptions",
    "FoldCounts",
    "FoldPrediction",
    "HashingOptions",
    "LocalRunner",
    "MappedRows",
    "RankSorter",
    "RayRunner",
    "ResumeWarning",
    "Source",
    "check_chunk_size",
    "check_columns",
    "check_engine",
    "check_fits",
    "check_output",
    "first_rows",
    "first_rows_hold_label_sets",
    "fold_ids",
    "folds_on",
    "hash_texts",
    "is_folder_output",
    "is_scan_output",
    "is_streamable",
    "keep_workers",
    "mapped_rows",
    "iter_frames",
    "resolve_source",
    "run_fits",
    "tfidf_rows",
    "writer_for",
]
