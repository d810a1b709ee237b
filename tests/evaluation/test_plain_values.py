"""Issue #11: option values in metric errors print plainly (68), never as np.int64(68)."""

from __future__ import annotations

import numpy as np
import pytest

from labelaudit._errors import InvalidParameterError
from labelaudit.evaluation import precision_at_k, recall_at_k, verified_precision


@pytest.mark.parametrize(("call", "message"), [
    (lambda: precision_at_k([1, 0], [0.1, 0.2], k=np.int64(0)),
     "k must be at least 1; got 0"),
    (lambda: precision_at_k([1, 0], [0.1, 0.2], k=np.float64(2.5)),
     "k must be a whole number; got 2.5"),
    (lambda: recall_at_k([1, 0], [0.1, 0.2], k=1, n_errors=np.float64(3.5)),
     "n_errors must be a whole number; got 3.5"),
    (lambda: verified_precision(np.float64(2.5), 3), "must be a whole number; got 2.5"),
])
def test_numpy_values_print_plainly_in_errors(call, message):
    with pytest.raises(InvalidParameterError) as exc:
        call()
    assert message in str(exc.value) and "np." not in str(exc.value)
