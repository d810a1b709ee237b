"""``labelaudit train``: an option the chosen method and backbone would ignore is a usage
error (exit 2) before any work, as --noise-rate and --filter are."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit.cli import main


@pytest.fixture
def data(tmp_path):
    pd.DataFrame({"text": [f"item {i}" for i in range(12)],
                  "label": ["a", "b", "c"] * 4}).to_csv(tmp_path / "train.csv", index=False)
    return tmp_path / "train.csv"


def test_hidden_with_finetune_and_no_detector_head_is_a_usage_error(data, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", str(data), "--backbone", "finetune", "--hidden", "999",
              "--out", str(data.parent / "m")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--hidden sizes a head network; --backbone finetune tops the model with a linear " \
        "classifier, and --method base has no detector head: drop --hidden" in err
    assert not (data.parent / "m").exists()


@pytest.mark.parametrize("method", ["filter", "filter-relabel"])
def test_hidden_with_finetune_is_refused_whatever_detects_without_a_head(data, capsys,
                                                                        method):
    extra = ["--filter-detector", "scan"] if method != "filter" else []
    with pytest.raises(SystemExit) as exit_info:
        main(["train", str(data), "--backbone", "finetune", "--hidden", "8", "--method",
              method, *extra, "--out", str(data.parent / "m")])
    assert exit_info.value.code == 2
    assert "drop --hidden" in capsys.readouterr().err


@pytest.mark.parametrize("method", ["filter+seal", "auto"])
def test_hidden_sizes_the_detector_heads_of_finetune_filter_methods(data, capsys, method):
    """Not a usage error: the run goes on to the data (here a missing --eval file: exit 1
    before any model is fitted)."""
    assert main(["train", str(data), "--backbone", "finetune", "--hidden", "8", "--method",
                 method, "--eval", str(data.parent / "missing.csv"),
                 "--out", str(data.parent / "m")]) == 1
    assert "--hidden" not in capsys.readouterr().err
