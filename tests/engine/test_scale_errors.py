"""Bad input to the streamed scan: one clear error, raised before or during the first pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.engine import HashingOptions
from labelaudit.scanning import scan

OPTIONS = HashingOptions(n_features=2**10, n_buckets=4, epochs=1)


@pytest.fixture
def frame():
    return make_topic_frame(20).drop(columns=["true_label", "is_error"])


def _hashed(source, out, **options):
    return scan(source, scorers=["tfidf"],
                       out=out, tfidf="hashing", hashing=OPTIONS, chunk_size=16,
                       **options)


def test_a_glob_that_matches_nothing(tmp_path):
    with pytest.raises(InvalidInputError, match="no file matches"):
        scan(tmp_path / "part-*.parquet", scorers=["tfidf"], out=tmp_path / "out.parquet")


def test_a_file_in_the_middle_with_another_schema_is_named(tmp_path, frame):
    frame.iloc[:20].to_parquet(tmp_path / "part-0.parquet")
    frame.iloc[20:40].rename(columns={"text": "body"}).to_parquet(tmp_path / "part-1.parquet")
    frame.iloc[40:].to_parquet(tmp_path / "part-2.parquet")
    with pytest.raises(InvalidInputError, match=r"part-1\.parquet: its columns differ"):
        scan(tmp_path, scorers=["tfidf"], out=tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_an_output_that_is_not_ours_is_not_overwritten(tmp_path, frame):
    frame.to_parquet(tmp_path / "data.parquet")
    precious = tmp_path / "precious.csv"
    precious.write_text("name,value\nx,1\n")
    with pytest.raises(InvalidParameterError, match="labelaudit did not write it"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"], out=precious)
    assert precious.read_text() == "name,value\nx,1\n"
    with pytest.raises(InvalidParameterError, match="never overwrites an input"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"], out=tmp_path / "data.parquet")
    with pytest.raises(InvalidParameterError, match="cannot write .xlsx"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"], out=tmp_path / "out.xlsx")


def test_bad_options(tmp_path, frame):
    frame.to_parquet(tmp_path / "data.parquet")
    out = tmp_path / "out.parquet"
    with pytest.raises(InvalidParameterError, match="engine='ray'"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"], out=out, ray_address="auto")
    with pytest.raises(InvalidParameterError, match="engine"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"],
                    out=out, engine="spark")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="chunk_size"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"], out=out, chunk_size=0)
    with pytest.raises(InvalidParameterError, match="at most one of top and threshold"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"], out=out, top=3, threshold=0.5)


def test_missing_column_and_empty_text_name_the_rows(tmp_path, frame):
    frame.to_parquet(tmp_path / "data.parquet")
    with pytest.raises(InvalidInputError, match="missing column 'category'"):
        _hashed(tmp_path / "data.parquet", tmp_path / "out.parquet", label="category")
    frame.loc[[25, 28], "text"] = ["  ", None]
    frame.to_parquet(tmp_path / "holes.parquet")
    with pytest.raises(InvalidInputError, match=r"empty or missing text in rows 't25', 't28'"):
        _hashed(tmp_path / "holes.parquet", tmp_path / "out.parquet")


def test_labels_checked_across_chunks(tmp_path, frame):
    mixed = frame.astype({"label": object})
    mixed.loc[50, "label"] = 3
    mixed.to_json(tmp_path / "mixed.jsonl", orient="records", lines=True)
    with pytest.raises(InvalidInputError, match="mixes label types"):
        _hashed(tmp_path / "mixed.jsonl", tmp_path / "out.parquet")
    lonely = frame.copy()
    lonely.loc[59, "label"] = "weather"
    lonely.to_parquet(tmp_path / "lonely.parquet")
    with pytest.raises(InvalidInputError, match=r"\['weather'\] has a single item"):
        _hashed(tmp_path / "lonely.parquet", tmp_path / "out.parquet")
    frame.assign(label=np.where(np.arange(60) < 30, np.nan, 1.0)).to_parquet(
        tmp_path / "unlabelled.parquet")
    with pytest.raises(InvalidInputError, match="missing labels in rows 't0'"):
        _hashed(tmp_path / "unlabelled.parquet", tmp_path / "out.parquet")


def test_duplicate_ids_across_chunks(tmp_path, frame):
    frame.loc[45, "id"] = "t3"
    frame.to_parquet(tmp_path / "dup.parquet")
    with pytest.raises(InvalidInputError, match=r"duplicate ids in rows 3, 45"):
        _hashed(tmp_path / "dup.parquet", tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet").exists()


def test_an_unreachable_ray_address_is_one_error(tmp_path, frame):
    pytest.importorskip("ray", reason="the Ray engine needs the scale extra")
    import socket

    frame.to_parquet(tmp_path / "data.parquet")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(InvalidParameterError, match=f"cannot reach the Ray cluster at "
                                                    f"127.0.0.1:{port}"):
        scan(tmp_path / "data.parquet", scorers=["tfidf"],
                    out=tmp_path / "out.parquet", engine="ray",
                    ray_address=f"127.0.0.1:{port}")


def test_a_changed_row_count_between_passes_is_caught(tmp_path, frame, monkeypatch):
    from labelaudit.engine import _local

    frame.to_parquet(tmp_path / "data.parquet")
    real = _local.LocalRunner.frames

    def frames(self, columns=None):
        if columns is None:  # the second pass, which writes the output
            yield pd.DataFrame(frame.iloc[:10])
            return
        yield from real(self, columns)

    monkeypatch.setattr(_local.LocalRunner, "frames", frames)
    with pytest.raises(InvalidInputError, match="the input changed during the scan"):
        _hashed(tmp_path / "data.parquet", tmp_path / "out.parquet")
