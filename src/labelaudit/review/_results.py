"""Results of a review (``labelaudit review results``, ``status`` and ``apply``): verdicts
per item, reviewer statistics, agreement, the detector's precision, the corrected dataset.

Only answers of reviewers in good standing count. The detector's precision counts an item
as a confirmed error unless it is a Non-Error (Chong et al. 2022, section 5: "we consider the
label to be correctly identified as an error" unless three of five workers confirm it);
``count_non_agreement=False`` counts only Correctable items (Northcutt et al.'s set C).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._html_table import result_html
from labelaudit._validation import check_choice
from labelaudit.agreement import fleiss_kappa
from labelaudit.evaluation import verified_precision
from labelaudit.io import ResultFiles, plain_value, read_table, render_table, text_keys, write_table
from labelaudit.review._protocol import (
    CORRECTABLE,
    NON_AGREEMENT,
    NON_ERROR,
    NONE_OF_THESE,
    PENDING,
    UNSURE,
    VERDICTS,
    verdicts_from_annotations,
)
from labelaudit.review._store import Progress, ReviewStore, as_store, progress

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_ITEM_COLUMNS = ["id", "text", "text_pair", "label", "suggested_label", "score", "rank",
                 "verdict", "majority_label", "is_error", "n_votes", "n_given", "n_unsure",
                 "votes"]


@dataclass(frozen=True)
class ReviewResults(ResultFiles):
    """Everything ``review results`` reports: ``items`` (verdict columns after the scan's, most
    suspect first), ``reviewers`` (status, answers, qualification, sentinel accuracy, agreement
    with the majority, median seconds), ``precision_at_k`` over the ``k`` most suspect decided
    items, Fleiss' kappa over items with two votes or more (``unsure`` left out; NaN if none),
    ``verified`` precision over all decided items with the errors it implies among the flagged
    (None before any verdict), and ``selection`` (``"top"`` makes that estimate an upper one)."""

    items: pd.DataFrame
    reviewers: pd.DataFrame
    precision_at_k: pd.DataFrame
    fleiss_kappa: float
    n_kappa_items: int
    verified: Any
    n_flagged: int | None
    selection: str
    confidence: float

    def to_frame(self) -> pd.DataFrame:
        """The per-item verdict table."""
        return self.items

    def verdict_counts(self) -> dict[str, int]:
        """Items per verdict (Correctable, Non-Agreement, Non-Error, Pending)."""
        counts = self.items["verdict"].value_counts()
        return {v: int(counts.get(v, 0)) for v in (CORRECTABLE, NON_AGREEMENT, NON_ERROR,
                                                   PENDING)}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (reviewer table and precision curve included)."""
        def clean(value: Any) -> Any:
            value = plain_value(value)
            return None if isinstance(value, float) and math.isnan(value) else value

        def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
            return [{k: clean(v) for k, v in r.items()} for r in frame.to_dict("records")]

        return {
            "n_items": len(self.items),
            "verdicts": self.verdict_counts(),
            "fleiss_kappa": clean(self.fleiss_kappa),
            "n_kappa_items": self.n_kappa_items,
            "precision": None if self.verified is None else self.verified.to_dict(),
            "n_flagged": self.n_flagged,
            "selection": self.selection,
            "reviewers": records(self.reviewers),
            "precision_at_k": records(self.precision_at_k),
        }

    def summary(self) -> str:
        """One line for a person: verdicts, the detector's precision, errors, kappa."""
        text = ", ".join(f"{k} {v}" for k, v in self.verdict_counts().items())
        v = self.verified
        if v is not None:
            text += f"; detector precision {_interval(v.precision, v.ci_low, v.ci_high, '.3f')}"
            if v.estimated_errors is not None:
                errors = _interval(v.estimated_errors, v.estimated_errors_low,
                                   v.estimated_errors_high, ".0f")
                text += f"; estimated errors among {self.n_flagged} flagged: {errors}"
        return text + f"; Fleiss' kappa {_kappa_text(self.fleiss_kappa)}"


