"""``labelaudit.training.train_bench``: every method under every noise setting, on a clean test set
(the NoisywikiHow benchmark, Wu et al. 2023, its Table 8 layout)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int
from labelaudit.io import (
    ResultFiles,
    check_distinct_files,
    check_label_values,
    figure_path,
    prepare_text_dataset,
    save_figure,
    text_keys,
    warn_overlap,
)
from labelaudit.models import check_fits, run_fits
from labelaudit.noise import noisy_labels, parse_noise
from labelaudit.training._metrics import evaluate_model
from labelaudit.training._model import read_frame
from labelaudit.training._train import TrainOptions, check_methods, method_names, run_train

if TYPE_CHECKING:
    import pandas as pd


def parse_noise_grid(spec: str) -> tuple[str, tuple[float, ...]]:
    """``"method:r1,r2,..."`` as ``(method, (r1, r2, ...))``; rates in (0, 1)."""
    method, sep, rates = str(spec).strip().rpartition(":")
    if not sep or not rates:
        raise InvalidParameterError(
            f"noise must be METHOD:RATE[,RATE...] such as 'uniform:0.1,0.2'; got {spec!r}",
            param="noise")
    return method, tuple(parse_noise(f"{method}:{r.strip()}")[1] for r in rates.split(","))


@dataclass(frozen=True)
class BenchResult(ResultFiles):
    """One row per method, noise method, rate and seed: top-1 and top-5 accuracy on the
    clean evaluation set, macro-F1, the achieved noise rate and the training time."""

    runs: pd.DataFrame
    backbone: str
    n_train: int
    n_eval: int

    def to_frame(self) -> pd.DataFrame:
        """Mean and standard deviation over seeds per method, noise and rate."""
        grouped = self.runs.groupby(["method", "noise", "rate"], sort=False)
        table = grouped.agg(top1_mean=("top1", "mean"), top1_std=("top1", "std"),
                            top5_mean=("top5", "mean"), top5_std=("top5", "std"),
                            seconds=("seconds", "mean"), n_seeds=("seed", "nunique"))
        if "noisy_top1" in self.runs.columns:
            table["noisy_top1_mean"] = grouped["noisy_top1"].mean()
        return table.reset_index()

    def recommend(self) -> pd.DataFrame:
        """Per noise setting, the method ``--method auto`` would choose (by noised evaluation
        labels) beside the best on clean labels, the accuracy it gives up, and the Spearman
        correlation of the two measures over the methods."""
        import pandas as pd
        from scipy.stats import spearmanr

        frame = self.to_frame()
        if "noisy_top1_mean" not in frame.columns:
            return pd.DataFrame()
        rows = []
        for (noise, rate), cell in frame.groupby(["noise", "rate"], sort=False):
            cell = cell.reset_index(drop=True)
            if cell["noisy_top1_mean"].isna().all():
                continue
            chosen = int(cell["noisy_top1_mean"].idxmax())
            best = int(cell["top1_mean"].idxmax())
            rho = (spearmanr(cell["noisy_top1_mean"], cell["top1_mean"]).statistic
                   if _spearman_gap(cell) is None else np.nan)
            rows.append({"noise": noise, "rate": rate, "chosen": cell["method"][chosen],
                         "chosen_top1": cell["top1_mean"][chosen],
                         "best": cell["method"][best], "best_top1": cell["top1_mean"][best],
                         "given_up": cell["top1_mean"][best] - cell["top1_mean"][chosen],
                         "spearman": float(rho)})
        return pd.DataFrame(rows)

    def recommendation(self) -> str:
        """The closing lines of ``train-bench``: :meth:`recommend` and the method with the
        highest mean noisy accuracy over the settings."""
        frame = self.to_frame()
        table = self.recommend()
        if table.empty:
            return ("no recommendation: the evaluation labels are not all training classes, "
                    "so they could not be noised for the screen's measure")
        overall = frame.groupby("method", sort=False)["noisy_top1_mean"].mean()
        method = str(overall.idxmax())
        cells = frame.groupby(["noise", "rate"], sort=False)
        lines = [f"{r.noise} {r.rate:.0%}: {r.chosen} (clean top-1 {r.chosen_top1:.2%}; best "
                 f"{r.best} {r.best_top1:.2%}, {r.given_up * 100:.2f} points given up; "
                 "Spearman of noisy and clean accuracy "
                 + (f"{r.spearman:.2f})" if not np.isnan(r.spearman) else
                    f"n/a: {_spearman_gap(cells.get_group((r.noise, r.rate)))})")
                 for r in table.itertuples()]
        return ("by accuracy on noised evaluation labels (what --method auto measures):\n  "
                + "\n  ".join(lines) + f"\nrecommended: --method {method} (the highest mean "
                "noisy accuracy over these settings); --method auto screens on your data")

    def table(self, metric: str = "top1") -> pd.DataFrame:
        """Methods (rows) by noise and rate (columns): ``mean ± std`` of ``metric``."""
        frame = self.to_frame()
        frame["cell"] = [f"{m * 100:.2f} ± {0 if np.isnan(s) else s * 100:.2f}"
                         for m, s in zip(frame[f"{metric}_mean"], frame[f"{metric}_std"],
                                         strict=True)]
        frame["column"] = [f"{n} {r:.0%}" for n, r in zip(frame["noise"], frame["rate"],
                                                          strict=True)]
        wide = frame.pivot(index="method", columns="column", values="cell")
        methods = list(dict.fromkeys(self.runs["method"]))
        columns = list(dict.fromkeys(frame["column"]))
        return wide.loc[methods, columns]

    def to_dict(self) -> dict[str, Any]:
        return {"backbone": self.backbone, "n_train": self.n_train, "n_eval": self.n_eval,
                "summary": self.to_frame().to_dict(orient="records"),
                "recommendation": self.recommend().to_dict(orient="records"),
                "runs": self.runs.to_dict(orient="records")}

    def summary(self) -> str:
        return (f"{self.runs['method'].nunique()} methods x "
                f"{len(self.runs.groupby(['noise', 'rate']))} noise settings x "
                f"{self.runs['seed'].nunique()} seeds, {self.backbone} backbone, "
                f"{self.n_train} training and {self.n_eval} evaluation items; top-1 (%):\n"
                + self.table("top1").to_string() + "\n" + self.recommendation())

    def plot(self, path: str | Path) -> Path:
        """Top-1 accuracy against the noise rate, a line per method, a panel per noise."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        target, _ = figure_path(path)
        frame = self.to_frame()
        noises = list(dict.fromkeys(frame["noise"]))
        figure = Figure(figsize=(5.0 * len(noises), 4.2), dpi=120)
        FigureCanvasAgg(figure)
        axes = np.atleast_1d(figure.subplots(1, len(noises), sharey=True))
        for panel, noise in zip(axes, noises, strict=True):
            part = frame[frame["noise"] == noise]
            for method, rows in part.groupby("method", sort=False):
                panel.errorbar(rows["rate"] * 100, rows["top1_mean"] * 100,
                               yerr=np.nan_to_num(rows["top1_std"]) * 100, label=method,
                               marker="o", capsize=2, linewidth=1.2)
            panel.set_title(f"{noise} noise")
            panel.set_xlabel("noise rate (%)")
            panel.grid(True, alpha=0.3)
        axes[0].set_ylabel("top-1 accuracy on the clean test set (%)")
        axes[-1].legend(fontsize="x-small")
        figure.tight_layout()
        return save_figure(figure, target)


