"""Readers, writers and validation of the tables labelaudit works on: tables, labels, text
datasets, crowd annotations, every file written and the overwrite rule. The names outside
``__all__`` are for the other packages."""

from labelaudit._errors import plain_value
from labelaudit.io._annotations import (  # noqa: F401 - also for the other packages
    ITEM_ALIASES,
    Annotations,
    DroppedAnnotationsWarning,
    nested_to_long,
    to_annotations,
)
from labelaudit.io._dataset import (  # noqa: F401 - also for the other packages
    PROBABILITY_SUM_TOLERANCE,
    OverlapWarning,
    TextDataset,
    align_pred_probs,
    check_distinct_files,
    encode_labels,
    label_values,
    pred_probs_by_id,
    prepare_text_dataset,
    require_columns,
    text_values,
    value_kind,
    warn_overlap,
)
from labelaudit.io._evidence import (  # noqa: F401 - for the other packages
    evidence_text,
    read_evidence,
)
from labelaudit.io._labels import (  # noqa: F401 - also for the other packages
    FALSE_WORDS,
    LABEL_SET_TYPES,
    SET_THRESHOLD,
    TRUE_WORDS,
    check_label_set_classes,
    check_label_set_members,
    check_label_values,
    check_separator,
    clean_label,
    format_items,
    format_label_set,
    holds_label_sets,
    is_empty_label,
    is_missing,
    label_kind,
    label_problem,
    label_set_names,
    read_label_sets,
    refuse_single_label_options,
    text_keys,
)
from labelaudit.io._paths import (  # noqa: F401 - also for the other packages
    SIDECARS,
    check_command_paths,
    check_output_folder,
    check_output_paths,
    check_replaceable,
    check_writable,
    same_file,
    sidecar_path,
    write_manifest,
)
from labelaudit.io._read import (  # noqa: F401 - also for the other packages
    CLASS_NAMES,
    json_lines,
    read_data,
    read_pred_probs,
    read_table,
    read_text,
    split_lines,
    zero_padded_columns,
)
from labelaudit.io._write import (  # noqa: F401 - also for the other packages
    FORMATS,
    METRIC_NAMES,
    SUFFIX_FORMAT,
    ResultFiles,
    atomic_path,
    current_umask,
    emit,
    emit_report,
    figure_path,
    flat_cells,
    format_of,
    json_number,
    output_record,
    parquet_refusal,
    record_output,
    render_table,
    replace_folder,
    save_figure,
    write_json,
    write_jsonl,
    write_table,
)

__all__ = [
    "Annotations",
    "DroppedAnnotationsWarning",
    "OverlapWarning",
    "ResultFiles",
    "TextDataset",
    "clean_label",
    "nested_to_long",
    "plain_value",
    "prepare_text_dataset",
    "read_data",
    "read_table",
    "to_annotations",
    "write_table",
]
