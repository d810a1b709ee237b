"""Human verification of flagged items: the review protocol, its store and its web app.

A detector only proposes; people decide. This package runs the crowd verification
protocol of Chong, Hong & Manning (2022, section 5 and appendix C) and Northcutt,
Athalye & Mueller (2021, section 5) for a team. One function per step, as the
``labelaudit review`` command has them:

1. :func:`init_review` turns a scan output into a project (one SQLite file): the items to
   review, known-answer items for a qualification test and for sentinels, the label set
   plus ``none of these`` and ``unsure``.
2. :func:`invite_reviewer` makes a reviewer's personal link; :func:`serve` (or
   :func:`open_server`, then ``run()``) serves the web app (:func:`create_app`), where each
   item goes to ``n_reviewers`` distinct reviewers.
3. :func:`review_status` tells how far the review is; :func:`review_results` classifies
   every item as Correctable, Non-Agreement or Non-Error (:func:`classify_votes`), with
   reviewer statistics, Fleiss' kappa and the detector's verified precision.
4. :func:`apply_verdicts` (:func:`apply_verdicts_file` for files) writes a corrected copy
   of the dataset.
5. :func:`export_items` and :func:`import_answers` let people answer in Label Studio,
   Argilla or a spreadsheet instead.

The web app needs the ``review`` extra (``pip install 'labelaudit[review]'``); everything
else works without it. Its security checks (token hashes, CSRF) are in
:mod:`labelaudit.review._security`.
"""

from labelaudit.review._apply import AppliedVerdicts as AppliedVerdicts
from labelaudit.review._apply import apply_verdicts, apply_verdicts_file
from labelaudit.review._export import export_items, label_studio_config
from labelaudit.review._import import ImportReport as ImportReport
from labelaudit.review._import import import_answers
from labelaudit.review._label_studio import LabelStudio as LabelStudio
from labelaudit.review._label_studio import PushReport as PushReport
from labelaudit.review._label_studio import pull_answers, push_items
from labelaudit.review._links import Invitation as Invitation
from labelaudit.review._links import invite_reviewer
from labelaudit.review._project import init_review
from labelaudit.review._protocol import (
    CORRECTABLE,
    NON_AGREEMENT,
    NON_ERROR,
    PENDING,
    classify_votes,
    verdicts_from_annotations,
)
from labelaudit.review._protocol import NONE_OF_THESE as NONE_OF_THESE
from labelaudit.review._protocol import UNSURE as UNSURE
from labelaudit.review._protocol import ItemVerdict as ItemVerdict
from labelaudit.review._protocol import ProjectConfig as ProjectConfig
from labelaudit.review._queue import AnswerOutcome as AnswerOutcome
from labelaudit.review._queue import Assignment as Assignment
from labelaudit.review._queue import Progress as Progress
from labelaudit.review._queue import next_item as next_item
from labelaudit.review._queue import progress as progress
from labelaudit.review._queue import record_answer as record_answer
from labelaudit.review._results import ReviewResults as ReviewResults
from labelaudit.review._results import ReviewStatus as ReviewStatus
from labelaudit.review._results import review_results, review_status
from labelaudit.review._serve import ReviewServer as ReviewServer
from labelaudit.review._serve import open_server, serve
from labelaudit.review._store import Reviewer as Reviewer
from labelaudit.review._store import ReviewStore

# What a user imports: the steps, the project, the verdict names. The result types and the
# web app's queue (next_item, record_answer, progress...) stay importable from here.
__all__ = [
    "CORRECTABLE",
    "NON_AGREEMENT",
    "NON_ERROR",
    "PENDING",
    "ReviewStore",
    "apply_verdicts",
    "apply_verdicts_file",
    "classify_votes",
    "create_app",
    "export_items",
    "import_answers",
    "init_review",
    "invite_reviewer",
    "label_studio_config",
    "open_server",
    "pull_answers",
    "push_items",
    "review_results",
    "review_status",
    "serve",
    "verdicts_from_annotations",
]


def create_app(db):  # type: ignore[no-untyped-def]
    """Build the review web app for a project file (see :mod:`labelaudit.review._app`).

    Imported lazily, so that the rest of the package works without the ``review`` extra.
    """
    from labelaudit.review._app import create_app as _create_app

    return _create_app(db)