def _interval(value: float, low: float, high: float, spec: str) -> str:
    return f"{value:{spec}} [{low:{spec}}, {high:{spec}}]"


def _kappa_text(kappa: float) -> str:
    return "n/a" if math.isnan(kappa) else f"{kappa:.3f}"


@dataclass(frozen=True)
class ReviewStatus(ResultFiles):
    """Where a review stands (``labelaudit review status``): progress and results so far."""

    progress: Progress
    results: ReviewResults

    def to_frame(self) -> pd.DataFrame:
        """The reviewer table (see :attr:`ReviewResults.reviewers`)."""
        return self.results.reviewers

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: the results' (without the precision curve) and progress."""
        summary = self.results.to_dict()
        summary.pop("precision_at_k")
        done = self.progress
        summary["progress"] = {"n_items": done.n_items, "n_complete": done.n_complete,
                               "n_answers": done.n_answers, "n_needed": done.n_needed}
        return summary

    def summary(self) -> str:
        """A few lines for a person: progress, verdicts, kappa and precision."""
        done, results = self.progress, self.results
        lines = [
            f"items complete: {done.n_complete} of {done.n_items} "
            f"({done.n_answers} of {done.n_needed} answers, {done.share_complete:.0%})",
            "verdicts so far: " + ", ".join(f"{k} {v}"
                                            for k, v in results.verdict_counts().items()),
            f"Fleiss' kappa: {_kappa_text(results.fleiss_kappa)} "
            f"over {results.n_kappa_items} items",
        ]
        v = results.verified
        if v is not None:
            precision = _interval(v.precision, v.ci_low, v.ci_high, ".3f")
            lines.append(f"detector precision: {precision} over {v.n_verified} decided items")
        return "\n".join(lines)

    def to_text(self) -> str:
        """:meth:`summary`, then the reviewer table when there are reviewers."""
        reviewers = self.to_frame().drop(columns=["status_reason", "source"])
        table = f"\n{render_table(reviewers, max_colwidth=60)}\n" if len(reviewers) else ""
        return f"{self.summary()}\n{table}"


def review_status(db: ReviewStore | str | Path) -> ReviewStatus:
    """Progress and results so far of a review project.

    Parameters
    ----------
    db
        The project's database (see :func:`init_review`), or its open store.

    Returns
    -------
    ReviewStatus
        ``progress`` (answers so far, per reviewer) and ``results`` (:func:`review_results`).
    """
    store = as_store(db)
    return ReviewStatus(progress=progress(store), results=review_results(store))


def _kappa(votes: pd.DataFrame, categories: list[str]) -> tuple[float, int]:
    import pandas as pd

    counted = votes[votes["answer"] != UNSURE]
    if counted.empty:
        return float("nan"), 0
    table = pd.crosstab(counted["item_pk"], counted["answer"]).reindex(
        columns=categories, fill_value=0)
    table = table[table.sum(axis=1) >= 2]
    if table.empty:
        return float("nan"), 0
    return float(fleiss_kappa(table.to_numpy())), len(table)


def _reviewer_stats(answers: pd.DataFrame, reviewers: pd.DataFrame,
                    items: pd.DataFrame, majority: dict[int, str]) -> pd.DataFrame:
    import pandas as pd
    rows = []
    known = dict(zip(items["item_pk"], items["known_label"], strict=True))
    for reviewer in reviewers.itertuples():
        if reviewer.role != "reviewer":
            continue
        mine = answers[answers["reviewer_pk"] == reviewer.reviewer_pk]
        review = mine[mine["kind"] == "review"]
        quals = mine[mine["kind"] == "qualification"]
        sentinels = mine[mine["kind"] == "sentinel"]
        decided = review[review["item_pk"].isin(list(majority))]
        agree = (decided["answer"] == decided["item_pk"].map(majority))
        correct = lambda block: (block["answer"] == block["item_pk"].map(known)).mean()  # noqa
        rows.append({
            "reviewer": reviewer.name,
            "status": reviewer.status,
            "status_reason": reviewer.status_reason,
            "source": reviewer.source,
            "n_answers": len(review),
            "n_excluded": int(review["excluded"].sum()),
            "qualification_score": float(correct(quals)) if len(quals) else np.nan,
            "n_sentinels": len(sentinels),
            "sentinel_accuracy": float(correct(sentinels)) if len(sentinels) else np.nan,
            "agreement_with_majority": float(agree.mean()) if len(agree) else np.nan,
            "median_seconds": float(mine["seconds"].dropna().median())
            if mine["seconds"].notna().any() else np.nan,
        })
    return pd.DataFrame(rows, columns=[
        "reviewer", "status", "status_reason", "source", "n_answers", "n_excluded",
        "qualification_score", "n_sentinels", "sentinel_accuracy", "agreement_with_majority",
        "median_seconds"])


