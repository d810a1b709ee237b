"""The page around the sections: one self-contained HTML document with inline CSS and JS.

Nothing is loaded from outside the file: no fonts, scripts, styles or images from a
network (plots are inline SVG). A Content-Security-Policy in the page allows no outside
source at all, and runs only the page's own script (by its SHA-256 hash), so even a
dataset string that escaped escaping could not run.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence

from labelaudit.report._html import esc, script_json

__all__ = ["page"]

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


def _script_hash(script: str) -> str:
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def page(*, title: str, subtitle: str, sections: Sequence[tuple[str, str, str]],
         meta: dict, footer: str) -> str:
    """The whole document: ``sections`` are ``(anchor, heading, html body)`` in order,
    ``meta`` the data handed to the script (as JSON safe inside ``<script>``)."""
    csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           f"script-src '{_script_hash(_JS)}'; base-uri 'none'; form-action 'none'")
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
        f"<script>{_JS}</script>\n</body></html>\n"
    )
