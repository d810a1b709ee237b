"""Audits: :func:`scan` (a text classification table, in memory or streamed with ``out``)
and :func:`scan_tokens` (token-tagged data: NER, POS) score out of sample with
:mod:`labelaudit.models` and rank with :mod:`labelaudit.detect`. The other names imported
here are for the command line and the other packages."""

from labelaudit.scanning._label_sets import LABEL_SET_METHODS as LABEL_SET_METHODS
from labelaudit.scanning._label_sets import label_set_scores
from labelaudit.scanning._label_sets import scan_label_sets as scan_label_sets
from labelaudit.scanning._options import PRESET_FINETUNE as PRESET_FINETUNE
from labelaudit.scanning._options import PRESETS as PRESETS
from labelaudit.scanning._options import ScanOptions, SlowPresetWarning
from labelaudit.scanning._options import preset_members as preset_members
from labelaudit.scanning._options import streams as streams
from labelaudit.scanning._results import (
    ChanceLevelWarning,
    LabelSetScanResult,
    ScanResult,
    StreamScanResult,
)
from labelaudit.scanning._results import result_table as result_table
from labelaudit.scanning._scan import run_scan as run_scan
from labelaudit.scanning._scan import scan
from labelaudit.scanning._tokens import TokenScanOptions, TokenScanResult, scan_tokens
from labelaudit.scanning._tokens import describe_token_scan as describe_token_scan
from labelaudit.scanning._tokens import evaluate_token_scan as evaluate_token_scan
from labelaudit.scanning._tokens import make_token_scorers as make_token_scorers
from labelaudit.scanning._tokens import run_scan_tokens as run_scan_tokens
from labelaudit.scanning._tokens import token_output_format as token_output_format
from labelaudit.scanning._tokens import write_token_scan as write_token_scan

__all__ = [
    "ChanceLevelWarning",
    "LabelSetScanResult",
    "ScanOptions",
    "ScanResult",
    "SlowPresetWarning",
    "StreamScanResult",
    "TokenScanOptions",
    "TokenScanResult",
    "label_set_scores",
    "scan",
    "scan_tokens",
]
