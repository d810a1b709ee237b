"""The learning-with-noisy-labels methods, one per module, behind a registry of names.

Examples
--------
>>> sorted(METHODS)[:3]
['base', 'cnlcu', 'co-teaching']
>>> make_method("mixup", alpha=0.5)
Mixup(alpha=0.5)
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit.registry import LNL_METHODS
from labelaudit.training._methods._base import Method

__all__ = ["METHODS", "Method", "make_method"]

# The hook classes, as registered in labelaudit.registry.LNL_METHODS (whose `filter`
# methods are steps of `labelaudit.train`, not hooks).
METHODS: dict[str, str] = {name: where for name, where in LNL_METHODS.entries.items()
                           if not name.startswith("filter")}


def method_class(name: str) -> type[Method]:
    """The class registered as ``name``."""
    if name not in METHODS:
        known = ", ".join(repr(n) for n in METHODS)
        raise InvalidParameterError(f"unknown method {name!r}: choose one of {known}")
    module_name, class_name = METHODS[name].split(":")
    cls: type[Method] = getattr(importlib.import_module(module_name), class_name)
    return cls


def make_method(name: str, *, noise_rate: float | None = None, **options: Any) -> Method:
    """A new hook object for the method ``name``, with its ``options``.

    ``noise_rate`` (an estimate of the share of wrong labels) goes to the methods that use
    it (co-teaching and CNLCU, which require it) and is ignored by the others.

    Raises
    ------
    InvalidParameterError
        For an unknown name, an option the method does not take, or a bad value.
    """
    cls = method_class(name)
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        takes = ", ".join(p for p in accepted if p != "noise_rate") or "no options"
        raise InvalidParameterError(
            f"method {name!r} has no option {', '.join(unknown)}; it takes: {takes}")
    if "noise_rate" in accepted:
        options["noise_rate"] = noise_rate
    return cls(**options)