def _precision_curve(items: pd.DataFrame, confirmed: pd.Series, confidence: float,
                     ) -> pd.DataFrame:
    import pandas as pd

    decided = (items["verdict"] != PENDING).to_numpy()
    n_verified = np.cumsum(decided)
    n_confirmed = np.cumsum(decided & confirmed.to_numpy())
    rows = []
    for k, (nv, nc) in enumerate(zip(n_verified, n_confirmed, strict=True), start=1):
        if nv == 0:
            rows.append((k, 0, 0, np.nan, np.nan, np.nan))
            continue
        vp = verified_precision(int(nc), int(nv), confidence=confidence)
        rows.append((k, int(nv), int(nc), vp.precision, vp.ci_low, vp.ci_high))
    return pd.DataFrame(rows, columns=["k", "n_verified", "n_confirmed", "precision", "ci_low",
                                       "ci_high"])


def review_results(
    store: ReviewStore | str | Path,
    *,
    confidence: float = 0.95,
    count_non_agreement: bool = True,
) -> ReviewResults:
    """Compute verdicts and statistics from a review project.

    Parameters
    ----------
    store : ReviewStore or path
    confidence : float
        Level of the Clopper-Pearson intervals.
    count_non_agreement : bool
        Non-Agreement items count as confirmed errors (as in the 2022 paper); False: Correctable.

    Returns
    -------
    ReviewResults
    """
    import pandas as pd

    store = as_store(store)
    config = store.config
    items = store.items_frame()
    answers = store.answers_frame()
    reviewers = store.reviewers_frame()
    review_items = items[items["kind"] == "review"].sort_values("position")
    counted = answers[(answers["kind"] == "review") & (answers["excluded"] == 0)]
    annotations = pd.DataFrame({"item_id": counted["item_pk"].to_numpy(),
                                "annotator_id": counted["reviewer_pk"].to_numpy(),
                                "label": counted["answer"].to_numpy()})
    given = pd.Series(review_items["given_label"].to_numpy(),
                      index=review_items["item_pk"].to_numpy())
    table = verdicts_from_annotations(annotations, given, n_reviewers=config.n_reviewers,
                                      majority=config.majority)
    majority = {int(pk): label for pk, label in
                zip(table["item_id"], table["majority_label"], strict=True) if label is not None}
    out = pd.DataFrame({
        "id": review_items["item_id"].to_numpy(),
        "text": review_items["text"].to_numpy(),
        "text_pair": review_items["text_pair"].to_numpy(),
        "label": None,
        "suggested_label": None,
        "score": review_items["score"].to_numpy(dtype=float),
        "rank": review_items["rank"].astype("int64").to_numpy(),
        "verdict": table["verdict"].to_numpy(),
        "majority_label": None,
        "is_error": table["is_error"].to_numpy(),
        "n_votes": table["n_votes"].to_numpy(),
        "n_given": table["n_given"].to_numpy(),
        "n_unsure": table["n_unsure"].to_numpy(),
        "votes": table["votes"].to_numpy(),
    }, columns=_ITEM_COLUMNS)
    for column, stored in (("label", review_items["given_label"]),
                           ("suggested_label", review_items["suggested_label"]),
                           ("majority_label", table["majority_label"])):
        # labels keep the user's type (integers stay integers next to missing values)
        out[column] = pd.Series([config.label_value(v) for v in stored], index=out.index,
                                dtype=object)
    if out["text_pair"].isna().all():
        out = out.drop(columns="text_pair")
    confirmed = (out["verdict"] == CORRECTABLE) | (
        (out["verdict"] == NON_AGREEMENT) if count_non_agreement else False)
    curve = _precision_curve(out, confirmed, confidence)
    n_decided = int((out["verdict"] != PENDING).sum())
    verified = None
    if n_decided:
        n_conf = int((confirmed & (out["verdict"] != PENDING)).sum())
        n_flagged = config.n_flagged if (config.n_flagged or 0) >= n_decided else None
        verified = verified_precision(n_conf, n_decided, confidence=confidence,
                                      n_flagged=n_flagged)
    kappa, n_kappa = _kappa(counted, [*config.class_keys, "none of these"])
    stats = _reviewer_stats(answers, reviewers, items, majority)
    return ReviewResults(items=out, reviewers=stats, precision_at_k=curve, fleiss_kappa=kappa,
                         n_kappa_items=n_kappa, verified=verified, n_flagged=config.n_flagged,
                         selection=config.selection, confidence=confidence)


