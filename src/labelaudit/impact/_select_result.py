"""The result of :func:`labelaudit.impact.select_models`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.impact._select_sweep import ModelConfig
from labelaudit.io import ResultFiles

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPLITS", "VERSIONS", "SelectionResult"]

#: The validation (and test) versions, in the order of the accuracy columns.
VERSIONS: tuple[str, ...] = ("clean", "noisy", "corrected")
#: The six splits every configuration is scored on.
SPLITS: tuple[str, ...] = tuple(f"{s}_{v}" for s in ("val", "test") for v in VERSIONS)


@dataclass(frozen=True)
class SelectionResult(ResultFiles):
    """What noisy and corrected validation data do to model selection (Chong, Hong &
    Manning 2022, Table 4).

    Attributes
    ----------
    configs : tuple of ModelConfig
        The sweep, shape (n_configs,).
    accuracy : ndarray of shape (n_seeds, n_configs, 6)
        Accuracy of every configuration on ``SPLITS``: validation clean, noisy,
        corrected, then test clean, noisy, corrected.
    seeds : ndarray of int, shape (n_seeds,)
        The repeats, 0 to n_seeds - 1 (each with its own noise and scan folds, drawn
        from ``random_state``).
    noise : str
        ``method:rate`` (or ``"given"`` for noisy labels read from the tables).
    n_items : ndarray of int, shape (3,)
        Sizes of the train, validation and test splits.
    n_noisy, n_relabelled, n_fixed : ndarray of int, shape (n_seeds, 3)
        Per repeat and split (train, validation, test): labels noised, labels the scan
        relabelled (train is never corrected: 0), and relabelled labels that are now
        the clean one.
    seconds : float
        Wall time.
    """

    configs: tuple[ModelConfig, ...]
    accuracy: np.ndarray
    seeds: np.ndarray
    noise: str
    n_items: np.ndarray
    n_noisy: np.ndarray
    n_relabelled: np.ndarray
    n_fixed: np.ndarray
    seconds: float

    def selected(self, validation: str) -> np.ndarray:
        """Index of the configuration each repeat selects on ``validation`` (one of
        clean, noisy, corrected): highest accuracy, the first in sweep order on a tie;
        shape (n_seeds,)."""
        return self.accuracy[:, :, VERSIONS.index(validation)].argmax(axis=1)

    def to_frame(self) -> pd.DataFrame:
        """One row per repeat and validation version: ``seed, validation, config,
        val_accuracy, true_accuracy, measurable_accuracy, rank`` (rank 1 = the sweep's
        best true accuracy; ties share the better rank)."""
        import pandas as pd
        rows = []
        for v, version in enumerate(VERSIONS):
            chosen = self.selected(version)
            for s, seed in enumerate(self.seeds.tolist()):
                acc = self.accuracy[s]
                true = acc[chosen[s], 3]
                rows.append({
                    "seed": seed, "validation": version, "config": self.configs[chosen[s]].name,
                    "val_accuracy": acc[chosen[s], v], "true_accuracy": true,
                    "measurable_accuracy": acc[chosen[s], 3 + v],
                    "rank": int(1 + (acc[:, 3] > true).sum()),
                })
        return pd.DataFrame(rows)

    def summary_frame(self) -> pd.DataFrame:
        """Mean and standard deviation over repeats of the true and measurable accuracy
        and the rank of the selected model, one row per validation version."""
        import pandas as pd
        frame = self.to_frame()
        grouped = frame.groupby("validation", sort=False)[
            ["true_accuracy", "measurable_accuracy", "rank"]]
        mean, std = grouped.mean(), grouped.std(ddof=0)
        out = pd.DataFrame({"validation": list(VERSIONS)})
        for column in ("true_accuracy", "measurable_accuracy", "rank"):
            out[f"{column}_mean"] = mean.loc[list(VERSIONS), column].to_numpy()
            out[f"{column}_std"] = std.loc[list(VERSIONS), column].to_numpy()
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready document: the options, the sweep, every accuracy, the selections
        and their summary (what ``labelaudit select --out x.json`` writes)."""
        summary = self.summary_frame().set_index("validation")
        return {
            "noise": self.noise,
            "seeds": self.seeds.tolist(),
            "n_items": dict(zip(("train", "val", "test"), self.n_items.tolist(), strict=True)),
            "configs": [c.to_dict() | {"name": c.name} for c in self.configs],
            "splits": list(SPLITS),
            "accuracy": np.round(self.accuracy, 6).tolist(),
            "labels": [
                {"seed": seed, **{split: {"n_noisy": int(self.n_noisy[s, j]),
                                          "n_relabelled": int(self.n_relabelled[s, j]),
                                          "n_fixed": int(self.n_fixed[s, j])}
                                  for j, split in enumerate(("train", "val", "test"))}}
                for s, seed in enumerate(self.seeds.tolist())],
            "selection": self.to_frame().to_dict(orient="records"),
            "summary": {v: {k: float(x) for k, x in summary.loc[v].items()} for v in VERSIONS},
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        """The seed's Table 4 for this sweep: per validation version, the true and
        measurable accuracy of the selected model and its rank, mean ± sd over repeats."""
        table = self.summary_frame()
        n_seeds, n_configs = self.accuracy.shape[:2]
        best = self.accuracy[:, :, 3].max(axis=1).mean()
        lines = [f"model selection under {self.noise} noise: {n_configs} configurations, "
                 f"{n_seeds} seed{'s' if n_seeds > 1 else ''}; best true accuracy in the "
                 f"sweep {best:.4f}",
                 f"{'validation':<11} {'true acc':>17} {'measurable acc':>17} {'rank':>13}"]
        for row in table.itertuples(index=False):
            lines.append(
                f"{row.validation:<11} {row.true_accuracy_mean:>8.4f} ± {row.true_accuracy_std:.4f}"
                f" {row.measurable_accuracy_mean:>8.4f} ± {row.measurable_accuracy_std:.4f}"
                f" {row.rank_mean:>6.1f} ± {row.rank_std:.1f}")
        val = self.n_noisy[:, 1].mean(), self.n_relabelled[:, 1].mean(), self.n_fixed[:, 1].mean()
        lines.append(f"validation: {val[0]:.0f} of {self.n_items[1]} labels noised; the scan "
                     f"relabelled {val[1]:.0f}, {val[2]:.0f} of them back to the clean label "
                     f"(mean over seeds); {self.seconds:.1f} s")
        return "\n".join(lines)
