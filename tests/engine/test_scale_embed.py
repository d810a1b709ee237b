"""The embed member of a streamed scan: embeddings chunk by chunk, heads fitted on the
gathered embeddings (as EmbedScorer) or out of core, resumed from the cache and folds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.engine import EmbedOptions, HashingOptions
from labelaudit.engine import _local as local_module
from labelaudit.engine._heads import MemmapChunks, fit_head_fold, head_features
from labelaudit.models import EmbedScorer
from labelaudit.scanning import scan

SMALL = HashingOptions(n_features=2**12, n_buckets=4)


class Killed(Exception):
    """Stands for the process being killed in the middle of a fold."""


def _clusters(n_per_class=60, dim=6, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, dim)) * 3
    labels = np.repeat(np.arange(3), n_per_class)
    vectors = (centres[labels] + rng.normal(size=(len(labels), dim))).astype(np.float32)
    return vectors, labels


def _chunks(tmp_path, vectors, *, pairs=False, chunk_size=25):
    chunks = MemmapChunks(tmp_path / "e.npy", len(vectors), chunk_size=chunk_size, pairs=pairs)
    for start in range(0, len(vectors), 40):  # written in other chunks than read
        chunks.append(vectors[start:start + 40])
    chunks.close()
    return chunks


def test_the_in_memory_head_is_the_embed_scorers_head(tmp_path):
    vectors, labels = _clusters()
    folds = np.arange(len(labels)) % 3
    got = fit_head_fold(1, _chunks(tmp_path, vectors), labels, folds, EmbedOptions(C=0.5),
                        n_classes=3, random_state=0)
    train, held = folds != 1, np.flatnonzero(folds == 1)
    expected = EmbedScorer(C=0.5).fit(vectors[train], labels[train], n_classes=3)
    np.testing.assert_array_equal(np.sort(got.rows), held)
    np.testing.assert_allclose(got.probs[np.argsort(got.rows)],
                               expected.predict_proba(vectors[held]), atol=1e-6)


def test_an_out_of_core_head_learns_the_classes(tmp_path):
    vectors, labels = _clusters()
    folds = np.arange(len(labels)) % 3
    got = fit_head_fold(0, _chunks(tmp_path, vectors), labels, folds,
                        EmbedOptions(head_memory_mb=0), n_classes=3, random_state=0)
    assert got.probs.shape == (60, 3)
    np.testing.assert_allclose(got.probs.sum(axis=1), 1.0, atol=1e-5)
    assert (got.probs.argmax(axis=1) == labels[got.rows]).mean() > 0.9


def test_pairs_are_stored_side_by_side_and_combined_for_the_heads(tmp_path):
    u, labels = _clusters(dim=4)
    v = u[::-1].copy()
    chunks = _chunks(tmp_path, np.hstack([u, v]), pairs=True)
    assert chunks.dim == 4
    combined = head_features(np.hstack([u, v]), pairs=True)
    np.testing.assert_allclose(combined, np.hstack([u, v, np.abs(u - v), u * v]))
    folds = np.arange(len(labels)) % 2
    got = fit_head_fold(0, chunks, labels, folds, EmbedOptions(), n_classes=3,
                        random_state=0)
    expected = EmbedScorer().fit(combined[folds == 1], labels[folds == 1], n_classes=3)
    np.testing.assert_allclose(got.probs[np.argsort(got.rows)],
                               expected.predict_proba(combined[folds == 0]), atol=1e-6)


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.parquet"
    make_topic_frame(50, n_errors=8).drop(columns=["true_label"]).to_parquet(path, index=False)
    return path


def _embed(tmp_path, model, **options):
    return EmbedOptions(model=str(model), cache_dir=tmp_path / "cache", **options)


def test_a_streamed_scan_averages_hashed_tfidf_and_embedding_heads(data, tmp_path,
                                                                   tiny_bert_dir):
    result = scan(data, out=tmp_path / "out.parquet", scorers=["tfidf", "embed"],
                         tfidf="hashing", hashing=SMALL, chunk_size=32,
                         embed=_embed(tmp_path, tiny_bert_dir))
    assert set(result.weights) == {"tfidf", "embed"}
    assert sum(result.weights.values()) == pytest.approx(1.0)
    assert "members (weight): tfidf" in result.summary()
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert len(out) == 150 and "score_loss_tfidf" in out.columns
    assert out["rank"].tolist() == list(range(1, 151))
    alone = scan(data, out=tmp_path / "embed.parquet", scorers=["embed"],
                        tfidf="hashing", hashing=SMALL, chunk_size=32,
                        embed=_embed(tmp_path, tiny_bert_dir))
    assert list(alone.weights) == ["embed"]
    assert "score_loss_embed" in pd.read_parquet(tmp_path / "embed.parquet").columns


def test_the_default_members_are_screened_on_a_sample(data, tmp_path, tiny_bert_dir):
    result = scan(data, out=tmp_path / "out.parquet", tfidf="hashing", hashing=SMALL,
                         screen=60, embed=_embed(tmp_path, tiny_bert_dir))
    assert "tfidf" in result.weights
    assert set(result.weights) | set(result.screened) == {"tfidf", "embed"}


def test_a_killed_embed_fold_resumes_without_refitting_or_reencoding(data, tmp_path,
                                                                      tiny_bert_dir,
                                                                      monkeypatch):
    real_fit, real_load = local_module.fit_head_fold, local_module.load_sentence_encoder
    fitted: list[int] = []
    encoded: list[int] = []

    def fit(fold, *args, fail_at=None, **kwargs):
        if fold == fail_at:
            raise Killed(f"killed during fold {fold}")
        fitted.append(fold)
        return real_fit(fold, *args, **kwargs)

    def load(*args, **kwargs):
        model = real_load(*args, **kwargs)
        encode = model.encode
        model.encode = lambda inputs, **kw: (encoded.append(len(inputs)), encode(inputs, **kw))[1]
        return model

    monkeypatch.setattr(local_module, "load_sentence_encoder", load)
    monkeypatch.setattr(local_module, "fit_head_fold",
                        lambda fold, *a, **k: fit(fold, *a, fail_at=2, **k))
    options = {"scorers": ["tfidf", "embed"], "tfidf": "hashing", "hashing": SMALL,
               "embed": _embed(tmp_path, tiny_bert_dir)}
    out = tmp_path / "out.parquet"
    with pytest.raises(Killed):
        scan(data, out=out, **options)
    assert fitted == [0, 1] and sum(encoded) == 150 and not out.exists()
    fitted.clear()
    encoded.clear()
    monkeypatch.setattr(local_module, "fit_head_fold", fit)
    result = scan(data, out=out, **options)
    assert fitted == [2, 3, 4] and sum(encoded) == 0
    assert result.resumed_folds == 5 + 2  # every tfidf fold, two embed folds
    again = scan(data, out=tmp_path / "fresh.parquet", resume=False, **options)
    assert again.resumed_folds == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out), pd.read_parquet(tmp_path / "fresh.parquet"))
