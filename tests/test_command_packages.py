"""The documented calls are plain functions, whatever of their packages has been imported:
``labelaudit.scan`` and ``labelaudit.evaluate`` at the top, the other commands' from their
packages (``labelaudit.training.train``, ``labelaudit.consistency_check.consistency``)."""

import importlib
import inspect

import pytest

import labelaudit


@pytest.mark.parametrize("name, package", [("scan", "scanning"), ("evaluate", "evaluation")])
def test_the_top_level_calls_are_the_functions_of_their_packages(name, package):
    module = importlib.import_module(f"labelaudit.{package}")
    function = getattr(labelaudit, name)
    assert inspect.isfunction(function) and function is getattr(module, name)
    assert getattr(labelaudit, package) is module


@pytest.mark.parametrize("name, package", [("train", "training"), ("load_model", "training"),
                                           ("train_bench", "training"),
                                           ("consistency", "consistency_check"),
                                           ("measure_impact", "impact")])
def test_every_other_command_is_a_function_of_its_package(name, package):
    module = importlib.import_module(f"labelaudit.{package}")
    assert inspect.isfunction(getattr(module, name)) and name in module.__all__


def test_calling_the_function_after_its_modules_are_imported(topic_frame):
    importlib.import_module("labelaudit.scanning._pipeline")
    result = labelaudit.scan(topic_frame, id="id", scorers=["tfidf"])
    assert result.rank_by == "ensemble"
    from labelaudit import scan

    assert scan(topic_frame, id="id", scorers=["tfidf"]).to_frame().equals(result.to_frame())
