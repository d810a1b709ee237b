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

from labelaudit.agreement._aggregation import AGGREGATION_METHODS, aggregate
from labelaudit.agreement._aggregation import dawid_skene as dawid_skene
from labelaudit.agreement._aggregation import glad as glad
from labelaudit.agreement._aggregation import mace as mace
from labelaudit.agreement._aggregation import majority_vote as majority_vote
from labelaudit.agreement._coefficients import annotation_counts as annotation_counts
from labelaudit.agreement._coefficients import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    observed_agreement,
)
from labelaudit.agreement._coefficients import per_item_agreement as per_item_agreement
from labelaudit.agreement._gold import agreed_items as agreed_items
from labelaudit.agreement._gold import chance_agreement as chance_agreement
from labelaudit.agreement._gold import gold_standard
from labelaudit.agreement._noise_model import chance_difference, noise_bound, tolerance
from labelaudit.agreement._noise_model import tolerable_disagreements as tolerable_disagreements
from labelaudit.agreement._read import AnnotationFile as AnnotationFile
from labelaudit.agreement._read import read_annotation_file
from labelaudit.agreement._report import AgreementReport as AgreementReport
from labelaudit.agreement._report import agreement_report
from labelaudit.agreement._report import bootstrap_ci as bootstrap_ci

__all__ = [
    "AGGREGATION_METHODS",
    "aggregate",
    "agreement_report",
    "chance_difference",
    "cohen_kappa",
    "fleiss_kappa",
    "gold_standard",
    "krippendorff_alpha",
    "noise_bound",
    "observed_agreement",
    "read_annotation_file",
    "tolerance",
]
