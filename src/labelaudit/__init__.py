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
    "evaluate",
    "scan",
    "__version__",
]

# The tour's two calls; other commands' functions come from their packages (``from
# labelaudit.training import train``), so ``import labelaudit`` loads scan's code alone.
from labelaudit.evaluation import evaluate
from labelaudit.scanning import ChanceLevelWarning, ScanResult, scan
