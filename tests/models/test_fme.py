"""Ensembles of configured scorer objects (FME over models and seeds) and the sweep that
keeps the best fine-tuning configurations."""

from __future__ import annotations

import numpy as np
import pytest
from tests.conftest import make_topic_frame

from labelaudit import scan
from labelaudit._errors import InvalidParameterError
from labelaudit.models import FinetuneScorer, TfidfScorer
from labelaudit.models._registry import keep_best, member_keys, sweep_scorers


def test_member_keys_name_models_apart_and_refuse_twins():
    assert member_keys(["tfidf", "embed"]) == ["tfidf", "embed"]
    keys = member_keys([FinetuneScorer(model="a"), FinetuneScorer(model="b"), "tfidf"])
    assert keys == ["finetune[a]", "finetune[b]", "tfidf"]
    with pytest.raises(InvalidParameterError, match="names a member twice"):
        member_keys([FinetuneScorer(model="a"), FinetuneScorer(model="a")])


def test_configured_objects_carry_their_own_options():
    frame = make_topic_frame(12, n_errors=3)
    strong = scan(frame, scorers=[TfidfScorer(C=10.0)], methods=["loss"])
    weak = scan(frame, scorers=[TfidfScorer(C=1e-4)], methods=["loss"])
    assert not np.allclose(strong.pred_probs, weak.pred_probs)
    by_name = scan(frame, scorers=["tfidf"], methods=["loss"])
    np.testing.assert_allclose(strong.pred_probs, by_name.pred_probs)  # C=10 is the default


@pytest.mark.filterwarnings("ignore::labelaudit.ChanceLevelWarning")  # tiny random models
def test_fme_over_two_models_and_seeds(tiny_bert_dir, tiny_st_dir):
    frame = make_topic_frame(8)
    members = [FinetuneScorer(model=str(tiny_bert_dir), epochs=1, batch_size=8,
                              max_length=16),
               FinetuneScorer(model=str(tiny_st_dir), epochs=1, batch_size=8,
                              max_length=16)]
    result = scan(frame, scorers=members, n_seeds=2, n_folds=2, methods=["loss"])
    names = sorted(result.member_probs)
    assert len(names) == 4 and all(n.startswith("finetune[") for n in names)
    assert len(result.weights) == 2  # the seeds of one model are averaged first


def test_sweep_configurations_and_keeping_the_best():
    configs = sweep_scorers(FinetuneScorer(), 5, random_state=0)
    assert len({(c.learning_rate, c.epochs, c.random_state) for c in configs}) == 5
    assert all(1e-5 <= c.learning_rate <= 5e-5 and 2 <= c.epochs <= 4 for c in configs)
    again = sweep_scorers(FinetuneScorer(), 5, random_state=0)  # seeded
    assert [(c.learning_rate, c.epochs, c.random_state) for c in again] == [
        (c.learning_rate, c.epochs, c.random_state) for c in configs]
    labels = np.array([0, 1, 1])
    sure = np.array([[0.9, 0.1], [0.1, 0.9], [0.2, 0.8]])
    unsure = np.full((3, 2), 0.5)
    wrong = sure[:, ::-1]
    assert keep_best({"w": wrong, "u": unsure, "s": sure}, labels, 2) == ["s", "u"]


@pytest.mark.filterwarnings("ignore::labelaudit.ChanceLevelWarning")
def test_scan_sweep_keeps_k_finetune_members(tiny_bert_dir):
    frame = make_topic_frame(8)
    base = FinetuneScorer(model=str(tiny_bert_dir), batch_size=8, max_length=16)
    result = scan(frame, scorers=[base, "tfidf"], sweep=3, keep=2, n_folds=2,
                  methods=["loss"])
    assert sorted(result.member_probs) == ["finetune", "finetune#1", "tfidf"]
    assert set(result.weights) == {"finetune", "tfidf"}
    with pytest.raises(InvalidParameterError, match="keep must be between 1 and sweep"):
        scan(frame, scorers=[base], sweep=2, keep=3)
    with pytest.raises(InvalidParameterError, match="sets the fine-tuning sweep of the finetune"):
        scan(frame, scorers=["tfidf"], sweep=2, keep=1)


def test_cli_finetune_options_need_the_finetune_scorer(tmp_path):
    import subprocess
    import sys

    make_topic_frame(8).to_csv(tmp_path / "d.csv", index=False)
    done = subprocess.run([sys.executable, "-m", "labelaudit", "scan", "d.csv", "--scorers",
                           "tfidf", "--epochs", "3", "--lr", "2e-5"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert "--epochs, --lr set the fine-tuning of the finetune scorer; the members (tfidf) " \
        "take none: add finetune to --scorers, or drop them" in done.stderr


def test_summary_shows_each_members_time_next_to_its_weight():
    result = scan(make_topic_frame(10, n_errors=2), scorers=["tfidf"], progress=False)
    assert set(result.member_seconds) == {"tfidf"} and result.member_seconds["tfidf"] > 0
    assert f"tfidf 1.00 (T={result.temperatures['tfidf']:.2f}, " in result.summary()


@pytest.mark.filterwarnings("ignore::labelaudit.ChanceLevelWarning")
def test_default_members_are_screened_and_named_ones_always_run(tiny_st_dir, monkeypatch):
    # screening as it works for any default: here the embed member was a default one
    for module in ("_options", "_pipeline"):
        monkeypatch.setattr(f"labelaudit.scanning.{module}.DEFAULT_SCORERS", ("tfidf", "embed"))
    frame = make_topic_frame(40, n_errors=6)  # 120 items; TF-IDF separates the topics
    screened = scan(frame, model=str(tiny_st_dir), screen=60, progress=False)
    assert list(screened.weights) == ["tfidf"]  # the random encoder earned no weight
    assert set(screened.screened) == {"embed"} and screened.screened["embed"] < 0.05
    assert "skipped embed: weight" in screened.summary()
    named = scan(frame, scorers=["tfidf", "embed"], model=str(tiny_st_dir), screen=60,
                 progress=False)
    assert list(named.weights) == ["tfidf", "embed"] and named.screened == {}
    unscreened = scan(frame, model=str(tiny_st_dir), screen=0, progress=False)
    assert list(unscreened.weights) == ["tfidf", "embed"]
