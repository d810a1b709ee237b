"""Plot the precision-recall curves of several detectors in one figure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit.evaluation._ranking import PrecisionRecallCurve
from labelaudit.io import figure_path, save_figure

__all__ = ["draw_precision_recall", "plot_precision_recall"]


def draw_precision_recall(axes: Any, lines: Iterable[tuple[str, Any, Any, float]], *,
                          xlabel: str = "recall (share of errors found)",
                          ylabel: str = "precision (share of flagged that are errors)",
                          fontsize: Any = "small", linewidth: float = 1.5) -> None:
    """Draw ``(label, recall, precision, error rate)`` lines on matplotlib ``axes``, with
    a dotted line at each error rate (what a random ranking achieves), the unit square,
    a grid and a legend."""
    rates = set()
    for label, recall, precision, rate in lines:
        axes.plot(recall, precision, label=label, linewidth=linewidth)
        if rate == rate:  # not NaN
            rates.add(round(float(rate), 6))
    for rate in sorted(rates):
        axes.axhline(rate, color="grey", linestyle=":", linewidth=1)
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.02)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper right", fontsize=fontsize)



def plot_precision_recall(
    curves: Mapping[str, PrecisionRecallCurve],
    path: str | Path,
    *,
    title: str | None = None,
) -> Path:
    """Draw precision against recall for several detectors and save it as PNG or SVG.

    Each curve is drawn through its points (straight segments, the interpolation
    :func:`aupr_score` integrates) and labelled with its name and AUPR. The horizontal
    dotted line of each curve's error rate is what a random ranking achieves. The file
    is written atomically, its format chosen by the suffix.

    Parameters
    ----------
    curves : mapping of str to PrecisionRecallCurve
        Detector name to its curve, drawn in this order.
    path : str or Path
        Output file ending in ``.png`` or ``.svg``.
    title : str, optional

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from labelaudit.evaluation import precision_recall_curve
    >>> curve = precision_recall_curve([True, False, True, False], [0.1, 0.2, 0.3, 0.4])
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "pr.svg"
    >>> plot_precision_recall({"loss": curve}, out).read_text().startswith("<?xml")
    True
    """
    target, _ = figure_path(path)
    if not curves:
        raise InvalidParameterError("curves is empty: pass at least one named curve")
    for name, curve in curves.items():
        if not isinstance(curve, PrecisionRecallCurve):
            raise InvalidParameterError(
                f"curves[{name!r}] must be a PrecisionRecallCurve, got {type(curve).__name__}"
            )

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.0, 4.5), dpi=120)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    draw_precision_recall(axes, [(f"{name} (AUPR {curve.area():.3f})", curve.recall,
                                  curve.precision, curve.n_errors / curve.n_items)
                                 for name, curve in curves.items()])
    if title:
        axes.set_title(title)
    figure.tight_layout()
    return save_figure(figure, target)