PROVENANCE_COLUMNS = ["review_original_label", "review_verdict", "review_votes", "review_action"]


def _coerce(value: Any, column: pd.Series) -> Any:
    """Give a majority label the type of the dataset's label column."""
    import pandas as pd
    if pd.api.types.is_integer_dtype(column.dtype) or pd.api.types.is_float_dtype(column.dtype):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"the verdicts relabel an item to {value!r}, but the dataset's labels are numbers"
            ) from None
        return int(number) if pd.api.types.is_integer_dtype(column.dtype) else number
    if pd.api.types.is_bool_dtype(column.dtype):
        return str(value).strip().lower() in ("true", "1")
    return value if isinstance(value, str) else str(value)


def _key(values: pd.Series) -> pd.Series:
    """Ids compared by their text (``3.0`` -> ``"3"``; ``"068"`` stays itself)."""
    import pandas as pd
    return pd.Series(text_keys(values), index=values.index)


def apply_verdicts(
    data: pd.DataFrame,
    verdicts: pd.DataFrame,
    *,
    label: str = "label",
    id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    row_numbers: bool = False,
    non_agreement: Literal["flag", "drop", "keep"] = "flag",
) -> pd.DataFrame:
    """Return a corrected copy of ``data``: Correctable items relabelled, with provenance.

    Parameters
    ----------
    data : DataFrame
        The dataset that was scanned.
    verdicts : DataFrame
        The output of ``review results``: ``id, verdict, majority_label`` (and ``votes``).
    label : str
        The label column of ``data``.
    id : str, optional
        The id column of ``data``; default as ``scan``: ``id`` if present, else the row number.
    row_numbers : bool
        Use row numbers (0-based) as ids even when ``data`` has an ``id`` column.
    non_agreement : {"flag", "drop", "keep"}
        What to do with Non-Agreement items (and a Correctable majority of ``none of these``):
        keep them as ``review_action="flagged"``, drop them, or keep them as ``"kept"``.

    Returns
    -------
    DataFrame
        A copy of ``data``, dropped rows left out, with the label corrected and the columns
        ``review_original_label``, ``review_verdict``, ``review_votes`` and ``review_action``
        (``relabelled``, ``flagged``, ``kept``, ``confirmed``, ``pending``; empty if unreviewed).

    Examples
    --------
    >>> import pandas as pd
    >>> data = pd.DataFrame({"id": [1, 2, 3], "text": ["x", "y", "z"], "label": ["a", "a", "b"]})
    >>> verdicts = pd.DataFrame({"id": [1, 2, 3], "verdict": ["Correctable", "Non-Error",
    ...     "Non-Agreement"], "majority_label": ["b", "a", None], "votes": ["b:3", "a:5", ""]})
    >>> out = apply_verdicts(data, verdicts, non_agreement="drop")
    >>> out[["id", "label", "review_original_label", "review_action"]].to_dict("list")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'id': [1, 2], 'label': ['b', 'a'], 'review_original_label': ['a', 'a'],
     'review_action': ['relabelled', 'confirmed']}
    """
    import pandas as pd
    check_choice(non_agreement, "non_agreement", ("flag", "drop", "keep"))
    id = _id_column(data, verdicts, label=label, id=id, row_numbers=row_numbers)  # noqa: A001
    data_keys, by_key = _keyed(data, verdicts, id)
    out = data.copy()
    original = out[label].copy()
    labels = out[label].astype(object).copy()
    verdict_col, votes_col, action = (pd.Series("", index=out.index, dtype=object)
                                      for _ in range(3))
    drop = np.zeros(len(out), dtype=bool)
    for position, (row_index, key) in enumerate(data_keys.items()):
        if key not in by_key.index:
            continue
        row = by_key.loc[key]
        verdict_col[row_index] = row["verdict"]
        votes = row.get("votes", "")
        votes_col[row_index] = "" if pd.isna(votes) else str(votes)
        action[row_index] = _action(row["verdict"], row["majority_label"], non_agreement)
        if action[row_index] == "relabelled":
            labels[row_index] = _coerce(row["majority_label"], original)
        drop[position] = action[row_index] == "dropped"
    out[label] = labels
    try:
        out[label] = out[label].astype(original.dtype)
    except (TypeError, ValueError):
        pass
    out = out.assign(review_original_label=original, review_verdict=verdict_col,
                     review_votes=votes_col, review_action=action)
    return out.loc[~drop].reset_index(drop=True)


