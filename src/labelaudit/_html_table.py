"""How a result shows itself in a notebook: one HTML table (``_repr_html_``).

Every result object's ``_repr_html_`` calls :func:`result_html`: a header line (the class
and the first line of its ``summary()``, or a line of facts the result gives), then its table
(``to_frame()``), flagged rows first where it has a ``flagged`` column, at most ``max_rows``
rows with a note of how many more there are. Every value is escaped (:func:`html.escape`);
the fragment loads nothing and brings its few styles in a ``<style>`` scoped to its own
class, so it reads the same in Jupyter, VS Code and a built documentation page, light theme
or dark, and changes nothing around it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: Rows a notebook shows of a result's table by default.
MAX_ROWS = 50
#: Columns shown at most (the rest are named in the note under the table).
MAX_COLUMNS = 30
#: Characters of a cell shown; the whole value is in the cell's tooltip.
MAX_CHARS = 160
# The fragment's styles, scoped to its classes (and specific enough to win over a notebook's
# own table styles; a site theme's ``table:not([class])`` rules skip the classed table) so
# that nothing outside it changes; a flagged row's shade and the rules are translucent, so
# they read on a light or a dark background alike.
_SCOPE = "div.labelaudit-result table.labelaudit-table"
_STYLE = ("<style>"
          f"{_SCOPE}{{border-collapse:collapse;font-size:90%}}"
          f"{_SCOPE} td,{_SCOPE} th{{padding:2px 8px;vertical-align:top;"
          "border:none;border-bottom:1px solid rgba(128,128,128,0.25)}"
          f"{_SCOPE} thead th{{border-bottom:1px solid rgba(128,128,128,0.7)}}"
          f"{_SCOPE} td.t,{_SCOPE} th.t{{text-align:left}}"
          f"{_SCOPE} td.w{{text-align:left;min-width:18em;max-width:40em}}"
          f"{_SCOPE} td.n,{_SCOPE} th.n{{text-align:right;white-space:nowrap}}"
          f"{_SCOPE} tbody tr.f{{background:rgba(255,170,0,0.18)}}"
          "div.labelaudit-result .note{opacity:0.7;font-size:90%}</style>")
#: A text column whose longest shown value is longer than this is given room to wrap.
WIDE = 40


def _text(value: object, digits: int = 4) -> str:
    """A cell's value for a person: floats to ``digits`` significant figures, missing as ""."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (float, np.floating)):
        return "" if math.isnan(value) else f"{float(value):.{digits}g}"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value)


def _cell(value: object, kind: str, *, head: bool = False) -> str:
    """One cell of ``kind`` ``n`` (a number), ``t`` (short text) or ``w`` (long text)."""
    text = _text(value)
    shown = text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"
    tip = f' title="{html.escape(text)}"' if shown != text else ""
    tag = "th" if head else "td"
    kind = "t" if head and kind == "w" else kind
    return f'<{tag} class="{kind}"{tip}>{html.escape(shown)}</{tag}>'


