"""The result of :func:`labelaudit.consistency_check.consistency`: curves, verdicts, outputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.io import METRIC_NAMES, ResultFiles, figure_path, json_number, save_figure

if TYPE_CHECKING:
    import pandas as pd


def t_half_width(values: np.ndarray, confidence_level: float) -> np.ndarray:
    """Half the width of Student's t interval of the mean over the rows (repeats), per column.

    >>> round(float(t_half_width(np.array([1.0, 2.0, 3.0]), 0.95)), 4)
    2.4841
    """
    from scipy.stats import t

    n = len(values)
    return t.ppf(0.5 + confidence_level / 2, n - 1) * values.std(axis=0, ddof=1) / np.sqrt(n)


@dataclass(frozen=True)
class SchemeCurve:
    """One scheme's learning curve: score on the new test set after ``sizes`` items fed,
    per repeat (``scores``, rows), their mean and a t-band at the confidence level."""

    name: str
    sizes: np.ndarray
    scores: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def from_scores(cls, name: str, sizes: np.ndarray, scores: np.ndarray,
                    confidence_level: float) -> SchemeCurve:
        mean = scores.mean(axis=0)
        half = t_half_width(scores, confidence_level)
        return cls(name, sizes, scores, mean, mean - half, mean + half)


@dataclass(frozen=True)
class SchemeVerdict:
    """A scheme against its pure-training reference: ``gap`` is the mean signed area
    between the two curves per item fed (negative: less predictive of the training labels),
    with an interval over repeats; ``inconsistent`` when the interval is below 0."""

    scheme: str
    reference: str
    gap: float
    ci_low: float
    ci_high: float
    verdict: str
    gaps: tuple[float, ...]


@dataclass(frozen=True)
class ConsistencyResult(ResultFiles):
    """Learning curves of every scheme and the verdicts of the compared ones.

    ``sizes``: training and suspect set sizes, subset sizes x (y, w, z of Figure 2 with a
    correction). ``corrections`` compares each Mistake scheme with its Correct twin (same
    items and order, only labels differ): an interval below 0 says ``correction helps``,
    above 0 ``correction hurts``. ``n_fits`` counts models fitted (shared prefixes once).
    """

    kind: str
    metric: str
    scorer: str
    sizes: dict[str, int]
    repeats: int
    confidence_level: float
    curves: dict[str, SchemeCurve]
    verdicts: dict[str, SchemeVerdict]
    corrections: dict[str, SchemeVerdict]
    n_fits: int
    random_state: int
    interval: str = "t"
    max_repeats: int | None = None

    @property
    def verdict(self) -> str:
        """``inconsistent`` when the suspect set fed first (TestTrain) is less predictive
        than training data with an interval excluding 0, else ``consistent``."""
        return self.verdicts["TestTrain"].verdict

    def to_frame(self) -> pd.DataFrame:
        """One row per scheme and prefix size: mean score and band."""
        import pandas as pd
        rows = [{"scheme": c.name, "n_fed": int(n), "mean": m, "low": lo, "high": hi}
                for c in self.curves.values()
                for n, m, lo, hi in zip(c.sizes, c.mean, c.low, c.high, strict=True)]
        return pd.DataFrame(rows, columns=["scheme", "n_fed", "mean", "low", "high"])

    def file_frame(self) -> pd.DataFrame:
        """The table of a table file (:meth:`write`): :meth:`verdict_frame`."""
        return self.verdict_frame()

    def verdict_frame(self) -> pd.DataFrame:
        """One row per compared scheme: reference, gap, interval, verdict."""
        import pandas as pd
        return pd.DataFrame([{"scheme": v.scheme, "reference": v.reference, "gap": v.gap,
                              "ci_low": v.ci_low, "ci_high": v.ci_high,
                              "verdict": v.verdict} for v in self.verdicts.values()])

    def to_dict(self) -> dict[str, Any]:
        """The ``--out`` JSON document."""
        return {
            "kind": self.kind, "metric": self.metric, "scorer": self.scorer,
            "sizes": dict(self.sizes), "repeats": self.repeats,
            "max_repeats": self.max_repeats,
            "confidence_level": self.confidence_level, "seed": self.random_state,
            "n_fits": self.n_fits, "interval": self.interval, "verdict": self.verdict,
            "verdicts": {name: {"reference": v.reference, "gap": v.gap, "ci_low": v.ci_low,
                                "ci_high": v.ci_high, "verdict": v.verdict,
                                "gaps": list(v.gaps)}
                         for name, v in self.verdicts.items()},
            "corrections": {name: {"against": v.reference, "gap": v.gap,
                                   "ci_low": v.ci_low, "ci_high": v.ci_high,
                                   "verdict": v.verdict, "gaps": list(v.gaps)}
                            for name, v in self.corrections.items()},
            "curves": {name: {"n": [int(n) for n in c.sizes],
                              "mean": [json_number(v) for v in c.mean],
                              "low": [json_number(v) for v in c.low],
                              "high": [json_number(v) for v in c.high],
                              "scores": [[json_number(v) for v in row] for row in c.scores]}
                       for name, c in self.curves.items()},
        }

    def summary(self) -> str:
        """The verdict in one sentence with its numbers, then one line per scheme."""
        metric = METRIC_NAMES.get(self.metric, self.metric)
        level = f"{self.confidence_level:.0%}"
        first = self.verdicts["TestTrain"]
        if first.verdict == "inconsistent":
            head = (f"The suspect set is inconsistent with the training set: fed first "
                    f"(TestTrain) it scores {-first.gap:.4f} {metric} below pure training "
                    f"data per item fed ({level} {self.interval} interval {first.ci_low:.4f} to "
                    f"{first.ci_high:.4f}, {self.repeats} repeats).")
        else:
            head = (f"No inconsistency found: fed first (TestTrain) the suspect set scores "
                    f"{first.gap:+.4f} {metric} against pure training data per item fed "
                    f"({level} {self.interval} interval {first.ci_low:.4f} to "
                    f"{first.ci_high:.4f}, "
                    f"{self.repeats} repeats).")
        sizes = ", ".join(f"{k}={v}" for k, v in self.sizes.items())
        stopped = (f"; stopped after {self.repeats} of at most {self.max_repeats} repeats, "
                   "every verdict decided" if self.max_repeats and self.repeats
                   < self.max_repeats else "")
        lines = [head, f"sizes: {sizes}; {self.n_fits} fits of {self.scorer}{stopped}"]
        for v in self.verdicts.values():
            lines.append(f"  {v.scheme:<18} vs {v.reference:<14} gap {v.gap:+.4f} "
                         f"[{v.ci_low:+.4f}, {v.ci_high:+.4f}] {v.verdict}")
        if "z" in self.sizes:
            lines.append(self._correction_sentence())
            for v in self.corrections.values():
                lines.append(f"  {v.scheme:<18} vs {v.reference:<18} gap {v.gap:+.4f} "
                             f"[{v.ci_low:+.4f}, {v.ci_high:+.4f}] {v.verdict}")
        return "\n".join(lines)

    def _correction_sentence(self) -> str:
        bad = [n for n, v in self.verdicts.items()
               if n.startswith("Mistake") or n.endswith("Mistake")]
        good = [n for n, v in self.verdicts.items()
                if n.startswith("Correct") or n.endswith("Correct")]
        worse = sum(self.verdicts[n].verdict == "inconsistent" for n in bad)
        still = sum(self.verdicts[n].verdict == "inconsistent" for n in good)
        helps = sum(v.verdict == "correction helps" for v in self.corrections.values())
        return (f"the original labels of the changed items are inconsistent in {worse} of "
                f"{len(bad)} schemes, their corrected labels in {still} of {len(good)}; the "
                f"corrected labels are more predictive than the original ones in {helps} of "
                f"{len(self.corrections)} (same items, labels only):")

    def plot(self, path: str | Path, *, title: str | None = None) -> Path:
        """The seed's figures: identify curves, and with a correction the Mistake and
        Correct schemes with their references; mean lines with shaded bands."""
        target, _ = figure_path(path)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        panels = [("identify", ["PureTrain", "TrainTest", "TestTrain"])]
        if "z" in self.sizes:
            for m in ("Mistake", "Correct"):
                panels.append((m.lower(), [f"TestTrain{m}", f"PureTrain{m}", "PureTrainTrain",
                                           f"{m}TestTrain", f"{m}PureTrain",
                                           "TrainPureTrain"]))
        figure = Figure(figsize=(5.0 * len(panels), 4.2), dpi=120)
        FigureCanvasAgg(figure)
        axes = np.atleast_1d(figure.subplots(1, len(panels), sharey=True))
        for panel, (name, schemes) in zip(axes, panels, strict=True):
            for scheme in schemes:
                c = self.curves[scheme]
                style = ":" if scheme in ("PureTrainTrain", "TrainPureTrain") else "-"
                line = panel.plot(c.sizes, c.mean * 100, style, label=scheme, linewidth=1.5)[0]
                panel.fill_between(c.sizes, c.low * 100, c.high * 100,
                                   color=line.get_color(), alpha=0.15)
            panel.set_xlabel("items fed")
            panel.set_title(name)
            panel.grid(True, alpha=0.3)
            panel.legend(loc="lower right", fontsize="x-small")
        axes[0].set_ylabel(f"{METRIC_NAMES.get(self.metric, self.metric)} on the new test "
                           "set (%)")
        figure.suptitle(title or f"label consistency: {self.verdict}")
        figure.tight_layout()
        return save_figure(figure, target)