def _action(verdict: str, majority: Any, non_agreement: str) -> str:
    """What ``apply`` does with an item: relabelled, flagged, dropped, kept, pending, confirmed."""
    import pandas as pd
    if verdict == CORRECTABLE and not pd.isna(majority) and str(majority) != NONE_OF_THESE:
        return "relabelled"
    if verdict in (NON_AGREEMENT, CORRECTABLE):
        return {"flag": "flagged", "drop": "dropped", "keep": "kept"}[non_agreement]
    return "pending" if verdict == PENDING else "confirmed"


def _id_column(data: pd.DataFrame, verdicts: pd.DataFrame, *, label: str, id: str | None,  # noqa: A002
               row_numbers: bool) -> str | None:
    """The dataset's id column (None: row numbers), after checking both tables' columns."""
    missing = [c for c in ("id", "verdict", "majority_label") if c not in verdicts.columns]
    if missing:
        raise InvalidInputError(
            f"the verdicts file lacks {missing}; use the output of `labelaudit review results`")
    if row_numbers:
        if id is not None:
            raise InvalidParameterError("give an id column or row_numbers=True, not both")
    elif id is None and "id" in data.columns:
        id = "id"  # noqa: A001 - scan's rule: a column named id, else row numbers
    needed = [label] + ([id] if id is not None else [])
    absent = [c for c in needed if c not in data.columns]
    if absent:
        raise InvalidInputError(
            f"the dataset lacks column{'s' if len(absent) > 1 else ''} {absent}; it has "
            f"{list(map(str, data.columns[:12]))}" + ("" if id is None or id in data.columns
                                                      else "; pass the right --id or --no-id"))
    clash = [c for c in PROVENANCE_COLUMNS if c in data.columns]
    if clash:
        raise InvalidInputError(
            f"the dataset already has {clash}: it looks corrected already; apply to the original")
    bad = ~verdicts["verdict"].isin([*VERDICTS, PENDING])
    if bad.any():
        raise InvalidInputError(
            f"unknown verdicts {sorted(set(verdicts['verdict'][bad].astype(str)))} in "
            f"{format_rows(verdicts['id'][bad].tolist())}")
    return id


