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
else works without it. Its security model is described in :mod:`labelaudit.review._app`.
"""

from labelaudit.review._app import create_app as create_app
from labelaudit.review._app import invite_reviewer, open_server, serve
from labelaudit.review._exchange import export_items, import_answers, pull_answers, push_items
from labelaudit.review._exchange import label_studio_config as label_studio_config
from labelaudit.review._project import init_review
from labelaudit.review._protocol import CORRECTABLE as CORRECTABLE
from labelaudit.review._protocol import NON_AGREEMENT as NON_AGREEMENT
from labelaudit.review._protocol import NON_ERROR as NON_ERROR
from labelaudit.review._protocol import NONE_OF_THESE as NONE_OF_THESE
from labelaudit.review._protocol import PENDING as PENDING
from labelaudit.review._protocol import ProjectConfig as ProjectConfig
from labelaudit.review._protocol import classify_votes, verdicts_from_annotations
from labelaudit.review._results import (
    apply_verdicts,
    apply_verdicts_file,
    review_results,
    review_status,
)
from labelaudit.review._store import ReviewStore as ReviewStore
from labelaudit.review._store import next_item as next_item
from labelaudit.review._store import progress as progress
from labelaudit.review._store import record_answer as record_answer

# What a user calls: one function per step of ``labelaudit review``, and the protocol's rule.
# The web app, the store, its queue and the verdict names stay importable from here.
__all__ = [
    "apply_verdicts",
    "apply_verdicts_file",
    "classify_votes",
    "export_items",
    "import_answers",
    "init_review",
    "invite_reviewer",
    "open_server",
    "pull_answers",
    "push_items",
    "review_results",
    "review_status",
    "serve",
    "verdicts_from_annotations",
]
