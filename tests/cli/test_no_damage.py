"""No command destroys a user's file: every output option of every command, pointed at a
folder that holds an input and an unrelated file, leaves both untouched, with and without
--overwrite (issues #25, #40: --overwrite replaces only labelaudit's own earlier outputs).
The command list comes from the parser itself, so a new command or output option is
covered (or fails here until it is given arguments)."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pytest

from labelaudit.cli import COMMANDS, build_parser, main

# Files the shared folder holds: the inputs each command reads, and unrelated files of
# every suffix an output option accepts.
INPUTS = {"data.csv": "id,text,label\na,chef bake,food\nb,goal team,sport\n",
          "data.conll": "EU B-ORG\nrejects O\n\nPeter B-PER\n",
          "issues.csv": "id,rank,given_label,given_prob\na,1,food,0.1\n"}
UNRELATED = {"notes.csv": "name,value\nx,1\n", "notes.json": '{"mine": true}\n',
             "notes.jsonl": '{"mine": true}\n', "notes.png": "not really a png\n",
             "notes.html": "<p>mine</p>\n", "notes.sqlite": "my database\n",
             "notes.xml": "<mine/>\n", "notes.parquet": "PAR1 mine\n"}

# Arguments that let each command parse; {d} is the shared folder.
ARGS = {
    "scan": ["{d}/data.csv", "--text", "text", "--label", "label"],
    "scan-tokens": ["{d}/data.conll"],
    "tapt": ["{d}/data.csv"],
    "evaluate": ["{d}/issues.csv", "--eval", "{d}/data.csv"],
    "impact": ["{d}/data.csv", "--predictions", "m={d}/issues.csv"],
    "report": ["{d}/issues.csv"],
    "evaluate-tokens": ["{d}/data.conll", "--eval", "{d}/data.conll"],
    "select": ["{d}/data.csv", "--val", "{d}/issues.csv"],
    "consistency": ["{d}/data.csv", "--suspect", "{d}/issues.csv"],
    "agreement measure": ["{d}/data.csv", "--item", "id", "--annotations", "label"],
    "agreement compare": ["--n", "100", "--noise-rate", "0.1"],
    "agreement noise": ["--n", "100", "--disagreements", "5"],
    "agreement tolerate": ["--n", "100"],
    "noise inject": ["{d}/data.csv", "--label", "label", "--method", "uniform", "--rate", "0.1"],
    "noise realism": ["{d}/data.csv"],
    "review init": ["{d}/issues.csv"],
    "review invite": ["--db", "{d}/review.sqlite", "--name", "ann"],
    "review serve": ["--db", "{d}/review.sqlite"],
    "review status": ["--db", "{d}/review.sqlite"],
    "review results": ["--db", "{d}/review.sqlite"],
    "review apply": ["{d}/data.csv", "{d}/issues.csv"],
    "review export": ["--db", "{d}/review.sqlite"],
    "review import": ["--db", "{d}/review.sqlite", "{d}/issues.csv"],
    "review push": ["--db", "{d}/review.sqlite", "--to", "label-studio", "--url",
                    "http://127.0.0.1:9", "--project", "p"],
    "review pull": ["--db", "{d}/review.sqlite", "--from", "label-studio", "--url",
                    "http://127.0.0.1:9", "--project", "p"],
    "train": ["{d}/data.csv"],
    "train-bench": ["{d}/data.csv", "--eval", "{d}/issues.csv"],
    "predict": ["{d}/model", "{d}/data.csv"],
}
# Outputs a command requires: given a new path when another output is the one tried.
FRESH = {("report", "out"): "fresh/r.html", ("review apply", "out"): "fresh/a.csv",
         ("review export", "out"): "fresh/e.json"}


def _is_output(dest: str) -> bool:
    """The emit rule: --out is a command's main output, every other output is --<what>-out."""
    return dest == "out" or dest.endswith("_out")


def _commands() -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found[prefix.strip()] = parser
            return
        for name, sub in subs[0].choices.items():
            walk(sub, f"{prefix} {name}")

    walk(build_parser(*COMMANDS), "")
    return found


def _outputs(parser: argparse.ArgumentParser, command: str) -> list[tuple[str | None, str]]:
    """(flag, dest) of every output a command writes; flag None for a positional."""
    found = [(a.option_strings[0] if a.option_strings else None, a.dest)
             for a in parser._actions if _is_output(a.dest) and a.help != argparse.SUPPRESS]
    if command == "review init":
        found.append(("--db", "db"))
    return found


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _cases():
    for command, parser in _commands().items():
        for flag, dest in _outputs(parser, command):
            yield pytest.param(command, flag, dest, id=f"{command} {flag or dest}")


def test_every_command_has_arguments_here():
    assert sorted(_commands()) == sorted(ARGS)


@pytest.mark.parametrize(("command", "flag", "dest"), list(_cases()))
def test_no_output_option_touches_an_input_or_an_unrelated_file(command, flag, dest,
                                                                tmp_path, capsys):
    folder = tmp_path / "work"
    folder.mkdir()
    for name, text in {**INPUTS, **UNRELATED}.items():
        (folder / name).write_text(text)
    model = folder / "model"  # a saved model that predict reads
    model.mkdir()
    (model / "labelaudit-model.json").write_text('{"format": "labelaudit-model"}')
    (model / "head.pt").write_text("weights")
    before = _snapshot(folder)
    base = [part.format(d=folder) for part in ARGS[command]]
    targets = [folder, folder / "model", *(folder / n for n in INPUTS),
               *(folder / n for n in UNRELATED), model / "labelaudit-model.json",
               model / "notes.csv"]
    for target in targets:
        for overwrite in ([], ["--overwrite"]):
            argv = [*command.split(), *base]
            for (name, other), fresh in FRESH.items():
                if name == command and other != dest:
                    argv += [f"--{other.split('_')[0]}", str(tmp_path / fresh)]
            argv += [str(target)] if flag is None else [flag, str(target)]
            try:
                code = main([*argv, *overwrite, "--quiet"])
            except SystemExit as exc:  # argparse refused the value
                code = exc.code
            assert code != 0, argv
            assert _snapshot(folder) == before, (argv, capsys.readouterr().err)
