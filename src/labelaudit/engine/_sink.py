"""Write a scan's output chunk by chunk, most suspect first, without holding it all.

:class:`RankSorter` is an external sort: each output chunk (in input order) is split by
rank range into small Parquet pieces, one folder per range; the ranges are then read back
one at a time, sorted, and appended to the output by :class:`ChunkWriter`, which writes a
temporary file beside the target and renames it into place when done (a remote target,
such as ``s3://bucket/issues.parquet``, is uploaded in one piece when done), or by
:class:`FolderWriter` as a folder of Parquet parts, local or remote.

Here: :func:`check_output`, which checks the output before any work, and
:func:`writer_for`, which picks the writer. The writers are in
:mod:`labelaudit.engine._chunk_writer` and :mod:`labelaudit.engine._folder_writer`, what an
output path names (its format, an earlier scan output, its filesystem) in
:mod:`labelaudit.engine._target`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit.engine._chunk_writer import ChunkWriter
from labelaudit.engine._folder_writer import FolderWriter
from labelaudit.engine._target import (
    SIGNATURE,
    is_folder_output,
    is_local,
    is_scan_output,
    out_filesystem,
    out_info,
    path_key,
)
from labelaudit.engine._uri import split_query

__all__ = ["ChunkWriter", "FolderWriter", "check_output", "is_folder_output",
           "is_scan_output", "writer_for"]


def check_output(out: str | Path, inputs: Sequence[str], *, overwrite: bool = False) -> str:
    """Check the output path (local, or a URI pyarrow opens) before any work; return its
    format (``"parts"`` for a folder of Parquet files).

    Refused with :class:`InvalidParameterError`: an unknown suffix, an input file (or a
    folder that holds one), an unwritable folder, a missing bucket, a local file that
    labelaudit did not write (whatever ``overwrite``) or that was changed since it wrote it
    (unless ``overwrite``: the rule of every command, see
    :func:`labelaudit.io.check_replaceable`), and a remote file or a folder that is not a
    labelaudit scan output.
    """
    from labelaudit.io import check_output_paths, format_of

    if is_folder_output(out):
        FolderWriter(out).check(inputs, overwrite=overwrite)
        return "parts"
    text = str(out)
    where = split_query(text)[0]
    fmt = format_of(where)
    local_inputs = [("an input file", path_key(p)) for p in inputs
                    if "://" not in p or p.startswith("file://")]
    if "://" not in text:
        check_output_paths([("out", text)], local_inputs, overwrite=overwrite)
        return fmt
    if any(path_key(p) == path_key(text) for p in inputs):
        raise InvalidParameterError(
            f"{where} (the output) is an input file; labelaudit never overwrites an input: "
            "choose another output file")
    import pyarrow.fs as pafs

    fs, path = out_filesystem(text)
    if is_local(fs):  # file://: the local rule, --overwrite included
        check_output_paths([("out", path)], local_inputs, overwrite=overwrite)
    info = out_info(fs, path, where)
    if info.type == pafs.FileType.Directory:
        raise InvalidParameterError(
            f"out {where} is a folder; give a file with a suffix, or the folder ending in / "
            "for Parquet parts")
    if info.type == pafs.FileType.File and not is_scan_output(text):
        raise InvalidParameterError(
            f"out {where} exists and is not a labelaudit scan output (it lacks the columns "
            f"{', '.join(SIGNATURE)}); remove it or choose another file")
    return fmt


def writer_for(out: str | Path, *, schema: Any = None) -> Any:
    """A :class:`FolderWriter` for a folder output, else a :class:`ChunkWriter`."""
    if is_folder_output(out):
        return FolderWriter(out, schema=schema)
    return ChunkWriter(out, schema=schema)
