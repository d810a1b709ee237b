"""One vocabulary (issue #27): every old spelling of an option still works as before, says on
stderr that it is deprecated and which spelling replaces it, and is hidden from --help. The
aliases are found by walking the parser, so a new one is covered (or fails here until it is
given a value)."""

from __future__ import annotations

import argparse
import re

import pandas as pd
import pytest

from labelaudit.cli import build_parser, main
from labelaudit.cli._common import _OldSpelling

# Arguments that let each command with an old spelling parse (without the option tried).
BASE = {"scan": ["d.csv"], "scan-tokens": ["d.conll"], "evaluate": ["i.csv", "--eval", "e.csv"],
        "evaluate-tokens": ["i.jsonl", "--eval", "e.conll"],
        "report": ["i.csv", "--out", "r.html"],
        "select": ["t.csv", "--val", "v.csv", "--eval", "e.csv"], "train": ["d.csv"],
        "train-bench": ["d.csv", "--eval", "e.csv"], "impact": ["c.csv"],
        "consistency": ["t.csv", "--suspect", "s.csv"], "tapt": ["d.csv", "--out", "f/"],
        "noise inject": ["d.csv", "--method", "uniform", "--rate", "0.1"],
        "noise realism": ["d.csv"], "agreement measure": ["v.csv"],
        "agreement compare": ["--n", "100", "--noise-rate", "0.1"],
        "review init": ["i.csv", "--db", "r.sqlite"], "review results": ["--db", "r.sqlite"],
        "review export": ["--db", "r.sqlite", "--to", "csv"]}
# A value each old spelling can take (the new spelling takes the same).
VALUES = {"--random-state": "7", "--truth": "t.csv", "--test": "t.csv", "--k": "5,10",
          "--scorer": "encoder", "--models": "tfidf", "--devices": "cuda:0,cuda:1",
          "--learning-rate": "0.001", "--plot": "p.png", "--summary": "s.json",
          "--metrics": "m.json", "--report": "r.html", "--label-config": "c.xml",
          "--annotations": "votes.csv", "--noise": "0.1", "--corrected": "fixed"}
# The spelling each old one gives way to.
NEW = {"--random-state": "--seed", "--truth": "--eval", "--test": "--eval", "--k": "--at-k",
       "--scorer": "--scorers", "--models": "--scorers", "--devices": "--device",
       "--learning-rate": "--lr", "--plot": "--plot-out", "--summary": "--summary-out",
       "--metrics": "--metrics-out", "--report": "--report-out",
       "--label-config": "--label-config-out", "--annotations": "--annotations-file",
       "--noise": "--noise-rate", "--corrected": "--corrected-label"}


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every command and step, by its words (``review init``), and its parser."""
    found, todo = {}, [("", build_parser())]
    while todo:
        words, parser = todo.pop()
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and words:
            found[words] = parser
        todo += [(f"{words} {name}".strip(), sub) for s in subs for name, sub in s.choices.items()]
    return found


def _aliases():
    for command, parser in _commands().items():
        for action in parser._actions:
            if isinstance(action, _OldSpelling):
                old = action.option_strings[0] if action.option_strings else action.dest
                yield pytest.param(command, old, action, id=f"{command} {old}")


def _parse(argv: list[str]) -> dict:
    args = vars(build_parser().parse_args(argv))
    return {k: v for k, v in args.items() if k not in ("parser", "spelled")}


@pytest.mark.parametrize(("command", "old", "action"), list(_aliases()))
def test_an_old_spelling_works_says_so_and_is_hidden(command, old, action, capsys):
    assert NEW[old] == action.new.option_strings[0]
    base = [*command.split(), *BASE[command]]
    if NEW[old] in base:  # a required option: the old spelling stands in for it
        del base[base.index(NEW[old]):base.index(NEW[old]) + 2]
    if command == "review export":  # the output it requires
        base += ["--out", "e.json"]
    assert _parse([*base, old, VALUES[old]]) == _parse([*base, NEW[old], VALUES[old]])
    note = capsys.readouterr().err
    assert note == f"labelaudit: {old} is deprecated, use {NEW[old]}\n"
    parser = _commands()[command]
    shown = parser.format_help()
    assert NEW[old] in shown
    assert not re.search(rf"{old}(?![\w-])", shown), f"{old} shows in --help"


def test_every_old_spelling_has_a_value_here():
    found = {old for _, old, _ in (p.values for p in _aliases())}
    assert found == set(VALUES)


def test_a_required_option_is_required_in_either_spelling(capsys):
    for argv in (["evaluate", "i.csv"], ["select", "t.csv", "--val", "v.csv"]):
        with pytest.raises(SystemExit) as stop:
            build_parser().parse_args(argv)
        assert stop.value.code == 2 and "--eval is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", "i.csv", "--eval", "a", "--truth", "b"])
    assert "not allowed with" in capsys.readouterr().err


def test_messages_keep_the_spelling_the_user_gave(tmp_path, capsys):
    (tmp_path / "e.csv").write_text("text,label\na,x\n")
    for flag in ("--metrics", "--metrics-out"):
        assert main(["train", "data.csv", flag, str(tmp_path / "m.csv"), "--eval",
                     str(tmp_path / "e.csv")]) == 2
        assert f"{flag} {tmp_path / 'm.csv'}: the metrics are written as JSON" in \
            capsys.readouterr().err
    data = tmp_path / "data.csv"
    pd.DataFrame({"text": ["a b", "c d"] * 4, "label": ["x", "y"] * 4}).to_csv(data, index=False)
    for flag in ("--devices", "--device"):
        assert main(["scan", str(data), "--scorers", "tfidf", flag, "cuda:0,cuda:1"]) == 2
        assert f"{flag} sets the fine-tuning of the finetune scorer" in capsys.readouterr().err


def test_an_old_output_spelling_writes_the_same_file(tmp_path, capsys):
    data = tmp_path / "data.csv"
    pd.DataFrame({"id": range(20), "text": ["good", "bad"] * 10, "label": ["a", "b"] * 10}
                 ).to_csv(data, index=False)
    written = []
    for flag in ("--summary", "--summary-out"):
        summary = tmp_path / f"{flag.strip('-')}.json"
        assert main(["noise", str(data), "--method", "uniform", "--rate", "0.2", "--quiet",
                     "--out", str(tmp_path / f"{flag.strip('-')}.csv"), flag, str(summary)]) == 0
        written.append(summary.read_text())
    assert written[0] == written[1]
    assert capsys.readouterr().err == "labelaudit: --summary is deprecated, use --summary-out\n"


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
            build_parser().parse_args(argv)
        assert stop.value.code == 2
        assert capsys.readouterr().err.strip().splitlines()[-1].endswith(message)
