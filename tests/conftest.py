"""Fixtures shared by the test suite: tiny models built locally, never downloaded."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import pandas as pd
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The record of written outputs (labelaudit.io._write) goes to a folder of this run's own.
os.environ.setdefault("LABELAUDIT_STATE_DIR", tempfile.mkdtemp(prefix="labelaudit-state-"))

WORDS = {
    "sport": ["match", "goal", "team", "coach", "league", "score", "cup", "player"],
    "food": ["pasta", "sauce", "cook", "recipe", "bake", "spicy", "soup", "chef"],
    "tech": ["chip", "software", "laptop", "code", "robot", "network", "cloud", "app"],
}


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory):
    """A randomly initialised 1-layer BERT with a word-level vocabulary, saved to disk."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += sorted({w for words in WORDS.values() for w in words})
    vocab += [str(i) for i in range(100)] + ["a", "the", "and", "of", "is"]
    # transformers 5 ignores vocab_file here: pass the vocabulary itself
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=37,
                        max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_st_dir(tiny_bert_dir, tmp_path_factory):
    """The tiny BERT wrapped as a sentence-transformers model with mean pooling."""
    from sentence_transformers import SentenceTransformer, models

    folder = tmp_path_factory.mktemp("tiny-st")
    transformer = models.Transformer(str(tiny_bert_dir), max_seq_length=64)
    dim = (getattr(transformer, "get_embedding_dimension", None)
           or transformer.get_word_embedding_dimension)
    pooling = models.Pooling(dim(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling], device="cpu").save(str(folder))
    return folder


def make_topic_frame(n_per_class: int = 20, *, seed: int = 0, n_errors: int = 0,
                     classes=("sport", "food", "tech")) -> pd.DataFrame:
    """Short texts of a few topic words, with ``n_errors`` labels moved to another class.

    Columns: id, text, label, true_label, is_error.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for c in classes:
        for _ in range(n_per_class):
            words = rng.choice(WORDS[c], size=4, replace=False)
            rows.append((" ".join(words) + f" {rng.integers(100)}", c))
    frame = pd.DataFrame(rows, columns=["text", "true_label"]).sample(
        frac=1.0, random_state=seed).reset_index(drop=True)
    frame.insert(0, "id", [f"t{i}" for i in range(len(frame))])
    frame["label"] = frame["true_label"]
    wrong = rng.choice(len(frame), size=n_errors, replace=False)
    for i in wrong:
        others = [c for c in classes if c != frame.loc[i, "true_label"]]
        frame.loc[i, "label"] = others[int(rng.integers(len(others)))]
    frame["is_error"] = frame["label"] != frame["true_label"]
    return frame


SELECT_WORDS = {"sport": "match goal team", "food": "pasta sauce cook",
                "tech": "code chip data"}


def make_select_task(n: int, seed: int) -> pd.DataFrame:
    """``n`` texts of three classes: two of the class's words and a random filler word."""
    rng = np.random.default_rng(seed)
    classes = np.array(sorted(SELECT_WORDS))[np.arange(n) % 3]
    texts = [" ".join(rng.choice(SELECT_WORDS[c].split(), 2, replace=False))
             + f" w{rng.integers(30)}" for c in classes]
    return pd.DataFrame({"text": texts, "label": classes})


@pytest.fixture
def topic_frame():
    return make_topic_frame(20, n_errors=4)


@pytest.fixture(autouse=True, scope="session")
def _private_embedding_cache(tmp_path_factory):
    """Keep tests out of the user's embedding cache."""
    previous = os.environ.get("LABELAUDIT_CACHE")
    os.environ["LABELAUDIT_CACHE"] = str(tmp_path_factory.mktemp("labelaudit-cache"))
    yield
    if previous is None:
        os.environ.pop("LABELAUDIT_CACHE", None)
    else:
        os.environ["LABELAUDIT_CACHE"] = previous


# A test that trains a network, starts a server or a cluster, or drives a browser uses one of
# these fixtures; `make test-fast` leaves such tests out (`-m "not heavy"`), `make test` runs them.
HEAVY_FIXTURES = frozenset({"tiny_bert_dir", "tiny_st_dir", "local_ray", "s3", "live_server",
                            "label_studio", "server"})


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HEAVY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.heavy)
