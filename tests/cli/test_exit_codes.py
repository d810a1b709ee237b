"""One rule for exit codes: a bad option value is a usage error (exit 2) wherever it is
caught, by argparse or by the library (an InvalidParameterError naming its option,
``param``); bad data exits 1. Messages name the option as the command line spells it."""

from __future__ import annotations

import json

import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import build_parser, error_text, exit_code, main


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.csv"
    words = {"sport": "goal team match", "food": "bake chef soup"}
    rows = [f"{i},{words[label]} {i},{label}" for i, label in
            enumerate(["sport", "food"] * 10)]
    path.write_text("id,text,label\n" + "\n".join(rows) + "\n")
    return path


def _run(argv, capsys):
    """(exit code, stderr) of one command line through the real entry point."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "{data}", "--noise-rate", "1.5", "--out", "{tmp}/model"],
     "argument --noise-rate: must be a number in [0, 1); got 1.5"),
    (["noise", "{data}", "--method", "uniform", "--rate", "1.5"],
     "argument --rate: must be a number in [0, 1); got 1.5"),
    (["review", "init", "{data}", "--db", "{tmp}/r.sqlite", "--reviewers", "0"],
     "--reviewers must be at least 1; got 0"),
    (["scan", "{data}", "--weights=0,0"],
     "--weights must be non-negative numbers with a positive sum"),
    (["train-bench", "{data}", "--eval", "{data}", "--noise", "bogus:0.1"],
     "unknown noise method 'bogus' in --noise 'bogus:0.1'"),
    (["scan", "{data}", "--label-sep", ""],
     "argument --label-sep: must be at least one character"),
])
def test_an_out_of_range_option_value_exits_2(data, tmp_path, capsys, argv, message):
    argv = [a.format(data=data, tmp=tmp_path) for a in argv]
    code, err = _run(argv, capsys)
    assert code == 2, err
    assert message in err
    assert not (tmp_path / "model").exists() and not (tmp_path / "r.sqlite").exists()


def test_a_label_set_method_named_for_single_labels_names_the_flag(tmp_path, capsys):
    path = tmp_path / "sets.jsonl"
    path.write_text("".join(json.dumps({"text": f"t {i}", "label": [["a"], ["b"]][i % 2]}) + "\n"
                            for i in range(10)))
    code, err = _run(["scan", path, "--rank-by", "margin"], capsys)
    assert code == 2
    assert err.strip() == ("labelaudit scan: error: --rank-by must be one of log_likelihood, "
                           "worst_class, cleanlab; got 'margin'")


def test_a_data_error_that_names_an_option_spells_its_flag_and_exits_1(tmp_path, capsys):
    path = tmp_path / "crowd.jsonl"
    path.write_text('{"id": 1, "annotator_labels": ["a", "b"]}\n'
                    '{"id": 2, "annotator_labels": ["a"]}\n')
    code, err = _run(["agreement", path, "--bootstrap", "0"], capsys)
    assert code == 1
    assert "pass --drop-single)" in err and "drop_single" not in err
    assert len(err.strip().splitlines()) == 1


def test_error_text_spells_every_option_the_error_names(tmp_path):
    args = build_parser("scan").parse_args(["scan", str(tmp_path / "x.csv"), "--sweep", "2",
                                      "--keep", "5", "--folds", "3"])
    keep = InvalidParameterError("keep must be between 1 and sweep=2; got 5",
                                 param=("keep", "sweep"))
    assert error_text(keep, args) == "--keep must be between 1 and --sweep 2; got 5"
    folds = InvalidParameterError("n_folds must be at least 2; got 1", param="n_folds")
    assert error_text(folds, args) == "--folds must be at least 2; got 1"
    # a bare name is spelled only as the message's subject: elsewhere it may be English
    weights = InvalidParameterError("give one weight per scorer: 2 weights for 3 scorers",
                                    param="weights")
    assert error_text(weights, args) == str(weights)


def test_the_exit_code_rule():
    assert exit_code(InvalidParameterError("top must be at least 0; got -1", param="top")) == 2
    assert exit_code(InvalidInputError("a bad row", param="label_sep")) == 1
    # a refused path names no option's value as wrong: exit 1, as the README says
    assert exit_code(InvalidParameterError("--out x.csv exists and labelaudit did not write "
                                           "it")) == 1


@pytest.mark.parametrize("argv", [["scan", "data.csv", "--bogus-flag"],
                                  ["review", "init", "scan.csv", "--db", "r", "--bogus"]])
def test_an_unknown_option_shows_the_usage_of_its_command(capsys, argv):
    code, err = _run(argv, capsys)
    command = " ".join(argv[:2] if argv[0] == "review" else argv[:1])
    assert code == 2
    assert err.startswith(f"usage: labelaudit {command} ")
    assert err.strip().endswith(f"labelaudit {command}: error: unrecognized arguments: "
                                f"{argv[-1]}")
