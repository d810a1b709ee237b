"""The learning-with-noisy-labels methods, one per module, by name."""

from __future__ import annotations

import inspect
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit.models import Method
from labelaudit.training._methods.base import Base
from labelaudit.training._methods.cnlcu import CNLCU
from labelaudit.training._methods.co_teaching import CoTeaching
from labelaudit.training._methods.data_parameters import DataParameters
from labelaudit.training._methods.mixup import Mixup
from labelaudit.training._methods.seal import SEAL
from labelaudit.training._methods.sr import SparseRegularization

# The hook classes by name (the `filter` methods, training._filter.FILTER_METHODS, are
# steps of `labelaudit.training.train`, not hooks; `base` for label sets is MultiLabelBase).
METHODS: dict[str, type[Method]] = {cls.name: cls for cls in (
    Base, Mixup, DataParameters, SparseRegularization, CoTeaching, CNLCU, SEAL)}


def make_method(name: str, *, noise_rate: float | None = None, **options: Any) -> Method:
    """A new hook object for the method ``name`` with its ``options``; ``noise_rate`` goes to the
    methods that take it (co-teaching and CNLCU require it). Unknown names, options the method
    does not take and bad values raise :class:`InvalidParameterError`."""
    if name not in METHODS:
        known = ", ".join(repr(n) for n in METHODS)
        raise InvalidParameterError(f"unknown method {name!r}: choose one of {known}")
    cls = METHODS[name]
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        takes = ", ".join(p for p in accepted if p != "noise_rate") or "no options"
        raise InvalidParameterError(
            f"method {name!r} has no option {', '.join(unknown)}; it takes: {takes}")
    if "noise_rate" in accepted:
        options["noise_rate"] = noise_rate
    return cls(**options)
