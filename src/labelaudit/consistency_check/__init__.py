"""Label consistency between two annotated sets: the learning-curve test behind
:func:`labelaudit.consistency_check.consistency`.

:func:`consistency` compares learning curves, on a new test set drawn from the training set,
of models fed training data only, then the suspect set, or the suspect set first (Zeng et
al., Figures 1-3); with a corrected copy, Figure 2's eight schemes test the correction.

References
----------
Zeng, Huang, Liu, Jiang, "Validating Label Consistency in NER Data Annotation" (2021).
"""

from labelaudit.consistency_check._data import draw_schemes as draw_schemes
from labelaudit.consistency_check._result import ConsistencyResult
from labelaudit.consistency_check._run import consistency
from labelaudit.consistency_check._run import curve_grid as curve_grid

__all__ = ["ConsistencyResult", "consistency"]
