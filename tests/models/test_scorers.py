import numpy as np
import pytest
from tests.conftest import make_topic_frame

from labelaudit.io import TextDataset, prepare_text_dataset
from labelaudit.models import (
    EmbeddingCache,
    EmbedScorer,
    FinetuneScorer,
    TfidfScorer,
    cross_val_pred_probs,
    encode_texts,
    make_scorer,
)


@pytest.fixture
def clean_data():
    frame = make_topic_frame(12)
    return prepare_text_dataset(frame, text="text", label="label", id="id")


def test_tfidf_learns_topics(clean_data):
    probs = cross_val_pred_probs(clean_data, scorers=["tfidf"], n_folds=3)
    assert (probs.argmax(1) == clean_data.labels).mean() > 0.9


def test_tfidf_pairs_stack_two_vectorisers():
    frame = make_topic_frame(6)
    frame["pair"] = frame["text"].str.split().str[0]
    data = prepare_text_dataset(frame, text="text", label="label", text_pair="pair")
    scorer = TfidfScorer()
    features = scorer.prepare(data)
    assert features.shape == (len(frame), 2)
    fitted = scorer.fit(features, data.labels, n_classes=3)
    assert len(fitted.vectorizers_) == 2
    assert fitted.predict_proba(features).shape == (len(frame), 3)


def test_embed_scorer_with_a_local_encoder_and_cache(clean_data, tiny_st_dir, tmp_path):
    scorer = EmbedScorer(model=str(tiny_st_dir), cache_dir=tmp_path)
    features = scorer.prepare(clean_data)
    assert features.shape == (len(clean_data), 32)
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0, rtol=1e-4)
    assert list(tmp_path.rglob("*.npz"))  # cached on disk
    again = scorer.prepare(clean_data)
    np.testing.assert_allclose(again, features)


def test_second_encoding_of_same_texts_computes_nothing(tmp_path):
    calls = []

    def compute(texts):
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts])

    cache = EmbeddingCache(tmp_path, "model-a")
    first = cache.get_or_compute(["a", "bb", "a"], compute)
    assert calls == [["a", "bb"]]  # duplicates encoded once
    second = EmbeddingCache(tmp_path, "model-a").get_or_compute(["bb", "a", "ccc"], compute)
    assert calls[-1] == ["ccc"]
    np.testing.assert_allclose(second[:2], first[[1, 0]])
    EmbeddingCache(tmp_path, "model-b").get_or_compute(["a"], compute)
    assert calls[-1] == ["a"]  # another model has its own cache


def test_embed_pair_modes(tiny_st_dir, tmp_path):
    frame = make_topic_frame(4)
    frame["pair"] = frame["text"].str.split().str[0]
    data = prepare_text_dataset(frame, text="text", label="label", text_pair="pair")
    features = EmbedScorer(model=str(tiny_st_dir), cache_dir=tmp_path).prepare(data)
    assert features.shape == (len(frame), 4 * 32)  # [u, v, |u-v|, u*v]
    joint = EmbedScorer(model=str(tiny_st_dir), cache_dir=tmp_path,
                        pair_mode="joint").prepare(data)
    assert joint.shape == (len(frame), 32)
    alone = encode_texts(list(frame["text"]), model=str(tiny_st_dir), cache_dir=False)
    assert not np.allclose(joint, alone)  # the pair is really encoded together


def test_finetune_runs_on_cpu_with_a_tiny_model(tiny_bert_dir):
    frame = make_topic_frame(5)
    data = prepare_text_dataset(frame, text="text", label="label")
    scorer = FinetuneScorer(model=str(tiny_bert_dir), epochs=1, batch_size=8, max_length=16)
    features = scorer.prepare(data)
    probs = scorer.fit(features, data.labels, n_classes=3).predict_proba(features[:4])
    assert probs.shape == (4, 3)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    assert scorer.device_ == "cpu"


def test_make_scorer_ignores_options_a_scorer_does_not_take():
    assert make_scorer("tfidf", model="x", pair_mode="joint").name == "tfidf"
    assert make_scorer("embed", model="x").model == "x"
    with pytest.raises(ValueError, match="unknown scorer"):
        make_scorer("bm25")


