"""Label consistency between two annotated sets: the learning-curve test behind
:func:`labelaudit.consistency`.

:func:`consistency` draws exclusive subsets of a training set, uses one as a new test set,
and compares learning curves of models fed training data only, training data then the
suspect set, and the suspect set first (Zeng et al., Figures 1-3); with a corrected copy of
the suspect set, the eight schemes of Figure 2 show whether the correction restored
consistency. Every compared curve gets a verdict with an interval over repeats.

References
----------
Zeng, Huang, Liu, Jiang, "Validating Label Consistency in NER Data Annotation" (2021).
"""

from labelaudit.consistency_check._result import ConsistencyResult, SchemeCurve, SchemeVerdict
from labelaudit.consistency_check._run import consistency, curve_grid
from labelaudit.consistency_check._schemes import SchemeDraw, draw_schemes

__all__ = [
    "ConsistencyResult",
    "SchemeCurve",
    "SchemeDraw",
    "SchemeVerdict",
    "consistency",
    "curve_grid",
    "draw_schemes",
]