def _spearman_gap(cell: pd.DataFrame) -> str | None:
    """Why the Spearman correlation of a setting's noisy and clean accuracies is undefined,
    or None."""
    if len(cell) < 3:
        return f"{len(cell)} method{'s' if len(cell) != 1 else ''}, it needs 3 or more"
    for column, what in (("noisy_top1_mean", "noisy"), ("top1_mean", "clean")):
        if cell[column].isna().any():
            return f"a method has no {what} accuracy"
        if cell[column].nunique() == 1:
            return f"every method has the same {what} accuracy"
    return None


def _noised_eval(test: pd.DataFrame, *, label: str, method: str, rate: float, classes: np.ndarray,
                 text: str, text_pair: str | None, seed: int) -> pd.DataFrame | None:
    """The evaluation table with its labels noised as the training labels were (another
    seed); None when its labels are not all training classes."""
    if label not in test.columns or not np.isin(text_keys(test[label]),
                                                np.asarray(classes, dtype=str)).all():
        return None
    noisy = noisy_labels(test, label=label, method=method, rate=rate, classes=classes,
                         text=text, text_pair=text_pair, random_state=seed + 10_007)
    return test.assign(**{label: np.asarray(classes)[noisy]})


def _bench_run(shared: tuple[pd.DataFrame, pd.DataFrame, TrainOptions], _slot: Any, name: str,
               cell: dict[str, Any], labels: np.ndarray,
               noisy_test: pd.DataFrame | None) -> dict[str, Any]:
    """One run: ``name`` trained with the noised ``labels``, measured on the clean evaluation
    table and its noised copy."""
    frame, test, options = shared
    started = time.perf_counter()
    fitted = run_train(frame.assign(**{options.label: labels}), replace(
        options, method=name, noise_rate=cell["rate"], random_state=cell["seed"]))
    seconds = time.perf_counter() - started
    columns: dict[str, Any] = {"text": options.text, "label": options.label,
                               "text_pair": options.text_pair}
    probs = fitted.predict_proba(test, text=options.text, text_pair=options.text_pair)
    metrics = evaluate_model(fitted, test, **columns, probs=probs)
    noisy_top1 = np.nan if noisy_test is None else evaluate_model(
        fitted, noisy_test, **columns, probs=probs).top1
    return {"method": name, **cell, "top1": metrics.top1, "top5": metrics.top5,
            "macro_f1": metrics.macro_f1, "noisy_top1": noisy_top1, "seconds": seconds}


