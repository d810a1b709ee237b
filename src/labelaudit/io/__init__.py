"""Readers, writers and validation of the tables labelaudit works on."""

from labelaudit.io._dataset import (
    TextDataset,
    align_pred_probs,
    encode_labels,
    prepare_text_dataset,
    require_columns,
)
from labelaudit.io._folders import check_output_folder, write_manifest, written_folder
from labelaudit.io._labels import check_label_values, label_problem
from labelaudit.io._ledger import ledger_path, record_output, wrote_output
from labelaudit.io._overlap import OverlapWarning, check_distinct_files, warn_overlap
from labelaudit.io._paths import (
    check_input_paths,
    check_not_in_model_folder,
    check_output_paths,
    check_writable,
    is_output_folder,
    same_file,
)
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
from labelaudit.io._result_files import emit_report
from labelaudit.io._write import (
    FORMATS,
    OUTPUT_SUFFIXES,
    atomic_path,
    current_umask,
    emit,
    figure_path,
    format_of,
    render_table,
    replace_folder,
    save_figure,
    write_json,
    write_table,
)

__all__ = [
    "OverlapWarning",
    "CLASS_NAMES",
    "FORMATS",
    "figure_path",
    "save_figure",
    "OUTPUT_SUFFIXES",
    "TextDataset",
    "align_pred_probs",
    "atomic_path",
    "check_distinct_files",
    "check_input_paths",
    "check_label_values",
    "check_not_in_model_folder",
    "check_output_folder",
    "check_output_paths",
    "check_writable",
    "current_umask",
    "emit",
    "emit_report",
    "encode_labels",
    "format_of",
    "hf_to_frame",
    "is_output_folder",
    "ledger_path",
    "json_lines",
    "label_problem",
    "prepare_text_dataset",
    "read_data",
    "read_pred_probs",
    "read_table",
    "read_text",
    "record_output",
    "render_table",
    "replace_folder",
    "require_columns",
    "same_file",
    "split_lines",
    "warn_overlap",
    "write_json",
    "write_manifest",
    "write_table",
    "written_folder",
    "wrote_output",
]
