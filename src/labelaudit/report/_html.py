"""HTML building blocks of the report: escaping, JSON safe inside ``<script>``, tables.

Every string that comes from a dataset (texts, labels, ids, file names, column names) goes
through :func:`esc` before it reaches the page; data handed to the page's script is written
by :func:`script_json`, which escapes what could end the ``<script>`` element or break
a JavaScript string.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Sequence

__all__ = ["Html", "cell", "details_text", "esc", "fmt_count", "fmt_num", "fmt_share",
           "script_json", "table"]

# Characters that could close or confuse a <script> element, or that JavaScript strings
# (before ES2019) do not accept raw.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                   "\u2029": "\\u2029"}


class Html(str):
    """Text that is already HTML (built here from escaped parts): :func:`table` inserts it
    as is, where it escapes any other string."""

    __slots__ = ()


def esc(value: object) -> str:
    """``value`` as text, HTML-escaped (quotes included, so it is safe in attributes).

    Examples
    --------
    >>> esc("<script>alert('x')</script>")
    '&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;'
    >>> esc(None)
    ''
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return html.escape(str(value), quote=True)


def script_json(data: object) -> str:
    """``data`` as JSON that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` become ``\\u003c`` ``\\u003e`` ``\\u0026`` (so no ``</script>``
    or ``<!--`` can appear), U+2028 and U+2029 their escapes; ``JSON.parse`` reads the same
    values back.

    Examples
    --------
    >>> script_json({"text": "</script><b>&"})
    '{"text": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    for char, escaped in _SCRIPT_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def fmt_num(value: object, digits: int = 3) -> str:
    """A number for a person: integers with thousands separators, floats to ``digits``
    significant places, NaN and None as an en dash.

    Examples
    --------
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

    Examples
    --------
    >>> fmt_share(1, 3), fmt_share(0, 0)
    ('33.3%', '–')
    """
    return f"{100 * part / whole:.1f}%" if whole else "–"


def cell(content: str, *, sort: object = None, cls: str | None = None, raw: bool = False) -> Html:
    """One ``<td>``: ``content`` escaped (unless ``raw``: already HTML), with an optional
    sort key (``data-v``) and class."""
    attrs = ""
    if sort is not None:
        attrs += f' data-v="{esc(sort)}"'
    if cls:
        attrs += f' class="{esc(cls)}"'
    return Html(f"<td{attrs}>{content if raw else esc(content)}</td>")


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, cls: str = "grid",
          sortable: Sequence[str] | None = None, numeric: Sequence[bool] | None = None,
          table_id: str | None = None) -> str:
    """A ``<table>``: ``headers`` escaped, each row's cells escaped unless a cell is
    :class:`Html` (from :func:`cell`: a whole ``<td>``). ``sortable`` gives each header's
    sort kind (``num``, ``text``, or empty for none); ``numeric`` right-aligns columns.

    Examples
    --------
    >>> table(["a"], [["<x>"]])[-50:]
    '<tbody><tr><td>&lt;x&gt;</td></tr></tbody></table>'
    """
    numeric = numeric or [False] * len(headers)
    heads = []
    for i, name in enumerate(headers):
        kind = sortable[i] if sortable else ""
        attrs = f' data-sort="{kind}" title="click to sort"' if kind else ""
        if numeric[i]:
            attrs += ' class="num"'
        heads.append(f"<th{attrs}>{esc(name)}</th>")
    body = []
    for row in rows:
        cells = []
        for i, value in enumerate(row):
            text = str(value) if isinstance(value, Html) else None
            if text is None:
                shown = fmt_num(value) if isinstance(value, (int, float)) else value
                text = cell(str(shown), cls="num" if numeric[i] else None)
            cells.append(text)
        body.append("<tr>" + "".join(cells) + "</tr>")
    ident = f' id="{esc(table_id)}"' if table_id else ""
    return (f'<table class="{esc(cls)}"{ident}><thead><tr>{"".join(heads)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def details_text(text: object, *, preview: int = 160, limit: int = 4000) -> str:
    """A long text folded: its first ``preview`` characters on one line (white space
    collapsed), the whole text (up to ``limit`` characters) behind ``<details>``; escaped.

    Examples
    --------
    >>> details_text("short")
    '<span class="txt">short</span>'
    >>> details_text("x" * 10, preview=4).startswith("<details")
    True
    """
    value = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    flat = " ".join(value.split())
    if len(value) <= preview and flat == value:
        return f'<span class="txt">{esc(value)}</span>'
    shown = value[:limit]
    more = (f'<span class="muted"> … ({len(value) - limit:,} more characters not shown)</span>'
            if len(value) > limit else "")
    cut = "…" if len(flat) > preview else ""
    return (f'<details class="txt"><summary>{esc(flat[:preview])}{cut}</summary>'
            f'<div class="full">{esc(shown)}{more}</div></details>')
