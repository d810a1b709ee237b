"""The result protocol: every command's result has to_frame(), summary() and write(path)."""

import importlib
import json

import pandas as pd
import pytest

from labelaudit.agreement import noise_bound, tolerance
from labelaudit.io import ResultFiles

PACKAGES = ("scanning", "evaluation", "noise", "agreement", "training", "consistency_check",
            "impact", "review")


def _results():
    for package in PACKAGES:
        module = importlib.import_module(f"labelaudit.{package}")
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and hasattr(value, "to_frame") and \
                    hasattr(value, "summary"):
                yield value


@pytest.mark.parametrize("cls", list(_results()), ids=lambda c: c.__name__)
def test_every_command_result_writes_itself(cls):
    assert callable(getattr(cls, "write", None)), f"{cls.__name__} has no write(path)"


def test_a_json_file_holds_the_document_and_a_table_file_the_table(tmp_path):
    result = tolerance(200, 0.5, gamma=0.05)
    assert isinstance(result, ResultFiles)
    assert result.write(tmp_path / "t.json") == tmp_path / "t.json"
    assert json.loads((tmp_path / "t.json").read_text()) == json.loads(
        json.dumps(result.to_dict()))
    result.write(tmp_path / "t.csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "t.csv"), result.to_frame(),
                                  check_dtype=False)


def test_file_frame_is_the_table_by_default(tmp_path):
    result = noise_bound(100, 10, 0.5)
    pd.testing.assert_frame_equal(result.file_frame(), result.to_frame())
    result.write(tmp_path / "b.parquet")
    assert len(pd.read_parquet(tmp_path / "b.parquet")) == len(result.to_frame())


def test_a_column_parquet_cannot_hold_is_bad_data_and_nothing_is_written(tmp_path):
    from tests.conftest import make_topic_frame

    from labelaudit import InvalidInputError, scan

    data = make_topic_frame(4)
    data["meta"] = [1 if i % 2 else "x" for i in range(len(data))]
    result = scan(data, scorers=["tfidf"], progress=False)
    with pytest.raises(InvalidInputError, match="column meta.*mixes value types"):
        result.write(tmp_path / "issues.parquet")
    assert list(tmp_path.iterdir()) == []
    result.write(tmp_path / "issues.jsonl")  # JSON lines hold any values
    assert len(pd.read_json(tmp_path / "issues.jsonl", lines=True)) == len(data)
