"""Chunked readers and writers of labelaudit.engine: sources, schemas, chunks, atomic output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.engine import ChunkWriter, is_scan_output, iter_frames, resolve_source
from labelaudit.engine._sink import RankSorter
from labelaudit.engine._source import check_columns
from labelaudit.io import read_table


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"id": np.arange(50), "text": [f"w{rng.integers(9)} x" for _ in
                                                        range(50)],
                         "label": rng.choice(["a", "b"], 50), "n": rng.random(50)})


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".tsv", ".jsonl"])
def test_chunks_concatenate_to_the_whole_file(tmp_path, frame, suffix):
    path = tmp_path / f"data{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",")
    chunks = list(iter_frames(resolve_source(path), chunk_size=7))
    assert [len(c) for c in chunks] == [7] * 7 + [1]
    whole = pd.concat(chunks, ignore_index=True)
    pd.testing.assert_frame_equal(whole, read_table(path), check_dtype=False)
    only = list(iter_frames(resolve_source(path), columns=["label", "id"], chunk_size=100))
    assert list(only[0].columns) == ["label", "id"]


def test_folder_glob_and_list_read_files_in_name_order(tmp_path, frame):
    for i, name in enumerate(["b.parquet", "a.parquet", "c.parquet"]):
        frame.iloc[i * 10:(i + 1) * 10].to_parquet(tmp_path / name)
    (tmp_path / "_SUCCESS").write_text("")
    by_folder = resolve_source(tmp_path)
    assert [p.rsplit("/", 1)[1] for p in by_folder.paths] == ["a.parquet", "b.parquet",
                                                              "c.parquet"]
    assert resolve_source(tmp_path / "*.parquet").paths == by_folder.paths
    assert resolve_source([tmp_path / "a.parquet"]).paths == by_folder.paths[:1]
    ids = pd.concat(iter_frames(by_folder, chunk_size=4))["id"].tolist()
    assert ids == [*range(10, 20), *range(0, 10), *range(20, 30)]


def test_sources_that_name_nothing_are_one_clear_error(tmp_path, frame):
    with pytest.raises(InvalidInputError, match="no file matches"):
        resolve_source(tmp_path / "*.parquet")
    with pytest.raises(InvalidInputError, match="no such file"):
        resolve_source(tmp_path / "missing.parquet")
    with pytest.raises(InvalidInputError, match="holds no"):
        resolve_source(tmp_path)
    frame.to_parquet(tmp_path / "a.parquet")
    frame.to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(InvalidInputError, match="mix formats"):
        resolve_source(tmp_path)


def test_a_file_with_other_columns_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "part-0.parquet")
    frame.rename(columns={"label": "category"}).to_parquet(tmp_path / "part-1.parquet")
    frame.to_parquet(tmp_path / "part-2.parquet")
    with pytest.raises(InvalidInputError, match=r"part-1\.parquet: its columns differ.*"
                                                r"missing 'label'; extra 'category'"):
        check_columns(resolve_source(tmp_path), ["text", "label"])


def test_a_file_with_another_label_type_is_named(tmp_path, frame):
    frame.to_parquet(tmp_path / "part-0.parquet")
    frame.assign(label=np.arange(50)).to_parquet(tmp_path / "part-1.parquet")
    with pytest.raises(InvalidInputError, match=r"part-1\.parquet: column 'label' is int64"):
        check_columns(resolve_source(tmp_path), ["text", "label"])


def test_csv_headers_and_jsonl_keys_are_compared(tmp_path):
    (tmp_path / "a.csv").write_text("text,label\nx,1\n")
    (tmp_path / "b.csv").write_text("text,lbl\nx,1\n")
    with pytest.raises(InvalidInputError, match=r"b\.csv: its columns differ"):
        check_columns(resolve_source(tmp_path), ["text", "label"])
    (tmp_path / "c.jsonl").write_text(json.dumps({"text": "x"}) + "\n")
    with pytest.raises(InvalidInputError, match="missing column 'label'"):
        check_columns(resolve_source(tmp_path / "c.jsonl"), ["text", "label"])


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".tsv", ".jsonl", ".json"])
def test_chunk_writer_round_trips(tmp_path, frame, suffix):
    path = tmp_path / f"out{suffix}"
    with ChunkWriter(path) as writer:
        for start in range(0, 50, 20):
            writer.write(frame.iloc[start:start + 20])
    pd.testing.assert_frame_equal(read_table(path), frame, check_dtype=False)


def test_chunk_writer_leaves_nothing_when_interrupted(tmp_path, frame):
    path = tmp_path / "out.parquet"
    with pytest.raises(RuntimeError), ChunkWriter(path) as writer:
        writer.write(frame)
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_rank_sorter_sorts_across_chunks_with_any_part_size(tmp_path):
    rng = np.random.default_rng(0)
    ranks = rng.permutation(100) + 1
    sorter = RankSorter(tmp_path / "sort", part_size=13)
    for start in range(0, 100, 30):
        part = ranks[start:start + 30]
        sorter.add(pd.DataFrame({"rank": part, "note": [None if r % 7 else f"r{r}"
                                                        for r in part]}))
    out = pd.concat(t.to_pandas() for t in sorter.tables())
    assert out["rank"].tolist() == list(range(1, 101))
    assert out.set_index("rank")["note"].get(7) == "r7"


def test_scan_outputs_are_recognised(tmp_path):
    ours = tmp_path / "issues.csv"
    ours.write_text("id,text,label,suggested_label,given_prob,rank,flagged\n")
    other = tmp_path / "other.csv"
    other.write_text("id,text\n")
    assert is_scan_output(ours) and not is_scan_output(other)
