"""Every ``labelaudit ...`` command line in the README's code blocks is one the parser
accepts as written (the check of the --help examples, tests/cli/test_help_examples.py), so
a renamed or dropped flag fails here instead of drifting in the README. A synopsis (a line
with ``[optional]`` or ``(a | b)`` parts, or placeholders such as ``--n N``) cannot be
parsed as it stands: each of its flags must then be one its command's --help shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from tests.cli.test_help_examples import check_parses

from labelaudit.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"


def _commands() -> list[tuple[str, str]]:
    """(where, line): each command line of a fenced code block, continuation lines
    (``\\`` at the end) joined, with the README line it starts on."""
    found = []
    text = README.read_text(encoding="utf-8")
    for block in re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        first = text.count("\n", 0, block.start(1)) + 1
        lines = block[1].split("\n")
        i = 0
        while i < len(lines):
            start, line = i, lines[i]
            while line.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line.rstrip()[:-1] + " " + lines[i].strip()
            command = line.strip().removeprefix("$ ")
            if command.startswith("labelaudit "):
                found.append((f"README.md:{first + start}", command))
            i += 1
    return found


COMMANDS = _commands()


def test_the_readme_shows_commands():
    assert len(COMMANDS) > 20
    assert {line.split()[1] for _, line in COMMANDS} >= {"scan", "evaluate", "report", "review"}


def _is_synopsis(line: str) -> bool:
    return bool(re.search(r"[\[\]()]| \| ", line) or re.search(r"--[\w-]+ [A-Z]\b", line))


def _command_parser(words: list[str]):
    """The parser of the command (and step) that ``words`` (after ``labelaudit``) run: its
    default step when the words name none (``noise DATA`` is ``noise inject DATA``)."""
    parser = build_parser(*words[:1])
    for word in words:
        steps = getattr(parser, "steps", None) or (parser._subparsers._group_actions[0]
                                                   if parser._subparsers else None)
        if steps is None:
            break
        if word in steps.choices:
            parser = steps.choices[word]
        elif getattr(parser, "default_step", None):
            parser = steps.choices[parser.default_step]
        else:
            break
    return parser


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_readme_command_parses(where, line, capsys):
    if not _is_synopsis(line):
        check_parses(where, line, capsys)
        return
    words = shlex.split(line, comments=True)[1:]
    parser = _command_parser([w for w in words if not w.startswith("-")][:2])
    shown = parser.format_help()
    flags = re.findall(r"(?<![\w-])--[a-z][\w-]*", " ".join(words))
    assert flags and all(re.search(rf"{re.escape(f)}(?![\w-])", shown) for f in flags), (
        f"{where}: {[f for f in flags if f not in shown]} not in the --help of "
        f"`{parser.prog}`: {line}")
