"""labelaudit: find, measure and fix label errors in NLP datasets.

>>> import labelaudit
>>> labelaudit.InvalidInputError.__mro__[1].__name__
'LabelAuditError'
"""

from __future__ import annotations

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditError,
    LabelAuditWarning,
    MissingExtraError,
)
from labelaudit._version import __version__

__all__ = [
    "ChanceLevelWarning",
    "InvalidInputError",
    "InvalidParameterError",
    "LabelAuditError",
    "LabelAuditWarning",
    "MissingExtraError",
    "ScanResult",
    "consistency",
    "evaluate",
    "load_model",
    "scan",
    "train",
    "train_bench",
    "__version__",
]

from labelaudit.consistency_check import consistency
from labelaudit.evaluation import evaluate
from labelaudit.scanning import ChanceLevelWarning, ScanResult, scan
from labelaudit.training import load_model, train, train_bench
