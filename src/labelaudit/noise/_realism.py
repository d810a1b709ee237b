"""How realistic is a noising? Compare the loss distributions of noised and clean items."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.detect import per_item_loss
from labelaudit.evaluation import loss_wasserstein_distance
from labelaudit.io import ResultFiles, atomic_path, prepare_text_dataset
from labelaudit.models import DEFAULT_SCORERS, cross_val_pred_probs

if TYPE_CHECKING:
    import pandas as pd


def _method_names(noise_method: object, n: int) -> np.ndarray:
    """Per-item method names, None for clean items (None, NaN, "", False)."""
    import pandas as pd
    raw = np.asarray(noise_method, dtype=object)
    if raw.shape != (n,):
        raise InvalidInputError(
            f"noise_method must have one entry per item ({n}); got shape {raw.shape}")
    out = np.full(n, None, dtype=object)
    for i, value in enumerate(raw.tolist()):
        if value is None or value is pd.NA or value is False:
            continue
        if isinstance(value, float) and np.isnan(value):
            continue
        if isinstance(value, (bool, np.bool_)):
            out[i] = "noisy" if value else None
            continue
        text = str(value).strip()
        out[i] = text or None
    return out


@dataclass(frozen=True)
class RealismResult(ResultFiles):
    """Out-of-sample ``losses`` of each item's (noisy) label, and the ``noise_method``
    of each item (None for clean items)."""

    losses: np.ndarray
    noise_method: np.ndarray

    @property
    def methods(self) -> list[str]:
        """The noise methods present, in order of first appearance."""
        import pandas as pd
        return [m for m in pd.unique(pd.Series(self.noise_method, dtype=object)).tolist()
                if m is not None]

    @property
    def is_clean(self) -> np.ndarray:
        return np.array([m is None for m in self.noise_method.tolist()], dtype=bool)

    def to_frame(self) -> pd.DataFrame:
        """One row per method: ``method, n_noisy, n_clean, wasserstein_distance,
        noisy_loss_mean, noisy_loss_median, clean_loss_mean, clean_loss_median``, most
        distinct (least realistic) first."""
        import pandas as pd

        clean = self.is_clean
        rows = []
        for method in self.methods:
            noisy = self.noise_method == method
            keep = noisy | clean
            rows.append({
                "method": method, "n_noisy": int(noisy.sum()), "n_clean": int(clean.sum()),
                "wasserstein_distance": loss_wasserstein_distance(self.losses[keep], noisy[keep]),
                "noisy_loss_mean": float(self.losses[noisy].mean()),
                "noisy_loss_median": float(np.median(self.losses[noisy])),
                "clean_loss_mean": float(self.losses[clean].mean()),
                "clean_loss_median": float(np.median(self.losses[clean]))})
        frame = pd.DataFrame(rows)
        return frame.sort_values("wasserstein_distance", ascending=False, kind="stable"
                                 ).reset_index(drop=True)


def noise_realism(labels: np.ndarray, pred_probs: np.ndarray, *,
                  noise_method: Sequence[object] | np.ndarray) -> RealismResult:
    """Losses of noised vs clean items, for the Wasserstein distance per noise method.

    Human-originated noise sits closer to clean items than synthetic noise (TweetNLP, table
    5: uniform 5.62 > class-based 5.23 > dissenting label 4.02 > dissenting worker 3.44 >
    crowd majority 2.33; real errors on IMDB: 2.67).

    Parameters
    ----------
    labels : ndarray of int, shape (n_samples,)
        The noisy labels the model was trained on, as class indices.
    pred_probs : ndarray of shape (n_samples, n_classes)
        Out-of-sample predicted probabilities.
    noise_method : array-like of shape (n_samples,)
        Method that noised each item; None, NaN, "" or False when clean (or booleans).

    Returns
    -------
    RealismResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 7 and appendix B.

    Examples
    --------
    >>> probs = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.2, 0.8], [0.6, 0.4]])
    >>> result = noise_realism(np.array([0, 0, 0, 0, 1]), probs,
    ...                        noise_method=[None, None, None, "uniform", "dissenting-label"])
    >>> result.to_frame()[["method", "n_noisy", "wasserstein_distance"]].round(3)
                 method  n_noisy  wasserstein_distance
    0           uniform        1                 1.381
    1  dissenting-label        1                 0.688
    """
    losses = per_item_loss(labels, pred_probs)
    methods = _method_names(noise_method, len(losses))
    clean = np.array([m is None for m in methods.tolist()])
    if clean.all():
        raise InvalidInputError("no item is marked as noised: there is nothing to compare")
    if not clean.any():
        raise InvalidInputError("every item is marked as noised: there are no clean items to "
                                "compare with")
    return RealismResult(losses=losses, noise_method=methods)


def _marks(frame: pd.DataFrame, noise_column: str | None) -> np.ndarray:
    """The noise method of each row; a boolean column names its noised items after itself."""
    column = noise_column or next(
        (c for c in ("noise_method", "is_noisy") if c in frame.columns), None)
    if column is None or column not in frame.columns:
        raise InvalidInputError(
            f"no noise column {column or 'noise_method or is_noisy'!r} in the table; name the "
            "column that marks noised items with noise_column=COLUMN", param="noise_column")
    marks = frame[column]
    if marks.dtype == bool or set(marks.dropna().unique().tolist()) <= {True, False}:
        flags = marks.fillna(False).astype(bool).tolist()
        return np.array([column if flag else None for flag in flags], dtype=object)
    return marks.to_numpy(dtype=object)


def measure_noise_realism(
    frame: pd.DataFrame, *, text: str = "text", label: str = "label", text_pair: str | None = None,
    id: str | None = None, noise_column: str | None = None, scorers: Sequence[str] | None = None,
    n_folds: int | None = None, random_state: int | None = 0, model: str | None = None,
    cache_dir: str | Path | None = None, progress: bool = False) -> RealismResult:
    """:func:`noise_realism` of a noised table, cross-fitting ``scorers`` (default: the scan's)
    as :func:`labelaudit.models.cross_val_pred_probs`; ``noise_column`` defaults to
    ``noise_method``, else ``is_noisy``."""
    methods = _marks(frame, noise_column)
    data = prepare_text_dataset(frame, text=text, label=label, text_pair=text_pair, id=id)
    pred_probs = cross_val_pred_probs(
        data, scorers=list(scorers if scorers is not None else DEFAULT_SCORERS),
        n_folds=n_folds, random_state=random_state,
        progress=progress, model=model, cache_dir=cache_dir)
    if data.labels is None:  # pragma: no cover - prepare_text_dataset was given a label
        raise InvalidInputError(f"no labels in column {label!r}")
    return noise_realism(data.labels, pred_probs, noise_method=methods)


def plot_loss_histograms(results: RealismResult | Sequence[RealismResult], path: str | Path,
                         *, bins: int = 30, title: str | None = None) -> Path:
    """Save one histogram panel per noise method: its loss densities against the clean
    items', with their Wasserstein distance (Chong, Hong & Manning 2022, figures 4 and 8)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [results] if isinstance(results, RealismResult) else list(results)
    panels = []
    for run in runs:
        table = run.to_frame().set_index("method")
        for method in run.methods:
            distance = float(table.loc[method, "wasserstein_distance"])
            panels.append((method, run.losses[run.noise_method == method],
                           run.losses[run.is_clean], distance))
    if not panels:
        raise InvalidInputError("nothing to plot: no noised items")
    panels.sort(key=lambda p: -p[3])
    top = max(float(np.max(np.concatenate([p[1], p[2]]))) for p in panels)
    edges = np.linspace(0.0, max(top, 1e-6), bins + 1)
    ncols = min(3, len(panels))
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.0 * nrows), squeeze=False,
                             sharex=True)
    for ax, (method, noisy, clean, distance) in zip(axes.flat, panels, strict=False):
        ax.hist(clean, bins=edges, density=True, color="0.6", alpha=0.6, label="clean")
        ax.hist(noisy, bins=edges, density=True, color="tab:red", alpha=0.6, label="noised")
        ax.set_title(f"{method}  (W = {distance:.2f}, n = {len(noisy)})", fontsize=9)
        ax.set_xlabel("out-of-sample loss")
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    with atomic_path(target) as tmp:
        fig.savefig(tmp, format=fmt, dpi=120)
    plt.close(fig)
    return target
