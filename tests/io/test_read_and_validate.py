import json

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError
from labelaudit.io import prepare_text_dataset, read_table, write_table

FRAME = pd.DataFrame({"id": ["a", "b", "c"], "text": ["x y", "y z", "z w"],
                      "label": ["pos", "neg", "pos"]})


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json", ".parquet"])
def test_round_trip_every_format(tmp_path, suffix):
    path = write_table(FRAME, tmp_path / f"data{suffix}")
    back = read_table(path)
    pd.testing.assert_frame_equal(back.astype(str), FRAME.astype(str))
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file is gone


def test_hugging_face_datasets_folder(tmp_path):
    import datasets

    datasets.Dataset.from_pandas(FRAME).save_to_disk(str(tmp_path / "ds"))
    assert read_table(tmp_path / "ds")["text"].tolist() == FRAME["text"].tolist()
    splits = datasets.DatasetDict({"train": datasets.Dataset.from_pandas(FRAME),
                                   "test": datasets.Dataset.from_pandas(FRAME.head(1))})
    splits.save_to_disk(str(tmp_path / "dd"))
    assert len(read_table(f"{tmp_path / 'dd'}:test")) == 1
    with pytest.raises(InvalidInputError, match="choose one"):
        read_table(tmp_path / "dd")


def test_undecodable_bytes_name_the_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"text,label\nfine,1\ncaf\xe9,2\n")
    with pytest.raises(InvalidInputError, match="undecodable bytes at line 3"):
        read_table(path)


def test_broken_jsonl_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "a", "label": 1}) + "\n{oops\n")
    with pytest.raises(InvalidInputError, match="line 2"):
        read_table(path)


def test_missing_file_empty_file_unknown_suffix(tmp_path):
    with pytest.raises(InvalidInputError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InvalidInputError, match="empty"):
        read_table(tmp_path / "empty.csv")
    (tmp_path / "x.xlsx").write_text("x")
    with pytest.raises(InvalidInputError, match="unknown file type"):
        read_table(tmp_path / "x.xlsx")


def test_missing_column_lists_what_exists():
    with pytest.raises(InvalidInputError, match=r"missing column 'txt'.*'text'"):
        prepare_text_dataset(FRAME, text="txt", label="label")


def test_empty_or_missing_text_names_rows():
    frame = FRAME.assign(text=["ok", "  ", None])
    with pytest.raises(InvalidInputError, match=r"empty or missing text in rows 'b', 'c'"):
        prepare_text_dataset(frame, text="text", label="label", id="id")


def test_missing_label_names_rows():
    frame = FRAME.assign(label=["pos", None, "neg"])
    with pytest.raises(InvalidInputError, match=r"missing labels in row 1"):
        prepare_text_dataset(frame, text="text", label="label")


def test_fewer_than_two_classes():
    with pytest.raises(InvalidInputError, match="1 class"):
        prepare_text_dataset(FRAME.assign(label="pos"), text="text", label="label")


def test_duplicate_ids():
    with pytest.raises(InvalidInputError, match=r"duplicate ids 'a' in rows 0, 1"):
        prepare_text_dataset(FRAME.assign(id=["a", "a", "c"]), text="text", label="label",
                             id="id")


def test_mixed_label_types():
    frame = FRAME.assign(label=np.array(["pos", 1, "neg"], dtype=object))
    with pytest.raises(InvalidInputError, match="mixes label types"):
        prepare_text_dataset(frame, text="text", label="label")


def test_integer_labels_and_ids_default_to_row_numbers():
    data = prepare_text_dataset(FRAME.assign(label=[3, 1, 3]), text="text", label="label")
    assert data.classes.tolist() == [1, 3] and data.labels.tolist() == [1, 0, 1]
    assert data.ids.tolist() == [0, 1, 2]


def test_labels_outside_training_classes():
    with pytest.raises(InvalidInputError, match="outside the training label set"):
        prepare_text_dataset(FRAME.assign(label=["pos", "meh", "pos"]), text="text",
                             label="label", classes=np.array(["neg", "pos"]))
