"""Annotator agreement, label aggregation and the noise level of a gold standard.

Agreement coefficients (observed agreement, Cohen's and Fleiss' kappa, Krippendorff's alpha),
aggregation of crowd labels (majority vote; Dawid-Skene, GLAD and MACE through crowd-kit), and
the easy/hard noise model of Beigman Klebanov & Beigman (2009): how much noise can hide among
the items the annotators agreed on, and how large a difference between two systems that noise
can explain.

Annotations come in long format, one row per ``item, annotator, label`` (crowd-kit's ``task,
worker, label`` work too); :func:`nested_to_long` converts a per-item list column, and
:func:`read_annotation_file` reads either shape from a file, as ``labelaudit agreement`` does.
:func:`to_annotations` encodes them as :class:`Annotations`, labelaudit's one crowd-label type
(also against a dataset's rows and label set, with ``ids=`` and ``classes=``, for the noise
methods and CROWDLAB); the three are the long-format data format of :mod:`labelaudit.io`,
re-exported here.
"""

from labelaudit.agreement._aggregation import Aggregation
from labelaudit.agreement._agreement_report import (
    AgreementReport,
    Estimate,
    agreement_report,
    bootstrap_ci,
)
from labelaudit.agreement._alpha import krippendorff_alpha
from labelaudit.agreement._chance_difference import ChanceDifference, chance_difference
from labelaudit.agreement._counts import annotation_counts
from labelaudit.agreement._gold import (
    GoldStandard,
    agreed_items,
    chance_agreement,
    gold_standard,
)
from labelaudit.agreement._kappa import (
    cohen_kappa,
    fleiss_kappa,
    observed_agreement,
    per_item_agreement,
)
from labelaudit.agreement._latent import aggregate, dawid_skene, glad, mace
from labelaudit.agreement._majority import majority_vote
from labelaudit.agreement._noise_model import NoiseBound, noise_bound, tolerable_disagreements
from labelaudit.agreement._read import AnnotationFile, read_annotation_file
from labelaudit.agreement._tolerance import Tolerance, tolerance
from labelaudit.io import Annotations, DroppedAnnotationsWarning, nested_to_long, to_annotations

__all__ = [
    "Aggregation",
    "AgreementReport",
    "AnnotationFile",
    "Annotations",
    "ChanceDifference",
    "DroppedAnnotationsWarning",
    "Estimate",
    "GoldStandard",
    "NoiseBound",
    "Tolerance",
    "aggregate",
    "agreed_items",
    "agreement_report",
    "annotation_counts",
    "bootstrap_ci",
    "chance_agreement",
    "chance_difference",
    "cohen_kappa",
    "dawid_skene",
    "fleiss_kappa",
    "glad",
    "gold_standard",
    "krippendorff_alpha",
    "mace",
    "majority_vote",
    "nested_to_long",
    "noise_bound",
    "observed_agreement",
    "per_item_agreement",
    "read_annotation_file",
    "to_annotations",
    "tolerable_disagreements",
    "tolerance",
]
