"""Audits: read data, score it out of sample with :mod:`labelaudit.models`, rank it with
:mod:`labelaudit.detect` and return one result.

:func:`scan` audits a text classification table, :func:`scan_tokens` a token-tagged
dataset (NER, POS); both are orchestration only.
"""

from labelaudit.scanning._label_set_result import LabelSetScanResult, output_frame
from labelaudit.scanning._label_sets import label_set_scores, scan_label_sets
from labelaudit.scanning._plan import ScanPlan, plan_scan
from labelaudit.scanning._presets import (
    PRESET_FINETUNE,
    PRESETS,
    SlowPresetWarning,
    preset_members,
    preset_settings,
)
from labelaudit.scanning._scan_stream import scan_stream
from labelaudit.scanning._streamed import HASHING_THRESHOLD, StreamScanResult
from labelaudit.scanning._summary import ScanFacts, format_scan_summary
from labelaudit.scanning._text import ChanceLevelWarning, ScanResult, check_flagging, scan
from labelaudit.scanning._text_result import chance_note
from labelaudit.scanning._token_output import (
    describe_token_scan,
    evaluate_token_scan,
    make_token_scorers,
    token_output_format,
    write_token_scan,
)
from labelaudit.scanning._token_result import TokenScanResult
from labelaudit.scanning._tokens import scan_tokens

__all__ = [
    "ChanceLevelWarning",
    "HASHING_THRESHOLD",
    "LabelSetScanResult",
    "PRESETS",
    "PRESET_FINETUNE",
    "ScanFacts",
    "ScanPlan",
    "ScanResult",
    "SlowPresetWarning",
    "StreamScanResult",
    "TokenScanResult",
    "chance_note",
    "check_flagging",
    "describe_token_scan",
    "evaluate_token_scan",
    "format_scan_summary",
    "label_set_scores",
    "make_token_scorers",
    "output_frame",
    "plan_scan",
    "preset_members",
    "preset_settings",
    "scan",
    "scan_label_sets",
    "scan_stream",
    "scan_tokens",
    "token_output_format",
    "write_token_scan",
]

