"""Token-level label errors in tagged data (NER, POS): reading and writing CoNLL and JSONL,
tagging schemes and spans, token issues and their display. Read data with :func:`read_tokens`,
audit it with :func:`labelaudit.scanning.scan_tokens` and measure the ranking against a
corrected copy with :func:`labelaudit.evaluation.evaluate_tokens`.
"""

from labelaudit.tokens._dataset import TokenDataset, make_token_dataset, read_tokens, write_conll
from labelaudit.tokens._dataset import decode_tags as decode_tags
from labelaudit.tokens._dataset import encode_tags as encode_tags
from labelaudit.tokens._dataset import read_conll as read_conll
from labelaudit.tokens._dataset import read_token_jsonl as read_token_jsonl
from labelaudit.tokens._dataset import token_classes as token_classes
from labelaudit.tokens._evidence import SurfaceIndex as SurfaceIndex
from labelaudit.tokens._evidence import format_evidence as format_evidence
from labelaudit.tokens._evidence import issue_evidence as issue_evidence
from labelaudit.tokens._evidence import issue_forms as issue_forms
from labelaudit.tokens._evidence import surface_index as surface_index
from labelaudit.tokens._issues import ISSUE_KINDS as ISSUE_KINDS
from labelaudit.tokens._issues import TokenIssue
from labelaudit.tokens._issues import consistency_issues as consistency_issues
from labelaudit.tokens._issues import format_issue_table as format_issue_table
from labelaudit.tokens._issues import invalid_sequence_issues as invalid_sequence_issues
from labelaudit.tokens._issues import issues_to_frame as issues_to_frame
from labelaudit.tokens._issues import region_score as region_score
from labelaudit.tokens._issues import span_issues as span_issues
from labelaudit.tokens._issues import tag_consistency as tag_consistency
from labelaudit.tokens._issues import tag_issues as tag_issues
from labelaudit.tokens._schemes import Scheme as Scheme
from labelaudit.tokens._schemes import (
    Span,
    convert_tags,
    detect_scheme,
    spans_from_tags,
    tags_from_spans,
)
from labelaudit.tokens._schemes import invalid_transitions as invalid_transitions
from labelaudit.tokens._schemes import span_f1_counts as span_f1_counts
from labelaudit.tokens._schemes import split_tag as split_tag

__all__ = [
    "Span",
    "TokenDataset",
    "TokenIssue",
    "convert_tags",
    "detect_scheme",
    "make_token_dataset",
    "read_tokens",
    "spans_from_tags",
    "tags_from_spans",
    "write_conll",
]
