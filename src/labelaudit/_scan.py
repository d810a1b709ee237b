"""Deprecated: ``scan`` now lives in :mod:`labelaudit.scan` (import it from
:mod:`labelaudit`); this alias goes in the next release."""

import warnings

from labelaudit.models._progress import default_progress
from labelaudit.scan._text import (
    DEFAULT_METHOD,
    DEFAULT_METHODS,
    METHODS,
    ChanceLevelWarning,
    ScanResult,
    id_column,
    scan,
)

__all__ = ["METHODS", "DEFAULT_METHOD", "DEFAULT_METHODS", "ChanceLevelWarning", "ScanResult",
           "default_progress", "id_column", "scan"]

warnings.warn("labelaudit._scan is deprecated: import scan, ScanResult and ChanceLevelWarning "
              "from labelaudit (or labelaudit.scan)", DeprecationWarning, stacklevel=2)
