"""Hand-made crowd tables for the noise tests."""

from __future__ import annotations

import pandas as pd
import pytest
from noise_crowds import random_crowd

# final label, then the labels of workers w1..w5 (see test_noise_methods.py for what each
# method must do on this table)
HAND_TABLE = [
    ("a", "aaaaa"),  # 0 unanimous
    ("a", "aaabb"),  # 1 3-2, minority b
    ("b", "bbbbc"),  # 2 4-1, minority c
    ("b", "aaabb"),  # 3 crowd majority a differs from b
    ("c", "ccccc"),  # 4 unanimous
    ("c", "aabbc"),  # 5 tie a/b without the final label: majority drawn from a, b
    ("a", "aabbc"),  # 6 tie a/b with the final label: Hovy keeps a; minority split 2-2
    ("a", "aaaaa"),  # 7
    ("b", "bbbbb"),  # 8
    ("c", "cccaa"),  # 9 3-2, minority a
]


@pytest.fixture
def hand_crowd() -> pd.DataFrame:
    """Ten items, three classes, five workers who label every item."""
    return pd.DataFrame({
        "id": [f"i{k}" for k in range(len(HAND_TABLE))],
        "gold": [gold for gold, _ in HAND_TABLE],
        "annotator_labels": [
            [{"worker": f"w{j + 1}", "label": lab} for j, lab in enumerate(labels)]
            for _, labels in HAND_TABLE
        ],
    })


@pytest.fixture
def make_crowd():
    return random_crowd
