"""What label errors in a test set do to a benchmark (Northcutt et al. 2021, section 6).

After a verification round, the test set D splits into benign items B (not flagged, or
flagged and the given label confirmed), correctable items C (reviewers agreed on another
label) and unknown items U (no agreement); P = D \\ U = B ∪ C is the pruned set. The noise
prevalence is N = |C| / |P|. Removing a share x of B gives the expected accuracy

    A(x; M) = (A_C(M)|C| + (1 - x) A_B(M)|B|) / (|C| + (1 - x)|B|)

at noise prevalence N(x) = |C| / (|C| + (1 - x)|B|): A(0; M) is the accuracy on P and
A(1; M) the accuracy on C.

For tagged data (:func:`measure_impact_tokens`) a sentence is benign, correctable or unknown
(tags the same, different, re-tokenised); scores are micro span F1, 2 TP / (2 TP + FP + FN),
so the curve keeps its form with per-model weights (see :func:`_crossings`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
    plain_value,
)
from labelaudit.impact._ladder import KINDS, TOKEN_KINDS
from labelaudit.io import (
    FALSE_WORDS,
    METRIC_NAMES,
    PROBABILITY_SUM_TOLERANCE,
    TRUE_WORDS,
    ResultFiles,
    check_label_values,
    figure_path,
    json_number,
    read_table,
    require_columns,
    save_figure,
    text_keys,
)
from labelaudit.tokens import Scheme, TokenDataset, read_tokens, span_f1_counts, split_tag

if TYPE_CHECKING:
    import pandas as pd


BENIGN, CORRECTABLE, UNKNOWN = 0, 1, 2
VERDICT_WORDS = ("Correctable", "Non-Agreement", "Non-Error", "Pending")
_LABEL_COLUMNS = ("predicted_label", "prediction", "pred", "predicted", "label")
_PROB_PREFIXES = ("prob_", "proba_", "p_", "score_")

TokenSource = TokenDataset | str | Path
TagSource = TokenDataset | str | Path | Sequence[Sequence[str]]
_TOKEN_SUFFIXES = (".conll", ".conllu", ".iob", ".iob1", ".iob2", ".bio", ".bioes")


class PendingVerdictWarning(LabelAuditWarning):
    """Flagged items still waiting for a verdict: counted as unknown (U)."""


class EmptyCorrectableWarning(LabelAuditWarning):
    """No item is correctable: N = 0 and no ranking can flip."""


class RetokenisedWarning(LabelAuditWarning):
    """Sentences whose tokens differ between the two copies: counted as unknown (U)."""


@dataclass(frozen=True)
class ImpactCurve:
    """A(x; M) per model (rows) over the shares ``x`` of B removed, with the corrected and
    the original labels of C, and the noise prevalence N(x) = |C| / (|C| + (1 - x)|B|)."""

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

    ``acc_*`` hold the ``metric`` (``accuracy``; for token data, whose ``unit`` is sentences,
    ``entity_f1`` or ``token_accuracy``): ``acc_original`` (Ã) and ``acc_corrected`` (A*) on
    P = B ∪ C, ``acc_C`` and ``acc_C_original`` on C, ``acc_B`` on B. Rank 1 is the best, ties
    share it. ``flips`` are where two models' A*(x) cross as B is removed; ``flips_original``
    where their Ã(x) do.
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
            "rank_corrected": self.rank_corrected.astype(int)})

    def to_dict(self) -> dict[str, Any]:
        """The ``--out`` JSON document (NaN written as null)."""
        frame = self.to_frame().set_index("model")
        models = {name: {k: int(v) if k.startswith("rank") else json_number(v)
                         for k, v in row.items()} for name, row in frame.iterrows()}
        curve = self.curve

        def per_model(values: np.ndarray) -> dict[str, list]:
            return {name: [json_number(v) for v in values[i]]
                    for i, name in enumerate(self.models)}

        def flips(found: tuple[RankFlip, ...]) -> list[dict]:
            return [{"a": f.a, "b": f.b, "x": f.x, "N": f.N} for f in found]

        return {
            "metric": self.metric, "unit": self.unit,
            "sizes": {"B": self.n_benign, "C": self.n_correctable, "U": self.n_unknown,
                      "P": self.n_pruned},
            "pending": self.n_pending, "N": self.noise_prevalence,
            "N_ci": [json_number(v) for v in self.noise_prevalence_ci],
            "confidence_level": self.confidence_level, "models": models,
            "swapped": [list(pair) for pair in self.swapped],
            "flips": flips(self.flips), "flips_original": flips(self.flips_original),
            "curve": {"x": [float(v) for v in curve.x],
                      "N": [json_number(v) for v in curve.noise_prevalence],
                      "corrected": per_model(curve.corrected),
                      "original": per_model(curve.original)}}

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


@dataclass(frozen=True)
class ImpactSets:
    """A corrected table as text ids and labels, and 0 (B), 1 (C) or 2 (U) per item."""

    ids: np.ndarray
    original: np.ndarray
    corrected: np.ndarray
    sets: np.ndarray
    label_set: tuple[str, ...]


def _flags(values: pd.Series, column: str) -> np.ndarray:
    """A flagged column (booleans, 0/1, true/false, yes/no; blank is false) as booleans."""
    import pandas as pd
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.to_numpy(dtype=bool)
    words = pd.Series(text_keys(values)).str.strip().str.lower()
    bad = ~words.isin(TRUE_WORDS | FALSE_WORDS | {"", "nan", "none"})  # blank is false
    if bad.any():
        raise InvalidInputError(
            f"column {column!r} is not true/false: {sorted(set(words[bad]))[:5]} in "
            f"{format_rows(np.flatnonzero(bad.to_numpy()))}; use true/false or 1/0")
    return words.isin(TRUE_WORDS).to_numpy()


def _resolve_columns(frame: pd.DataFrame, label: str | None, corrected_label: str | None,
                     flagged: str | None, verdict: str | None,
                     ) -> tuple[str, str, str | None, str | None]:
    """Columns by the rule: a ``review apply`` output is recognised by its provenance
    columns; a plain table defaults to ``label``, ``corrected``, ``flagged``, ``verdict``."""
    applied = {"review_original_label", "review_verdict"} <= set(frame.columns)
    if applied:
        label = label or "review_original_label"
        corrected_label = corrected_label or "label"
        verdict = verdict or "review_verdict"
    else:
        label = label or "label"
        corrected_label = corrected_label or "corrected"
        if verdict is None and "verdict" in frame.columns:
            verdict = "verdict"
        if flagged is None and "flagged" in frame.columns:
            flagged = "flagged"
    if flagged is None and verdict is None:
        raise InvalidInputError(
            "cannot tell which items were flagged: the table has neither a 'flagged' nor a "
            "'verdict' column; name one with flagged=... or verdict=...")
    require_columns(frame, [c for c in (label, corrected_label, flagged, verdict) if c])
    return label, corrected_label, flagged, verdict


def impact_sets(frame: pd.DataFrame, *, id: str = "id",  # noqa: A002 - mirrors the CLI flag
                label: str | None = None, corrected_label: str | None = None,
                flagged: str | None = None, verdict: str | None = None,
                ) -> tuple[ImpactSets, int]:
    """The sets B, C and U of a corrected table, and the number of Pending (or flagged but
    unreviewed) items, counted in U."""
    import pandas as pd
    if len(frame) == 0:
        raise InvalidInputError("the corrected table has no rows")
    label, corrected_label, flagged, verdict = _resolve_columns(
        frame, label, corrected_label, flagged, verdict)
    require_columns(frame, [id])
    ids = text_keys(frame[id])
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        raise InvalidInputError(f"the corrected table has duplicate ids: "
                                f"{format_rows(ids[dup])}")
    for column in (label, corrected_label):
        check_label_values(frame[column], column=column, ids=ids)
    original = text_keys(frame[label])
    if (original == "").any():
        raise InvalidInputError(f"column {label!r} has missing labels in "
                                f"{format_rows(ids[original == ''])}")
    corrected = text_keys(frame[corrected_label])
    words = (text_keys(frame[verdict]) if verdict else np.full(len(frame), "", dtype=object))
    words = np.array([w.strip() for w in words], dtype=object)
    is_flagged = _flags(frame[flagged], flagged) if flagged else words != ""
    unknown_words = is_flagged & (words != "") & ~np.isin(words, VERDICT_WORDS)
    if unknown_words.any():
        raise InvalidInputError(
            f"column {verdict!r} has verdicts it does not know: "
            f"{sorted(set(words[unknown_words]))[:5]} in {format_rows(ids[unknown_words])}; "
            f"use {', '.join(VERDICT_WORDS)}")
    if not is_flagged.any():
        raise InvalidInputError(
            "no flagged items: every item is benign, so there is nothing to measure; give "
            "the table `review apply` writes, or name the flagged/verdict columns")
    differs = (corrected != "") & (corrected != original)
    if verdict:
        pending = is_flagged & np.isin(words, ("Pending", ""))
        correctable = is_flagged & (words == "Correctable") & differs
        benign = ~is_flagged | (words == "Non-Error")
    else:  # no verdicts: the corrected label says it all, blank is not reviewed yet
        pending = is_flagged & (corrected == "")
        correctable = is_flagged & differs
        benign = ~is_flagged | (is_flagged & (corrected == original))
    sets = np.full(len(frame), UNKNOWN, dtype=np.int8)
    sets[benign] = BENIGN
    sets[correctable] = CORRECTABLE
    corrected = np.where(sets == CORRECTABLE, corrected, original)
    label_set = tuple(sorted(set(original.tolist()) | set(corrected.tolist())))
    return ImpactSets(ids, original, corrected, sets, label_set), int(pending.sum())


def _check_probabilities(frame: pd.DataFrame, columns: list, id: str,  # noqa: A002
                         name: str) -> np.ndarray:
    """The probability columns as numbers, refusing bad values and rows that do not sum
    to 1 (naming the first bad row)."""
    try:
        probs = frame[columns].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"predictions {name}: the probability columns "
                                f"{list(map(str, columns))[:5]} are not all numbers") from None
    finite = np.isfinite(probs)
    sums = np.where(finite, probs, 0.0).sum(axis=1)
    bad = ~finite.all(axis=1) | (np.where(finite, probs, 0.0) < 0).any(axis=1) \
        | (np.where(finite, probs, 0.0) > 1 + 1e-6).any(axis=1) \
        | (np.abs(sums - 1.0) > PROBABILITY_SUM_TOLERANCE)
    if bad.any():
        rows = np.flatnonzero(bad)
        first = int(rows[0])
        what = ("a missing or infinite probability" if not finite[first].all()
                else "a negative probability" if (probs[first] < 0).any()
                else "a probability above 1" if (probs[first] > 1 + 1e-6).any()
                else f"probabilities summing to {sums[first]:.4g}, not 1 (within "
                f"{PROBABILITY_SUM_TOLERANCE:g})")
        values = ", ".join(f"{c}={v:g}" for c, v in zip(columns, probs[first], strict=True))
        more = f" ({len(rows) - 1} more rows too)" if len(rows) > 1 else ""
        key = plain_value(frame[id].iloc[first])
        raise InvalidInputError(
            f"predictions {name}: row {first} (0-based; id {key!r}) has "
            f"{what} ({values[:200]}){more}; give probabilities in [0, 1] (softmax outputs, "
            "not logits) for every class, or a predicted-label column")
    return probs


def _predicted_labels(frame: pd.DataFrame, id: str, label_set: tuple[str, ...],  # noqa: A002
                      name: str) -> np.ndarray:
    """Predicted labels from one prediction table: a label column, or one probability
    column per class (named by the class, optionally ``prob_<class>``), argmax taken."""
    others = [c for c in frame.columns if c != id]
    chosen = next((c for c in _LABEL_COLUMNS if c in others), None)
    if chosen is None and len(others) == 1:
        chosen = others[0]
    if chosen is not None:
        return text_keys(frame[chosen])
    classes = []
    for column in map(str, others):
        for prefix in _PROB_PREFIXES:
            if column.startswith(prefix) and column[len(prefix):] in label_set:
                column = column[len(prefix):]
        classes.append(column)
    unknown = [c for c in classes if c not in label_set]
    if unknown or not classes:
        raise InvalidInputError(
            f"predictions {name}: expected {id!r} and a predicted-label column "
            f"({', '.join(_LABEL_COLUMNS)}) or one probability column per class; columns "
            f"{unknown[:5]} are not classes of the label set {list(label_set)[:10]}")
    probs = _check_probabilities(frame, others, id, name)
    return np.asarray(classes, dtype=object)[np.argmax(probs, axis=1)]


def _count(n: int, noun: str) -> str:
    """``3 ids have`` / ``1 id has``; ``1 predicted id is`` / ``2 predicted ids are``."""
    verb = ("is", "are") if noun.startswith("predicted") else ("has", "have")
    return f"{n} {noun} {verb[0]}" if n == 1 else f"{n} {noun}s {verb[1]}"


def align_predictions(
    sets: ImpactSets,
    predictions: Mapping[str, pd.DataFrame | str | Path],
    *,
    id: str = "id",  # noqa: A002 - mirrors the CLI flag
) -> tuple[tuple[str, ...], np.ndarray]:
    """The model names, and their predicted labels (text) in the corrected table's row
    order, shape (n_models, n_samples)."""
    import pandas as pd
    if not predictions:
        raise InvalidParameterError("predictions is empty: give at least one model")
    index = pd.Index(sets.ids)
    known = np.asarray(sets.label_set, dtype=object)
    rows = []
    for name, source in predictions.items():
        frame = source if isinstance(source, pd.DataFrame) else read_table(source)
        if id not in frame.columns:
            raise InvalidInputError(f"predictions {name!r} have no id column {id!r}; their "
                                    f"columns are {list(map(str, frame.columns[:12]))}")
        keys = text_keys(frame[id])
        where = repr(name) if isinstance(source, pd.DataFrame) else f"{name!r} ({source})"
        labels = _predicted_labels(frame, id, sets.label_set, where)
        position = index.get_indexer(keys)
        extra = keys[position < 0]
        covered = np.zeros(len(index), dtype=bool)
        covered[position[position >= 0]] = True
        missing = sets.ids[~covered]
        if len(extra) or len(missing) or len(keys) != len(index):
            raise InvalidInputError(
                f"predictions {name!r} do not match the data's ids: "
                + "; ".join(part for part in (
                    f"{_count(len(missing), 'id')} no prediction "
                    f"({format_rows(missing)})" if len(missing) else "",
                    f"{_count(len(extra), 'predicted id')} not in the data "
                    f"({format_rows(extra)})" if len(extra) else "",
                    "some ids are predicted twice"
                    if pd.Series(keys).duplicated().any() else "") if part)
                + f"; predict every item of the corrected table, keyed by {id!r}")
        outside = ~np.isin(labels, known)
        if outside.any():
            raise InvalidInputError(
                f"predictions {name!r} have labels outside the label set "
                f"{list(sets.label_set)[:10]}: {sorted(set(labels[outside]))[:5]} for ids "
                f"{format_rows(keys[outside]).removeprefix('rows ').removeprefix('row ')}")
        aligned = np.empty(len(index), dtype=object)
        aligned[position] = labels
        rows.append(aligned)
    return tuple(map(str, predictions)), np.vstack(rows)


def _curve(totals: np.ndarray, x: np.ndarray) -> np.ndarray:
    """(num_C + (1 - x) num_B) / (den_C + (1 - x) den_B) per model (rows) and ``x``
    (columns), from the totals of shape ``(4, n_models)``; NaN where the denominator is 0."""
    kept = 1.0 - np.asarray(x, dtype=float)
    num_c, den_c, num_b, den_b = (np.nan_to_num(np.asarray(v, dtype=float))[:, None]
                                  for v in totals)
    numerator = num_c + num_b * kept[None, :]
    denominator = den_c + den_b * kept[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


def _accuracy_totals(acc_C: np.ndarray, acc_B: np.ndarray, n_correctable: int,  # noqa: N803
                     n_benign: int) -> np.ndarray:
    """A(x; M) = (A_C|C| + (1-x) A_B|B|) / (|C| + (1-x)|B|) is :func:`_curve` of these."""
    acc_c = np.nan_to_num(np.asarray(acc_C, dtype=float))
    acc_b = np.nan_to_num(np.asarray(acc_B, dtype=float))
    return np.stack([acc_c * n_correctable, np.full(acc_c.shape, float(n_correctable)),
                     acc_b * n_benign, np.full(acc_b.shape, float(n_benign))])


def _crossings(a: np.ndarray, b: np.ndarray) -> list[float]:
    """The shares x in (0, 1) at which two models' scores cross, from their totals
    ``(num_C, den_C, num_B, den_B)``. With t = 1 - x, (n_C^a + t n_B^a)(d_C^b + t d_B^b) =
    (n_C^b + t n_B^b)(d_C^a + t d_B^a) is a quadratic in t; with equal denominators
    (accuracy) it is linear, t = -Δn_C / Δn_B. A double root only touches: no crossing."""
    na_c, da_c, na_b, da_b = (float(v) for v in a)
    nb_c, db_c, nb_b, db_b = (float(v) for v in b)
    if da_c == db_c and da_b == db_b:
        delta_b = na_b - nb_b
        roots = [] if delta_b == 0 else [-(na_c - nb_c) / delta_b]
    else:
        quadratic = na_b * db_b - nb_b * da_b
        linear = na_c * db_b + na_b * db_c - nb_c * da_b - nb_b * da_c
        constant = na_c * db_c - nb_c * da_c
        scale = max(abs(quadratic), abs(linear), abs(constant), 1e-300)
        if abs(quadratic) <= 1e-12 * scale:
            roots = [] if linear == 0 else [-constant / linear]
        else:
            disc = linear * linear - 4 * quadratic * constant
            if disc <= 0:
                return []
            root = np.sqrt(disc)
            # the numerically stable pair of roots
            q = -0.5 * (linear + np.copysign(root, linear))
            roots = [q / quadratic] + ([constant / q] if q != 0 else [])
    out = []
    for t in roots:
        x = 1.0 - t
        if 0.0 < x < 1.0 and da_c + t * da_b > 0 and db_c + t * db_b > 0:
            out.append(float(x))
    return sorted(out)


def _ratio(num: np.ndarray, den: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per model, sum(num) / sum(den) over the items in ``mask``; NaN when that is 0 / 0."""
    total = den[:, mask].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, num[:, mask].sum(axis=1) / np.where(total > 0, total, 1),
                        np.nan)


