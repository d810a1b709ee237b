"""Deprecated: ``scan`` now lives in :mod:`labelaudit.audit` (import it from
:mod:`labelaudit`); this alias goes in the next release."""

import warnings

from labelaudit.audit._text import (
    DEFAULT_METHOD,
    DEFAULT_METHODS,
    METHODS,
    ChanceLevelWarning,
    ScanResult,
    id_column,
    scan,
)
from labelaudit.models._progress import default_progress

__all__ = ["METHODS", "DEFAULT_METHOD", "DEFAULT_METHODS", "ChanceLevelWarning", "ScanResult",
           "default_progress", "id_column", "scan"]

warnings.warn("labelaudit._scan is deprecated: import scan, ScanResult and ChanceLevelWarning "
              "from labelaudit (or labelaudit.audit)", DeprecationWarning, stacklevel=2)
