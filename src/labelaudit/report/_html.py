"""How the report is drawn: HTML building blocks, the page around the sections, the figures.

Every dataset string goes through :func:`esc` (:func:`script_json` for the script's data).
The page loads nothing from outside, and its Content-Security-Policy allows no outside
source and runs only the page's own script (by its hash), so even a string that escaped
escaping could not run. Figures are inline SVG from a matplotlib ``Figure`` (no ``pyplot``
state): text stays SVG text in the page's font, mathtext is off (a ``$`` in a class name
stays a dollar), and ids are prefixed per figure so several SVGs share a page.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from labelaudit.evaluation import draw_precision_recall
from labelaudit.io import clean_label

# Characters that could close or confuse a <script> element, or that JavaScript strings
# (before ES2019) do not accept raw.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                   "\u2029": "\\u2029"}


class Html(str):
    """Text already HTML (built from escaped parts), which :func:`table` does not escape."""

    __slots__ = ()


def esc(value: object) -> str:
    """``value`` as text, HTML-escaped (quotes included, so it is safe in attributes).

    >>> esc("<script>alert('x')</script>"), esc(None)
    ('&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;', '')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


def script_json(data: object) -> str:
    """``data`` as JSON safe inside ``<script>``: ``<``, ``>``, ``&``, U+2028 and U+2029 escaped.

    >>> script_json({"text": "</script><b>&"})
    '{"text": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    for char, escaped in _SCRIPT_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def fmt_num(value: object, digits: int = 3) -> str:
    """A number for a person: thousands separated, ``digits`` significant, NaN as an en dash.

    >>> fmt_num(12345), fmt_num(0.123456), fmt_num(float("nan"))
    ('12,345', '0.123', '–')
    """
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or (hasattr(value, "dtype") and "int" in str(value.dtype)):
        return f"{int(value):,}"  # type: ignore[call-overload]
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return "–"
    return f"{number:.{digits}g}"


def fmt_count(n: int) -> str:
    """``n`` with thousands separators."""
    return f"{int(n):,}"


def fmt_share(part: float, whole: float) -> str:
    """``part`` of ``whole`` as a percentage (one decimal), an en dash for an empty whole.

    >>> fmt_share(1, 3), fmt_share(0, 0)
    ('33.3%', '–')
    """
    return f"{100 * part / whole:.1f}%" if whole else "–"


def cell(content: str, *, sort: object = None, cls: str | None = None, raw: bool = False) -> Html:
    """One ``<td>``: ``content`` escaped unless ``raw``, with an optional sort key and class."""
    attrs = ""
    if sort is not None:
        attrs += f' data-v="{esc(sort)}"'
    if cls:
        attrs += f' class="{esc(cls)}"'
    return Html(f"<td{attrs}>{content if raw else esc(content)}</td>")


def table(headers: Sequence[str], rows: Iterable[Sequence[object] | Html], *,
          cls: str = "grid", sortable: Sequence[str] | None = None,
          numeric: Sequence[bool] | None = None, table_id: str | None = None) -> str:
    """A ``<table>``, escaped but for :class:`Html` cells (a ``<td>``) and rows (a ``<tr>``);
    ``sortable``: each header's sort kind (``num``, ``text``, or empty); ``numeric`` aligns right.

    >>> table(["a"], [["<x>"]])[-50:]
    '<tbody><tr><td>&lt;x&gt;</td></tr></tbody></table>'
    """
    numeric = numeric or [False] * len(headers)
    heads = "".join("<th" + (f' data-sort="{kind}" title="click to sort"' if kind else "")
                    + (' class="num"' if right else "") + f">{esc(name)}</th>"
                    for name, kind, right in zip(headers, sortable or [""] * len(headers),
                                                 numeric, strict=True))
    body: list[str] = []
    for row in rows:
        if isinstance(row, Html):
            body.append(row)
            continue
        cells = [str(value) if isinstance(value, Html) else
                 cell(str(fmt_num(value) if isinstance(value, (int, float)) else value),
                      cls="num" if numeric[i] else None) for i, value in enumerate(row)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return (f'<table class="{esc(cls)}"{ident}><thead><tr>{heads}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _term_pattern(term: str) -> str | None:
    """A term as a whole-word pattern, its words apart by any run of non-word characters (as
    a word tokeniser split them: ``didn t`` finds "didn't"); None without a word character."""
    words = re.findall(r"\w+", term)
    return r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)" if words else None


def highlight(text: str, terms: Sequence[str]) -> str:
    """``text`` escaped, each whole-word, case-insensitive occurrence of a term (a phrase for
    a multi-word term, the longest first) in ``<mark class="ev">``: nothing of the text or the
    terms reaches the page unescaped.

    >>> print(highlight("a Waste of  time <b>! wasteful", ["waste of time", "waste", "b"]))
    a <mark class="ev">Waste of  time</mark> &lt;<mark class="ev">b</mark>&gt;! wasteful
    """
    patterns = sorted({p for t in terms if (p := _term_pattern(str(t)))}, key=len, reverse=True)
    if not patterns or not text:
        return esc(text)
    parts, at = [], 0
    for match in re.finditer("|".join(patterns), text, flags=re.IGNORECASE):
        parts.append(f'{esc(text[at:match.start()])}<mark class="ev">{esc(match[0])}</mark>')
        at = match.end()
    return "".join(parts) + esc(text[at:])


def details_text(text: object, *, preview: int = 160, limit: int = 4000,
                 marks: Sequence[str] = ()) -> str:
    """A long text folded: ``preview`` characters shown, up to ``limit`` behind ``<details>``;
    the terms ``marks`` highlighted (:func:`highlight`).

    >>> details_text("short"), details_text("x" * 10, preview=4).startswith("<details")
    ('<span class="txt">short</span>', True)
    >>> details_text("so <i>bad</i>", marks=["bad"])
    '<span class="txt">so &lt;i&gt;<mark class="ev">bad</mark>&lt;/i&gt;</span>'
    """
    value = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    flat = " ".join(value.split())
    if len(value) <= preview and flat == value:
        return f'<span class="txt">{highlight(value, marks)}</span>'
    shown = value[:limit]
    more = (f'<span class="muted"> … ({len(value) - limit:,} more characters not shown)</span>'
            if len(value) > limit else "")
    cut = "…" if len(flat) > preview else ""
    return (f'<details class="txt"><summary>{highlight(flat[:preview], marks)}{cut}</summary>'
            f'<div class="full">{highlight(shown, marks)}{more}</div></details>')


def label_text(value: object) -> str:
    """A label or id as the user wrote it (``3``, not ``3.0`` or ``np.int64(3)``)."""
    return str(clean_label(value))


def fact(key: str, value: str, sub: str = "") -> str:
    """One box of the summary grid (``value`` and ``sub`` are HTML, ``key`` text)."""
    return (f'<div class="fact"><div class="k">{esc(key)}</div><div class="v">{value}</div>'
            f'<div class="s">{sub}</div></div>')


def filters(what: str, counts: Mapping[str, int], *, every: str, placeholder: str) -> str:
    """The class (or kind) filter and search box of the table of top issues."""
    options = "".join(f'<option value="{esc(k)}">{esc(k)} ({n:,})</option>'
                      for k, n in sorted(counts.items()))
    return ('<div class="filters" data-for="issues-table"><label>' + esc(what)
            + f' <select id="class-filter"><option value="">{every}</option>{options}</select>'
            '</label><label>search <input type="search" id="text-filter" '
            f'placeholder="{placeholder}"></label><span class="count muted"></span></div>')


def filter_row(groups: Sequence[str], cells: Iterable[str]) -> Html:
    """A ``<tr>`` of top issues, kept by the filter when it chooses one of ``groups``."""
    return Html(f'<tr data-f="{esc(json.dumps(list(groups)))}">' + "".join(cells) + "</tr>")


def issues_table(headers: Sequence[str], kinds: Sequence[str], rows: Iterable[Html]) -> str:
    """The table of top issues; ``kinds``: each column's sort kind (``num`` right-aligned)."""
    return table(headers, rows, cls="grid sortable", sortable=kinds,
                 numeric=[k == "num" for k in kinds], table_id="issues-table")


