"""Readers, writers and validation of the tables labelaudit works on."""

from labelaudit.io._dataset import (
    TextDataset,
    encode_labels,
    prepare_text_dataset,
    require_columns,
)
from labelaudit.io._read import json_lines, read_table, read_text
from labelaudit.io._write import atomic_path, write_json, write_table

__all__ = [
    "TextDataset",
    "atomic_path",
    "encode_labels",
    "json_lines",
    "prepare_text_dataset",
    "read_table",
    "read_text",
    "require_columns",
    "write_json",
    "write_table",
]