def _ranks(acc: np.ndarray) -> np.ndarray:
    """Rank 1 for the highest accuracy; ties share the best rank."""
    values = np.nan_to_num(acc, nan=-1.0)
    return (values[None, :] > values[:, None]).sum(axis=1) + 1


def _flips(models: tuple[str, ...], totals: np.ndarray, n_correctable: int,
           n_benign: int) -> tuple[RankFlip, ...]:
    """Every crossing of two models' curves inside (0, 1), each checked on the curve."""
    flips = []
    if n_correctable == 0 or n_benign == 0:
        return ()
    for i, j in combinations(range(len(models)), 2):
        pair = totals[:, [i, j]]
        previous = 0.0
        for x in _crossings(pair[:, 0], pair[:, 1]):
            at = _curve(pair, np.array([x]))[:, 0]
            if not np.isclose(at[0], at[1], rtol=0, atol=1e-9):  # pragma: no cover - algebra
                raise AssertionError(f"flip of {models[i]}/{models[j]} at x={x} fails the check")
            before = _curve(pair, np.array([(previous + x) / 2]))[:, 0]
            first, second = (i, j) if before[0] > before[1] else (j, i)  # ahead just before
            prevalence = n_correctable / (n_correctable + (1 - x) * n_benign)
            flips.append(RankFlip(models[first], models[second], float(x), float(prevalence)))
            previous = x
    return tuple(sorted(flips, key=lambda f: f.x))


