"""Hugging Face inputs to scan: Dataset and DatasetDict objects, save_to_disk folders and
hub names (with ``datasets.load_dataset`` monkeypatched: no test touches the network)."""

import datasets
import numpy as np
import pandas as pd
import pytest
from datasets import ClassLabel, Features, Value
from tests.conftest import make_topic_frame

from labelaudit import InvalidInputError, InvalidParameterError, scan
from labelaudit.cli import main
from labelaudit.io import CLASS_NAMES, read_data

NAMES = ["sport", "food", "tech"]  # ClassLabel id order, not sorted
FEATURES = Features({"id": Value("string"), "text": Value("string"),
                     "label": ClassLabel(names=NAMES), "source": Value("string")})


def frame_and_dataset(n_per_class=8, seed=0, n_errors=2):
    """A labelled frame and the same items as a Dataset with a ClassLabel label column."""
    frame = make_topic_frame(n_per_class, seed=seed, n_errors=n_errors)
    frame = frame[["id", "text", "label"]].assign(
        source=[f"s{i % 3}" for i in range(len(frame))])
    dataset = datasets.Dataset.from_dict(
        {"id": frame["id"].tolist(), "text": frame["text"].tolist(),
         "label": [NAMES.index(v) for v in frame["label"]],
         "source": frame["source"].tolist()}, features=FEATURES)
    return frame, dataset


def test_dataset_and_datasetdict_give_the_frames_output():
    frame, dataset = frame_and_dataset()
    expected = scan(frame, scorers=["tfidf"]).to_frame()
    pd.testing.assert_frame_equal(scan(dataset, scorers=["tfidf"]).to_frame(), expected)
    splits = datasets.DatasetDict({"train": dataset, "test": dataset.select(range(5))})
    pd.testing.assert_frame_equal(
        scan(splits, split="train", scorers=["tfidf"]).to_frame(), expected)
    assert set(expected["label"]) == set(NAMES)  # ClassLabel names, not ids


def test_folder_split_and_colon_split_agree(tmp_path):
    frame, dataset = frame_and_dataset()
    datasets.DatasetDict({"train": dataset.select(range(4)), "test": dataset}).save_to_disk(
        str(tmp_path / "dd"))
    by_option = scan(str(tmp_path / "dd"), split="test", scorers=["tfidf"]).to_frame()
    by_name = scan(f"{tmp_path / 'dd'}:test", scorers=["tfidf"]).to_frame()
    pd.testing.assert_frame_equal(by_option, by_name)
    pd.testing.assert_frame_equal(by_option, scan(frame, scorers=["tfidf"]).to_frame())
    with pytest.raises(InvalidParameterError, match="give the split once"):
        scan(f"{tmp_path / 'dd'}:test", split="train", scorers=["tfidf"])


def test_class_names_kept_in_id_order():
    _, dataset = frame_and_dataset()
    assert read_data(dataset).attrs[CLASS_NAMES] == {"label": NAMES}


def test_no_split_named_lists_the_splits(tmp_path):
    _, dataset = frame_and_dataset()
    splits = datasets.DatasetDict({"train": dataset, "test": dataset})
    with pytest.raises(InvalidInputError, match=r"splits \['train', 'test'\]; choose one"):
        scan(splits, scorers=["tfidf"])
    with pytest.raises(InvalidInputError, match=r"no split 'dev'; the splits are"):
        scan(splits, split="dev", scorers=["tfidf"])
    with pytest.raises(InvalidParameterError, match="a single Dataset has no splits"):
        scan(dataset, split="train", scorers=["tfidf"])
    with pytest.raises(InvalidParameterError, match="a DataFrame, which has none"):
        scan(pd.DataFrame({"text": ["a"], "label": [1]}), split="train")


def test_missing_column_lists_the_columns():
    _, dataset = frame_and_dataset()
    with pytest.raises(InvalidInputError, match=r"missing column 'sentence'; the table has "
                                                r"'id', 'text', 'label', 'source'"):
        scan(dataset, text="sentence", scorers=["tfidf"])


