"""Ids and codes read as text: a CSV column of numbers written with a leading zero keeps its
zeros through read_table, the chunked reader and every output, and ids are matched across
files as text (68 and "68" are one id, "068" another)."""

import json

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.cli import main
from labelaudit.engine import iter_frames, resolve_source
from labelaudit.io import read_table, text_keys


def padded(folder, *, ids=None):
    """60 topic texts with ids "000".."059" (or ``ids``) as data.csv; the frame."""
    frame = make_topic_frame(20, n_errors=4)
    frame["id"] = ids if ids is not None else [f"{i:03d}" for i in range(len(frame))]
    frame[["id", "text", "label"]].to_csv(folder / "data.csv", index=False)
    return frame


def first_cells(path):
    """The first cell of every data line of a CSV, as written."""
    return sorted(line.split(",")[0] for line in path.read_text().splitlines()[1:])


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_column_of_numbers_with_a_leading_zero_is_text(tmp_path, suffix):
    sep = "\t" if suffix == ".tsv" else ","
    rows = [["id", "zip", "code", "n", "x", "word"], ["068", "01234", "-01", "1", "0.5", "007a"],
            ["100", "99501", "3", "2", "1.5", "b"], ["", "", "", "", "", ""]]
    path = tmp_path / f"a{suffix}"
    path.write_text("".join(sep.join(row) + "\n" for row in rows))
    frame = read_table(path)
    assert frame["id"].tolist()[:2] == ["068", "100"] and pd.isna(frame["id"].iloc[2])
    assert frame["zip"].tolist()[:2] == ["01234", "99501"]
    assert frame["code"].tolist()[:2] == ["-01", "3"]
    assert frame["n"].tolist()[:2] == [1, 2] and frame["x"].tolist()[:2] == [0.5, 1.5]
    assert frame["word"].tolist()[:2] == ["007a", "b"]


def test_scan_outputs_keep_zero_padded_ids(tmp_path):
    frame = padded(tmp_path)
    for suffix in (".csv", ".jsonl", ".parquet"):
        out = tmp_path / f"issues{suffix}"
        assert main(["scan", str(tmp_path / "data.csv"), "--out", str(out), "-q"]) == 0
        ids = (pd.read_parquet(out)["id"].tolist() if suffix == ".parquet" else
               [json.loads(line)["id"] for line in out.read_text().splitlines()]
               if suffix == ".jsonl" else first_cells(out))
        assert sorted(ids) == sorted(frame["id"]), suffix
    # streamed: the chunks read the id column as text
    out = tmp_path / "streamed.jsonl"
    assert main(["scan", str(tmp_path / "data.csv"), "--engine", "local", "--chunk-size", "7",
                 "--scorers", "tfidf", "--out", str(out), "-q"]) == 0
    assert sorted(json.loads(line)["id"] for line in out.read_text().splitlines()) == \
        sorted(frame["id"])


def test_evaluate_names_ids_as_written(tmp_path, capsys):
    frame = padded(tmp_path)
    out = tmp_path / "issues.csv"
    assert main(["scan", str(tmp_path / "data.csv"), "--out", str(out), "-q"]) == 0
    frame[["id", "is_error"]].to_csv(tmp_path / "truth.csv", index=False)
    assert main(["evaluate", str(out), "--eval", str(tmp_path / "truth.csv"),
                 "--out", str(tmp_path / "metrics.csv"), "-q"]) == 0
    frame[["id", "is_error"]].iloc[3:].to_csv(tmp_path / "partial.csv", index=False)
    capsys.readouterr()
    assert main(["evaluate", str(out), "--eval", str(tmp_path / "partial.csv"),
                 "--out", str(tmp_path / "metrics2.csv"), "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(f"'00{i}'" in err for i in range(3)), err


def test_review_apply_keeps_zero_padded_ids(tmp_path):
    frame = padded(tmp_path)
    (tmp_path / "verdicts.csv").write_text(
        "id,verdict,majority_label\n007,Correctable,tech\n010,Non-Error,\n")
    before = (tmp_path / "data.csv").read_bytes()
    out = tmp_path / "corrected.csv"
    assert main(["review", "apply", str(tmp_path / "data.csv"), str(tmp_path / "verdicts.csv"),
                 "--out", str(out), "-q"]) == 0
    assert (tmp_path / "data.csv").read_bytes() == before
    assert first_cells(out) == sorted(frame["id"])
    corrected = read_table(out).set_index("id")
    assert corrected.loc["007", "label"] == "tech"
    assert corrected.loc["010", "review_action"] == "confirmed"


def test_the_chunks_agree_on_each_columns_type(tmp_path):
    # the first chunk's ids have no leading zero, a later chunk's have; zip is padded in the
    # first chunk only
    ids = [str(i) for i in range(100, 110)] + [f"{i:03d}" for i in range(10)]
    zips = ["01234"] * 5 + ["99501"] * 15
    path = tmp_path / "data.csv"
    pd.DataFrame({"id": ids, "zip": zips, "n": range(20)}).to_csv(path, index=False)
    chunks = list(iter_frames(resolve_source(path), chunk_size=5, text=["id"]))
    assert len(chunks) == 4
    assert sum((c["id"].tolist() for c in chunks), []) == ids
    assert sum((c["zip"].tolist() for c in chunks), []) == zips
    assert all(c["n"].dtype.kind == "i" for c in chunks)
    assert read_table(path)["zip"].tolist() == zips  # the table reader: the same rule


def test_numeric_ids_without_leading_zeros_stay_comparable(tmp_path):
    frame = padded(tmp_path, ids=list(range(1, 61)))
    assert read_table(tmp_path / "data.csv")["id"].dtype.kind == "i"
    out = tmp_path / "issues.csv"
    assert main(["scan", str(tmp_path / "data.csv"), "--out", str(out), "-q"]) == 0
    truth = frame[["id", "is_error"]].assign(id=frame["id"].astype(str))  # ids as JSON text
    truth.to_json(tmp_path / "truth.jsonl", orient="records", lines=True)
    assert main(["evaluate", str(out), "--eval", str(tmp_path / "truth.jsonl"),
                 "--out", str(tmp_path / "metrics.csv"), "-q"]) == 0
    (tmp_path / "verdicts.jsonl").write_text(
        '{"id": "7", "verdict": "Correctable", "majority_label": "tech"}\n')
    fixed = tmp_path / "corrected.csv"
    assert main(["review", "apply", str(tmp_path / "data.csv"),
                 str(tmp_path / "verdicts.jsonl"), "--out", str(fixed), "-q"]) == 0
    assert read_table(fixed).set_index("id").loc[7, "label"] == "tech"


@pytest.mark.parametrize(("values", "keys"), [
    (pd.Series([7.0, 7.5, None]), ["7", "7.5", ""]),              # a CSV column with a blank
    (pd.Series([7, None], dtype="Int64"), ["7", ""]),             # nullable integers
    (pd.Series([2**64 - 1], dtype="uint64"), [str(2**64 - 1)]),   # past int64, exact
    (pd.Series([1e20, -1e20]), ["100000000000000000000", "-100000000000000000000"]),
    (pd.Series([True, None], dtype="boolean"), ["True", ""]),
    (pd.Series([7.0, "7", "7.0", None], dtype=object), ["7", "7", "7.0", ""]),
    (pd.Series([], dtype=object), []),
])
def test_text_keys_key_a_whole_number_as_its_integer_and_missing_as_blank(values, keys):
    assert text_keys(values).tolist() == keys
