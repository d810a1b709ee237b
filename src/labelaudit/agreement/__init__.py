"""Annotator agreement, label aggregation and the noise level of a gold standard.

Agreement coefficients (observed agreement, Cohen's and Fleiss' kappa, Krippendorff's alpha),
aggregation of crowd labels (majority vote; Dawid-Skene, GLAD and MACE through crowd-kit), and
the easy/hard noise model of Beigman Klebanov & Beigman (2009): how much noise can hide among
the items the annotators agreed on, and how large a difference between two systems that noise
can explain.

Annotations come in long format, one row per ``item, annotator, label`` (crowd-kit's ``task,
worker, label`` work too; see :func:`labelaudit.io.to_annotations`);
:func:`read_annotation_file` reads a long or nested file, as ``labelaudit agreement`` does.
"""

from labelaudit.agreement._aggregation import (
    AGGREGATION_METHODS,
    aggregate,
    dawid_skene,
    glad,
    mace,
    majority_vote,
)
from labelaudit.agreement._coefficients import (
    annotation_counts,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
    per_item_agreement,
)
from labelaudit.agreement._gold import agreed_items as agreed_items
from labelaudit.agreement._gold import chance_agreement, gold_standard
from labelaudit.agreement._noise_model import (
    chance_difference,
    noise_bound,
    tolerable_disagreements,
    tolerance,
)
from labelaudit.agreement._read import AnnotationFile as AnnotationFile
from labelaudit.agreement._read import read_annotation_file
from labelaudit.agreement._report import AgreementReport as AgreementReport
from labelaudit.agreement._report import agreement_report
from labelaudit.agreement._report import bootstrap_ci as bootstrap_ci

__all__ = [
    "AGGREGATION_METHODS",
    "aggregate",
    "agreement_report",
    "annotation_counts",
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
    "noise_bound",
    "observed_agreement",
    "per_item_agreement",
    "read_annotation_file",
    "tolerable_disagreements",
    "tolerance",
]
