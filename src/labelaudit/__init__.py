"""labelaudit: find, measure and fix label errors in NLP datasets.

>>> import labelaudit
>>> labelaudit.InvalidInputError.__mro__[1].__name__
'LabelAuditError'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.consistency import consistency
    from labelaudit.evaluate import evaluate
    from labelaudit.scan import ChanceLevelWarning, ScanResult, scan
    from labelaudit.train import load_model, train, train_bench

# name -> the command package that defines it; imported on first use so that the CLI starts
# fast (scan pulls in scikit-learn and cleanlab, train torch)
_LAZY = {"scan": "scan", "ScanResult": "scan", "ChanceLevelWarning": "scan",
         "consistency": "consistency", "evaluate": "evaluate",
         "train": "train", "train_bench": "train", "load_model": "train"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"labelaudit.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'labelaudit' has no attribute {name!r}")
