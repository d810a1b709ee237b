"""The report's figures, drawn with matplotlib as inline SVG.

Why matplotlib: it is already a dependency of labelaudit (the precision-recall plot of
``evaluate --plot``), it renders without a display through the Agg canvas, and its SVG
is plain markup that can be pasted into the page, so the report needs no JavaScript
plotting library, no CDN and no image files. Figures are built on
:class:`matplotlib.figure.Figure` directly (no ``pyplot`` global state), text is written
as SVG ``<text>`` (``svg.fonttype = none``: small, and drawn in the page's font), mathtext
is off so a ``$`` in a class name stays a dollar sign, and every element id is prefixed
per figure so several SVGs can share one page.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["bar_chart", "confusion_heatmap", "data_map", "pr_curves",
           "probability_histogram_svg", "share_histogram", "short_name", "to_svg"]

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
def _style() -> Iterator[None]:
    from matplotlib import rc_context

    with rc_context(_RC), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing glyphs of exotic class names, layout notes
        yield


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=96)
    FigureCanvasAgg(figure)
    return figure


def to_svg(figure: Any, prefix: str) -> str:
    """The figure as an ``<svg>`` element: no XML header, doctype or metadata, every id
    (and every reference to one) prefixed with ``prefix``."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = _METADATA.sub("", _HEADER.sub("", buffer.getvalue(), count=1))
    text = _ID.sub(lambda m: f'id="{prefix}-{m[1]}"', text)
    return _REF.sub(lambda m: f"{m[1]}{prefix}-{m[2]}", text).strip()


def short_name(value: object, limit: int = 28) -> str:
    """A class name cut to ``limit`` characters for an axis.

    Examples
    --------
    >>> short_name("comp.os.ms-windows.misc", 12)
    'comp.os.ms-…'
    """
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def probability_histogram_svg(edges: np.ndarray, flagged: np.ndarray, other: np.ndarray, *,
                              threshold: float | None = None, prefix: str = "hist") -> str:
    """Stacked bars of the given label's probability: flagged items and the others."""
    with _style():
        figure = _figure(6.4, 3.3)
        axes = figure.add_subplot(1, 1, 1)
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
        return to_svg(figure, prefix)


def confusion_heatmap(matrix: np.ndarray, names: Sequence[object], *,
                      prefix: str = "heat") -> str:
    """Heat map of a square count matrix (rows: given label, columns: suggested label);
    counts written in the cells while there are at most 30 classes."""
    n = len(names)
    size = min(3.0 + 0.26 * n, 22.0)
    with _style():
        figure = _figure(size + 1.2, size)
        axes = figure.add_subplot(1, 1, 1)
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
        for i in range(n):
            axes.add_patch(_diagonal_cell(i))
        if n <= 30:
            top = max(counts.max(), 1)
            for i, j in zip(*np.nonzero(counts), strict=True):
                axes.text(j + 0.5, i + 0.5, f"{int(counts[i, j])}", ha="center", va="center",
                          fontsize=7, color="white" if counts[i, j] > 0.6 * top else "black")
        figure.colorbar(mesh, ax=axes, fraction=0.035, pad=0.02, label="items")
        return to_svg(figure, prefix)


def _diagonal_cell(i: int) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((i, i), 1, 1, facecolor="#f0f0f0", edgecolor="none", hatch="///",
                     linewidth=0)


def _thin(recall: np.ndarray, precision: np.ndarray, limit: int = 600
          ) -> tuple[np.ndarray, np.ndarray]:
    """At most about ``limit`` points of a curve: every point where recall changes, then
    evenly spaced ones, with the ends kept."""
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
    """Precision against recall of each method, its average precision in the legend; the
    dotted line is the error rate, what a random ranking achieves."""
    with _style():
        figure = _figure(6.6, 4.6)
        axes = figure.add_subplot(1, 1, 1)
        from labelaudit.evaluation import draw_precision_recall

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
        return to_svg(figure, prefix)


def bar_chart(counts: Mapping[str, int], *, xlabel: str, prefix: str = "bars") -> str:
    """Horizontal bars, one per name, largest first."""
    names = sorted(counts, key=lambda k: -counts[k])
    with _style():
        figure = _figure(6.0, 0.9 + 0.32 * max(len(names), 1))
        axes = figure.add_subplot(1, 1, 1)
        axes.barh(range(len(names)), [counts[k] for k in names], color=_ACCENT)
        axes.set_yticks(range(len(names)), [short_name(k, 36) for k in names])
        axes.invert_yaxis()
        for i, k in enumerate(names):
            axes.text(counts[k], i, f" {counts[k]:,}", va="center", fontsize=8)
        axes.set_xlabel(xlabel)
        return to_svg(figure, prefix)


def share_histogram(groups: Mapping[str, np.ndarray], *, xlabel: str, bins: int = 10,
                    prefix: str = "share") -> str:
    """Overlaid step histograms of values in [0, 1], each group as a share of its items."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    with _style():
        figure = _figure(6.0, 3.2)
        axes = figure.add_subplot(1, 1, 1)
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
        return to_svg(figure, prefix)


def data_map(variability: np.ndarray, confidence: np.ndarray, flagged: np.ndarray, *,
             prefix: str = "datamap") -> str:
    """The data map of Swayamdipta et al. (2020): one point per item, variability across
    epochs against mean confidence in the given label, flagged items on top in red."""
    flagged = np.asarray(flagged, dtype=bool)
    with _style():
        figure = _figure(6.4, 4.2)
        axes = figure.add_subplot(1, 1, 1)
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
        return to_svg(figure, prefix)
