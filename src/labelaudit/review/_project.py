"""Create a review project from a scan output: what to review, and the known-answer items.

The known-answer items (the first ``n_qualification`` for the qualification test, the next
``n_sentinels`` as sentinels) come from a ``sentinels`` file (``id, text, [text_pair,]
label``, its labels taken as correct: the better choice, since the papers use hand-picked
items, Chong et al. 2022, appendix C: "a qualification test of four unambiguous
questions"), else from the bottom of the scan's ranking: labels the detector trusts most,
but that no person checked (a wrong one costs honest reviewers sentinel accuracy). That
needs the whole ranking (scan without ``--top``): a known item the scan flagged is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._validation import check_int
from labelaudit.io import encode_labels, read_evidence, read_table
from labelaudit.review._evidence import evidence_json
from labelaudit.review._protocol import ProjectConfig, check_majority
from labelaudit.review._store import ReviewStore

if TYPE_CHECKING:
    import pandas as pd

def _table(value: pd.DataFrame | str | Path) -> pd.DataFrame:
    import pandas as pd
    return value if isinstance(value, pd.DataFrame) else read_table(value)


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"the {what} lacks column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(map(repr, missing))}; it has {', '.join(map(repr, frame.columns[:12]))}")


def _check_texts(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    for column in columns:
        values = frame[column]
        empty = values.isna().to_numpy() | (values.astype(str).str.strip() == "").to_numpy()
        if empty.any():
            raise InvalidInputError(
                f"the {what} has empty {column!r} in {format_rows(frame['id'][empty].tolist())}")


def _ranked(scan: pd.DataFrame, rank_by: str | None, score_column: str | None) -> pd.DataFrame:
    import pandas as pd
    _require(scan, ["text", "label"], "scan file")
    if rank_by is not None and rank_by not in scan.columns:
        raise InvalidInputError(
            f"--rank-by {rank_by!r}: the file has no such column; it has "
            f"{', '.join(map(repr, scan.columns[:12]))}")
    if len(scan) == 0:
        raise InvalidInputError("the scan file has no rows")
    frame = scan.copy()
    if "id" not in frame.columns:  # scan's rule: without an id column, ids are row numbers
        frame.insert(0, "id", np.arange(len(frame)))
    ids = frame["id"].astype(str)
    if ids.duplicated().any():
        raise InvalidInputError(
            f"the scan file has duplicate ids: {format_rows(ids[ids.duplicated()].unique())}")
    scores = [c for c in frame.columns if str(c).startswith("score_")]
    if rank_by is not None:
        key = pd.to_numeric(frame[rank_by], errors="coerce")
        bad = key.isna().to_numpy()
        if bad.any():
            raise InvalidInputError(
                f"--rank-by {rank_by!r} needs a number in every row; it has none in "
                f"{format_rows(frame['id'][bad].tolist())}")
        frame = frame.assign(rank=key.rank(method="first").astype(int))
    elif "rank" not in frame.columns and not scores and score_column is None:
        raise InvalidInputError(
            "the input is not a scan output (it has no 'rank' or 'score_*' column), so nothing "
            "says which items are suspect; review the output of `labelaudit scan`, or pass "
            "--rank-by COLUMN to order the items by a column (ascending, most suspect first)")
    elif "rank" not in frame.columns:  # a scan output without ranks: its score ranks
        column = score_column if score_column is not None else scores[0]
        _require(frame, [column], "scan file")
        key = pd.to_numeric(frame[column], errors="coerce")
        if key.isna().any():
            raise InvalidInputError(f"the scan file's {column!r} column has missing values")
        frame = frame.assign(rank=key.rank(method="first").astype(int))
    if frame["rank"].isna().any():
        raise InvalidInputError("the scan file's 'rank' column has missing values")
    frame = frame.sort_values("rank", kind="stable")
    if "flagged" in frame.columns:
        frame["flagged"] = frame["flagged"].map(
            lambda v: str(v).strip().lower() in ("true", "1", "yes", "1.0"))
    return frame.reset_index(drop=True)


def _score_column(frame: pd.DataFrame, score_column: str | None) -> str | None:
    import pandas as pd
    if score_column is not None:
        _require(frame, [score_column], "scan file")
        return score_column
    candidates = [c for c in frame.columns if str(c).startswith("score_")]
    # prefer the score that produced the ranking (non-decreasing down the ranked rows)
    for column in candidates:
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        if not np.isnan(values).any() and (np.diff(values) >= 0).all():
            return column
    return candidates[0] if candidates else ("loss" if "loss" in frame.columns else None)


def init_review(
    scan: pd.DataFrame | str | Path,
    db: str | Path,
    *,
    top: int | None = None,
    select: Literal["top", "random"] = "top",
    n_reviewers: int = 5,
    majority: int | None = None,
    n_sentinels: int = 0,
    n_qualification: int | None = None,
    sentinels: pd.DataFrame | str | Path | None = None,
    show_label: bool = False,
    pass_mark: float = 0.75,
    sentinel_threshold: float = 0.7,
    min_sentinels: int = 3,
    sentinel_every: int | None = None,
    labels: Sequence[Any] | None = None,
    n_flagged: int | None = None,
    score_column: str | None = None,
    rank_by: str | None = None,
    title: str = "Label review",
    instructions: str = "",
    source: str = "",
    lease_seconds: float = 600.0,
    random_state: int | None = 0,
    overwrite: bool = False,
) -> ReviewStore:
    """Create a review project (a SQLite file) from a scan output.

    Parameters
    ----------
    scan : DataFrame or path
        A scan output or its file (``id, text, [text_pair,] label``, ``rank`` or ``score_*``,
        optionally ``suggested_label, suggested_prob, loss, flagged, evidence``), taken in
        ``rank`` order, else by ascending score. Without ``id``, ids are 0-based row numbers,
        as in ``scan``. Each review item keeps its ``evidence`` (shown to reviewers as the
        protocol allows); known-answer items have none.
    db : path
        The project file to create.
    top : int, optional
        How many items to review. Default: every flagged item (needs ``flagged``).
    select : {"top", "random"}
        The ``top`` most suspect, or ``top`` flagged at random (an unbiased error estimate).
    n_reviewers, majority : int
        Reviewers per item and votes needed for a verdict.
    n_sentinels : int
        Known-answer items mixed into each reviewer's queue.
    n_qualification : int, optional
        Known-answer items every reviewer answers first; default 4 when there are, else 0.
    sentinels : DataFrame or path, optional
        Known items (``id, text, [text_pair,] label``); default the scan's least suspect items.
    show_label : bool
        Show reviewers the given label; by default they label blind.
    pass_mark, sentinel_threshold, min_sentinels, sentinel_every, lease_seconds
        As in :class:`ProjectConfig`; ``sentinel_every`` defaults to spreading the sentinels
        evenly over the review items, at least one every 10.
    labels : sequence, optional
        Default every ``label`` and ``suggested_label`` of the scan and sentinels. Text labels
        (``"0"``) take the type of integer labels in the scan.
    n_flagged : int, optional
        Items flagged in the whole dataset; default the count of ``flagged``.
    score_column : str, optional
        The score kept with each item; default the ``score_*`` that ranks the items.
    rank_by : str, optional
        A numeric column to order by instead, ascending; needed without ``rank`` or ``score_*``.
    random_state : int, optional
        Seed of the random sample (``select="random"``).
    source : str, optional
        Where the scan came from; default its path when ``scan`` is one.

    Returns
    -------
    ReviewStore

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import pandas as pd
    >>> scan = pd.DataFrame({"id": range(8), "text": [f"t{i}" for i in range(8)],
    ...                      "label": ["a", "b"] * 4, "rank": range(1, 9),
    ...                      "flagged": [True] * 3 + [False] * 5})
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "review.sqlite"
    >>> store = init_review(scan, db, n_sentinels=2, n_qualification=1)
    >>> store.items_frame().groupby("kind").size().to_dict()
    {'qualification': 1, 'review': 3, 'sentinel': 2}
    """
    import pandas as pd
    if not isinstance(scan, pd.DataFrame):
        source = source or str(scan)
    n_reviewers = check_int(n_reviewers, "n_reviewers", minimum=1)
    majority = check_majority(n_reviewers, majority)
    n_sentinels = check_int(n_sentinels, "n_sentinels", minimum=0)
    if select not in ("top", "random"):
        raise InvalidParameterError(f"select must be 'top' or 'random', got {select!r}")
    frame = _ranked(_table(scan), rank_by, score_column)
    has_pair = "text_pair" in frame.columns
    review, top, n_flagged = _review_items(frame, top, select, n_flagged, random_state)
    if n_qualification is None:
        n_qualification = 4 if (sentinels is not None or n_sentinels > 0) else 0
    n_qualification = check_int(n_qualification, "n_qualification", minimum=0)
    known, n_sentinels = _known_items(frame.drop(index=review.index), sentinels,
                                      n_qualification, n_sentinels, has_pair)
    _check_items(review, known, ["text", "text_pair"] if has_pair else ["text"],
                 "sentinels file" if sentinels is not None else "scan")
    if sentinel_every is None:
        sentinel_every = int(np.clip(round(top / (n_sentinels + 1)), 1, 10)) if n_sentinels else 5
    score = _score_column(frame, score_column)
    config = ProjectConfig(
        classes=_label_set(frame, known, labels), n_reviewers=n_reviewers, majority=majority,
        show_label=bool(show_label), pass_mark=float(pass_mark),
        sentinel_threshold=float(sentinel_threshold),
        min_sentinels=check_int(min_sentinels, "min_sentinels", minimum=1),
        sentinel_every=check_int(sentinel_every, "sentinel_every", minimum=1),
        lease_seconds=float(lease_seconds), n_flagged=n_flagged, n_rows=len(frame),
        selection=select, source=source, title=title, instructions=instructions,
        extra={"score_column": score})
    if n_flagged is not None and n_flagged < top and select == "random":
        raise InvalidParameterError(f"n_flagged ({n_flagged}) is smaller than --top ({top})",
                                    param=("n_flagged", "top"))
    items = _items_table(review, known, n_qualification, has_pair, score)
    return ReviewStore.create(db, config, items, overwrite=overwrite)


def _review_items(frame: pd.DataFrame, top: int | None, select: str, n_flagged: int | None,
                  random_state: int | None) -> tuple[pd.DataFrame, int, int | None]:
    """The items to review (most suspect first), how many, and the dataset's flagged count."""
    has_flags = "flagged" in frame.columns
    if top is None:
        if not has_flags:
            raise InvalidParameterError(
                "the scan file has no 'flagged' column: say how many items to review with --top",
                param="top")
        top = int(frame["flagged"].sum())
        if top == 0:
            raise InvalidInputError("the scan flagged no item; choose items with --top N")
    top = check_int(top, "top", minimum=1)
    if has_flags and n_flagged is None:
        n_flagged = int(frame["flagged"].sum())
    pool = frame[frame["flagged"]] if (select == "random" and has_flags) else frame
    if top > len(pool):
        raise InvalidParameterError(
            f"--top {top} asks for more items than the scan file has "
            f"({len(pool)}{' flagged' if pool is not frame else ''})", param="top")
    if select == "random":
        rng = np.random.default_rng(random_state)
        chosen = np.sort(rng.choice(pool.index.to_numpy(), size=top, replace=False))
    else:
        chosen = frame.index.to_numpy()[:top]
    return frame.loc[chosen], top, n_flagged