def _wilson(k: int, n: int, confidence_level: float) -> tuple[float, float]:
    """Wilson score interval of k/n, as ``scipy.stats.binomtest(k, n).proportion_ci(
    method="wilson")`` gives it, without importing scipy.stats."""
    from scipy.special import ndtri

    z = float(ndtri(0.5 + confidence_level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def _check_options(confidence_level: float, n_points: int) -> None:
    if not 0.0 < confidence_level < 1.0:
        raise InvalidParameterError(f"confidence_level must be in (0, 1), got {confidence_level}",
                                    param="confidence_level")
    if n_points < 2:
        raise InvalidParameterError(f"n_points must be at least 2, got {n_points}",
                                    param="n_points")


def measure_impact(
    corrected: pd.DataFrame | str | Path,
    predictions: Mapping[str, pd.DataFrame | str | Path],
    *,
    id: str = "id",  # noqa: A002 - mirrors the CLI flag
    label: str | None = None,
    corrected_label: str | None = None,
    flagged: str | None = None,
    verdict: str | None = None,
    confidence_level: float = 0.95,
    n_points: int = 101,
) -> ImpactResult:
    """Measure what the verified label errors of a test set do to each model and ranking.

    Parameters
    ----------
    corrected : DataFrame or path
        The table ``labelaudit review apply`` writes, or a plain table with the original and
        corrected labels and a flagged and/or a verdict column.
    predictions : mapping of str to DataFrame or path
        Model name to its predictions: ``id`` and a predicted-label column
        (``predicted_label``, ``prediction``, ``pred``, ``label`` or the only other one), or
        ``id`` and a probability column per class (named ``<class>`` or ``prob_<class>``).
    id : str
        Id column of every table.
    label, corrected_label, flagged : str, optional
        Original and corrected label columns (default ``review_original_label`` and
        ``label`` for a ``review apply`` output, else ``label`` and ``corrected``), and a
        boolean column of flagged items (default ``flagged``, else items with a verdict).
    verdict : str, optional
        Column of verdicts: Correctable, Non-Agreement, Non-Error or Pending (default
        ``review_verdict`` or ``verdict``). Without one, a flagged item is correctable when
        its corrected label differs, benign when the same, unknown when blank.
    confidence_level, n_points
        Of the Wilson interval of N; points of the curve, x evenly spaced in [0, 1].

    Returns
    -------
    ImpactResult

    Warns
    -----
    PendingVerdictWarning
        Flagged items without a final verdict, counted in U.
    EmptyCorrectableWarning
        C is empty: N = 0, no flips.

    References
    ----------
    Northcutt, Athalye and Mueller, "Pervasive Label Errors in Test Sets Destabilize Machine
    Learning Benchmarks", NeurIPS 2021 Datasets and Benchmarks, section 6.

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"id": [1, 2, 3, 4], "label": ["a", "a", "b", "b"],
    ...     "corrected": ["a", "b", "b", "b"], "flagged": [False, True, False, True],
    ...     "verdict": ["", "Correctable", "", "Non-Agreement"]})
    >>> preds = {"m": pd.DataFrame({"id": [1, 2, 3, 4], "pred": ["a", "b", "b", "a"]})}
    >>> result = measure_impact(data, preds)
    >>> (result.n_benign, result.n_correctable, result.n_unknown, result.noise_prevalence)
    (2, 1, 1, 0.3333333333333333)
    >>> float(result.acc_original[0]), float(result.acc_corrected[0]), result.flips
    (0.6666666666666666, 1.0, ())
    """
    import pandas as pd
    _check_options(confidence_level, n_points)
    frame = corrected if isinstance(corrected, pd.DataFrame) else read_table(corrected)
    sets, n_pending = impact_sets(frame, id=id, label=label, corrected_label=corrected_label,
                                  flagged=flagged, verdict=verdict)
    models, predicted = align_predictions(sets, predictions, id=id)
    if n_pending:
        warnings.warn(f"{n_pending} flagged items have no final verdict (Pending): counted "
                      "as unknown (U)", PendingVerdictWarning, stacklevel=2)
    return _measure(sets.sets, n_pending, models,
                    accuracy_scores(predicted, sets.original, sets.corrected),
                    confidence_level, n_points)


@dataclass(frozen=True)
class ItemScores:
    """Per model (rows) and item, the score's numerator and denominator against both labels:
    hits over 1 (accuracy), or 2 TP over 2 TP + FP + FN (pooled: micro F1)."""

    num_original: np.ndarray
    den_original: np.ndarray
    num_corrected: np.ndarray
    den_corrected: np.ndarray


def accuracy_scores(predicted: np.ndarray, original: np.ndarray,
                    corrected: np.ndarray) -> ItemScores:
    ones = np.ones(predicted.shape, dtype=float)
    return ItemScores((predicted == original[None, :]).astype(float), ones,
                      (predicted == corrected[None, :]).astype(float), ones)


def _measure(sets: np.ndarray, n_pending: int, models: tuple[str, ...], scores: ItemScores,
             confidence_level: float, n_points: int, *, metric: str = "accuracy",
             unit: str = "items") -> ImpactResult:
    is_b, is_c = sets == BENIGN, sets == CORRECTABLE
    n_b, n_c, n_u = int(is_b.sum()), int(is_c.sum()), int((sets == UNKNOWN).sum())
    if n_b + n_c == 0:
        raise InvalidInputError(f"every {unit[:-1]} is unknown (U): the pruned set P is "
                                f"empty, so there is no {metric} to measure")
    if n_c == 0:
        warnings.warn(f"C is empty: no flagged {unit[:-1]} was corrected to another label, "
                      "so N = 0 and no ranking flips", EmptyCorrectableWarning, stacklevel=3)
    pruned = is_b | is_c
    s = scores
    acc_original = _ratio(s.num_original, s.den_original, pruned)
    acc_corrected = _ratio(s.num_corrected, s.den_corrected, pruned)
    acc_c = _ratio(s.num_corrected, s.den_corrected, is_c)
    acc_c_original = _ratio(s.num_original, s.den_original, is_c)
    acc_b = _ratio(s.num_corrected, s.den_corrected, is_b)
    benign = (s.num_corrected[:, is_b].sum(axis=1), s.den_corrected[:, is_b].sum(axis=1))
    totals = np.stack([s.num_corrected[:, is_c].sum(axis=1),
                       s.den_corrected[:, is_c].sum(axis=1), *benign])
    totals_original = np.stack([s.num_original[:, is_c].sum(axis=1),
                                s.den_original[:, is_c].sum(axis=1), *benign])
    rank_original, rank_corrected = _ranks(acc_original), _ranks(acc_corrected)
    swapped = tuple(
        (models[i], models[j]) for i, j in combinations(range(len(models)), 2)
        if (rank_original[i] - rank_original[j]) * (rank_corrected[i] - rank_corrected[j]) < 0)
    x = np.linspace(0.0, 1.0, n_points)
    with np.errstate(invalid="ignore", divide="ignore"):
        prevalence = np.where(n_c + (1 - x) * n_b > 0,
                              n_c / np.maximum(n_c + (1 - x) * n_b, 1e-300), np.nan)
    curve = ImpactCurve(x=x, noise_prevalence=prevalence, corrected=_curve(totals, x),
                        original=_curve(totals_original, x))
    return ImpactResult(
        models=models, n_benign=n_b, n_correctable=n_c, n_unknown=n_u, n_pending=n_pending,
        noise_prevalence=n_c / (n_b + n_c),
        noise_prevalence_ci=_wilson(n_c, n_b + n_c, confidence_level),
        confidence_level=confidence_level, acc_original=acc_original,
        acc_corrected=acc_corrected, acc_C=acc_c, acc_C_original=acc_c_original,
        acc_B=acc_b, rank_original=rank_original, rank_corrected=rank_corrected,
        swapped=swapped, flips=_flips(models, totals, n_c, n_b),
        flips_original=_flips(models, totals_original, n_c, n_b), curve=curve,
        metric=metric, unit=unit)


def _where(data: TokenDataset, i: int) -> str:
    return f"sentence {i + 1} (line {data.lines[i]})" if data.lines else f"sentence {i + 1}"


def token_impact_sets(original: TokenDataset, corrected: TokenDataset) -> np.ndarray:
    """0 (B), 1 (C) or 2 (U) per sentence of two copies of the same sentences.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> a = make_token_dataset([["a", "b"], ["c"], ["d"]], [["B-X", "O"], ["O"], ["O"]])
    >>> b = make_token_dataset([["a", "b"], ["c"], ["d", "e"]], [["B-Y", "O"], ["O"], ["O", "O"]])
    >>> token_impact_sets(a, b).tolist()
    [1, 0, 2]
    """
    if len(original) != len(corrected):
        raise InvalidInputError(
            f"the original has {len(original)} sentences and the corrected copy "
            f"{len(corrected)}: give two copies of the same sentences in the same order")
    sets = np.full(len(original), BENIGN, dtype=np.int8)
    for i, (toks, fixed) in enumerate(zip(original.tokens, corrected.tokens, strict=True)):
        if toks != fixed:
            sets[i] = UNKNOWN
        elif original.iob2_tags[i] != corrected.iob2_tags[i]:
            sets[i] = CORRECTABLE
    return sets


def _predicted_tags(name: str, source: TagSource, original: TokenDataset,
                    scheme: Scheme | None, tag_column: int) -> list[list[str]]:
    """One model's IOB2 tags, checked against the original's sentences and tokens."""
    if isinstance(source, (TokenDataset, str, Path)):
        data = read_tokens(source, scheme=scheme, tag_column=tag_column)
        tags, tokens = data.iob2_tags, data.tokens
    else:
        tags, tokens = [list(map(str, sent)) for sent in source], None
    if len(tags) != len(original):
        raise InvalidInputError(
            f"predictions {name!r} have {len(tags)} sentences, the data {len(original)}: "
            "predict every sentence of the original file, in its order")
    lengths = [i for i, (got, want) in enumerate(zip(tags, original.tokens, strict=True))
               if len(got) != len(want) or (tokens is not None and tokens[i] != want)]
    if lengths:
        raise InvalidInputError(
            f"predictions {name!r} do not match the data's tokens in {len(lengths)} "
            f"sentences, first {_where(original, lengths[0])}: predict the original file's "
            "tokens, one tag each")
    return tags


def _check_types(name: str, tags: list[list[str]], known: set[str], plain: bool) -> None:
    """Refuse predicted tags (entity types for span tags) the data never uses."""
    seen = {t for sent in tags for t in sent} if plain else {
        split_tag(t)[1] for sent in tags for t in sent if t != "O"}
    outside = sorted(seen - known)
    if outside:
        where = [i for i, sent in enumerate(tags)
                 if any((t if plain else split_tag(t)[1]) in outside for t in sent if t != "O")]
        raise InvalidInputError(
            f"predictions {name!r} have {'tags' if plain else 'entity types'} outside the "
            f"data's {sorted(known)[:10]}: {outside[:5]} in sentences "
            f"{format_rows(np.array(where) + 1).removeprefix('rows ').removeprefix('row ')}")


def token_item_scores(predicted: Sequence[list[list[str]]], original: TokenDataset,
                      corrected: TokenDataset, sets: np.ndarray) -> ItemScores:
    """:class:`ItemScores` of tagged sentences; unknown sentences score 0 over 0."""
    plain = original.scheme == "plain"
    fixed = [corrected.iob2_tags[i] if sets[i] != UNKNOWN else original.iob2_tags[i]
             for i in range(len(original))]
    rows = [(*span_f1_counts(tags, original.iob2_tags, plain=plain),
             *span_f1_counts(tags, fixed, plain=plain))
            for tags in predicted]
    unknown = sets == UNKNOWN
    arrays = [np.vstack([row[k] for row in rows]) for k in range(4)]
    for array in arrays:
        array[:, unknown] = 0.0
    return ItemScores(*arrays)


def measure_impact_tokens(
    corrected: TokenSource, original: TokenSource, predictions: Mapping[str, TagSource], *,
    scheme: Scheme | None = None, tag_column: int = -1, confidence_level: float = 0.95,
    n_points: int = 101) -> ImpactResult:
    """:func:`measure_impact` for tagged data, with sentences as the items and
    entity-level micro F1 (token accuracy for tags without spans) as the score.

    Parameters
    ----------
    corrected, original : TokenDataset or path
        The corrected and the original copy of the same sentences (CoNLL or token JSONL).
    predictions : mapping of str to TokenDataset, path or list of tag lists
        Model name to its tags for every sentence of ``original`` (same tokens).
    scheme, tag_column
        Tagging scheme (default detected per file) and tag column of CoNLL files.
    confidence_level, n_points
        As for :func:`measure_impact`.

    Returns
    -------
    ImpactResult
        With ``metric="entity_f1"`` (or ``"token_accuracy"``) and ``unit="sentences"``.

    Warns
    -----
    RetokenisedWarning
        Sentences re-tokenised in the corrected copy, counted in U.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> tokens = [["John", "ran"], ["Paris", "."], ["Rome", "."]]
    >>> orig = make_token_dataset(tokens, [["B-PER", "O"], ["B-LOC", "O"], ["B-PER", "O"]])
    >>> fixed = make_token_dataset(tokens, [["B-PER", "O"], ["B-LOC", "O"], ["B-LOC", "O"]])
    >>> preds = {"m": [["B-PER", "O"], ["B-LOC", "O"], ["B-LOC", "O"]]}
    >>> result = measure_impact_tokens(fixed, orig, preds)
    >>> (result.n_benign, result.n_correctable, result.metric)
    (2, 1, 'entity_f1')
    >>> float(result.acc_original[0]), float(result.acc_corrected[0])
    (0.6666666666666666, 1.0)
    """
    _check_options(confidence_level, n_points)
    if not predictions:
        raise InvalidParameterError("predictions is empty: give at least one model")
    source = read_tokens(original, scheme=scheme, tag_column=tag_column)
    fixed = read_tokens(corrected, scheme=scheme, tag_column=tag_column)
    if (source.scheme == "plain") != (fixed.scheme == "plain"):
        raise InvalidInputError(
            f"the original's tags are {source.scheme} and the corrected copy's {fixed.scheme}: "
            "give both in one kind (--scheme)")
    sets = token_impact_sets(source, fixed)
    n_retokenised = int((sets == UNKNOWN).sum())
    if n_retokenised:
        first = int(np.flatnonzero(sets == UNKNOWN)[0])
        warnings.warn(f"{n_retokenised} sentences have other tokens in the corrected copy "
                      f"(first {_where(source, first)}): counted as unknown (U)",
                      RetokenisedWarning, stacklevel=2)
    plain = source.scheme == "plain"
    known = ({t for data in (source, fixed) for sent in data.iob2_tags for t in sent} if plain
             else {split_tag(t)[1] for data in (source, fixed) for sent in data.iob2_tags
                   for t in sent if t != "O"})
    tags = []
    for name, given in predictions.items():
        predicted = _predicted_tags(str(name), given, source, scheme, tag_column)
        _check_types(str(name), predicted, known, plain)
        tags.append(predicted)
    scores = token_item_scores(tags, source, fixed, sets)
    return _measure(sets, 0, tuple(map(str, predictions)), scores, confidence_level, n_points,
                    metric="token_accuracy" if plain else "entity_f1", unit="sentences")


def check_impact_options(corrected: str | Path, *,
                         predictions: Sequence[tuple[str, str]] = (),
                         train: str | Path | None = None, original: str | Path | None = None,
                         members: Sequence[str] | None = None, text: str | None = None,
                         text_pair: str | None = None, label: str | None = None,
                         corrected_label: str | None = None, flagged: str | None = None,
                         verdict: str | None = None, scheme: str | None = None,
                         tag_column: int = -1) -> list[str] | None:
    """Check, before any work, the options of ``impact``: ``predictions`` (name, file) or
    a ``train`` file for the model ladder, and options of tables or of token data
    (``original``), not both. Returns the kinds of rung to fit on ``train`` (default all),
    or None when the predictions are given.

    Examples
    --------
    >>> check_impact_options("corrected.csv", train="train.csv", text="text")
    ['tfidf', 'embed', 'finetune']
    >>> check_impact_options("corrected.csv", predictions=[("a", "a.csv"), ("a", "b.csv")])
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: model names given twice in predictions=: ['a']
    """
    if original:
        table_only = [f"{name}=" for name, value in (
            ("label", label), ("corrected_label", corrected_label), ("flagged", flagged),
            ("verdict", verdict), ("text", text), ("text_pair", text_pair)) if value]
        if table_only:
            raise InvalidParameterError(f"{', '.join(table_only)} go with tables, not with "
                                        "token data (original=)",
                                        param=(*(n.rstrip("=") for n in table_only),
                                               "original"))
    elif Path(corrected).suffix.lower() in _TOKEN_SUFFIXES:
        raise InvalidParameterError(
            f"{corrected} looks like a tagged (CoNLL) file: give its original copy with "
            "original=FILE to measure token data", param="original")
    elif scheme is not None or tag_column != -1:
        raise InvalidParameterError("scheme= and tag_column= go with token data (original=)",
                                    param=("scheme", "tag_column", "original"))
    if train and predictions:
        raise InvalidParameterError("give predictions= or train=, not both",
                                    param=("predictions", "train"))
    if predictions:
        if members is not None:
            raise InvalidParameterError("members= goes with train=",
                                        param=("members", "train"))
        names = [name for name, _ in predictions]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InvalidParameterError(f"model names given twice in predictions=: {twice}",
                                        param="predictions")
        return None
    if not train:
        raise InvalidParameterError("give predictions=NAME=FILE or train=FILE"
                                    + ("" if original else " text=COL"),
                                    param=("predictions", "train", "text"))
    if not original and not text:
        raise InvalidParameterError("train= needs text=, the text column",
                                    param=("text", "train"))
    kinds = TOKEN_KINDS if original else KINDS
    if members is None:
        return list(kinds)
    wrong = ",".join(m for m in members if m not in kinds)
    if wrong:
        raise InvalidParameterError(
            f"members={wrong} does not go with "
            f"{'token data' if original else 'tables'}; choose ladder or some of "
            f"{','.join(kinds)}", param="members")
    return list(members)
