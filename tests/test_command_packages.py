"""labelaudit.scan, .evaluate, .train and .consistency are packages and functions alike."""

import importlib
import inspect

import pytest

import labelaudit


@pytest.mark.parametrize("name", ["scan", "evaluate", "train", "consistency"])
def test_a_command_package_calls_its_function(name):
    package = importlib.import_module(f"labelaudit.{name}")  # binds labelaudit.<name>
    function = getattr(package, name)
    assert getattr(labelaudit, name) is package and callable(package)
    assert package.__wrapped__ is function
    assert inspect.signature(package) == inspect.signature(function)


def test_calling_the_package_runs_the_function(topic_frame):
    importlib.import_module("labelaudit.scan._text")
    result = labelaudit.scan(topic_frame, id="id", scorers=["tfidf"])
    assert result.rank_by == "ensemble"
    from labelaudit import scan

    assert scan(topic_frame, id="id", scorers=["tfidf"]).to_frame().equals(result.to_frame())
