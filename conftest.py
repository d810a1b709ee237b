"""Names every doctest in src/labelaudit may use without importing them: numpy and pandas are
imported inside the functions that use them (so `import labelaudit` stays fast), not at the top
of the modules whose docstrings show them."""

import numpy as np
import pandas as pd
import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace.update(np=np, pd=pd)