def _known_items(rest: pd.DataFrame, sentinels: pd.DataFrame | str | Path | None,
                 n_qualification: int, n_sentinels: int, has_pair: bool,
                 ) -> tuple[pd.DataFrame, int]:
    """Known-answer items (qualification, then sentinels) from ``rest``, and the sentinel count."""
    n_known = n_qualification + n_sentinels
    if sentinels is not None:
        given = _table(sentinels)
        _require(given, ["id", "text", "label"] + (["text_pair"] if has_pair else []),
                 "sentinels file")
        known = given.reset_index(drop=True).copy()
        if n_sentinels == 0:
            n_sentinels = max(len(known) - n_qualification, 0)
            n_known = n_qualification + n_sentinels
        if len(known) < n_known or n_known == 0:
            raise InvalidInputError(
                f"the sentinels file has {len(known)} items; {n_qualification} qualification "
                f"and {n_sentinels} sentinel items need {max(n_known, 1)}")
        known = known.iloc[:n_known]
    else:
        if n_known > len(rest):
            raise InvalidParameterError(
                f"{n_qualification} qualification and {n_sentinels} sentinel items need "
                f"{n_known} unreviewed items from the bottom of the scan, which has only "
                f"{len(rest)}; lower --top or give --sentinels-file")
        known = rest.iloc[len(rest) - n_known:].iloc[::-1] if n_known else rest.iloc[:0]
        if "flagged" in known.columns and known["flagged"].any():
            raise InvalidInputError(
                "the least suspect items of the scan file are flagged themselves "
                f"({format_rows(known['id'][known['flagged']].tolist())}), so their labels "
                "cannot serve as known answers: run the scan without --top or give "
                "--sentinels-file")
    known = known.assign(id=known["id"].astype(str))
    if known["id"].duplicated().any():
        raise InvalidInputError(
            f"the sentinels file has duplicate ids: "
            f"{format_rows(known['id'][known['id'].duplicated()].tolist())}")
    return known, n_sentinels


