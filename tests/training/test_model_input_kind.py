"""A model reads the kind of input it was trained on: single texts or text pairs. Giving
the other kind is refused in one line (before, a torch shape error)."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

os.environ.setdefault("LABELAUDIT_THREADS", "1")  # the test machine is shared

import labelaudit  # noqa: E402
import labelaudit.training  # noqa: E402
from labelaudit._errors import InvalidInputError, InvalidParameterError  # noqa: E402
from labelaudit.cli import main  # noqa: E402


def _topics() -> pd.DataFrame:
    frame = make_topic_frame(6, seed=0).drop(columns=["true_label", "is_error"])
    return frame.assign(pair=frame["text"].str.split().str[0])


@pytest.fixture(scope="module")
def models(tiny_st_dir, tmp_path_factory):
    """A single-text model, a pair model (saved), and the table both were trained on."""
    folder = tmp_path_factory.mktemp("kinds")
    frame = _topics()
    frame.to_csv(folder / "pairs.csv", index=False)
    frame.drop(columns=["pair"]).to_csv(folder / "single.csv", index=False)
    single = labelaudit.training.train(frame, model=str(tiny_st_dir), epochs=1)
    paired = labelaudit.training.train(frame, text_pair="pair", model=str(tiny_st_dir), epochs=1)
    single.save(folder / "single_model")
    paired.save(folder / "pair_model")
    return single, paired, folder


def test_single_text_model_refuses_a_text_pair(models):
    single, _, _ = models
    with pytest.raises(InvalidParameterError, match=r"text_pair='pair': the model was "
                                                    r"trained on single texts \(column 'text'\)"):
        single.predict_proba(_topics(), text_pair="pair")


def test_pair_model_refuses_single_texts(models):
    _, paired, _ = models
    with pytest.raises(InvalidInputError, match="the model was trained on text pairs "
                                                r"\(columns 'text' and 'pair'\).* no column "
                                                "'pair'"):
        paired.predict_proba(_topics().drop(columns=["pair"]))
    with pytest.raises(InvalidParameterError, match="give a table with both"):
        paired.predict(["match goal team"])
    assert paired.predict_proba(_topics()).shape == (18, 3)


def test_cli_predict_text_pair_on_single_text_model_is_a_usage_error(models, capsys):
    _, _, folder = models
    assert main(["predict", str(folder / "single_model"), str(folder / "pairs.csv"),
                 "--text-pair", "pair"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("labelaudit predict: error: --text-pair 'pair': the model was "
                             "trained on single texts") and err[0].endswith("drop --text-pair")


def test_cli_predict_pair_model_on_single_texts_is_one_line(models, capsys):
    _, _, folder = models
    assert main(["predict", str(folder / "pair_model"), str(folder / "single.csv")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "trained on text pairs" in err[0] and "give --text-pair COLUMN" in err[0]
