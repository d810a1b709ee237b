"""labelaudit.scan with out=: the streamed engine behind the one entry point."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import InvalidParameterError
from labelaudit.scanning import StreamScanResult, scan


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scan_out")
    frame = make_topic_frame(40, n_errors=6).drop(columns=["true_label"])
    frame.to_csv(folder / "data.csv", index=False)
    return folder / "data.csv", frame


def test_out_streams_a_path_or_its_text_alike(data, tmp_path):
    path, frame = data
    result = scan(str(path), scorers=["tfidf"], out=tmp_path / "a.csv", chunk_size=9)
    assert isinstance(result, StreamScanResult) and result.n_items == len(frame)
    scan(path, scorers=["tfidf"], out=tmp_path / "b.csv", chunk_size=9)
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    in_memory = scan(frame, scorers=["tfidf"]).to_frame(readable=True)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), in_memory, check_dtype=False)


def test_a_preset_that_streams_is_its_members(data, tmp_path):
    path, _ = data
    scan(str(path), preset="fast", out=tmp_path / "a.csv")
    scan(str(path), scorers=["tfidf"], out=tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


@pytest.mark.parametrize(("options", "named"), [
    ({"datalab": True}, "datalab= needs"),
    ({"scorers": ["tfidf", "finetune"]}, "scorers=finetune needs"),
    ({"weights": [1.0, 2.0], "n_seeds": 2}, "weights=, n_seeds= need"),
    ({"preset": "best"}, "preset='best' needs"),
    ({"methods": ["loss"], "annotations": "votes"}, "annotations=, methods= need"),
])
def test_what_needs_memory_is_refused_before_any_work(data, tmp_path, options, named):
    path, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no slow-preset warning before the refusal
        with pytest.raises(InvalidParameterError, match=named) as caught:
            scan(str(path), out=tmp_path / "x.csv", **options)
    assert "drop out=" in str(caught.value)
    assert not (tmp_path / "x.csv").exists()


def test_data_in_memory_cannot_stream(data, tmp_path):
    _, frame = data
    with pytest.raises(InvalidParameterError, match="a DataFrame is not one"):
        scan(frame, out=tmp_path / "x.csv")
    with pytest.raises(InvalidParameterError, match="give preset= or scorers=, not both"):
        scan(frame, out=tmp_path / "x.csv", preset="fast", scorers=["tfidf"])


def test_an_input_is_never_the_output(data):
    path, _ = data
    before = path.read_bytes()
    with pytest.raises(InvalidParameterError):
        scan(str(path), scorers=["tfidf"], out=path, overwrite=True)
    assert path.read_bytes() == before


def test_a_column_parquet_cannot_hold_is_one_error_and_leaves_nothing(tmp_path):
    from labelaudit import InvalidInputError

    frame = make_topic_frame(10)
    frame["meta"] = [1 if i % 2 else "x" for i in range(len(frame))]
    frame.to_json(tmp_path / "data.jsonl", orient="records", lines=True)
    with pytest.raises(InvalidInputError, match="column meta.*mixes value types"):
        scan(str(tmp_path / "data.jsonl"), scorers=["tfidf"],
                        out=tmp_path / "issues.parquet", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.jsonl"]
    scan(str(tmp_path / "data.jsonl"), scorers=["tfidf"],
                    out=tmp_path / "issues.jsonl", progress=False)  # JSON lines hold it
