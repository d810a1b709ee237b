"""The default members and the named presets of scan (chosen by make bench-detection)."""

import warnings

import numpy as np
import pytest

from labelaudit import InvalidParameterError, scan
from labelaudit.cli import main
from labelaudit.models import DEFAULT_SCORERS, FinetuneScorer
from labelaudit.scanning import PRESET_FINETUNE, PRESETS, SlowPresetWarning, preset_members
from labelaudit.scanning._options import STREAMED_SCORERS


def test_the_default_is_word_and_character_tfidf(topic_frame):
    assert DEFAULT_SCORERS == ("tfidf", "tfidf-char")
    assert PRESETS["default"] is None
    result = scan(topic_frame, id="id")
    assert set(result.member_probs) == {"tfidf", "tfidf-char"}
    # the streamed scan keeps its own members: char n-grams are not hashed out of core
    assert "tfidf-char" not in STREAMED_SCORERS


def test_fast_is_word_tfidf_alone(topic_frame):
    fast = scan(topic_frame, id="id", preset="fast")
    named = scan(topic_frame, id="id", scorers=["tfidf"])
    assert list(fast.member_probs) == ["tfidf"]
    assert (fast.to_frame()["id"] == named.to_frame()["id"]).all()


def test_best_fine_tunes_with_the_measured_settings_and_warns_on_a_cpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.warns(SlowPresetWarning, match="built for a GPU"):
        members = preset_members("best", model="some/encoder", epochs=1)
    assert members[0] == "tfidf"
    tuned = members[1]
    assert isinstance(tuned, FinetuneScorer) and tuned.model == "some/encoder"
    assert tuned.epochs == 1  # the caller's option wins
    assert (tuned.max_length, tuned.batch_size) == (PRESET_FINETUNE["max_length"],
                                                    PRESET_FINETUNE["batch_size"])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        preset_members("best")


def test_best_runs_end_to_end_on_a_tiny_model(topic_frame, tiny_bert_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlowPresetWarning)
        members = preset_members("best", model=str(tiny_bert_dir), epochs=1, max_length=16,
                                 batch_size=8)
    result = scan(topic_frame, id="id", scorers=members, n_folds=2)
    assert set(result.member_probs) == {"tfidf", "finetune"}


@pytest.mark.parametrize("kwargs, match", [
    ({"preset": "fast", "scorers": ["tfidf"]}, "preset= or scorers="),
    ({"preset": "quick"}, "preset must be one of fast, default, best"),
    # given probabilities replace the members: a preset would be silently ignored
    ({"preset": "fast", "pred_probs": "PROBS"},
     "pred_probs= replaces labelaudit's models, so preset="),
])
def test_bad_presets(topic_frame, kwargs, match):
    if kwargs.get("pred_probs") == "PROBS":
        kwargs = {**kwargs, "pred_probs": np.full((len(topic_frame), 3), 1 / 3)}
    with pytest.raises(InvalidParameterError, match=match):
        scan(topic_frame, **kwargs)


def test_tuning_a_preset_without_fine_tuning_is_an_error():
    with pytest.raises(InvalidParameterError, match="preset='fast' does not have") as caught:
        preset_members("fast", epochs=3)
    assert caught.value.params == ("epochs", "preset")  # a usage error on the command line


def test_cli_preset(tmp_path, topic_frame, capsys):
    data = tmp_path / "d.csv"
    topic_frame.to_csv(data, index=False)
    out = tmp_path / "o.csv"
    assert main(["scan", str(data), "--preset", "fast", "--out", str(out), "-q"]) == 0
    assert out.exists()
    assert main(["scan", str(data), "--preset", "fast", "--scorers", "tfidf"]) == 2
    assert "--preset or --scorers" in capsys.readouterr().err
    assert main(["scan", str(data), "--preset", "fast", "--epochs", "3"]) == 2
    assert "--epochs sets the fine-tuned member, which --preset fast does not have" in \
        capsys.readouterr().err