def test_cache_keys_ending_in_nul_bytes_are_found(tmp_path, monkeypatch):
    import labelaudit.models._encoder as encoder

    monkeypatch.setattr(encoder, "_text_key", lambda text: text.encode().ljust(16, b"\0"))
    calls = []

    def compute(texts):
        calls.append(list(texts))
        return np.ones((len(texts), 2))

    EmbeddingCache(tmp_path, "m").get_or_compute(["ab", "c"], compute)
    EmbeddingCache(tmp_path, "m").get_or_compute(["ab", "c"], compute)
    assert calls == [["ab", "c"]]


def test_tiny_tokenizer_knows_its_words(tiny_bert_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert_dir))
    assert tokenizer.unk_token_id not in tokenizer("match goal pasta")["input_ids"]


def test_finetune_tokenises_once_with_head_and_tail_truncation(tiny_bert_dir):
    from labelaudit.io import TextDataset

    words = " ".join(["match"] * 40 + ["goal"] * 40)  # the ending differs from the start
    data = TextDataset(np.arange(2), [words, "pasta sauce"], None, np.array([0, 1]),
                       np.array(["a", "b"]))
    scorer = FinetuneScorer(model=str(tiny_bert_dir), max_length=16)
    inputs = scorer.prepare(data)
    long_ids = inputs.ids[0]
    assert len(long_ids) == 16 and len(inputs.ids[1]) == 4  # [CLS] pasta sauce [SEP]
    from transformers import AutoTokenizer

    tokens = AutoTokenizer.from_pretrained(str(tiny_bert_dir)).convert_ids_to_tokens(long_ids)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert tokens[1:4] == ["match"] * 3 and tokens[4:-1] == ["goal"] * 11  # head 4, tail 12
    head_only = FinetuneScorer(model=str(tiny_bert_dir), max_length=16, truncation="head")
    assert "goal" not in AutoTokenizer.from_pretrained(str(tiny_bert_dir)).convert_ids_to_tokens(
        head_only.prepare(data).ids[0])
    with pytest.raises(ValueError, match="truncation"):
        FinetuneScorer(model=str(tiny_bert_dir), truncation="middle").prepare(data)


def test_embed_windows_cover_the_whole_of_long_texts(tiny_st_dir):
    from labelaudit.models._embed import encode_texts, encode_windows

    start, end = " ".join(["match"] * 30), " ".join(["pasta"] * 30)
    long_text = f"{start} {end}"
    options = {"model": str(tiny_st_dir), "max_length": 32, "cache_dir": False}
    truncated = encode_texts([long_text], **options)[0]
    windowed = encode_windows([long_text, "goal team"], **options)
    both = encode_texts([start, end], **options)
    mean = both.mean(axis=0) / np.linalg.norm(both.mean(axis=0))
    np.testing.assert_allclose(windowed[0], mean, atol=1e-5)  # two windows, averaged
    assert not np.allclose(windowed[0], truncated, atol=1e-3)  # truncation sees the start only
    np.testing.assert_allclose(windowed[1], encode_texts(["goal team"], **options)[0],
                               atol=1e-6)  # a short text is embedded as it is
    with pytest.raises(ValueError, match="long_texts"):
        make_scorer("embed", long_texts="all").prepare(
            TextDataset(np.arange(1), ["a"], None, np.array([0]), np.array(["x"])))


def test_char_tfidf_and_knn_members_learn_a_topic_task():
    from labelaudit import scan
    from labelaudit.models import CharTfidfScorer, KnnScorer

    frame = make_topic_frame(15, n_errors=3)
    for member in ("tfidf-char", "knn"):
        result = scan(frame, scorers=[member], methods=["loss"], progress=False)
        assert result.accuracy > 0.8, member
        flagged = set(result.to_frame().head(6)["id"])
        assert len(flagged & set(frame.loc[frame["is_error"], "id"])) >= 2, member
    data = prepare_text_dataset(make_topic_frame(5), text="text", label="label")
    chars = CharTfidfScorer()
    probs = chars.fit(chars.prepare(data), data.labels, n_classes=3).predict_proba(
        chars.prepare(data))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    knn = KnnScorer(k=3)
    x = np.eye(3)[data.labels] + 0.01
    out = knn.fit(x, data.labels, n_classes=3).predict_proba(x)
    assert (out.argmax(axis=1) == data.labels).all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
