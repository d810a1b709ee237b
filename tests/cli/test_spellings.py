"""One vocabulary (issue #27): one spelling per option. The spellings before it are gone (no
deprecated aliases before 1.0): each is an unknown option, as is a prefix of an option."""

from __future__ import annotations

import argparse

import pandas as pd
import pytest

from labelaudit.cli import COMMANDS, build_parser, main


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every command and step, by its words (``review init``), and its parser."""
    found, todo = {}, [("", build_parser(*COMMANDS))]
    while todo:
        words, parser = todo.pop()
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and words:
            found[words] = parser
        todo += [(f"{words} {name}".strip(), sub) for s in subs for name, sub in s.choices.items()]
    return found


@pytest.mark.parametrize(("argv", "old"), [
    (["evaluate", "i.csv", "--eval", "e.csv", "--truth", "t.csv"], "--truth"),
    (["select", "t.csv", "--val", "v.csv", "--eval", "e.csv", "--test", "t.csv"], "--test"),
    (["train", "d.csv", "--learning-rate", "0.001"], "--learning-rate"),
    (["scan", "d.csv", "--random-state", "7"], "--random-state"),
    (["scan", "d.csv", "--devices", "cuda:0,cuda:1"], "--devices"),
    (["scan-tokens", "d.conll", "--scorer", "encoder"], "--scorer"),
    (["evaluate-tokens", "i.jsonl", "--eval", "e.conll", "--k", "5"], "--k"),
    (["impact", "c.csv", "--models", "tfidf"], "--models"),
    (["report", "i.csv", "--out", "r.html", "--annotations", "votes.csv"], "--annotations"),
    (["agreement", "compare", "--n", "100", "--noise-rate", "0.1", "--noise", "0.1"], "--noise"),
    # a prefix of the new spelling is no abbreviation of it either
    (["scan", "d.csv", "--report", "r.html"], "--report"),
    (["train", "d.csv", "--metrics", "m.json"], "--metrics"),
    (["noise", "d.csv", "--method", "uniform", "--rate", "0.1", "--summary", "s.json"],
     "--summary"),
])
def test_an_old_spelling_is_an_unknown_option(argv, old, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser(argv[0]).parse_args(argv)
    assert stop.value.code == 2
    assert f"unrecognized arguments: {old}" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_required_option_is_required(capsys):
    for argv in (["evaluate", "i.csv"], ["select", "t.csv", "--val", "v.csv"]):
        with pytest.raises(SystemExit) as stop:
            build_parser(argv[0]).parse_args(argv)
        assert stop.value.code == 2 and "required: --eval" in capsys.readouterr().err


def test_messages_name_the_option(tmp_path, capsys):
    (tmp_path / "e.csv").write_text("text,label\na,x\n")
    assert main(["train", "data.csv", "--metrics-out", str(tmp_path / "m.csv"), "--eval",
                 str(tmp_path / "e.csv")]) == 2
    assert f"--metrics-out {tmp_path / 'm.csv'}: the metrics are written as JSON" in \
        capsys.readouterr().err
    data = tmp_path / "data.csv"
    pd.DataFrame({"text": ["a b", "c d"] * 4, "label": ["x", "y"] * 4}).to_csv(data, index=False)
    assert main(["scan", str(data), "--scorers", "tfidf", "--device", "cuda:0,cuda:1"]) == 2
    assert "--device sets the fine-tuning of the finetune scorer" in capsys.readouterr().err


def test_noise_steps_register_as_every_command_does(tmp_path):
    data = tmp_path / "data.csv"
    pd.DataFrame({"text": ["good", "bad"] * 10, "label": ["a", "b"] * 10}).to_csv(data, index=False)
    outs = [tmp_path / "short.csv", tmp_path / "long.csv"]
    assert main(["noise", str(data), "--method", "uniform", "--rate", "0.2", "-q",
                 "--out", str(outs[0])]) == 0
    assert main(["noise", "inject", str(data), "--method", "uniform", "--rate", "0.2", "-q",
                 "--out", str(outs[1])]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    parsers = _commands()
    assert {"noise inject", "noise realism", "agreement measure", "review init"} <= set(parsers)
    assert all(isinstance(p, argparse.ArgumentParser) and p.get_default("handler")
               for p in parsers.values())


def test_an_option_of_another_step_says_which_step_has_it(capsys):
    for argv, message in (
            (["noise", "d.csv", "--method", "uniform", "--rate", "0.1", "--folds", "3"],
             "--folds: used by `noise realism` only"),
            (["noise", "realism", "d.csv", "--rate", "0.1"], "--rate: used by `noise inject` only"),
            (["agreement", "v.csv", "--gamma", "0.1"],
             "--gamma: used by `agreement tolerate` only"),
            (["scan", "d.csv", "--nope"], "unrecognized arguments: --nope")):
        with pytest.raises(SystemExit) as stop:
            build_parser(argv[0]).parse_args(argv)
        assert stop.value.code == 2
        assert capsys.readouterr().err.strip().splitlines()[-1].endswith(message)