def _check_items(review: pd.DataFrame, known: pd.DataFrame, text_columns: list[str],
                 known_what: str) -> None:
    """Every item to show has its texts and a label."""
    review = review.assign(id=review["id"].astype(str))
    _check_texts(review, text_columns, "scan file")
    if len(known):
        _check_texts(known, text_columns, known_what)
    for block, what in ((review, "scan file"), (known, known_what)):
        unlabelled = block["label"].isna().to_numpy()
        if unlabelled.any():
            raise InvalidInputError(
                f"the {what} has items without a label: "
                f"{format_rows(block['id'][unlabelled].tolist())}; label or drop them")


def _label_set(frame: pd.DataFrame, known: pd.DataFrame, labels: Sequence[Any] | None,
               ) -> list[Any]:
    """Answer options: every label of the file; text labels (``"0"``) take integer labels' type."""
    import pandas as pd
    label_values = [frame["label"].dropna(), known["label"]]
    if "suggested_label" in frame.columns:
        label_values.append(frame["suggested_label"].dropna())
    everything = pd.concat(label_values, ignore_index=True)
    if labels is None:
        _, unique = encode_labels(everything, np.arange(len(everything)), column="label")
        return list(unique.tolist())
    classes = list(labels)
    if pd.api.types.is_numeric_dtype(frame["label"]):
        classes = [int(v) if isinstance(v, str) and v.strip().lstrip("-").isdigit() else v
                   for v in classes]
    outside = sorted({str(v) for v in everything} - {str(c) for c in classes})
    if outside:
        raise InvalidInputError(
            f"labels {outside} occur in the scan or sentinels but not in --labels {classes}")
    return classes


