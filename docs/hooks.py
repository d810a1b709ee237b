"""MkDocs hooks: the benchmarks' plots and tables go into the site from where the benchmarks
write them, so nothing under ``benchmarks/results/`` is copied into ``docs/`` in git.

- Plots: ``benchmarks/results/*.png`` are served as ``results/<name>.png``; a page links
  them as ``../results/detection.png`` (from a page one folder down) and
  ``mkdocs build --strict`` checks the link like any other.
- Tables: a line ``<!-- include: benchmarks/results/detection.md -->`` in a page is replaced
  by that file as the benchmark wrote it, indented as the line is (so it can sit in a
  collapsible block), its headings turned into bold lines (they would otherwise enter the
  page's table of contents). A file that does not exist stops the build.
- Docstrings: the Sphinx roles they use (``:func:`~labelaudit.scan` ``) become code spans
  (`` `scan` ``) in the API reference, through :class:`SphinxRoles`, a Griffe extension
  that mkdocs.yml names for mkdocstrings.
"""

from __future__ import annotations

import re
from pathlib import Path

from griffe import Extension, Object
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
INCLUDE = re.compile(r"^(?P<indent>[ \t]*)<!-- include: (?P<path>\S+) -->[ \t]*$", re.M)
HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>.+?)[ \t]*#*[ \t]*$")
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const):`(?P<short>~?)"
                  r"(?P<name>[^`]+)`")


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    for plot in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"results/{plot.name}", abs_src_path=str(plot)))
    return files


def _included(match: re.Match[str], page: Page) -> str:
    path = (ROOT / match["path"]).resolve()
    if not path.is_relative_to(RESULTS) or path.suffix != ".md" or not path.is_file():
        raise PluginError(f"{page.file.src_path}: cannot include {match['path']}: "
                          "a .md file of benchmarks/results/ that exists is needed")
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        heading = HEADING.match(line)
        line = f"**{heading['title']}**" if heading else line
        lines.append(match["indent"] + line if line.strip() else "")
    return "\n".join(lines)


def on_page_markdown(markdown: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    return INCLUDE.sub(lambda match: _included(match, page), markdown)


class SphinxRoles(Extension):
    """``:func:`~labelaudit.scan` `` in a docstring is `` `scan` `` on the page (Markdown
    has no roles); without ``~`` the name stays whole."""

    def on_object(self, *, obj: Object, **kwargs: object) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(self._code, obj.docstring.value)

    def on_package(self, *, pkg: Object, **kwargs: object) -> None:
        self.on_object(obj=pkg)  # a package is not a member of anything: no on_object

    @staticmethod
    def _code(match: re.Match[str]) -> str:
        name = match["name"].rpartition(".")[2] if match["short"] else match["name"]
        return f"`{name}`"

