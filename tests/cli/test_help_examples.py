"""Every example in the commands' --help (cli/help.toml) is a command line the parser
accepts: the examples cannot drift from the options."""

from __future__ import annotations

import shlex

import pytest

from labelaudit.cli import COMMANDS, HELP, build_parser


def _examples() -> list[tuple[str, str]]:
    out = []
    for path, text in HELP.items():
        lines = (text.get("epilog") or "") + "\n" + text["description"]
        joined = lines.replace("\\\n", " ")
        out += [(path, line.strip()) for line in joined.splitlines()
                if line.strip().startswith("labelaudit ")]
    return out


EXAMPLES = _examples()


def test_every_command_has_examples_and_a_description():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # every command, none built
    with_examples = {path.split()[0] for path, _ in EXAMPLES}
    assert set(commands) <= with_examples
    assert set(commands) == set(COMMANDS)
    assert all(text["description"].strip() and text["help"] for text in HELP.values())
    assert len(EXAMPLES) > 60


def check_parses(path: str, line: str, capsys) -> None:
    """``line`` (``labelaudit ...``, shown at ``path``) is a command line the parser
    accepts as written: a command that runs, every flag in its --help."""
    argv = shlex.split(line, comments=True)[1:]
    try:
        args = build_parser(argv[0]).parse_args(argv)
    except SystemExit:
        pytest.fail(f"{path}: the example does not parse: {line}\n{capsys.readouterr().err}")
    assert args.handler is not None
    shown = args.parser.format_help()
    spelled = [t.split("=")[0] for t in argv if t.startswith("--")]
    assert all(flag in shown for flag in spelled), (  # no abbreviation, no old spelling
        f"{path}: {[f for f in spelled if f not in shown]} not in its --help: {line}")


@pytest.mark.parametrize(("path", "line"), EXAMPLES, ids=[f"{p}:{i}" for i, (p, _) in
                                                          enumerate(EXAMPLES)])
def test_example_parses(path, line, capsys):
    check_parses(path, line, capsys)