_CSS = """
:root{--fg:#1d2430;--muted:#5b6575;--line:#d8dde6;--bg:#fff;--soft:#f4f6f9;--accent:#2b59c3;
--bad:#b42318;--warn-bg:#fff4d6;--warn-line:#e3b341}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
color:var(--fg);background:var(--bg)}
header.top{padding:18px 28px 8px;border-bottom:1px solid var(--line);background:var(--soft)}
header.top h1{margin:0 0 4px;font-size:22px}
nav.toc{padding:6px 28px;border-bottom:1px solid var(--line);position:sticky;top:0;
background:var(--bg);z-index:2;font-size:13px}
nav.toc a{margin-right:14px;color:var(--accent);text-decoration:none}
main{padding:8px 28px 40px;max-width:1400px}
section{margin:22px 0 30px}
h2{font-size:18px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.muted{color:var(--muted)}
.note{color:var(--muted);font-size:12.5px;max-width:900px}
.banner{padding:10px 14px;border:1px solid var(--warn-line);background:var(--warn-bg);
border-radius:6px;margin:12px 0;max-width:1000px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:10px;
margin:12px 0;max-width:1200px}
.fact{border:1px solid var(--line);border-radius:6px;padding:8px 12px;background:var(--bg)}
.fact .k{font-size:12px;color:var(--muted)}
.fact .v{font-size:19px;font-weight:600}
.fact .s{font-size:12px;color:var(--muted)}
table.grid{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
table.grid th,table.grid td{border-bottom:1px solid var(--line);padding:4px 8px;
text-align:left;vertical-align:top}
table.grid th{background:var(--soft);position:sticky;top:0;z-index:1;white-space:nowrap}
table.grid th[data-sort]{cursor:pointer;user-select:none}
table.grid th[data-sort]:after{content:" \\2195";color:#9aa3b2;font-size:11px}
table.grid th[aria-sort=ascending]:after{content:" \\25B2";color:var(--fg)}
table.grid th[aria-sort=descending]:after{content:" \\25BC";color:var(--fg)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{max-height:520px;overflow:auto;border:1px solid var(--line);border-radius:4px;
display:inline-block;max-width:100%}
.scroll table.grid{margin:0}
.plot{overflow:auto;max-width:100%}
.plot svg{height:auto;max-width:100%}
.plot.wide svg{max-width:none}
.plots{display:flex;flex-wrap:wrap;gap:20px;align-items:flex-start}
details.txt summary{cursor:pointer;color:var(--fg);white-space:normal}
details.txt .full{white-space:pre-wrap;margin-top:4px;max-height:380px;overflow:auto;
background:var(--soft);padding:6px;border-radius:4px}
.txt{white-space:pre-wrap;word-break:break-word}
td.text{max-width:620px;min-width:260px}
td.sentence{max-width:none;min-width:420px}
.pair{display:block;color:var(--muted);font-size:12px;margin-top:2px}
.flag{color:var(--bad);font-weight:600}
.tag{display:inline-block;padding:0 6px;border-radius:8px;font-size:11.5px;margin:1px 2px;
background:#eef1f6;border:1px solid var(--line);white-space:nowrap}
.tag.dup{background:#e8f0ff;border-color:#9db7ee}
.tag.out{background:#fdecea;border-color:#f0a9a2}
.tag.kind{background:#f2ecfd;border-color:#bfa8ea}
.filters{display:flex;gap:10px;align-items:center;margin:8px 0;flex-wrap:wrap}
.filters select,.filters input{font:inherit;padding:3px 6px}
.sent{line-height:2.0}
.sent .row{display:block}
.sent .lab{display:inline-block;width:74px;color:var(--muted);font-size:12px}
mark.ent{padding:1px 3px;border-radius:3px;background:#dfe9ff}
mark.ent sub{font-size:10px;font-weight:700;margin-left:2px;color:#2a3a66}
mark.ent.e1{background:#ffe1c2}mark.ent.e2{background:#d5f0d8}mark.ent.e3{background:#f5d6ee}
mark.ent.e4{background:#fff0a8}mark.ent.e5{background:#d3f1f5}mark.ent.e6{background:#e6dcff}
mark.ent.e7{background:#eadfd2}
mark.ent.issue{outline:2px solid var(--bad)}
span.tok.issue{text-decoration:underline wavy var(--bad)}
mark.ev{background:#ffe08a;padding:0 1px;border-radius:2px;color:inherit}
td.why{min-width:220px;max-width:380px;font-size:12px}
.evidence .ev-words{margin-bottom:3px}
.evidence .lab{font-weight:600}
.evidence .ev-like{color:var(--muted)}
.evidence ol.ev-nb{margin:0 0 3px;padding-left:18px}
.evidence ol.ev-nb .snip{color:var(--muted)}
.evidence .ev-dup{color:var(--bad);font-weight:700;border:2px solid var(--bad);
border-radius:4px;padding:1px 5px;margin:3px 0;background:#fdecea}
.evidence .ev-part{color:var(--muted)}
.bar{display:inline-block;height:10px;background:var(--accent);vertical-align:middle}
footer{color:var(--muted);font-size:12px;padding:10px 28px 30px}
"""

