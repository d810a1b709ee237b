"""impact's probability columns must be probabilities: each row sums to 1 (within 1e-3),
as pred_probs must everywhere; a row that does not is refused in one line naming it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.cli import main
from labelaudit.impact import measure_impact

IDS = list(range(6))


def _corrected() -> pd.DataFrame:
    return pd.DataFrame({"id": IDS, "label": list("aaabbb"), "corrected": list("aabbbb"),
                         "flagged": [False, False, True, True, False, False]})


def _probs(scale_rows=(), scale=0.5) -> pd.DataFrame:
    p = np.linspace(0.1, 0.9, 6)
    frame = pd.DataFrame({"id": IDS, "a": p, "b": 1 - p})
    frame.loc[list(scale_rows), ["a", "b"]] *= scale
    return frame


def test_rows_that_do_not_sum_to_one_are_refused():
    with pytest.raises(InvalidInputError, match=r"predictions 'm': row 1 \(0-based; id 1\) "
                                                r"has probabilities summing to 0\.5, not 1 "
                                                r"\(within 0\.001\).*\(2 more rows too\)"):
        measure_impact(_corrected(), {"m": _probs(scale_rows=(1, 3, 4))})


def test_rows_within_the_tolerance_are_taken():
    result = measure_impact(_corrected(), {"m": _probs(scale_rows=(2,), scale=1.0004)})
    assert result.n_correctable == 1


def test_cli_refuses_scores_as_probabilities_in_one_line(tmp_path, capsys):
    _corrected().to_csv(tmp_path / "corrected.csv", index=False)
    scores = _probs().assign(b=lambda f: f["a"])  # one sigmoid per class: not a softmax
    scores.to_csv(tmp_path / "probs.csv", index=False)
    assert main(["impact", str(tmp_path / "corrected.csv"), "--predictions",
                 f"m={tmp_path / 'probs.csv'}"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "row 0 (0-based; id 0) has probabilities summing to 0.2, not 1 (within 0.001) " \
        "(a=0.1, b=0.1) (5 more rows too)" in err[0]
