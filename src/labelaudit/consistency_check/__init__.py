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

from labelaudit.consistency_check._data import draw_schemes as draw_schemes
from labelaudit.consistency_check._result import ConsistencyResult
from labelaudit.consistency_check._run import consistency
from labelaudit.consistency_check._run import curve_grid as curve_grid

__all__ = ["ConsistencyResult", "consistency"]
