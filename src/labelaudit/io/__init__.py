"""Readers, writers and validation of the tables labelaudit works on."""

from labelaudit.io._dataset import (
    TextDataset,
    align_pred_probs,
    encode_labels,
    prepare_text_dataset,
    require_columns,
)
from labelaudit.io._paths import check_output_paths, check_writable, same_file
from labelaudit.io._read import (
    CLASS_NAMES,
    hf_to_frame,
    json_lines,
    read_data,
    read_pred_probs,
    read_table,
    read_text,
    split_lines,
)
from labelaudit.io._report import emit_report
from labelaudit.io._write import (
    FORMATS,
    OUTPUT_SUFFIXES,
    atomic_path,
    emit,
    figure_path,
    format_of,
    render_table,
    save_figure,
    write_json,
    write_table,
)

__all__ = [
    "CLASS_NAMES",
    "FORMATS",
    "figure_path",
    "save_figure",
    "OUTPUT_SUFFIXES",
    "TextDataset",
    "align_pred_probs",
    "atomic_path",
    "check_output_paths",
    "check_writable",
    "emit",
    "emit_report",
    "encode_labels",
    "format_of",
    "hf_to_frame",
    "json_lines",
    "prepare_text_dataset",
    "read_data",
    "read_pred_probs",
    "read_table",
    "read_text",
    "render_table",
    "require_columns",
    "same_file",
    "split_lines",
    "write_json",
    "write_table",
]