def train_bench(
    train: pd.DataFrame | str | Path,
    eval: pd.DataFrame | str | Path,  # noqa: A002 - mirrors the CLI flag
    *,
    text: str = "text",
    label: str = "label",
    text_pair: str | None = None,
    noise: Sequence[str] = ("uniform:0.1,0.2,0.4",),
    methods: Sequence[str] | None = None,
    seeds: int = 3,
    backbone: Literal["head", "finetune"] = "head",
    model: str | None = None,
    filter_scorers: Sequence[str] = ("embed",),
    train_options: dict[str, Any] | None = None,
    random_state: int = 0,
    workers: int = 1,
    engine: Literal["local", "ray"] = "local",
    ray_address: str | None = None,
    progress: bool = False,
) -> BenchResult:
    """Train every method on noised copies of a clean training set; measure each on a clean
    evaluation set.

    Parameters
    ----------
    train, eval : DataFrame or path
        Clean training and evaluation tables.
    noise : sequence of str
        ``"method:r1,r2,..."`` per noise method (our ``noise`` methods, e.g.
        ``uniform:0.1,0.2`` or ``instance-dependent:0.2,0.4``); each rate is injected
        with seed ``random_state + s`` for seed ``s``, so every cell is reproducible.
    methods : sequence of str, optional
        Default: every method (see :func:`labelaudit.training.train`).
    seeds : int, default=3
    filter_scorers : scorers of ``filter``'s scan (default the embeddings, which the head
        backbone has cached already).
    train_options : dict, optional
        More options of :func:`labelaudit.training.train` (epochs, hidden...).
    workers : int, default=1
        Processes training runs at once (each embeds the texts once, or reads the cache).
    engine : {"local", "ray"}
        ``"ray"``: every run a Ray task, on every core or on the cluster at ``ray_address``;
        the result does not depend on the engine or the workers.

    Returns
    -------
    BenchResult
    """
    import pandas as pd

    check_int(seeds, "seeds", minimum=1)
    check_fits(workers, engine, ray_address)
    grid = [parse_noise_grid(spec) for spec in noise]
    if not grid:
        raise InvalidParameterError("noise is empty: give at least one METHOD:RATE")
    names = check_methods(method_names() if methods is None else methods, "method")
    check_distinct_files([("train", train), ("eval", eval)], why="every method is trained "
                         "on train and measured on eval, so eval needs items of its own")
    frame, test = read_frame(train), read_frame(eval)
    clean = prepare_text_dataset(frame, text=text, label=label, text_pair=text_pair)
    held = prepare_text_dataset(test, text=text, label=None, text_pair=text_pair)
    warn_overlap(("training", clean.item_keys()), ("evaluation", held.item_keys()),
                 why="the models have seen them, so accuracy on them flatters the methods "
                 "that memorise; drop them from the evaluation set")
    if label in test.columns:  # checked before the runs; evaluate_model names a missing one
        check_label_values(test[label], column=label, where="eval")

    tasks = []
    for method_name, rates in grid:
        for rate in rates:
            for s in range(seeds):
                seed = random_state + s
                noisy = noisy_labels(frame, label=label, method=method_name, rate=rate,
                                     classes=clean.classes, text=text, text_pair=text_pair,
                                     random_state=seed)
                # the evaluation labels noised the same way: what a user without clean
                # labels can measure (--method auto), beside the clean measure
                noisy_test = _noised_eval(test, label=label, method=method_name, rate=rate,
                                          classes=clean.classes, text=text,
                                          text_pair=text_pair, seed=seed)
                cell = {"noise": method_name, "rate": rate, "seed": seed,
                        "achieved_rate": float(np.mean(noisy != clean.labels))}
                tasks += [(name, cell, clean.classes[noisy], noisy_test) for name in names]
    options = TrainOptions(text=text, label=label, text_pair=text_pair, backbone=backbone,
                           model=model, method=names[0], filter_scorers=filter_scorers,
                           **(train_options or {}))
    for name in names[1:]:  # every method's options checked before the first run trains
        replace(options, method=name)
    shared = (frame, test, options)
    rows = run_fits(_bench_run, tasks, shared=shared, workers=workers, engine=engine,
                    ray_address=ray_address, progress=progress, what="train-bench",
                    unit=" runs")
    return BenchResult(pd.DataFrame(rows), backbone, len(frame), len(test))
