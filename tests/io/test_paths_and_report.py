"""The output-path checks and the three-faced report writer of labelaudit.io."""

import io
import json

import pandas as pd
import pytest

from labelaudit import InvalidParameterError
from labelaudit.io import check_output_paths, check_writable, emit_report, same_file


def test_an_output_that_names_an_input_or_another_output_is_refused(tmp_path):
    data, out = tmp_path / "data.csv", tmp_path / "out.csv"
    data.write_text("a\n1\n")
    check_output_paths([("--out", str(out))], [("an input file", str(data))])
    with pytest.raises(InvalidParameterError, match="is an input file; labelaudit never"):
        check_output_paths([("--out", str(data))], [("an input file", str(data))])
    same = str(tmp_path / ".." / tmp_path.name / "out.csv")
    with pytest.raises(InvalidParameterError, match="--out and --summary both write"):
        check_output_paths([("--out", str(out)), ("--summary", same)], [])
    check_output_paths([("--out", None)], [("an input file", None)])  # options not given
    assert same_file(out, tmp_path / "." / "out.csv") and not same_file(out, data)


def test_an_output_in_a_folder_that_cannot_be_made_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    check_writable(tmp_path / "new" / "deeper" / "out.csv")  # missing folders are made later
    with pytest.raises(InvalidParameterError, match="is a folder; give a file name"):
        check_writable(tmp_path, name="--out")
    with pytest.raises(InvalidParameterError, match="is a file, not a folder"):
        check_writable(tmp_path / "file" / "out.csv")


def test_emit_report_writes_text_document_or_table(tmp_path):
    frame, document = pd.DataFrame({"n": [3], "gamma": [0.1]}), {"n": 3, "gamma": 0.1}
    stream = io.StringIO()
    assert emit_report(frame, document, "n  3\n", format="table", stdout=stream) == "table"
    assert stream.getvalue() == "n  3\n"
    stream = io.StringIO()
    assert emit_report(frame, document, "n  3\n", stdout=stream) == "json"  # not a terminal
    assert json.loads(stream.getvalue()) == document
    assert emit_report(frame, document, "", tmp_path / "r.json") == "json"
    assert json.loads((tmp_path / "r.json").read_text()) == document
    assert emit_report(frame, document, "", tmp_path / "r.csv") == "csv"
    assert pd.read_csv(tmp_path / "r.csv").to_dict("list") == {"n": [3], "gamma": [0.1]}
    with pytest.raises(InvalidParameterError, match="does not match the output file"):
        emit_report(frame, document, "", tmp_path / "r.csv", format="json")