# Sorting of every table with class "sortable" (by a cell's data-v, else its text), and
# filtering: a <div class="filters" data-for="TABLE_ID"> holds the table's <select> (a row
# stays when its data-f, a JSON list, holds the value chosen), its search box and its count.
_JS = r"""
(function () {
  "use strict";
  var meta = {};
  var node = document.getElementById("report-data");
  if (node) { meta = JSON.parse(node.textContent); }
  document.documentElement.setAttribute("data-items", String(meta.n_items || 0));
  function key(td, kind) {
    var raw = td.hasAttribute("data-v") ? td.getAttribute("data-v") : td.textContent;
    if (kind === "num") { var x = parseFloat(raw); return isNaN(x) ? Infinity : x; }
    return raw.toLowerCase();
  }
  function setupSorting(table) {
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var body = table.tBodies[0];
    heads.forEach(function (th, column) {
      var kind = th.getAttribute("data-sort");
      if (!kind) { return; }
      th.tabIndex = 0;
      function sort() {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        var keyed = rows.map(function (r, i) { return [key(r.cells[column], kind), i, r]; });
        keyed.sort(function (a, b) {
          if (a[0] < b[0]) { return ascending ? -1 : 1; }
          if (a[0] > b[0]) { return ascending ? 1 : -1; }
          return a[1] - b[1];
        });
        var frag = document.createDocumentFragment();
        keyed.forEach(function (k) { frag.appendChild(k[2]); });
        body.appendChild(frag);
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
  }
  function setupFilters(box) {
    var table = document.getElementById(box.getAttribute("data-for"));
    if (!table) { return; }
    var select = box.querySelector("select");
    var search = box.querySelector("input");
    var count = box.querySelector(".count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
    var groups = rows.map(function (r) { return JSON.parse(r.getAttribute("data-f") || "[]"); });
    function apply() {
      var wanted = select ? select.value : "";
      var query = search ? search.value.trim().toLowerCase() : "";
      var shown = 0;
      rows.forEach(function (r, i) {
        var ok = (!wanted || groups[i].indexOf(wanted) >= 0) &&
                 (!query || texts[i].indexOf(query) >= 0);
        r.hidden = !ok;
        if (ok) { shown += 1; }
      });
      if (count) { count.textContent = shown + " of " + rows.length + " rows shown"; }
    }
    if (select) { select.addEventListener("change", apply); }
    if (search) { search.addEventListener("input", apply); }
    apply();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setupSorting);
  Array.prototype.forEach.call(document.querySelectorAll("div.filters[data-for]"), setupFilters);
  document.documentElement.setAttribute("data-ready", "1");
})();
"""


