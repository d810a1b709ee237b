"""Which way a score column points: lower = more suspect for labelaudit's scores, higher for
its ``loss``; another column is read as lower = more suspect with a warning, unless
``higher_is_suspect`` names it."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidParameterError
from labelaudit.cli import main
from labelaudit.evaluation import ScoreDirectionWarning, evaluate

IS_ERROR = [True, True, False, False, False, False, False, False]


@pytest.fixture()
def issues():
    """The two errors have the highest loss, the lowest given_prob and quality."""
    loss = np.array([3.0, 2.5, 0.1, 0.2, 0.3, 0.1, 0.2, 0.4])
    return pd.DataFrame({"id": range(8), "loss": loss, "given_prob": np.exp(-loss),
                         "suspicion": loss, "quality": -loss})


@pytest.fixture()
def truth():
    return pd.DataFrame({"id": range(8), "is_error": IS_ERROR})


def test_loss_is_read_as_higher_is_more_suspect(issues, truth):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate(issues, truth, scores="loss,given_prob")
    assert result.reports["loss"].roc_auc == 1.0
    assert result.reports["given_prob"].roc_auc == 1.0


def test_another_column_warns_and_higher_is_suspect_turns_it_round(issues, truth):
    with pytest.warns(ScoreDirectionWarning, match="suspicion.*higher_is_suspect=suspicion"):
        wrong = evaluate(issues, truth, scores="suspicion")
    assert wrong.reports["suspicion"].roc_auc == 0.0  # read as asked: the wrong way round
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        right = evaluate(issues, truth, scores=["suspicion"], higher_is_suspect="suspicion")
    assert right.reports["suspicion"].roc_auc == 1.0


def test_higher_is_suspect_names_a_column_evaluated(issues, truth):
    with pytest.raises(InvalidParameterError, match="higher_is_suspect=quality names no score"):
        evaluate(issues, truth, scores="loss", higher_is_suspect="quality")


def test_the_cli_says_so(tmp_path, issues, truth, capsys):
    issues.to_csv(tmp_path / "issues.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    base = ["evaluate", str(tmp_path / "issues.csv"), "--eval", str(tmp_path / "truth.csv"),
            "--format", "csv"]
    assert main([*base, "--scores", "loss,suspicion"]) == 0
    out = capsys.readouterr()
    assert "warning: --scores suspicion: not one of labelaudit's score columns" in out.err
    assert "--higher-is-suspect suspicion" in out.err
    assert main([*base, "--scores", "suspicion", "--higher-is-suspect", "suspicion"]) == 0
    frame = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert frame["roc_auc"].tolist() == [1.0]
