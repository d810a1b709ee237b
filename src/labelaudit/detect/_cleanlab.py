"""Import cleanlab without letting it change the process's warning filters."""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType


def import_cleanlab(module: str) -> ModuleType:
    """Import a cleanlab module and restore :data:`warnings.filters` afterwards.

    Importing cleanlab runs ``warnings.filterwarnings("ignore")`` at module level (in
    ``cleanlab.datalab.internal.spurious_correlation``), which would silence every
    warning of the process from then on: labelaudit's own and the user's.

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