def page(*, title: str, subtitle: str, sections: Sequence[tuple[str, str, str]],
         meta: dict, footer: str) -> str:
    """The whole document: ``sections`` as ``(anchor, heading, body)``, ``meta`` for the script."""
    digest = base64.b64encode(hashlib.sha256(_JS.encode("utf-8")).digest()).decode("ascii")
    csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'")
    toc = "".join(f'<a href="#{esc(anchor)}">{esc(heading)}</a>' for anchor, heading, _ in sections)
    body = "\n".join(f'<section id="{esc(anchor)}"><h2>{esc(heading)}</h2>\n{content}\n</section>'
                     for anchor, heading, content in sections)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="labelaudit">\n'
        f"<title>{esc(title)}</title>\n<style>{_CSS}</style></head>\n<body>\n"
        f'<header class="top"><h1>{esc(title)}</h1><div class="muted">{subtitle}</div></header>\n'
        f'<nav class="toc">{toc}</nav>\n<main>\n{body}\n</main>\n'
        f"<footer>{footer}</footer>\n"
        f'<script type="application/json" id="report-data">{script_json(meta)}</script>\n'
        f"<script>{_JS}</script>\n</body></html>\n")


_RC: dict[Any, Any] = {
    "svg.fonttype": "none", "svg.hashsalt": "labelaudit", "text.parse_math": False,
    "font.size": 9.0, "axes.titlesize": 10.0, "axes.spines.top": False,
    "axes.spines.right": False}
