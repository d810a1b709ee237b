"""Token-level label errors in tagged data (NER, POS) in CoNLL or JSONL format.

What is specific to tagged data lives here: reading and writing CoNLL and JSONL, tagging
schemes and spans, span issue types and their display, and evaluation against a corrected
copy. Read data with :func:`read_tokens`, audit it with :func:`scan_tokens` (from
:mod:`labelaudit.scan`: out-of-sample token probabilities from a token scorer of
:mod:`labelaudit.models`, scored by :mod:`labelaudit.detect`) and measure the ranking
against a corrected copy with :func:`labelaudit.evaluation.evaluate_tokens`.
"""

from __future__ import annotations

import importlib
import warnings

from labelaudit.tokens._conll import read_conll, read_token_jsonl, read_tokens, write_conll
from labelaudit.tokens._dataset import TokenDataset, make_token_dataset
from labelaudit.tokens._display import format_issue_table, issues_to_frame
from labelaudit.tokens._issues import ISSUE_KINDS, TokenIssue
from labelaudit.tokens._schemes import (
    SCHEMES,
    Scheme,
    Span,
    convert_tags,
    detect_scheme,
    spans_from_tags,
    tags_from_spans,
)

__all__ = [
    "ISSUE_KINDS",
    "SCHEMES",
    "Scheme",
    "Span",
    "TokenDataset",
    "TokenIssue",
    "convert_tags",
    "detect_scheme",
    "format_issue_table",
    "issues_to_frame",
    "make_token_dataset",
    "read_conll",
    "read_token_jsonl",
    "read_tokens",
    "spans_from_tags",
    "tags_from_spans",
    "write_conll",
]

# Importable, but not part of the public API (imported on first use).
_INTERNAL = {
    "TagConsistency": "labelaudit.tokens._rules",
    "consistency_issues": "labelaudit.tokens._rules",
    "decode_tags": "labelaudit.tokens._spans",
    "encode_tags": "labelaudit.tokens._spans",
    "invalid_sequence_issues": "labelaudit.tokens._rules",
    "invalid_transitions": "labelaudit.tokens._schemes",
    "mark_sentence": "labelaudit.tokens._display",
    "region_score": "labelaudit.tokens._spans",
    "span_issues": "labelaudit.tokens._spans",
    "tag_consistency": "labelaudit.tokens._rules",
    "tag_issues": "labelaudit.tokens._spans",
    "token_classes": "labelaudit.tokens._spans",
}

# Moved to another package: still importable from here, with a DeprecationWarning.
_MOVED = {
    "CRFHead": ("labelaudit.models._heads", "CRFHead", "labelaudit.models._heads"),
    "EncoderTokenScorer": ("labelaudit.models", "EncoderTokenScorer", "labelaudit.models"),
    "LinearHead": ("labelaudit.models._heads", "LinearHead", "labelaudit.models._heads"),
    "TokenVectorCache": ("labelaudit.models._encoder", "TokenVectorCache",
                         "labelaudit.models._encoder"),
    "cross_val_token_probs": ("labelaudit.models", "cross_val_token_probs",
                              "labelaudit.models"),
    "document_folds": ("labelaudit.models._crossfit", "group_folds",
                       "labelaudit.models._crossfit (as group_folds)"),
    "encode_word_vectors": ("labelaudit.models._word_vectors", "encode_word_vectors",
                            "labelaudit.models._word_vectors"),
    "fit_score_token_probs": ("labelaudit.models._token_scorer", "fit_score_token_probs",
                              "labelaudit.models._token_scorer"),
    "make_token_scorer": ("labelaudit.models", "make_token_scorer", "labelaudit.models"),
    "sentence_scores": ("labelaudit.detect", "sentence_scores", "labelaudit.detect"),
    "shape_features": ("labelaudit.models._heads", "shape_features", "labelaudit.models._heads"),
    "token_scores": ("labelaudit.detect", "token_scores", "labelaudit.detect"),
    "window_features": ("labelaudit.models._heads", "window_features", "labelaudit.models._heads"),
}


def __getattr__(name: str) -> object:
    if name in _INTERNAL:
        return getattr(importlib.import_module(_INTERNAL[name]), name)
    if name in _MOVED:
        module, attribute, place = _MOVED[name]
        warnings.warn(f"labelaudit.tokens.{name} moved to {place}; this alias goes in the "
                      "next release", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'labelaudit.tokens' has no attribute {name!r}")
