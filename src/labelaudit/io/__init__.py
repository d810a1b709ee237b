"""Readers, writers and validation of the tables labelaudit works on.

The long-format annotation table (:class:`Annotations`, :func:`to_annotations`) is a data
format here too: the agreement statistics, the noise methods and CROWDLAB read it.
"""

from labelaudit.io._annotation_labels import (
    clean_label,
    format_items,
    is_empty_label,
    is_missing,
    label_kind,
)
from labelaudit.io._annotation_table import ITEM_ALIASES, Annotations, DroppedAnnotationsWarning
from labelaudit.io._annotations import to_annotations
from labelaudit.io._command_paths import SIDECARS, check_command_paths
from labelaudit.io._dataset import (
    PROBABILITY_SUM_TOLERANCE,
    TextDataset,
    align_pred_probs,
    encode_labels,
    pred_probs_by_id,
    prepare_text_dataset,
    require_columns,
)
from labelaudit.io._folders import check_output_folder, write_manifest, written_folder
from labelaudit.io._hf import CLASS_NAMES, hf_to_frame
from labelaudit.io._label_sets import (
    LABEL_SET_TYPES,
    SET_THRESHOLD,
    check_label_set_classes,
    check_label_set_members,
    check_separator,
    format_label_set,
    holds_label_sets,
    label_set_names,
    read_label_sets,
    refuse_single_label_options,
)
from labelaudit.io._labels import check_label_values, label_problem, text_keys
from labelaudit.io._ledger import ledger_path, record_output, wrote_output
from labelaudit.io._nested import nested_to_long
from labelaudit.io._overlap import OverlapWarning, check_distinct_files, warn_overlap
from labelaudit.io._paths import (
    check_input_paths,
    check_not_in_input_folder,
    check_not_in_model_folder,
    check_output_paths,
    check_replaceable,
    check_writable,
    input_folders,
    is_output_folder,
    same_file,
    sidecar_path,
)
from labelaudit.io._read import read_data, read_pred_probs, read_table, zero_padded_columns
from labelaudit.io._result_files import METRIC_NAMES, ResultFiles, emit_report, json_number
from labelaudit.io._text import json_lines, read_text, split_lines
from labelaudit.io._write import (
    FORMATS,
    OUTPUT_SUFFIXES,
    SUFFIX_FORMAT,
    atomic_path,
    current_umask,
    emit,
    figure_path,
    flat_cells,
    format_of,
    parquet_refusal,
    render_table,
    replace_folder,
    save_figure,
    write_json,
    write_jsonl,
    write_table,
)

__all__ = [
    "Annotations",
    "CLASS_NAMES",
    "DroppedAnnotationsWarning",
    "FORMATS",
    "ITEM_ALIASES",
    "LABEL_SET_TYPES",
    "METRIC_NAMES",
    "OUTPUT_SUFFIXES",
    "OverlapWarning",
    "PROBABILITY_SUM_TOLERANCE",
    "ResultFiles",
    "SET_THRESHOLD",
    "SIDECARS",
    "SUFFIX_FORMAT",
    "TextDataset",
    "align_pred_probs",
    "atomic_path",
    "check_command_paths",
    "check_distinct_files",
    "check_input_paths",
    "check_label_set_classes",
    "check_label_set_members",
    "check_separator",
    "check_label_values",
    "check_not_in_input_folder",
    "check_not_in_model_folder",
    "check_output_folder",
    "check_output_paths",
    "check_replaceable",
    "check_writable",
    "clean_label",
    "current_umask",
    "emit",
    "emit_report",
    "encode_labels",
    "figure_path",
    "flat_cells",
    "format_items",
    "format_label_set",
    "format_of",
    "hf_to_frame",
    "holds_label_sets",
    "input_folders",
    "is_empty_label",
    "is_missing",
    "is_output_folder",
    "json_lines",
    "json_number",
    "label_kind",
    "label_problem",
    "label_set_names",
    "ledger_path",
    "nested_to_long",
    "parquet_refusal",
    "pred_probs_by_id",
    "prepare_text_dataset",
    "read_data",
    "read_label_sets",
    "read_pred_probs",
    "read_table",
    "read_text",
    "record_output",
    "refuse_single_label_options",
    "render_table",
    "replace_folder",
    "require_columns",
    "same_file",
    "save_figure",
    "sidecar_path",
    "split_lines",
    "text_keys",
    "to_annotations",
    "warn_overlap",
    "write_json",
    "write_jsonl",
    "write_manifest",
    "write_table",
    "written_folder",
    "wrote_output",
    "zero_padded_columns",
]