_HEADER = re.compile(r"^.*?(?=<svg)", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')
_FLAGGED, _OTHER, _ACCENT = "#c0392b", "#9aa7bd", "#2b59c3"


@contextmanager
def _axes(width: float, height: float) -> Iterator[Any]:
    """The one axes of a new figure, in the report's style until :func:`to_svg` is done."""
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with rc_context(_RC), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing glyphs of exotic class names, layout notes
        figure = Figure(figsize=(width, height), dpi=96)
        FigureCanvasAgg(figure)
        yield figure.add_subplot(1, 1, 1)


def to_svg(figure: Any, prefix: str) -> str:
    """The figure as a bare ``<svg>`` element, every id and reference prefixed with ``prefix``."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = _METADATA.sub("", _HEADER.sub("", buffer.getvalue(), count=1))
    text = _ID.sub(lambda m: f'id="{prefix}-{m[1]}"', text)
    return _REF.sub(lambda m: f"{m[1]}{prefix}-{m[2]}", text).strip()


def short_name(value: object, limit: int = 28) -> str:
    """A class name cut to ``limit`` characters for an axis.

    >>> short_name("comp.os.ms-windows.misc", 12)
    'comp.os.ms-…'
    """
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def probability_histogram_svg(edges: np.ndarray, flagged: np.ndarray, other: np.ndarray, *,
                              threshold: float | None = None, prefix: str = "hist") -> str:
    """Stacked bars of the given label's probability: flagged items and the others."""
    with _axes(6.4, 3.3) as axes:
        widths = np.diff(edges)
        axes.bar(edges[:-1], other, width=widths, align="edge", color=_OTHER,
                 edgecolor="white", linewidth=0.5, label="not flagged")
        axes.bar(edges[:-1], flagged, width=widths, align="edge", bottom=other,
                 color=_FLAGGED, edgecolor="white", linewidth=0.5, label="flagged")
        if threshold is not None:
            axes.axvline(threshold, color="black", linestyle="--", linewidth=1,
                         label=f"threshold {threshold:g}")
        axes.set_xlim(0.0, 1.0)
        axes.set_xlabel("probability of the given label (out of sample)")
        axes.set_ylabel("items")
        totals = other + flagged
        if totals.any() and totals.max() > 20 * max(float(np.median(totals[totals > 0])), 1.0):
            from matplotlib.ticker import FuncFormatter

            axes.set_yscale("symlog", linthresh=1.0)
            # mathtext is off (class names may hold "$"): plain tick labels, not 10^k
            axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
            axes.set_ylabel("items (log scale above 1)")
        axes.legend(loc="upper left", fontsize=8, frameon=False)
        return to_svg(axes.figure, prefix)


def confusion_heatmap(matrix: np.ndarray, names: Sequence[object], *,
                      prefix: str = "heat") -> str:
    """Heat map of given (rows) against suggested labels; counts shown up to 30 classes."""
    n = len(names)
    size = min(3.0 + 0.26 * n, 22.0)
    with _axes(size + 1.2, size) as axes:
        counts = np.asarray(matrix, dtype=float)
        shown = np.ma.masked_where(counts == 0, counts)
        mesh = axes.pcolormesh(shown, cmap="Reds", vmin=0, vmax=max(counts.max(), 1),
                               edgecolors="#eeeeee", linewidth=0.3)
        axes.set_facecolor("white")
        axes.set_xlim(0, n)
        axes.set_ylim(n, 0)
        ticks = np.arange(n) + 0.5
        labels = [short_name(x) for x in names]
        upright = max((len(x) for x in labels), default=0) <= 3
        axes.set_xticks(ticks, labels, rotation=0 if upright else 90,
                        fontsize=8 if n <= 30 else 6.5)
        axes.set_yticks(ticks, labels, fontsize=8 if n <= 30 else 6.5)
        axes.set_xlabel("label the model prefers (suggested)")
        axes.set_ylabel("given label")
        axes.xaxis.set_label_position("top")
        axes.xaxis.tick_top()
        axes.tick_params(length=0)
        from matplotlib.patches import Rectangle

        for i in range(n):
            axes.add_patch(Rectangle((i, i), 1, 1, facecolor="#f0f0f0", edgecolor="none",
                                     hatch="///", linewidth=0))
        if n <= 30:
            top = max(counts.max(), 1)
            for i, j in zip(*np.nonzero(counts), strict=True):
                axes.text(j + 0.5, i + 0.5, f"{int(counts[i, j])}", ha="center", va="center",
                          fontsize=7, color="white" if counts[i, j] > 0.6 * top else "black")
        axes.figure.colorbar(mesh, ax=axes, fraction=0.035, pad=0.02, label="items")
        return to_svg(axes.figure, prefix)


def _thin(recall: np.ndarray, precision: np.ndarray, limit: int = 600
          ) -> tuple[np.ndarray, np.ndarray]:
    """About ``limit`` points of a curve: where recall changes, then evenly spaced; ends kept."""
    n = len(recall)
    if n <= limit:
        return recall, precision
    keep = np.zeros(n, dtype=bool)
    keep[[0, n - 1]] = True
    steps = np.flatnonzero(np.diff(recall) != 0)
    keep[steps] = True
    keep[np.minimum(steps + 1, n - 1)] = True
    index = np.flatnonzero(keep)
    if len(index) > limit:
        index = np.unique(np.r_[index[np.linspace(0, len(index) - 1, limit).astype(int)],
                                0, n - 1])
    else:
        index = np.unique(np.r_[index, np.linspace(0, n - 1, limit // 2).astype(int)])
    return recall[index], precision[index]


def pr_curves(curves: Mapping[str, Any], average_precision: Mapping[str, float], *,
              prefix: str = "pr") -> str:
    """Precision against recall per method (AP in the legend); dotted: a random ranking's."""
    with _axes(6.6, 4.6) as axes:
        order = sorted(curves, key=lambda m: -np.nan_to_num(average_precision.get(m, 0.0)))
        lines = []
        for method in order:
            curve = curves[method]
            recall, precision = _thin(np.asarray(curve.recall), np.asarray(curve.precision))
            lines.append((f"{method} (AP {average_precision.get(method, float('nan')):.3f})",
                          recall, precision,
                          curve.n_errors / curve.n_items if curve.n_items else float("nan")))
        draw_precision_recall(axes, lines, xlabel="recall (share of the known errors found)",
                              ylabel="precision (share of the top items that are errors)",
                              fontsize=7.5, linewidth=1.4)
        return to_svg(axes.figure, prefix)


def bar_chart(counts: Mapping[str, int], *, xlabel: str, prefix: str = "bars") -> str:
    """Horizontal bars, one per name, largest first."""
    names = sorted(counts, key=lambda k: -counts[k])
    with _axes(6.0, 0.9 + 0.32 * max(len(names), 1)) as axes:
        axes.barh(range(len(names)), [counts[k] for k in names], color=_ACCENT)
        axes.set_yticks(range(len(names)), [short_name(k, 36) for k in names])
        axes.invert_yaxis()
        for i, k in enumerate(names):
            axes.text(counts[k], i, f" {counts[k]:,}", va="center", fontsize=8)
        axes.set_xlabel(xlabel)
        return to_svg(axes.figure, prefix)


def share_histogram(groups: Mapping[str, np.ndarray], *, xlabel: str, bins: int = 10,
                    prefix: str = "share") -> str:
    """Overlaid step histograms of values in [0, 1], each group as a share of its items."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    with _axes(6.0, 3.2) as axes:
        colours = [_OTHER, _FLAGGED, _ACCENT, "#444444"]
        for (name, values), colour in zip(groups.items(), colours, strict=False):
            values = np.asarray(values, dtype=float)
            values = values[~np.isnan(values)]
            if not len(values):
                continue
            weights = np.full(len(values), 1.0 / len(values))
            axes.hist(values, bins=edges, weights=weights, histtype="step", linewidth=1.8,
                      color=colour, label=f"{name} (n={len(values):,})")
        axes.set_xlim(0.0, 1.0)
        axes.set_xlabel(xlabel)
        axes.set_ylabel("share of items")
        axes.legend(loc="upper left", fontsize=8, frameon=False)
        return to_svg(axes.figure, prefix)


def data_map(variability: np.ndarray, confidence: np.ndarray, flagged: np.ndarray, *,
             prefix: str = "datamap") -> str:
    """Swayamdipta et al.'s (2020) data map: variability against confidence, flagged in red."""
    flagged = np.asarray(flagged, dtype=bool)
    with _axes(6.4, 4.2) as axes:
        for mask, colour, name, size in ((~flagged, _OTHER, "not flagged", 7),
                                         (flagged, _FLAGGED, "flagged", 11)):
            axes.scatter(variability[mask], confidence[mask], s=size, c=colour,
                         alpha=0.6, linewidths=0, label=f"{name} ({int(mask.sum()):,})",
                         rasterized=False)
        axes.set_ylim(-0.02, 1.02)
        axes.set_xlim(left=0.0)
        axes.set_xlabel("variability (std of p(given label) across epochs)")
        axes.set_ylabel("confidence (mean p(given label))")
        axes.legend(loc="upper right", fontsize=8, frameon=False)
        return to_svg(axes.figure, prefix)
