"""Fixtures of the token tests; the data builders live in ner_fixtures.py."""

from __future__ import annotations

import os

import pytest
from ner_fixtures import build_tiny_bert, conll_text, make_corpus, plant_errors

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LABELAUDIT_THREADS", "1")  # the test machine is shared


@pytest.fixture
def corpus():
    tokens, tags, docs = make_corpus()
    noisy, planted = plant_errors(tags)
    return tokens, tags, noisy, docs, planted


@pytest.fixture
def noisy_conll(tmp_path, corpus):
    tokens, clean, noisy, docs, planted = corpus
    path = tmp_path / "noisy.conll"
    path.write_text(conll_text(tokens, noisy, docs))
    truth = tmp_path / "clean.conll"
    truth.write_text(conll_text(tokens, clean, docs))
    return path, truth, planted


@pytest.fixture(scope="session")
def tiny_ner_bert_dir(tmp_path_factory):
    """A randomly initialised 1-layer BERT whose vocabulary holds the corpus's words."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-ner-bert"))