def _kind(column: pd.Series) -> str:
    """A column's cells: ``n`` (numbers), ``w`` (text long enough to wrap) or ``t``."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_bool_dtype(
            column.dtype):
        return "n"
    return "w" if max((len(_text(v)) for v in column), default=0) > WIDE else "t"


def flagged_first(frame: pd.DataFrame, column: str = "flagged") -> pd.DataFrame:
    """``frame`` with its ``column``-true rows first, each part in its own order (stable);
    ``frame`` itself when it has no such column.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": [1, 2, 3], "flagged": [False, True, False]})
    >>> flagged_first(frame)["id"].tolist()
    [2, 1, 3]
    """
    if column not in frame.columns:
        return frame
    flags = frame[column].fillna(False).astype(bool).to_numpy()
    return frame.iloc[np.argsort(~flags, kind="stable")]


def frame_html(frame: pd.DataFrame, *, title: str = "", header: str = "",
               details: str = "", max_rows: int = MAX_ROWS,
               columns: Sequence[str] | None = None, flag_column: str = "flagged") -> str:
    """``frame`` as one escaped HTML table: ``title`` (bold) and ``header`` above it,
    ``details`` (preformatted text) folded under it, rows with ``flag_column`` true first
    and shaded, at most ``max_rows`` rows and :data:`MAX_COLUMNS` columns (``columns``, in
    that order, when given), with a note of what is left out. The index is shown unless it
    is the default 0..n-1.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"text": ["<script>x</script>", "ok", "fine"],
    ...                       "flagged": [False, True, False]})
    >>> page = frame_html(frame, title="Demo", max_rows=2)
    >>> "&lt;script&gt;" in page and "<script>" not in page, "1 more row" in page
    (True, True)
    >>> page.index("ok") < page.index("&lt;script&gt;"), "fine" in page
    (True, False)
    """
    import pandas as pd

    ordered = flagged_first(frame, flag_column)
    n_rows = len(ordered)
    names = [c for c in (ordered.columns if columns is None else columns)
             if c in ordered.columns][:MAX_COLUMNS]
    shown = ordered.iloc[:max(int(max_rows), 0)][names]
    flags = (shown[flag_column].fillna(False).astype(bool).to_numpy()
             if flag_column in shown.columns else np.zeros(len(shown), dtype=bool))
    index = not frame.index.equals(pd.RangeIndex(n_rows))
    kinds = [_kind(shown.iloc[:, j]) for j in range(shown.shape[1])]
    heads = ([_cell(shown.index.name or "", "t", head=True)] if index else []) + [
        _cell(name, kind, head=True) for name, kind in zip(shown.columns, kinds, strict=True)]
    rows = []
    for position, (key, values) in enumerate(zip(shown.index, shown.itertuples(index=False),
                                                 strict=True)):
        cells = ([_cell(key, "t", head=True)] if index else []) + [
            _cell(value, kind) for value, kind in zip(values, kinds, strict=True)]
        shade = ' class="f"' if flags[position] else ""
        rows.append(f"<tr{shade}>{''.join(cells)}</tr>")
    notes = []
    if n_rows > len(shown):
        more = n_rows - len(shown)
        notes.append(f"{more:,} more row{'s' if more != 1 else ''} not shown "
                     f"({n_rows:,} in all; to_frame() has every one)")
    left = [str(c) for c in ordered.columns if c not in shown.columns]
    if left:
        notes.append(f"{len(left)} more column{'s' if len(left) != 1 else ''} not shown: "
                     f"{', '.join(left)}")
    if flags.any():
        notes.append(f"shaded: {flag_column} rows, shown first")
    top = (f"<strong>{html.escape(title)}</strong>" if title else "") + (
        f"{': ' if title else ''}{html.escape(header)}" if header else "")
    parts = ['<div class="labelaudit-result">', _STYLE, f"<div>{top}</div>" if top else ""]
    if details:
        parts.append('<details><summary>summary</summary><pre style="margin:4px 0">'
                     f"{html.escape(details)}</pre></details>")
    parts.append('<div style="overflow-x:auto"><table class="labelaudit-table">'
                 f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{''.join(rows)}</tbody>"
                 "</table></div>")
    parts += [f'<div class="note">{html.escape(note)}</div>'
              for note in notes]
    parts.append("</div>")
    return "".join(parts)


def mapping_frame(values: Mapping[str, Any]) -> pd.DataFrame:
    """A one-row table of a result's scalar fields (lists and tables left out)."""
    import pandas as pd

    return pd.DataFrame([{k: v for k, v in values.items()
                          if v is None or isinstance(v, (str, int, float, bool, np.generic))}])


def result_html(result: Any, frame: pd.DataFrame | None = None, *, header: str | None = None,
                columns: Sequence[str] | None = None, max_rows: int = MAX_ROWS) -> str:
    """A result's ``_repr_html_``: its class name and ``header`` (default the first line of
    its ``summary()``, the rest folded below), then ``frame`` (default its ``file_frame()``,
    else ``to_frame()``, else the scalar fields of ``to_dict()``), its ``columns`` if given.

    Examples
    --------
    >>> import pandas as pd
    >>> class Found:
    ...     def to_frame(self):
    ...         return pd.DataFrame({"id": ["a", "b"], "flagged": [False, True]})
    ...     def summary(self):
    ...         return "2 items, 1 flagged"
    >>> page = result_html(Found())
    >>> page.index(">b<") < page.index(">a<"), "1 flagged" in page
    (True, True)
    """
    summary = result.summary() if callable(getattr(result, "summary", None)) else ""
    lines = str(summary).splitlines()
    details = "\n".join(lines) if len(lines) > 1 else ""
    if header is None:
        header = lines[0] if lines else ""
    if frame is None:
        frame = table_of(result)
    return frame_html(frame, title=type(result).__name__, header=header, details=details,
                      columns=columns, max_rows=max_rows)


def table_of(result: Any) -> pd.DataFrame:
    """The main table of a result: what its table files hold (``file_frame()``, by default
    ``to_frame()``), else ``to_dict()``'s scalar fields as one row."""
    if callable(getattr(result, "to_frame", None)):
        return result.file_frame() if callable(getattr(result, "file_frame", None)) \
            else result.to_frame()
    return mapping_frame(result.to_dict() if callable(getattr(result, "to_dict", None)) else {})
