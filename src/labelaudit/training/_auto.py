"""``labelaudit train --method auto``: screen the candidate methods on a held-out part of the
given (noisy) data, and train the winner on everything."""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_int, check_number
from labelaudit.io import ResultFiles
from labelaudit.training import _metrics as metrics
from labelaudit.training import _train as training

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AUTO_CANDIDATES", "SCREEN_ROUNDS", "SCREEN_SHARE", "Screen", "choose_method",
           "train", "train_auto"]

# The methods --method auto screens: the strongest published ones on NoisywikiHow and
# 20news (benchmarks/results/train_noise.md), and our detect-then-train forms.
AUTO_CANDIDATES = ("base", "mixup", "co-teaching", "seal", "filter+seal",
                   "filter-relabel+seal")
# The share of each class held out for the screen, and how many disjoint such parts it
# measures on (their mean decides: one part's noise alone cost up to 0.7 points of top-1 on
# NoisywikiHow, benchmarks/results/train_noise.md).
SCREEN_SHARE = 0.2
SCREEN_ROUNDS = 3
# The fewest items of a class the screen can hold out and still train on (see _held_out).
_SCREEN_MIN_CLASS = 3


@dataclass(frozen=True)
class Screen(ResultFiles):
    """The screening run of ``--method auto``: one row per candidate with its accuracy on
    the held-out items' given (possibly wrong) labels (``noisy_top1``, the mean over the
    rounds; ``round_1``, ``round_2``... each round's), the winner and why.
    ``n_screen_train`` and ``n_screen_eval`` count the items of one round."""

    table: pd.DataFrame
    winner: str
    reason: str
    n_screen_train: int
    n_screen_eval: int
    rounds: int = 1

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def summary(self) -> str:
        shown = self.table.assign(**{
            column: [f"{v:.2%}" for v in self.table[column]]
            for column in self.table.columns if column == "noisy_top1"
            or column.startswith("round_")}, seconds=[f"{v:.1f}" for v in self.table["seconds"]])
        rounds = (f" in each of {self.rounds} rounds (disjoint held-out parts; the mean "
                  "decides)" if self.rounds > 1 else "")
        return (f"screened {len(self.table)} methods: trained on {self.n_screen_train} items, "
                f"measured on {self.n_screen_eval} held-out items' given labels{rounds}\n"
                + shown.to_string(index=False) + f"\nchose {self.winner}: {self.reason}")

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Screen:
        """A screen as :meth:`to_dict` wrote it (a model's log)."""
        import pandas as pd
        return cls(pd.DataFrame(doc["table"]), doc["winner"], doc["reason"],
                   int(doc["n_screen_train"]), int(doc["n_screen_eval"]),
                   int(doc.get("rounds", 1)))

    def to_dict(self) -> dict[str, Any]:
        return {"winner": self.winner, "reason": self.reason,
                "n_screen_train": self.n_screen_train, "n_screen_eval": self.n_screen_eval,
                "rounds": self.rounds, "table": self.table.to_dict(orient="records")}


