"""Every warning labelaudit gives shares one base, so one filter silences them all."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import pytest

import labelaudit
from labelaudit import LabelAuditWarning


def _labelaudit_warnings() -> list[type[Warning]]:
    """Every Warning subclass defined in a labelaudit module that imports here (a module
    needing a missing optional extra is skipped)."""
    found: dict[str, type[Warning]] = {}
    for info in pkgutil.walk_packages(labelaudit.__path__, "labelaudit."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Warning) and obj.__module__.startswith("labelaudit"):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[name] for name in sorted(found)]


WARNINGS = _labelaudit_warnings()


def test_finds_the_warning_classes():
    names = {cls.__name__ for cls in WARNINGS}
    assert {"ChanceLevelWarning", "FoldWarning", "OverlapWarning"} <= names
    assert len(WARNINGS) >= 15


@pytest.mark.parametrize("cls", WARNINGS, ids=lambda cls: cls.__name__)
def test_every_warning_is_a_labelaudit_warning(cls):
    assert issubclass(cls, LabelAuditWarning)
    assert issubclass(cls, UserWarning)


def test_base_is_exported():
    assert "LabelAuditWarning" in labelaudit.__all__
    assert labelaudit.LabelAuditWarning is LabelAuditWarning


def test_one_filter_silences_them():
    from labelaudit.io import OverlapWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", LabelAuditWarning)
        warnings.warn("overlap", OverlapWarning, stacklevel=1)
        warnings.warn("someone else's", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["someone else's"]
