"""The documentation can be trusted: the site (docs/, mkdocs.yml) builds with no broken link
or missing reference, every Python block of its pages and of the README parses, every
``labelaudit ...`` command line in them is one the real parser accepts, the API reference
shows exactly each package's ``__all__``, and every relative link of the README leads to a
file (and heading) that exists."""

from __future__ import annotations

import ast
import importlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_help_examples import check_parses

from labelaudit.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
# the languages of blocks that hold shell command lines; a block with no language counts
SHELL = {"", "bash", "console", "sh", "shell"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```",
                   re.M | re.S)


def _where(page: Path, text: str, offset: int) -> str:
    return f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, offset) + 1}"


def _blocks(page: Path) -> list[tuple[str, str, str]]:
    """(language, where, body) of each fenced block of a page, its indentation removed."""
    text = page.read_text(encoding="utf-8")
    found = []
    for block in FENCE.finditer(text):
        indent = len(block["indent"])
        body = "\n".join(line[indent:] for line in block["body"].split("\n"))
        found.append((block["lang"].lower(), _where(page, text, block.start("body")), body))
    return found


def _python_blocks() -> list[tuple[str, str]]:
    return [(where, body) for page in PAGES for lang, where, body in _blocks(page)
            if lang in ("python", "py")]


def _command_lines() -> list[tuple[str, str]]:
    """(where, line): each ``labelaudit ...`` line (``$ `` prompt dropped) of a shell block,
    continuation lines (``\\`` at the end) joined, and so are the indented lines of options
    (``[--flag ...]``) that go on a synopsis."""
    found = []
    for page in PAGES:
        for lang, where, body in _blocks(page):
            if lang not in SHELL:
                continue
            path, first = where.rsplit(":", 1)
            lines = body.split("\n")
            i = 0
            while i < len(lines):
                start, line = i, lines[i]
                while line.rstrip().endswith("\\") and i + 1 < len(lines):
                    i += 1
                    line = line.rstrip()[:-1] + " " + lines[i].strip()
                command = line.strip().removeprefix("$ ")
                while (command.startswith("labelaudit ") and i + 1 < len(lines)
                       and re.match(r"\s+[\[(-]", lines[i + 1])):
                    i += 1
                    command += " " + lines[i].strip()
                if command.startswith("labelaudit "):
                    found.append((f"{path}:{int(first) + start}", command))
                i += 1
    return found


PYTHON_BLOCKS = _python_blocks()
COMMANDS = _command_lines()


def test_the_pages_show_code_and_commands():
    assert len(PYTHON_BLOCKS) >= 15
    assert len(COMMANDS) > 60
    shown = {line.split()[1] for _, line in COMMANDS}
    assert shown >= {"scan", "evaluate", "noise", "agreement", "scan-tokens", "evaluate-tokens",
                     "review", "train", "train-bench", "predict", "consistency", "impact",
                     "select", "report", "tapt"}


@pytest.mark.parametrize(("where", "code"), PYTHON_BLOCKS, ids=[w for w, _ in PYTHON_BLOCKS])
def test_python_block_parses(where, code):
    try:
        ast.parse(code)
    except SyntaxError as exc:
        pytest.fail(f"{where}: the Python block does not parse: {exc}")


def _is_synopsis(line: str) -> bool:
    """A line with ``[optional]`` or ``(a | b)`` parts, or placeholders such as ``--n N``:
    it cannot parse as it stands (a shell comment after it does not count)."""
    line = re.sub(r"\s+#(\s.*)?$", "", line)
    return bool(re.search(r"[\[\]()]| \| ", line) or re.search(r"--[\w-]+ [A-Z]\b", line))


def _command_parser(words: list[str]) -> Any:
    """The parser of the command (and step) that ``words`` (after ``labelaudit``) run: its
    default step when the words name none (``noise DATA`` is ``noise inject DATA``)."""
    parser: Any = build_parser(*words[:1])
    for word in words:
        steps = getattr(parser, "steps", None) or (parser._subparsers._group_actions[0]
                                                   if parser._subparsers else None)
        if steps is None:
            break
        default = getattr(parser, "default_step", None)
        if word in steps.choices:
            parser = steps.choices[word]
        elif default:
            parser = steps.choices[default]
        else:
            break
    return parser


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_command_line_parses(where, line, capsys):
    """A command line parses with the real parser (nothing runs); a synopsis, which cannot,
    names only flags that its command's --help shows."""
    if not _is_synopsis(line):
        check_parses(where, line, capsys)
        return
    words = shlex.split(line, comments=True)[1:]
    parser = _command_parser([w for w in words if not w.startswith("-")][:2])
    shown = parser.format_help()
    flags = re.findall(r"(?<![\w-])--[a-z][\w-]*", " ".join(words))
    missing = [f for f in flags if not re.search(rf"{re.escape(f)}(?![\w-])", shown)]
    assert flags and not missing, (
        f"{where}: {missing} not in the --help of `{parser.prog}`: {line}")


def _dotted_names() -> list[tuple[str, str]]:
    """Each ``labelaudit.x.y`` written in code spans of the pages (call parentheses dropped)."""
    found: dict[str, str] = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for span in re.finditer(r"`([^`\n]+)`", text):
            for name in re.findall(r"(?<![\w./-])labelaudit(?:\.[A-Za-z_]\w*)+", span[1]):
                found.setdefault(name, _where(page, text, span.start()))
    return sorted((where, name) for name, where in found.items())


DOTTED = _dotted_names()


@pytest.mark.parametrize(("where", "name"), DOTTED, ids=[n for _, n in DOTTED])
def test_every_name_the_pages_write_exists(where, name):
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            assert hasattr(obj, attr), f"{where}: {name} does not exist ({attr!r} missing)"
            obj = getattr(obj, attr)
        return
    pytest.fail(f"{where}: {name} does not import")


def _heading_anchors(page: Path) -> set[str]:
    from markdown.extensions.toc import slugify

    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slugify(m[1], "-") for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def test_every_relative_link_of_the_readme_exists():
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", text))
    relative = [link for link in links if not re.match(r"[a-z]+:|#", link)]
    assert len(relative) >= 10
    for link in relative:
        path, _, anchor = link.partition("#")
        target = (README.parent / path).resolve()
        assert target.exists(), f"README.md links to {link}, which does not exist"
        if anchor:
            assert anchor in _heading_anchors(target), (
                f"README.md links to {link}: {path} has no heading #{anchor}")


def _reference_pages() -> dict[str, Path]:
    """Each public package and its reference page (``docs/reference/<package>.md``)."""
    packages = ["labelaudit", *sorted(f"labelaudit.{p.parent.name}"
                                      for p in (ROOT / "src/labelaudit").glob("*/__init__.py"))]
    return {module: DOCS / "reference" / f"{module.partition('.')[2] or 'index'}.md"
            for module in packages}


@pytest.mark.parametrize(("module", "page"), _reference_pages().items())
def test_every_public_package_has_a_reference_page(module, page):
    """The page renders the package (its ``__all__``: mkdocs.yml's ``filters: public``)."""
    assert page.is_file(), f"no reference page for {module}: {page.relative_to(ROOT)}"
    assert re.search(rf"^::: {re.escape(module)}$", page.read_text(encoding="utf-8"), re.M)
    assert f"reference/{page.name}" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


@pytest.mark.heavy
def test_the_site_builds_strictly(tmp_path):
    """``mkdocs build --strict``: no broken link or anchor, no missing reference, no
    docstring the reference cannot read, and the tutorial notebook runs without an error.
    The built reference shows each package's public names, and the benchmark plots are in."""
    site = tmp_path / "site"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "NO_MKDOCS_2_WARNING": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stderr[-6000:]}"
    for module, source in _reference_pages().items():
        page = site / "reference" / source.with_suffix(".html").name
        shown = re.findall(r'<h\d id="([\w.]+)" class="doc doc-heading"', page.read_text())
        top = {name.rpartition(".")[2] for name in shown if name.rpartition(".")[0] == module}
        public = set(importlib.import_module(module).__all__)
        assert top == public, f"{page.name}: {sorted(top ^ public)} differ from __all__"
    roles = [p.name for p in (site / "reference").glob("*.html") if ":func:`" in p.read_text()]
    assert not roles, f"Sphinx roles left in {roles} (docs/hooks.py: SphinxRoles)"
    plots = sorted(p.name for p in (ROOT / "benchmarks/results").glob("*.png"))
    assert plots and all((site / "results" / name).is_file() for name in plots)
    assert (site / "tutorials" / "find-and-fix.html").is_file()
