"""Guards every command shares: an output never overwrites an input; OS errors are one line."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit.cli import main


@pytest.fixture
def data_file(tmp_path):
    path = tmp_path / "data.csv"
    pd.DataFrame({"id": range(6), "text": ["good", "bad"] * 3, "label": ["a", "b"] * 3}
                 ).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("argv", [
    ["scan", "{data}", "--scorers", "tfidf", "--out", "{data}"],
    ["noise", "{data}", "--method", "uniform", "--rate", "0.2", "--out", "{data}"],
    ["evaluate", "{other}", "--eval", "{data}", "--out", "{data}"],
    ["review", "apply", "{other}", "{data}", "--out", "{data}"],
    ["review", "init", "{data}", "--db", "{data}", "--top", "2", "--overwrite"],
])
def test_an_output_naming_an_input_is_refused_and_the_input_kept(data_file, tmp_path, argv,
                                                                   capsys):
    before = data_file.read_bytes()
    other = tmp_path / "other.csv"
    args = [a.format(data=data_file, other=other) for a in argv]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "never overwrites an input" in err and err.count("\n") == 1
    assert data_file.read_bytes() == before


def test_an_unwritable_output_is_one_line_not_a_traceback(data_file, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert main(["noise", str(data_file), "--method", "uniform", "--rate", "0.2",
                 "--out", str(blocker / "sub" / "noisy.csv"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("labelaudit noise: error:") and "Traceback" not in err


def test_two_outputs_on_one_path_are_refused(data_file, tmp_path, capsys):
    out = tmp_path / "noisy.csv"
    assert main(["noise", str(data_file), "--method", "uniform", "--rate", "0.2",
                 "--out", str(out), "--summary-out", str(out)]) == 1
    assert "both write" in capsys.readouterr().err
    assert not out.exists()