def _options_for(method: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` without the filter options ``method`` does not take (``filter_detector``
    goes to the filter methods, ``filter`` to plain ``filter`` alone)."""
    return {k: v for k, v in options.items()
            if (k != "filter_detector" or method.startswith("filter"))
            and (k != "filter" or method == "filter")}


def _held_out(labels: np.ndarray, classes: np.ndarray, share: float, rounds: int,
              random_state: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``rounds`` pairs of rows to train and to measure the screen on: each holds out
    ``share`` of each class, and the held-out parts are disjoint (stratified folds of
    ``round(1 / share)``).

    Every class needs :data:`_SCREEN_MIN_CLASS` items: a held-out part takes one of a
    class too small to split, and each candidate trains on the rest, which must keep 2
    (:func:`labelaudit.train` refuses a class of one item).
    """
    from sklearn.model_selection import StratifiedKFold

    n_parts = max(int(round(1 / share)), 2)
    counts = np.bincount(labels, minlength=len(classes))
    few = [f"{classes[k]} ({counts[k]})"
           for k in np.flatnonzero((counts > 0) & (counts < _SCREEN_MIN_CLASS))]
    if few or len(labels) < n_parts:
        what = (f"{len(few)} class{'es have' if len(few) > 1 else ' has'} fewer: "
                f"{', '.join(few[:10])}" if few else
                f"the data has {len(labels)} items, fewer than the {n_parts} parts")
        raise InvalidInputError(
            f"--method auto screens the methods on held-out items of every class and trains "
            f"them on the rest, so every class needs at least {_SCREEN_MIN_CLASS} items; "
            f"{what}; add items, drop or merge small classes, or name a method")
    if rounds > n_parts:
        raise InvalidParameterError(
            f"rounds={rounds} disjoint held-out parts of share {share:g} do not fit in the "
            f"data: at most {n_parts}")
    folds = StratifiedKFold(n_splits=n_parts, shuffle=True, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a class smaller than n_parts: in some parts only
        splits = list(folds.split(np.zeros(len(labels)), labels))
    return [(np.sort(fit), np.sort(held)) for fit, held in splits[:rounds]]


def choose_method(data: pd.DataFrame | str | Path, *, text: str = "text",
                  label: str = "label", text_pair: str | None = None,
                  candidates: Sequence[str] | None = None, share: float = SCREEN_SHARE,
                  rounds: int = SCREEN_ROUNDS, random_state: int = 0,
                  progress: bool = False, **options: Any) -> Screen:
    """Train every candidate on the rest of the data and measure it on a held-out
    ``share`` of each class, against the given labels, in ``rounds`` rounds with disjoint
    held-out parts; the highest mean accuracy wins (ties go to the earlier candidate, the
    simpler method).

    The labels of the held-out items are as noisy as the rest: under uniform and
    instance-dependent noise, accuracy on them ranks methods as accuracy on clean labels
    does (``train_bench`` reports both and how well they agree).

    Parameters
    ----------
    candidates : sequence of str, optional
        Default :data:`AUTO_CANDIDATES`.
    rounds : int
        Held-out parts to measure on, at most ``round(1 / share)``; each round trains
        every candidate once, so the screen costs ``rounds`` times one round.
    options
        More options of :func:`labelaudit.train` (backbone, epochs...).
    """
    import pandas as pd

    from labelaudit.io import holds_label_sets, prepare_text_dataset, read_table
    from labelaudit.training._label_sets import check_label_set_method

    names = list(AUTO_CANDIDATES if candidates is None else candidates)
    if len(names) < 1:
        raise InvalidParameterError("candidates is empty: give at least one method")
    for name in names:
        if name not in training.method_names():
            raise InvalidParameterError(f"unknown candidate {name!r}; choose from "
                                        f"{', '.join(training.method_names())}")
    share = check_number(share, "share", low=0.0, high=1.0, low_open=True, high_open=True)
    rounds = check_int(rounds, "rounds", minimum=1)
    frame = data if isinstance(data, pd.DataFrame) else read_table(data)
    if options.get("label_sep") is not None or (label in frame.columns
                                                 and holds_label_sets(frame[label])):
        check_label_set_method("auto")
    dataset = prepare_text_dataset(frame, text=text, label=label, text_pair=text_pair)
    assert dataset.labels is not None  # noqa: S101 - label is given
    parts = _held_out(np.asarray(dataset.labels), dataset.classes, share, rounds, random_state)
    scores = np.zeros((len(names), rounds))
    seconds = np.zeros(len(names))
    for r, (fit, held) in enumerate(parts):
        part, check = frame.iloc[fit].reset_index(drop=True), frame.iloc[held]
        for i, name in enumerate(names):
            started = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = training.train(part, text=text, label=label, text_pair=text_pair,
                                       method=name, random_state=random_state,
                                       progress=progress, **_options_for(name, options))
            scores[i, r] = metrics.evaluate_model(model, check, text=text, label=label,
                                                   text_pair=text_pair).top1
            seconds[i] += time.perf_counter() - started
    table = pd.DataFrame({"method": names, "noisy_top1": scores.mean(axis=1)})
    if rounds > 1:
        for r in range(rounds):
            table[f"round_{r + 1}"] = scores[:, r]
    table["seconds"] = seconds
    best = int(np.argmax(table["noisy_top1"].to_numpy()))  # the first of equal ones
    winner = str(table["method"].iloc[best])
    order = table["noisy_top1"].sort_values(ascending=False, kind="stable")
    runner = (f"; next {table['method'].iloc[order.index[1]]} "
              f"{order.iloc[1]:.2%}" if len(order) > 1 else "")
    mean = "mean " if rounds > 1 else ""
    reason = (f"the highest {mean}accuracy on the held-out items' given labels "
              f"({table['noisy_top1'].iloc[best]:.2%}{runner}), the measure that ranks the "
              "methods as clean accuracy does under injected noise (train-bench)")
    return Screen(table, winner, reason, len(parts[0][0]), len(parts[0][1]), rounds)


def train_auto(data: pd.DataFrame | str | Path, *, text: str = "text", label: str = "label",
               text_pair: str | None = None, random_state: int = 0, progress: bool = False,
               **options: Any) -> Any:
    """:func:`choose_method`, then the winner trained on every item; the model's log holds
    the screen (``auto``)."""
    import pandas as pd

    from labelaudit.io import read_table

    frame = data if isinstance(data, pd.DataFrame) else read_table(data)
    screen = choose_method(frame, text=text, label=label, text_pair=text_pair,
                           random_state=random_state, progress=progress, **options)
    model = training.train(frame, text=text, label=label, text_pair=text_pair,
                           method=screen.winner, random_state=random_state,
                           progress=progress, **_options_for(screen.winner, options))
    model.log["auto"] = screen.to_dict()
    return model


@functools.wraps(training.train)
def train(data: pd.DataFrame | str | Path, *, method: str = "base", **options: Any) -> Any:
    if method == "auto":
        return train_auto(data, **options)
    return training.train(data, method=method, **options)
