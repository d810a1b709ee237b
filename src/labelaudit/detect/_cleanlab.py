"""Import cleanlab without letting it change the process's warning filters."""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType


def import_cleanlab(module: str) -> ModuleType:
    """Import a cleanlab module, restoring :data:`warnings.filters`: cleanlab's
    ``datalab.internal.spurious_correlation`` runs ``filterwarnings("ignore")`` on import.

    Examples
    --------
    >>> import warnings
    >>> before = list(warnings.filters)
    >>> import_cleanlab("cleanlab.filter").__name__
    'cleanlab.filter'
    >>> list(warnings.filters) == before
    True
    """
    with warnings.catch_warnings():
        return importlib.import_module(module)