def _keyed(data: pd.DataFrame, verdicts: pd.DataFrame, id: str | None,  # noqa: A002
           ) -> tuple[pd.Series, pd.DataFrame]:
    """The dataset's ids as text, and the verdicts indexed by the same text."""
    import pandas as pd
    data_keys = _key(data[id]) if id is not None else pd.Series(
        [str(i) for i in range(len(data))], index=data.index)
    if data_keys.duplicated().any():
        raise InvalidInputError(
            f"the dataset has duplicate ids: {format_rows(data_keys[data_keys.duplicated()])}")
    verdict_keys = _key(verdicts["id"])
    if verdict_keys.duplicated().any():
        raise InvalidInputError(
            f"the verdicts file has duplicate ids: "
            f"{format_rows(verdict_keys[verdict_keys.duplicated()].tolist())}")
    unknown = ~verdict_keys.isin(set(data_keys))
    if unknown.any():
        raise InvalidInputError(
            f"the verdicts name ids the dataset does not have: "
            f"{format_rows(verdict_keys[unknown].tolist())}; is this the dataset that was "
            "scanned, with the same --id?" + ("" if id is not None else
                                              " (the ids here are row numbers, 0-based)"))
    return data_keys, verdicts.assign(_key=verdict_keys.to_numpy()).set_index("_key")


@dataclass(frozen=True)
class AppliedVerdicts:
    """What :func:`apply_verdicts_file` did: the file written, its table, the rows dropped."""

    path: Path
    corrected: pd.DataFrame
    n_dropped: int

    def to_frame(self) -> pd.DataFrame:
        """The corrected table, as written (see :func:`apply_verdicts`)."""
        return self.corrected

    def action_counts(self) -> dict[str, int]:
        """Rows per ``review_action``: relabelled, flagged, kept, confirmed, pending."""
        actions = self.corrected["review_action"].value_counts()
        return {a: int(actions.get(a, 0))
                for a in ("relabelled", "flagged", "kept", "confirmed", "pending")}

    def _repr_html_(self) -> str:
        """The corrected table in a notebook, the rows the review changed first, then the
        others it decided (in the order of :meth:`action_counts`), then the rest."""
        order = {action: i for i, action in enumerate(self.action_counts())}
        reviewed = self.corrected.sort_values(
            "review_action", key=lambda a: a.map(lambda x: order.get(x, len(order))),
            kind="stable").reset_index(drop=True)
        return result_html(self, reviewed, header=str(self))

    def __str__(self) -> str:
        n = self.action_counts()
        return (f"wrote {self.path}: {n['relabelled']} relabelled, {n['flagged']} flagged, "
                f"{self.n_dropped} dropped, {n['confirmed']} confirmed, "
                f"{len(self.corrected)} rows")


def apply_verdicts_file(data: str | Path, verdicts: str | Path, out: str | Path, *,
                        label: str = "label", id: str | None = None,  # noqa: A002
                        row_numbers: bool = False,
                        non_agreement: Literal["flag", "drop", "keep"] = "flag",
                        ) -> AppliedVerdicts:
    """Read a dataset and the verdicts of ``review results``, write the corrected copy.

    Options as in :func:`apply_verdicts`; ``out`` (its suffix picks the format) is written
    atomically and may not be an input.

    Returns
    -------
    AppliedVerdicts
    """
    target = Path(out)
    for source in (data, verdicts):
        if target.exists() and Path(source).exists() and \
                target.resolve() == Path(source).resolve():
            raise InvalidParameterError(
                f"out {target} is an input file; apply never writes in place, choose a new file")
    frame = read_table(data)
    corrected = apply_verdicts(frame, read_table(verdicts), label=label, id=id,
                               row_numbers=row_numbers, non_agreement=non_agreement)
    write_table(corrected, target)
    return AppliedVerdicts(path=target, corrected=corrected,
                           n_dropped=len(frame) - len(corrected))
