"""The result of :func:`labelaudit.impact.impact`: sizes, accuracies, rankings, curves,
flip points, and its table, JSON document, summary and figure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.io import METRIC_NAMES, ResultFiles, figure_path, json_number, save_figure

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ImpactCurve", "ImpactResult", "RankFlip"]


@dataclass(frozen=True)
class ImpactCurve:
    """A(x; M) for every model over the share ``x`` of benign items removed.

    Attributes
    ----------
    x : ndarray of shape (n_points,)
        Share of B removed, 0 to 1.
    noise_prevalence : ndarray of shape (n_points,)
        N(x) = |C| / (|C| + (1 - x)|B|).
    corrected : ndarray of shape (n_models, n_points)
        A(x; M) with the corrected labels of C.
    original : ndarray of shape (n_models, n_points)
        A(x; M) with the original (wrong) labels of C.
    """

    x: np.ndarray
    noise_prevalence: np.ndarray
    corrected: np.ndarray
    original: np.ndarray


@dataclass(frozen=True)
class RankFlip:
    """Two models whose accuracy order flips at ``x`` (noise prevalence ``N``):
    ``a`` is ahead below ``x``, ``b`` above it."""

    a: str
    b: str
    x: float
    N: float  # noqa: N815 - the seed's symbol


@dataclass(frozen=True)
class ImpactResult(ResultFiles):
    """What label errors in a test set do to each model's accuracy and to the ranking.

    ``metric`` names the score: ``accuracy`` for classification, ``entity_f1`` (micro F1
    over exact entity spans) or ``token_accuracy`` (tags without spans) for token data,
    whose sets are made of sentences (``unit``); the ``acc_*`` fields hold that score.
    Accuracies are on the pruned set P = B ∪ C: ``acc_original`` against the original
    labels (Ã), ``acc_corrected`` against the corrected ones (A*); ``acc_C`` is the
    corrected accuracy on C, ``acc_C_original`` the original one, ``acc_B`` the accuracy
    on B (the same under both). Ranks are 1 for the best model, ties sharing the best rank.
    ``flips`` are where the corrected curves A*(x) of two models cross as benign items are
    removed, ``flips_original`` where the original ones Ã(x) do.
    """

    models: tuple[str, ...]
    n_benign: int
    n_correctable: int
    n_unknown: int
    n_pending: int
    noise_prevalence: float
    noise_prevalence_ci: tuple[float, float]
    confidence_level: float
    acc_original: np.ndarray
    acc_corrected: np.ndarray
    acc_C: np.ndarray  # noqa: N815 - the seed's symbol
    acc_C_original: np.ndarray  # noqa: N815
    acc_B: np.ndarray  # noqa: N815
    rank_original: np.ndarray
    rank_corrected: np.ndarray
    swapped: tuple[tuple[str, str], ...]
    flips: tuple[RankFlip, ...]
    flips_original: tuple[RankFlip, ...]
    curve: ImpactCurve
    metric: str = "accuracy"
    unit: str = "items"

    @property
    def n_pruned(self) -> int:
        """|P| = |B| + |C|."""
        return self.n_benign + self.n_correctable

    @property
    def _metric_name(self) -> str:
        return METRIC_NAMES.get(self.metric, self.metric)

    def to_frame(self) -> pd.DataFrame:
        """One row per model: accuracies on P, on C and on B, and both ranks."""
        import pandas as pd
        return pd.DataFrame({
            "model": list(self.models),
            "acc_original": self.acc_original, "acc_corrected": self.acc_corrected,
            "acc_C": self.acc_C, "acc_C_original": self.acc_C_original, "acc_B": self.acc_B,
            "rank_original": self.rank_original.astype(int),
            "rank_corrected": self.rank_corrected.astype(int),
        })

    def to_dict(self) -> dict[str, Any]:
        """The ``--out`` JSON document (NaN written as null)."""
        models = {
            name: {"acc_original": json_number(self.acc_original[i]),
                   "acc_corrected": json_number(self.acc_corrected[i]),
                   "acc_C": json_number(self.acc_C[i]),
                   "acc_C_original": json_number(self.acc_C_original[i]),
                   "acc_B": json_number(self.acc_B[i]),
                   "rank_original": int(self.rank_original[i]),
                   "rank_corrected": int(self.rank_corrected[i])}
            for i, name in enumerate(self.models)}
        curve = self.curve
        return {
            "metric": self.metric,
            "unit": self.unit,
            "sizes": {"B": self.n_benign, "C": self.n_correctable, "U": self.n_unknown,
                      "P": self.n_pruned},
            "pending": self.n_pending,
            "N": self.noise_prevalence,
            "N_ci": [json_number(v) for v in self.noise_prevalence_ci],
            "confidence_level": self.confidence_level,
            "models": models,
            "swapped": [list(pair) for pair in self.swapped],
            "flips": [{"a": f.a, "b": f.b, "x": f.x, "N": f.N} for f in self.flips],
            "flips_original": [{"a": f.a, "b": f.b, "x": f.x, "N": f.N}
                               for f in self.flips_original],
            "curve": {
                "x": [float(v) for v in curve.x],
                "N": [json_number(v) for v in curve.noise_prevalence],
                "corrected": {name: [json_number(v) for v in curve.corrected[i]]
                              for i, name in enumerate(self.models)},
                "original": {name: [json_number(v) for v in curve.original[i]]
                             for i, name in enumerate(self.models)},
            },
        }

    def summary(self) -> str:
        """A few lines for a person: sizes, N with its interval, rank changes and flips."""
        low, high = self.noise_prevalence_ci
        lines = [
            f"B={self.n_benign} C={self.n_correctable} U={self.n_unknown} P={self.n_pruned}"
            + (f" {self.unit}" if self.unit != "items" else "")
            + (f" ({self.n_pending} pending counted in U)" if self.n_pending else ""),
            f"noise prevalence N = |C|/|P| = {self.noise_prevalence:.4f} "
            f"({self.confidence_level:.0%} Wilson interval {low:.4f}-{high:.4f})",
        ]
        if self.n_correctable == 0:
            lines.append("C is empty: no correctable errors, so N = 0 and no ranking flips")
        if self.metric != "accuracy":
            lines.append(f"score: {self._metric_name} (the acc_* columns)")
        order = np.argsort(self.rank_corrected, kind="stable")
        for i in order:
            lines.append(
                f"  {self.models[i]}: original {self.acc_original[i]:.4f} (rank "
                f"{self.rank_original[i]}) -> corrected {self.acc_corrected[i]:.4f} (rank "
                f"{self.rank_corrected[i]}); on C {self.acc_C[i]:.4f}")
        if self.swapped:
            lines.append("swapped on P: " + ", ".join(f"{a}/{b}" for a, b in self.swapped))
        else:
            lines.append("no pair of models swaps places on P")
        for kind, flips in (("corrected", self.flips), ("original", self.flips_original)):
            if flips:
                lines.append(f"{kind} order flips as a share x of B is removed:")
            elif self.n_correctable:
                lines.append(f"no pair's {kind} order flips as benign items are removed")
            for flip in flips:
                lines.append(f"  {flip.a} ahead of {flip.b} until x = {flip.x:.4f} "
                             f"(N = {flip.N:.4f})")
        return "\n".join(lines)

    def plot(self, path: str | Path, *, title: str | None = None) -> Path:
        """Draw A(x; M) per model, original (dashed) and corrected (solid), against the
        noise prevalence N(x) as the seed's figures do; PNG or SVG by the suffix."""
        target, _ = figure_path(path)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        figure = Figure(figsize=(9.0, 4.5), dpi=120)
        FigureCanvasAgg(figure)
        axes = figure.subplots(1, 2, sharey=True)
        curve = self.curve
        panels = ((curve.original, "original (Ã)"), (curve.corrected, "corrected (A*)"))
        for panel, (accuracy, name) in zip(axes, panels, strict=True):
            for i, model in enumerate(self.models):
                panel.plot(curve.noise_prevalence * 100, accuracy[i] * 100, label=model,
                           linewidth=1.5)
            panel.set_xlabel("noise prevalence N (%)")
            panel.set_title(f"{name} test {self._metric_name}")
            panel.grid(True, alpha=0.3)
        for flip in self.flips:
            axes[1].axvline(flip.N * 100, color="grey", linestyle=":", linewidth=1)
        axes[0].set_ylabel(f"{self._metric_name} (%)")
        axes[1].legend(loc="best", fontsize="small")
        if title:
            figure.suptitle(title)
        figure.tight_layout()
        return save_figure(figure, target)
