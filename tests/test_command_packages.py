"""The documented calls ``labelaudit.scan``, ``.evaluate``, ``.train`` and ``.consistency`` are
plain functions, whatever of their packages (``scanning``, ``evaluation``, ``training``,
``consistency_check``) has been imported."""

import importlib
import inspect

import pytest

import labelaudit


@pytest.mark.parametrize("name, package", [("scan", "scanning"), ("evaluate", "evaluation"),
                                           ("train", "training"),
                                           ("consistency", "consistency_check")])
def test_a_command_is_a_function_beside_its_package(name, package):
    module = importlib.import_module(f"labelaudit.{package}")
    function = getattr(labelaudit, name)
    assert inspect.isfunction(function) and function is getattr(module, name)
    assert getattr(labelaudit, package) is module


def test_calling_the_function_after_its_modules_are_imported(topic_frame):
    importlib.import_module("labelaudit.scanning._pipeline")
    result = labelaudit.scan(topic_frame, id="id", scorers=["tfidf"])
    assert result.rank_by == "ensemble"
    from labelaudit import scan

    assert scan(topic_frame, id="id", scorers=["tfidf"]).to_frame().equals(result.to_frame())
