"""Audits: read data, score it out of sample with :mod:`labelaudit.models`, rank it with
:mod:`labelaudit.detect` and return one result.

:func:`scan` audits a text classification table, :func:`scan_tokens` a token-tagged
dataset (NER, POS); both are orchestration only.
"""

from labelaudit.audit._text import ChanceLevelWarning, ScanResult, scan
from labelaudit.audit._token_output import (
    describe_token_scan,
    evaluate_token_scan,
    make_token_scorers,
    token_output_format,
    write_token_scan,
)
from labelaudit.audit._token_result import TokenScanResult
from labelaudit.audit._tokens import scan_tokens

__all__ = [
    "ChanceLevelWarning",
    "ScanResult",
    "TokenScanResult",
    "describe_token_scan",
    "evaluate_token_scan",
    "make_token_scorers",
    "scan",
    "scan_tokens",
    "token_output_format",
    "write_token_scan",
]
