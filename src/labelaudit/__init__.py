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
    MissingExtraError,
)
from labelaudit._version import __version__

__all__ = [
    "ChanceLevelWarning",
    "InvalidInputError",
    "InvalidParameterError",
    "LabelAuditError",
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
    from labelaudit.audit import ChanceLevelWarning, ScanResult, scan
    from labelaudit.learning_curves import consistency
    from labelaudit.robust import load_model, train, train_bench


def __getattr__(name: str) -> object:
    # scan pulls in scikit-learn and cleanlab; import it on first use so the CLI starts fast.
    if name in ("scan", "ScanResult", "ChanceLevelWarning"):
        from labelaudit import audit

        return getattr(audit, name)
    if name == "consistency":  # labelaudit.learning_curves.consistency
        from labelaudit.learning_curves import consistency

        return consistency
    if name in ("train", "train_bench", "load_model"):  # labelaudit.robust
        from labelaudit import robust

        return getattr(robust, name)
    if name == "evaluate":  # labelaudit.metrics.evaluate, the library behind `evaluate`
        from labelaudit.metrics import evaluate

        return evaluate
    raise AttributeError(f"module 'labelaudit' has no attribute {name!r}")
