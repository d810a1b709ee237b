"""Human verification of flagged items: the review protocol, its store and its web app.

A detector only proposes; people decide. This package runs the crowd verification
protocol of Chong, Hong & Manning (2022, section 5 and appendix C) and Northcutt,
Athalye & Mueller (2021, section 5) for a team:

1. :func:`init_review` turns a scan output into a project (one SQLite file): the items to
   review, known-answer items for a qualification test and for sentinels, the label set
   plus ``none of these`` and ``unsure``.
2. Reviewers get personal links (:meth:`ReviewStore.add_reviewer`) and answer in the web
   app (:func:`create_app`); each item goes to ``n_reviewers`` distinct reviewers.
3. :func:`review_results` classifies every item as Correctable, Non-Agreement or
   Non-Error (:func:`classify_votes`), with reviewer statistics, Fleiss' kappa and the
   detector's verified precision.
4. :func:`apply_verdicts` writes a corrected copy of the dataset.

The web app needs the ``review`` extra (``pip install 'labelaudit[review]'``); everything
else works without it.
"""

from labelaudit.review._apply import apply_verdicts
from labelaudit.review._exchange import (
    ImportReport,
    export_items,
    import_answers,
    label_studio_config,
)
from labelaudit.review._init import init_review
from labelaudit.review._protocol import (
    CORRECTABLE,
    NON_AGREEMENT,
    NON_ERROR,
    NONE_OF_THESE,
    PENDING,
    UNSURE,
    ItemVerdict,
    classify_votes,
    verdicts_from_annotations,
)
from labelaudit.review._queue import (
    AnswerOutcome,
    Assignment,
    Progress,
    next_item,
    progress,
    record_answer,
)
from labelaudit.review._results import ReviewResults, review_results
from labelaudit.review._store import ProjectConfig, Reviewer, ReviewStore

__all__ = [
    "CORRECTABLE",
    "NON_AGREEMENT",
    "NON_ERROR",
    "NONE_OF_THESE",
    "PENDING",
    "UNSURE",
    "AnswerOutcome",
    "Assignment",
    "ImportReport",
    "ItemVerdict",
    "ProjectConfig",
    "Progress",
    "ReviewResults",
    "ReviewStore",
    "Reviewer",
    "apply_verdicts",
    "classify_votes",
    "create_app",
    "export_items",
    "import_answers",
    "init_review",
    "label_studio_config",
    "next_item",
    "progress",
    "record_answer",
    "review_results",
    "verdicts_from_annotations",
]


def create_app(db):  # type: ignore[no-untyped-def]
    """Build the review web app for a project file (see :mod:`labelaudit.review._app`).

    Imported lazily, so that the rest of the package works without the ``review`` extra.
    """
    from labelaudit.review._app import create_app as _create_app

    return _create_app(db)
