"""Scans of datasets bigger than memory: chunked I/O, hashed TF-IDF trained out of core,
embedding heads on gathered or streamed embeddings, fold checkpoints, and an optional Ray
engine (``pip install 'labelaudit[scale]'``).

Examples
--------
>>> from labelaudit.scale import HashingOptions
>>> HashingOptions().n_features
1048576
"""

from labelaudit.scale._embed import embed_stream
from labelaudit.scale._hashing import FoldCounts, HashingOptions, fold_ids, hash_texts, tfidf_rows
from labelaudit.scale._heads import EmbedOptions
from labelaudit.scale._resume import ResumeWarning
from labelaudit.scale._scan import HASHING_THRESHOLD, StreamScanResult, scan_stream
from labelaudit.scale._sink import ChunkWriter, is_scan_output
from labelaudit.scale._stream import Source, is_streamable, iter_frames, resolve_source

__all__ = [
    "HASHING_THRESHOLD",
    "ChunkWriter",
    "EmbedOptions",
    "FoldCounts",
    "HashingOptions",
    "ResumeWarning",
    "Source",
    "StreamScanResult",
    "embed_stream",
    "fold_ids",
    "hash_texts",
    "is_scan_output",
    "is_streamable",
    "iter_frames",
    "resolve_source",
    "scan_stream",
    "tfidf_rows",
]
