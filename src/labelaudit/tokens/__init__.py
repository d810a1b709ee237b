"""Token-level label errors in tagged data (NER, POS) in CoNLL or JSONL format.

Read data with :func:`read_tokens`, audit it with :func:`scan_tokens` (out-of-sample token
probabilities, then token, span and sentence scores plus rule-based issues), and measure the
ranking against a corrected copy with :func:`evaluate_tokens`.
"""

from labelaudit.tokens._conll import (
    TokenDataset,
    make_token_dataset,
    read_conll,
    read_token_jsonl,
    read_tokens,
    write_conll,
)
from labelaudit.tokens._crossfit import (
    cross_val_token_probs,
    document_folds,
    encode_tags,
    fit_score_token_probs,
    token_classes,
)
from labelaudit.tokens._display import format_issue_table, issues_to_frame, mark_sentence
from labelaudit.tokens._evaluate import (
    LevelMetrics,
    SpanPrecision,
    TokenEvaluation,
    evaluate_tokens,
    read_token_issues,
)
from labelaudit.tokens._heads import CRFHead, LinearHead, shape_features, window_features
from labelaudit.tokens._issues import ISSUE_KINDS, TokenIssue
from labelaudit.tokens._rules import (
    TagConsistency,
    consistency_issues,
    invalid_sequence_issues,
    tag_consistency,
)
from labelaudit.tokens._scan import TokenScanResult, scan_tokens, sentence_scores, token_scores
from labelaudit.tokens._schemes import (
    SCHEMES,
    Span,
    convert_tags,
    detect_scheme,
    invalid_transitions,
    spans_from_tags,
    tags_from_spans,
)
from labelaudit.tokens._scorer import EncoderTokenScorer, make_token_scorer
from labelaudit.tokens._spans import decode_tags, region_score, span_issues, tag_issues
from labelaudit.tokens._vectors import TokenVectorCache, encode_word_vectors

__all__ = [
    "CRFHead",
    "EncoderTokenScorer",
    "ISSUE_KINDS",
    "LevelMetrics",
    "LinearHead",
    "SCHEMES",
    "Span",
    "SpanPrecision",
    "TagConsistency",
    "TokenDataset",
    "TokenEvaluation",
    "TokenIssue",
    "TokenScanResult",
    "TokenVectorCache",
    "consistency_issues",
    "convert_tags",
    "cross_val_token_probs",
    "decode_tags",
    "detect_scheme",
    "document_folds",
    "encode_tags",
    "encode_word_vectors",
    "evaluate_tokens",
    "fit_score_token_probs",
    "format_issue_table",
    "invalid_sequence_issues",
    "invalid_transitions",
    "issues_to_frame",
    "make_token_dataset",
    "make_token_scorer",
    "mark_sentence",
    "read_conll",
    "read_token_issues",
    "read_token_jsonl",
    "read_tokens",
    "region_score",
    "scan_tokens",
    "sentence_scores",
    "shape_features",
    "span_issues",
    "spans_from_tags",
    "tag_consistency",
    "tag_issues",
    "tags_from_spans",
    "token_classes",
    "token_scores",
    "window_features",
    "write_conll",
]
