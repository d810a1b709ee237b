"""Command packages that are also their command's function.

``labelaudit.scan`` is the package ``labelaudit/scan/`` and the function
:func:`labelaudit.scan.scan` alike: Python binds a package to its parent's attribute as soon
as any of its modules is imported, so ``labelaudit.scan(df)`` (the documented call) would
otherwise stop working once ``labelaudit.scan._text`` had been imported. The same holds for
``evaluate``, ``train`` and ``consistency``. A package made a :class:`CommandPackage` forwards
a call to its function of the same name.

>>> import labelaudit.scan
>>> callable(labelaudit.scan) and labelaudit.scan.__wrapped__ is labelaudit.scan.scan
True
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["CommandPackage", "make_callable"]


class CommandPackage(types.ModuleType):
    """A package whose call is its function of the same name (``labelaudit.scan(df)``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, self.__name__.rpartition(".")[2])(*args, **kwargs)


def make_callable(name: str) -> None:
    """Make the package ``name`` (already in ``sys.modules``, its function defined) a
    :class:`CommandPackage`; ``__wrapped__`` points ``inspect.signature`` and ``help`` at
    the function."""
    module = sys.modules[name]
    module.__class__ = CommandPackage
    module.__wrapped__ = getattr(module, name.rpartition(".")[2])  # type: ignore[attr-defined]
