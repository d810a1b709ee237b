"""Word vectors, their cache and the fine-tuning scorer, on a tiny random BERT."""

import numpy as np
import pytest

from labelaudit.models import EncoderTokenScorer, make_token_scorer
from labelaudit.models._encoder import TokenVectorCache
from labelaudit.models._tokens import encode_word_vectors
from labelaudit.scanning import scan_tokens
from labelaudit.tokens import make_token_dataset


def test_word_vectors_are_mean_pooled_subwords(tiny_ner_bert_dir):
    import torch
    from transformers import AutoModel, AutoTokenizer

    words = ["Pariss", "visited", "Rome"]  # "Pariss" -> paris ##s
    [vectors] = encode_word_vectors([words], model=str(tiny_ner_bert_dir), layers=(1,))
    tokenizer = AutoTokenizer.from_pretrained(tiny_ner_bert_dir)
    model = AutoModel.from_pretrained(tiny_ner_bert_dir).eval()
    enc = tokenizer([words], is_split_into_words=True, return_tensors="pt")
    assert enc.word_ids(0) == [None, 0, 0, 1, 2, None]
    with torch.no_grad():
        states = model(**enc).last_hidden_state[0].numpy()
    assert vectors.shape == (3, 32)
    assert np.allclose(vectors[0], states[1:3].mean(0), atol=1e-5)
    assert np.allclose(vectors[2], states[4], atol=1e-5)


def test_long_sentences_are_encoded_in_chunks(tiny_ner_bert_dir):
    long = ["Paris", "visited"] * 40
    short = ["Rome"]
    out = encode_word_vectors([long, short], model=str(tiny_ner_bert_dir), layers=(0, 1),
                              max_length=20)
    assert out[0].shape == (80, 64) and out[1].shape == (1, 64)
    assert np.all(np.abs(out[0]).sum(1) > 0)  # no word was truncated away


def test_vector_cache_reuses_and_separates_models(tmp_path):
    calls = []

    def compute(sentences):
        calls.append(len(sentences))
        return [np.full((len(s), 2), len(s[0]), np.float32) for s in sentences]

    cache = TokenVectorCache(tmp_path, "model-a")
    first = cache.get_or_compute([["ab", "c"], ["d"], ["ab", "c"]], compute)
    assert calls == [2]  # the duplicate sentence is encoded once
    again = cache.get_or_compute([["d"], ["ab", "c"]], compute)
    assert calls == [2] and np.array_equal(again[1], first[0])
    TokenVectorCache(tmp_path, "model-b").get_or_compute([["d"]], compute)
    assert calls == [2, 1]
    for shard in (tmp_path / "tokens").rglob("*.npz"):
        shard.write_bytes(b"broken")
    cache.get_or_compute([["d"]], compute)
    assert calls == [2, 1, 1]
    assert TokenVectorCache(None, "x").get_or_compute([["a"]], compute)[0].shape == (1, 2)


def test_vector_cache_keys_ending_in_nul_bytes(tmp_path):
    from labelaudit.models._encoder import _sentence_key

    # numpy's "S16" strips trailing NUL bytes; such keys must still be found on disk.
    sentence = next([f"w{i}"] for i in range(100_000) if _sentence_key([f"w{i}"])[-1] == 0)
    cache = TokenVectorCache(tmp_path, "m")
    cache.get_or_compute([sentence], lambda s: [np.ones((1, 2), np.float32)])
    again = cache.get_or_compute([sentence], lambda s: 1 / 0)  # must not recompute
    assert again[0].tolist() == [[1.0, 1.0]]


def test_encoder_scorer_uses_the_disk_cache(tiny_ner_bert_dir, tmp_path, corpus):
    tokens, clean, _, docs, _ = corpus
    ds = make_token_dataset(tokens[:20], clean[:20])
    scorer = EncoderTokenScorer(model=str(tiny_ner_bert_dir), cache_dir=tmp_path)
    first = scorer.prepare(ds)
    assert list((tmp_path / "tokens").rglob("*.npz"))
    second = scorer.prepare(ds)
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=False))
    assert first[0].shape == (len(tokens[0]), 3 * (32 + 9))


def test_finetune_scorer_on_cpu(tiny_ner_bert_dir, corpus):
    tokens, clean, noisy, docs, _ = corpus
    ds = make_token_dataset(tokens[:30], noisy[:30], documents=docs[:30])
    scorer = make_token_scorer("finetune", model=str(tiny_ner_bert_dir), epochs=1,
                               batch_size=8, max_length=12)
    result = scan_tokens(ds, scorer=scorer, n_folds=2)
    assert result.scorer.startswith("finetune(")
    for sent, probs in zip(ds.tokens, result.pred_probs, strict=False):
        assert probs.shape == (len(sent), len(result.classes))
        assert np.allclose(probs.sum(1), 1.0, atol=1e-5)
    # A sentence longer than max_length sub-words still gets a prediction for every word.
    # (Cross-fitting fits clones; fit the scorer itself to predict with it.)
    labels = [np.array([result.classes.index(t) for t in s]) for s in ds.iob2_tags]
    scorer.fit(scorer.prepare(ds), labels, len(result.classes))
    long = [["Paris", "visited", "Rome", "on", "Monday", "."] * 4]
    [probs] = scorer.predict_proba(long)
    assert probs.shape == (24, len(result.classes))
    assert not np.allclose(probs[-1], 1 / len(result.classes))


@pytest.mark.slow
def test_default_encoder_finds_a_planted_error(corpus):
    """The real packaged MiniLM encoder (slow: loads the model)."""
    tokens, _, noisy, docs, planted = corpus
    ds = make_token_dataset(tokens, noisy, documents=docs)
    result = scan_tokens(ds, n_folds=4, cache=False)
    top = {r["id"] for r in result.to_records()[:8]}
    assert planted["wrong-type"] in top
