"""Scans of datasets bigger than memory: chunked I/O, hashed TF-IDF trained out of core,
embedding heads on gathered or streamed embeddings, fold checkpoints, and an optional Ray
engine (``pip install 'labelaudit[scale]'``).

Examples
--------
>>> from labelaudit.engine import HashingOptions
>>> HashingOptions().n_features
1048576
"""

from labelaudit.engine._embed import embed_stream
from labelaudit.engine._hashing import FoldCounts, HashingOptions, fold_ids, hash_texts, tfidf_rows
from labelaudit.engine._heads import EmbedOptions
from labelaudit.engine._resume import ResumeWarning
from labelaudit.engine._sink import ChunkWriter, is_scan_output
from labelaudit.engine._stream import Source, is_streamable, iter_frames, resolve_source

__all__ = [
    "ChunkWriter",
    "EmbedOptions",
    "FoldCounts",
    "HashingOptions",
    "ResumeWarning",
    "Source",
    "embed_stream",
    "fold_ids",
    "hash_texts",
    "is_scan_output",
    "is_streamable",
    "iter_frames",
    "resolve_source",
    "tfidf_rows",
]
