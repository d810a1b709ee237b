"""Task-adaptive pre-training on CPU with the tiny random BERT of conftest."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import prepare_text_dataset
from labelaudit.models._tapt import TaptResult, collect_texts, tapt

FAST = {"epochs": 1, "batch_size": 8, "max_length": 16}


@pytest.fixture(scope="module")
def adapted(tiny_bert_dir, tmp_path_factory):
    """The tiny BERT after 2 epochs of TAPT on ~40 topic texts given as two splits."""
    frame = make_topic_frame(14, seed=0)
    out = tmp_path_factory.mktemp("tapt") / "adapted"
    result = tapt([frame.iloc[:30], frame.iloc[25:]], model=str(tiny_bert_dir), out=out,
                  epochs=2, batch_size=8, max_length=16, learning_rate=1e-3)
    return frame, result


def _weights(folder) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def test_tapt_writes_a_folder_automodel_and_autotokenizer_load(adapted):
    from transformers import AutoModel, AutoTokenizer

    frame, result = adapted
    assert isinstance(result, TaptResult)
    assert result.out.is_dir() and result.epochs == 2 and len(result.losses) == 2
    assert result.n_texts == frame["text"].nunique()  # the overlap of the splits counted once
    assert all(np.isfinite(result.losses)) and result.seconds > 0
    assert not [p for p in result.out.parent.iterdir() if p.name.startswith(".")]  # no temp
    encoder = AutoModel.from_pretrained(str(result.out))
    tokenizer = AutoTokenizer.from_pretrained(str(result.out))
    batch = tokenizer(["match goal pasta"], return_tensors="pt")
    assert tokenizer.unk_token_id not in batch["input_ids"][0].tolist()
    assert encoder(**batch).last_hidden_state.shape[-1] == 32
    assert str(result.out) in result.summary()


def test_the_adapted_folder_loads_as_a_sequence_classifier(adapted):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    _, result = adapted
    classifier = AutoModelForSequenceClassification.from_pretrained(str(result.out),
                                                                    num_labels=3)
    batch = AutoTokenizer.from_pretrained(str(result.out))(["match goal"], return_tensors="pt")
    with torch.no_grad():
        assert classifier(**batch).logits.shape == (1, 3)
    encoder = dict(classifier.base_model.named_parameters())
    adapted_weights = _weights(result.out)
    name = next(k for k in adapted_weights if k.endswith("embeddings.word_embeddings.weight"))
    short = name.split("embeddings.", 1)[1]
    np.testing.assert_allclose(encoder[f"embeddings.{short}"].detach().numpy(),
                               adapted_weights[name])  # the adapted encoder, not a fresh one


def test_the_adapted_folder_is_a_model_for_the_finetune_scorer(adapted):
    from labelaudit.models._finetune import FinetuneScorer

    frame, result = adapted
    data = prepare_text_dataset(frame.iloc[:15], text="text", label="label")
    scorer = FinetuneScorer(model=str(result.out), epochs=1, batch_size=8, max_length=16)
    features = scorer.prepare(data)
    probs = scorer.fit(features, data.labels, n_classes=len(data.classes)).predict_proba(
        features[:4])
    assert probs.shape == (4, len(data.classes))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)


def test_the_mlm_loss_falls_on_a_small_repetitive_corpus(tiny_bert_dir, tmp_path):
    frame = make_topic_frame(14, seed=1)
    result = tapt(frame, model=str(tiny_bert_dir), out=tmp_path / "m", epochs=4, batch_size=8,
                  max_length=16, learning_rate=3e-3, mlm_probability=0.3, random_state=1)
    assert result.losses[-1] < result.losses[0] - 0.2, result.losses


def test_the_same_seed_gives_the_same_weights_and_another_seed_others(tiny_bert_dir,
                                                                        tmp_path):
    frame = make_topic_frame(6, seed=2)
    runs = [tapt(frame, model=str(tiny_bert_dir), out=tmp_path / f"r{i}", random_state=seed,
                 **FAST) for i, seed in enumerate([5, 5, 6])]
    a, b, c = (_weights(r.out) for r in runs)
    assert a.keys() == b.keys()
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert runs[0].losses == runs[1].losses
    assert not all(np.array_equal(a[k], c[k]) for k in a)


def test_pairs_are_deduplicated_as_pairs():
    frame = pd.DataFrame({"a": ["x", "x", "x", None], "b": ["y", "y", "z", "w"]})
    assert collect_texts(frame, text="a", text_pair="b") == [("x", "y"), ("x", "z")]


def test_only_a_folder_tapt_wrote_is_replaced(tiny_bert_dir, tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    frame = make_topic_frame(3)
    for overwrite in (False, True):  # a folder labelaudit did not write: refused either way
        with pytest.raises(InvalidParameterError, match="not a folder labelaudit wrote.*keep"):
            tapt(frame, model=str(tiny_bert_dir), out=out, overwrite=overwrite, **FAST)
    assert (out / "keep.txt").read_text() == "mine"
    mine = tmp_path / "adapted"
    tapt(frame, model=str(tiny_bert_dir), out=mine, **FAST)
    assert (mine / "labelaudit-output.json").exists() and (mine / "config.json").exists()
    tapt(frame, model=str(tiny_bert_dir), out=mine, **FAST)  # its own folder: replaced
    (mine / "notes.txt").write_text("added by hand")
    with pytest.raises(InvalidParameterError, match="notes.txt"):
        tapt(frame, model=str(tiny_bert_dir), out=mine, overwrite=True, **FAST)
    assert (mine / "notes.txt").read_text() == "added by hand"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adapted", "taken"]


def test_bad_input_is_refused_with_a_clear_message(tiny_bert_dir, tmp_path):
    frame = make_topic_frame(3)
    with pytest.raises(InvalidInputError, match="missing column 'sentence'.*'text'"):
        tapt(frame, text="sentence", model=str(tiny_bert_dir), out=tmp_path / "a")
    with pytest.raises(InvalidInputError, match="no texts"):
        tapt(pd.DataFrame({"text": [" ", None]}), model=str(tiny_bert_dir),
             out=tmp_path / "b")
    with pytest.raises(InvalidParameterError, match="empty path"):
        tapt(frame, model=str(tiny_bert_dir), out="")
    with pytest.raises(InvalidParameterError, match="mlm_probability"):
        tapt(frame, model=str(tiny_bert_dir), out=tmp_path / "c", mlm_probability=1.0)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "labelaudit", "tapt", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_cli_writes_the_folder_and_refuses_a_missing_column(tiny_bert_dir, tmp_path):
    from transformers import AutoModel

    train, test = tmp_path / "train.csv", tmp_path / "test.jsonl"
    frame = make_topic_frame(4)
    frame.iloc[:8].to_csv(train, index=False)
    frame.iloc[8:].to_json(test, orient="records", lines=True)
    out = tmp_path / "tapt-tiny"
    done = _cli(str(train), str(test), "--text", "text", "--model", str(tiny_bert_dir),
                "--out", str(out), "--epochs", "1", "--max-length", "16", "--batch-size", "8")
    assert done.returncode == 0, done.stderr
    assert "adapted on 12 texts" in done.stderr
    AutoModel.from_pretrained(str(out))
    bad = _cli(str(train), "--text", "sentence", "--model", str(tiny_bert_dir),
               "--out", str(tmp_path / "other"))
    assert bad.returncode == 1
    assert bad.stderr.startswith("labelaudit tapt: error:") and bad.stderr.count("\n") == 1
    assert "missing column 'sentence'" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "other").exists()
