"""What the tests of interrupted streamed scans share: small hashing options, the real fold
fit (to restore after a test replaces it), a stand-in for a killed process, and a data file."""

from __future__ import annotations

import pytest
from tests.conftest import make_topic_frame

from labelaudit.engine import HashingOptions, _hashing

OPTIONS = HashingOptions(n_features=2**10, n_buckets=4, epochs=2)
REAL_FIT = _hashing.fit_fold


class Killed(Exception):
    """Stands for the process being killed in the middle of a fold."""


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.parquet"
    make_topic_frame(40, n_errors=6).to_parquet(path, index=False)
    return path