def test_minus_one_is_a_missing_label_other_unknown_ids_are_errors():
    _, dataset = frame_and_dataset()
    labels = dataset["label"]
    unlabelled = dataset.cast(Features({**FEATURES, "label": Value("int64")})).map(
        lambda row, i: {"label": -1 if i in (2, 5) else labels[i]}, with_indices=True
    ).cast(FEATURES)
    with pytest.raises(InvalidInputError, match=r"missing labels in rows 't2', 't5'"):
        scan(unlabelled, scorers=["tfidf"])
    unknown = dataset.cast(Features({**FEATURES, "label": Value("int64")})).map(
        lambda row, i: {"label": 7 if i in (1, 4) else labels[i]}, with_indices=True
    ).cast(FEATURES)  # cast does not check the ids: a hand-made folder can hold such data
    with pytest.raises(InvalidInputError, match=r"ClassLabel ids with no name \(7\) in rows "
                                                r"1, 4; the feature names 3 classes"):
        scan(unknown, scorers=["tfidf"])


def test_hub_name_loads_with_load_dataset(monkeypatch):
    frame, dataset = frame_and_dataset()
    calls = []

    def fake_load(name, split=None, **kwargs):
        calls.append((name, split))
        return dataset if split else datasets.DatasetDict({"train": dataset, "test": dataset})

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    result = scan("someone/topics", split="test", scorers=["tfidf"]).to_frame()
    pd.testing.assert_frame_equal(result, scan(frame, scorers=["tfidf"]).to_frame())
    assert calls == [("someone/topics", "test")]
    scan("someone/topics:train", scorers=["tfidf"])
    assert calls[-1] == ("someone/topics", "train")
    with pytest.raises(InvalidInputError, match="choose one with split=NAME"):
        scan("someone/topics", scorers=["tfidf"])


def test_hub_name_offline_is_one_clear_error(monkeypatch, tmp_path, capsys):
    def offline(name, split=None, **kwargs):
        raise ConnectionError(f"Couldn't reach '{name}' on the Hub (OfflineModeIsEnabled)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(InvalidInputError, match="imdb: neither a file nor a loadable Hugging "
                                                "Face dataset .*needs network access"):
        scan("imdb", split="test", scorers=["tfidf"])
    out = tmp_path / "issues.csv"
    assert main(["scan", "imdb", "--split", "test", "--scorers", "tfidf", "--out",
                 str(out), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither a file nor a loadable" in err
    assert not out.exists()


def test_a_missing_file_is_not_sent_to_the_hub(monkeypatch, tmp_path):
    def never(*args, **kwargs):
        raise AssertionError("load_dataset must not be called for a file name")

    monkeypatch.setattr(datasets, "load_dataset", never)
    with pytest.raises(InvalidInputError, match="no such file"):
        scan(str(tmp_path / "data.csv"))
    with pytest.raises(InvalidInputError, match="no such file"):
        scan("data.csv")


def test_cli_scans_a_folder_split(tmp_path, capsys):
    frame, dataset = frame_and_dataset()
    datasets.DatasetDict({"train": dataset, "test": dataset.select(range(6))}).save_to_disk(
        str(tmp_path / "dd"))
    out = tmp_path / "issues.csv"
    assert main(["scan", str(tmp_path / "dd"), "--split", "train", "--scorers", "tfidf",
                 "--out", str(out), "-q"]) == 0
    written = pd.read_csv(out)
    assert len(written) == len(frame) and set(written["label"]) == set(NAMES)
    assert "source" in written.columns
    assert main(["scan", str(tmp_path / "dd"), "--scorers", "tfidf", "--out",
                 str(tmp_path / "none.csv"), "-q"]) == 1
    assert "choose one with --split NAME" in capsys.readouterr().err
    assert not (tmp_path / "none.csv").exists()


def test_other_objects_are_refused():
    with pytest.raises(InvalidParameterError, match="must be a DataFrame, a path"):
        scan(np.zeros((3, 2)))  # type: ignore[arg-type]


def test_unreachable_hub_tries_only_the_cache(monkeypatch):
    import datasets.config
    from huggingface_hub import constants

    from labelaudit.io import _read

    _, dataset = frame_and_dataset()
    seen = []

    def cache_only(name, split=None, **kwargs):
        seen.append((constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE))
        return dataset

    monkeypatch.setattr(_read, "_hub_unreachable", lambda: True)
    monkeypatch.setattr(datasets, "load_dataset", cache_only)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    assert len(read_data("someone/topics", split="test")) == len(dataset)
    assert seen == [(True, True)]  # offline while loading...
    assert not constants.HF_HUB_OFFLINE and not datasets.config.HF_HUB_OFFLINE  # ...only then

    def offline(name, split=None, **kwargs):
        raise ConnectionError("Couldn't reach it (OfflineModeIsEnabled)")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(InvalidInputError, match="only the local cache was tried"):
        read_data("someone/topics", split="test")
