"""Scans of datasets bigger than memory: chunked I/O, out-of-core hashed TF-IDF and embedding
heads, fold checkpoints, and an optional Ray engine (``pip install 'labelaudit[scale]'``).

Examples
--------
>>> from labelaudit.engine import HashingOptions
>>> HashingOptions().n_features
1048576
"""

# Names outside __all__ are for labelaudit's other packages (noqa: imported, not used here).
from labelaudit.engine._hashing import (  # noqa: F401
    Collector,
    Columns,
    FoldCounts,
    FoldPrediction,
    HashingOptions,
    fold_ids,
    hash_texts,
    tfidf_rows,
)
from labelaudit.engine._heads import EmbedOptions
from labelaudit.engine._local import LocalRunner  # noqa: F401
from labelaudit.engine._mapped_rows import mapped_rows  # noqa: F401
from labelaudit.engine._ray import RayRunner  # noqa: F401
from labelaudit.engine._resume import Checkpoint, ResumeWarning  # noqa: F401
from labelaudit.engine._sink import (  # noqa: F401
    ChunkWriter,
    RankSorter,
    check_output,
    is_folder_output,
    is_scan_output,
    writer_for,
)
from labelaudit.engine._source import (  # noqa: F401
    Source,
    check_chunk_size,
    check_columns,
    first_rows,
    first_rows_hold_label_sets,
    is_streamable,
    iter_frames,
    resolve_source,
)

__all__ = ["EmbedOptions", "HashingOptions", "ResumeWarning"]
