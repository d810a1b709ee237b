"""Plot the precision-recall curves of several detectors in one figure."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from labelaudit._errors import InvalidParameterError
from labelaudit.io import figure_path, save_figure
from labelaudit.metrics._ranking import PrecisionRecallCurve

__all__ = ["plot_precision_recall"]



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
    >>> from labelaudit.metrics import precision_recall_curve
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
    rates = set()
    for name, curve in curves.items():
        axes.plot(curve.recall, curve.precision, label=f"{name} (AUPR {curve.area():.3f})",
                  linewidth=1.5)
        rates.add(round(curve.n_errors / curve.n_items, 6))
    for rate in sorted(rates):
        axes.axhline(rate, color="grey", linestyle=":", linewidth=1)
    axes.set_xlim(0.0, 1.0)
    axes.set_ylim(0.0, 1.02)
    axes.set_xlabel("recall (share of errors found)")
    axes.set_ylabel("precision (share of flagged that are errors)")
    if title:
        axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend(loc="upper right", fontsize="small")
    figure.tight_layout()
    return save_figure(figure, target)