def _evidence_column(review: pd.DataFrame) -> list[str | None]:
    """Each review item's evidence as JSON text (None without); a readable string from a CSV
    does not say the given label, so ``against`` is filled with it."""
    if "evidence" not in review.columns:
        return [None] * len(review)
    column = []
    for value, given, item in zip(review["evidence"], review["label"], review["id"],
                                  strict=True):
        try:
            evidence = read_evidence(value)
        except InvalidInputError as error:
            raise InvalidInputError(
                f"the scan file's 'evidence' of item {item} has {error}; re-run "
                "`labelaudit scan --out` rather than editing its output") from None
        if evidence is not None and evidence.get("against") is None:
            evidence["against"] = str(given)
        column.append(evidence_json(evidence))
    return column


def _items_table(review: pd.DataFrame, known: pd.DataFrame, n_qualification: int,
                 has_pair: bool, score: str | None) -> pd.DataFrame:
    """The rows of the project's ``items`` table: review items, qualification, sentinels."""
    import pandas as pd
    items = pd.DataFrame({
        "item_id": review["id"].astype(str).to_numpy(),
        "kind": "review",
        "position": np.arange(len(review)),
        "text": review["text"].astype(str).to_numpy(),
        "text_pair": review["text_pair"].astype(str).to_numpy() if has_pair else None,
        "given_label": review["label"].astype(str).to_numpy(),
        "known_label": None,
        "suggested_label": (review["suggested_label"].map(
            lambda v: None if pd.isna(v) else str(v)).to_numpy()
            if "suggested_label" in review.columns else None),
        "suggested_prob": (review["suggested_prob"].astype(float).to_numpy()
                           if "suggested_prob" in review.columns else np.nan),
        "score": review[score].astype(float).to_numpy() if score else np.nan,
        "rank": review["rank"].astype(int).to_numpy(),
        "evidence": _evidence_column(review),
    })
    parts = [items]
    for kind, block in (("qualification", known.iloc[:n_qualification]),
                        ("sentinel", known.iloc[n_qualification:])):
        if len(block):
            parts.append(pd.DataFrame({
                "item_id": block["id"].to_numpy(), "kind": kind,
                "position": np.arange(len(block)), "text": block["text"].astype(str).to_numpy(),
                "text_pair": block["text_pair"].astype(str).to_numpy() if has_pair else None,
                "given_label": block["label"].astype(str).to_numpy(),
                "known_label": block["label"].astype(str).to_numpy(),
            }))
    return pd.concat(parts, ignore_index=True)
