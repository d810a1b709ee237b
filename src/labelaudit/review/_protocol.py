"""The verification protocol: from reviewers' votes to a verdict per item.

Chong, Hong & Manning (2022, section 5) show each flagged item to five crowd workers:

    An example is considered a "Non-Error" if at least three workers agree the original
    label is correct. Otherwise, we consider the label to be correctly identified as an
    error. We further categorize label errors as "Correctable" if at least three workers
    agree on the same replacement label, or "Non-Agreement" if no majority exists.

Here any ``majority`` above half of ``n_reviewers``, so two labels never both reach it.
``unsure`` fills a slot but supports no label; ``none of these`` is a replacement outside
the label set, like the paper's "off-topic" (Correctable, but
:func:`labelaudit.review.apply_verdicts` cannot relabel it and treats it like Non-Agreement).
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows

if TYPE_CHECKING:
    import pandas as pd

CORRECTABLE: Final = "Correctable"
NON_AGREEMENT: Final = "Non-Agreement"
NON_ERROR: Final = "Non-Error"
PENDING: Final = "Pending"
VERDICTS = (CORRECTABLE, NON_AGREEMENT, NON_ERROR)

NONE_OF_THESE = "none of these"
UNSURE = "unsure"

Verdict = Literal["Correctable", "Non-Agreement", "Non-Error", "Pending"]


@dataclass(frozen=True)
class ItemVerdict:
    """The verdict on one item (Pending while too few votes are in), the label of a majority or
    None, votes counted (``unsure`` included), ``unsure`` votes, votes for the given label, and
    ``counts``: (label, count) per answer, most frequent first, ``unsure`` left out."""

    verdict: Verdict
    majority_label: Hashable | None
    n_votes: int
    n_unsure: int
    n_given: int
    counts: tuple[tuple[Hashable, int], ...]

    @property
    def is_error(self) -> bool | None:
        """True for Correctable and Non-Agreement, False for Non-Error, None when pending."""
        if self.verdict == PENDING:
            return None
        return self.verdict != NON_ERROR


def check_majority(n_reviewers: int, majority: int | None) -> int:
    """Validate the protocol's size and threshold; return the threshold.

    >>> check_majority(5, None), check_majority(3, None), check_majority(4, None)
    (3, 2, 3)
    """
    if isinstance(n_reviewers, bool) or not isinstance(n_reviewers, numbers.Integral):
        raise InvalidParameterError(f"n_reviewers must be an integer, got {n_reviewers!r}",
                                    param="n_reviewers")
    if n_reviewers < 1:
        raise InvalidParameterError(f"n_reviewers must be at least 1, got {n_reviewers}",
                                    param="n_reviewers")
    if majority is None:
        return int(n_reviewers) // 2 + 1
    if isinstance(majority, bool) or not isinstance(majority, numbers.Integral):
        raise InvalidParameterError(f"majority must be an integer, got {majority!r}",
                                    param="majority")
    if not (n_reviewers / 2 < majority <= n_reviewers):
        raise InvalidParameterError(
            f"majority must be more than half of the reviewers and at most their number "
            f"({n_reviewers // 2 + 1}..{n_reviewers} for {n_reviewers} reviewers), got {majority}",
            param="majority")
    return int(majority)


def classify_votes(
    votes: Iterable[Hashable],
    given_label: Hashable,
    *,
    n_reviewers: int = 5,
    majority: int | None = None,
    unsure: Hashable = UNSURE,
) -> ItemVerdict:
    """Classify one item from its reviewers' votes.

    Parameters
    ----------
    votes : iterable of labels
        One vote per reviewer: a label, ``"none of these"`` or ``"unsure"``.
    given_label : label
        The dataset's label for the item.
    n_reviewers : int
        Votes the protocol collects per item.
    majority : int, optional
        Votes needed for a decision; default ``n_reviewers // 2 + 1`` (3 of 5).
    unsure : label
        The answer that supports no label.

    Returns
    -------
    ItemVerdict
        Non-Error when ``majority`` votes confirm the given label, Correctable when they agree
        on another answer, Non-Agreement when no answer can reach ``majority`` any more,
        Pending otherwise (a decision can come early: later votes cannot change it).

    References
    ----------
    .. [1] D. Chong, J. Hong and C. D. Manning, "Detecting Label Errors by using
       Pre-Trained Language Models", EMNLP 2022, section 5.

    Examples
    --------
    >>> classify_votes(["pos", "pos", "pos", "neg", "neg"], "pos").verdict
    'Non-Error'
    >>> v = classify_votes(["neg", "neg", "neg", "pos", "unsure"], "pos")
    >>> v.verdict, v.majority_label, v.n_unsure
    ('Correctable', 'neg', 1)
    >>> classify_votes(["pos", "pos", "neg", "neg", "neu"], "pos").verdict
    'Non-Agreement'
    >>> classify_votes(["pos", "neg"], "pos").verdict
    'Pending'
    """
    need = check_majority(n_reviewers, majority)
    votes = list(votes)
    n_unsure = sum(1 for v in votes if v == unsure)
    counter = Counter(v for v in votes if v != unsure)
    counts = tuple(sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0]))))
    n_votes = len(votes)
    n_given = counter.get(given_label, 0)
    top_label, top = counts[0] if counts else (None, 0)
    remaining = max(n_reviewers - n_votes, 0)
    verdict: Verdict
    label: Hashable | None = None
    if top >= need:
        label = top_label
        verdict = NON_ERROR if top_label == given_label else CORRECTABLE
    elif top + remaining < need:
        verdict = NON_AGREEMENT
    else:
        verdict = PENDING
    return ItemVerdict(verdict=verdict, majority_label=label, n_votes=n_votes,
                       n_unsure=n_unsure, n_given=n_given, counts=counts)


def _votes_text(counts: tuple[tuple[Hashable, int], ...], n_unsure: int) -> str:
    parts = [f"{label}:{count}" for label, count in counts]
    if n_unsure:
        parts.append(f"{UNSURE}:{n_unsure}")
    return "; ".join(parts)


def _check_annotations(annotations: pd.DataFrame,
                       given_labels: Mapping[Hashable, Hashable] | pd.Series) -> pd.Series:
    """The given labels as a Series, after checking the votes against them."""
    import pandas as pd
    missing = [c for c in ("item_id", "annotator_id", "label") if c not in annotations.columns]
    if missing:
        raise InvalidInputError(
            f"annotations need the columns item_id, annotator_id, label; missing {missing}")
    given = pd.Series(given_labels) if not isinstance(given_labels, pd.Series) else given_labels
    if given.index.has_duplicates:
        raise InvalidInputError(
            f"given_labels has duplicate item ids: "
            f"{format_rows(given.index[given.index.duplicated()].unique().tolist())}")
    twice = annotations.duplicated(["item_id", "annotator_id"], keep=False).to_numpy()
    if twice.any():
        raise InvalidInputError(
            "an annotator voted more than once on the same item in "
            f"{format_rows(annotations.index[twice].tolist())}; keep one vote per annotator")
    unknown = ~annotations["item_id"].isin(given.index).to_numpy()
    if unknown.any():
        raise InvalidInputError(
            "annotations name items without a given label: "
            f"{format_rows(pd.unique(annotations['item_id'][unknown]).tolist())}")
    return given


def verdicts_from_annotations(
    annotations: pd.DataFrame,
    given_labels: Mapping[Hashable, Hashable] | pd.Series,
    *,
    n_reviewers: int = 5,
    majority: int | None = None,
) -> pd.DataFrame:
    """Classify every item of a long-format vote table.

    Parameters
    ----------
    annotations : DataFrame
        Columns ``item_id, annotator_id, label``, one row per vote, one vote per annotator.
    given_labels : mapping or Series
        The given label of each item, keyed by ``item_id``; items without votes are Pending.
    n_reviewers, majority : int
        As in :func:`classify_votes`.

    Returns
    -------
    DataFrame
        One row per item of ``given_labels``, in its order, with columns ``item_id,
        given_label, verdict, majority_label, is_error, n_votes, n_given, n_unsure, votes``
        (``votes`` reads ``"neg:3; pos:1; unsure:1"``).

    Examples
    --------
    >>> import pandas as pd
    >>> votes = pd.DataFrame({"item_id": [1, 1, 1, 2, 2, 2],
    ...                       "annotator_id": ["a", "b", "c", "a", "b", "c"],
    ...                       "label": ["x", "x", "y", "y", "y", "y"]})
    >>> verdicts_from_annotations(votes, {1: "x", 2: "x"}, n_reviewers=3)[
    ...     ["item_id", "verdict", "majority_label", "votes"]].to_dict("records")
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'item_id': 1, 'verdict': 'Non-Error', 'majority_label': 'x', 'votes': 'x:2; y:1'},
     {'item_id': 2, 'verdict': 'Correctable', 'majority_label': 'y', 'votes': 'y:3'}]
    """
    import pandas as pd
    check_majority(n_reviewers, majority)
    given = _check_annotations(annotations, given_labels)
    grouped = annotations.groupby("item_id", sort=False)["label"].apply(list).to_dict()
    rows = []
    for item_id, label in given.items():
        r = classify_votes(grouped.get(item_id, []), label, n_reviewers=n_reviewers,
                           majority=majority)
        rows.append({"item_id": item_id, "given_label": label, "verdict": r.verdict,
                     "majority_label": r.majority_label, "is_error": r.is_error,
                     "n_votes": r.n_votes, "n_given": r.n_given, "n_unsure": r.n_unsure,
                     "votes": _votes_text(r.counts, r.n_unsure)})
    frame = pd.DataFrame(rows, columns=["item_id", "given_label", "verdict", "majority_label",
                                        "is_error", "n_votes", "n_given", "n_unsure", "votes"])
    for column in ("majority_label", "is_error"):  # keep None, not NaN, for missing values
        frame[column] = pd.Series([r[column] for r in rows], index=frame.index, dtype=object)
    return frame


@dataclass(frozen=True)
class ProjectConfig:
    """Settings of a review project, fixed by ``review init``: ``classes`` (the user's values),
    distinct reviewers per item (the papers use 5) and votes for a verdict (3), ``show_label``
    (False: blind, the improved protocol), the qualification ``pass_mark``, the sentinel accuracy
    below which a reviewer is suspended once ``min_sentinels`` are answered, a sentinel after
    every ``sentinel_every`` answers, how long a shown item stays reserved, the items flagged in
    the whole dataset (for the error estimate), scan rows, and how reviewed items were chosen."""

    classes: list[Any]
    n_reviewers: int = 5
    majority: int = 3
    show_label: bool = False
    pass_mark: float = 0.75
    sentinel_threshold: float = 0.7
    min_sentinels: int = 3
    sentinel_every: int = 5
    lease_seconds: float = 600.0
    n_flagged: int | None = None
    n_rows: int | None = None
    selection: str = "top"
    source: str = ""
    title: str = "Label review"
    instructions: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_majority(self.n_reviewers, self.majority)
        keys = [str(c) for c in self.classes]
        if len(self.classes) < 2 or len(set(keys)) != len(keys):
            raise InvalidInputError(
                f"a review needs at least 2 distinct labels, got {list(self.classes)}")
        clash = {NONE_OF_THESE, UNSURE} & set(keys)
        if clash:
            raise InvalidInputError(
                f"the label set contains {sorted(clash)}, which the review reserves for its "
                "own answers; rename those labels")
        for name in ("pass_mark", "sentinel_threshold"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise InvalidParameterError(f"{name} must be in [0, 1], got {value}")
        if self.sentinel_every < 1 or self.min_sentinels < 1 or self.lease_seconds <= 0:
            raise InvalidParameterError(
                "sentinel_every and min_sentinels must be >= 1 and lease_seconds > 0")

    @property
    def class_keys(self) -> list[str]:
        """The labels as stored in the database (their string form)."""
        return [str(c) for c in self.classes]

    @property
    def options(self) -> list[str]:
        """Every answer a reviewer can give: the labels, ``none of these``, ``unsure``."""
        return [*self.class_keys, NONE_OF_THESE, UNSURE]

    def label_value(self, key: str | None) -> Any:
        """Map a stored label back to the user's value (``none of these`` stays a string)."""
        lookup = dict(zip(self.class_keys, self.classes, strict=True))
        return lookup.get(key, key) if key is not None else None
