"""The Ray engine on a local 2-CPU Ray: the same ranking as the plain engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from tests.conftest import make_topic_frame

from labelaudit.engine import HashingOptions
from labelaudit.scanning import scan

ray = pytest.importorskip("ray", reason="the Ray engine needs the scale extra (pip install ray)")

SMALL = HashingOptions(n_features=2**12, n_buckets=8)


@pytest.fixture(scope="module")
def local_ray():
    """One 2-CPU Ray for the module; the streamed scan joins it and leaves it running."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=True, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ray-data")
    frame = make_topic_frame(100, n_errors=15).drop(columns=["true_label"])
    (folder / "parts").mkdir()
    frame.iloc[:150].to_parquet(folder / "parts" / "part-0.parquet", index=False)
    frame.iloc[150:].to_parquet(folder / "parts" / "part-1.parquet", index=False)
    frame.to_json(folder / "data.jsonl", orient="records", lines=True)
    return folder


def _same_ranking(a: pd.DataFrame, b: pd.DataFrame) -> float:
    joined = a.merge(b, on="id")
    assert len(joined) == len(a) == len(b)
    return float(spearmanr(joined["score_ensemble_x"], joined["score_ensemble_y"]).statistic)


def test_in_memory_model_ranks_as_the_plain_engine(local_ray, data, tmp_path):
    plain = scan(data / "parts", scorers=["tfidf"],
                        out=tmp_path / "plain.parquet", chunk_size=64)
    on_ray = scan(data / "parts", scorers=["tfidf"],
                         out=tmp_path / "ray.parquet", chunk_size=64,
                         engine="ray")
    a, b = pd.read_parquet(tmp_path / "plain.parquet"), pd.read_parquet(tmp_path / "ray.parquet")
    assert _same_ranking(a, b) >= 0.999
    assert list(a.columns) == list(b.columns)
    assert set(a["id"].head(15)) == set(b["id"].head(15))
    joined = a.merge(b, on="id")  # the folds' models differ only in the last digits
    np.testing.assert_allclose(joined["given_prob_x"], joined["given_prob_y"], atol=1e-4)
    assert (on_ray.engine, on_ray.n_flagged) == ("ray", plain.n_flagged)
    assert ray.is_initialized()  # a Ray the caller started is left running


def test_hashed_model_ranks_as_the_plain_engine(local_ray, data, tmp_path):
    scan(data / "parts", scorers=["tfidf"], out=tmp_path / "plain.parquet", chunk_size=37,
                tfidf="hashing", hashing=SMALL)
    result = scan(data / "data.jsonl", scorers=["tfidf"],
                         out=tmp_path / "ray.parquet", chunk_size=50,
                         tfidf="hashing", hashing=SMALL, engine="ray")
    a, b = pd.read_parquet(tmp_path / "plain.parquet"), pd.read_parquet(tmp_path / "ray.parquet")
    assert _same_ranking(a, b) >= 0.999
    np.testing.assert_array_equal(a["id"], b["id"])
    assert result.model == "tfidf-hash" and result.n_items == 300


def test_the_embed_member_on_ray_ranks_as_on_the_local_engine(local_ray, data, tmp_path,
                                                              tiny_bert_dir):
    from labelaudit.engine import EmbedOptions

    options = {"scorers": ["tfidf", "embed"], "tfidf": "hashing", "hashing": SMALL,
               "chunk_size": 64, "embed": EmbedOptions(model=str(tiny_bert_dir),
                                                       cache_dir=False)}
    plain = scan(data / "parts", out=tmp_path / "plain.parquet", **options)
    on_ray = scan(data / "parts", out=tmp_path / "ray.parquet", engine="ray",
                         **options)
    a, b = pd.read_parquet(tmp_path / "plain.parquet"), pd.read_parquet(tmp_path / "ray.parquet")
    assert _same_ranking(a, b) >= 0.999
    assert on_ray.weights == pytest.approx(plain.weights, abs=1e-3)


def test_scan_with_folds_as_ray_tasks_gives_the_local_result(local_ray, tiny_bert_dir,
                                                            monkeypatch):
    from labelaudit import scan
    from labelaudit.models import EmbedScorer, _folds

    on_tasks: list[str] = []
    real = _folds._ray_folds
    monkeypatch.setattr(_folds, "_ray_folds",
                        lambda scorer, *a, **k: (on_tasks.append(scorer.name),
                                                 real(scorer, *a, **k))[1])

    frame = make_topic_frame(30, n_errors=5)
    members = ["tfidf", EmbedScorer(model=str(tiny_bert_dir), cache_dir=False)]
    local = scan(frame, scorers=members).to_frame()
    assert on_tasks == []
    on_ray = scan(frame, scorers=members, engine="ray").to_frame()
    assert on_tasks == ["tfidf", "embed"]
    pd.testing.assert_frame_equal(local, on_ray)
    assert ray.is_initialized()  # a Ray it did not start is left running


def test_engine_ray_with_what_needs_memory_runs_the_in_memory_scan_on_ray(local_ray, data,
                                                                          tmp_path):
    from labelaudit.cli import main

    plain, on_ray = tmp_path / "plain.csv", tmp_path / "ray.csv"
    common = ["scan", str(data / "data.jsonl"), "--scorers", "tfidf", "--datalab"]
    assert main([*common, "--out", str(plain)]) == 0
    assert main([*common, "--engine", "ray", "--out", str(on_ray)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(plain), pd.read_csv(on_ray))


def test_a_small_scan_on_ray_encodes_on_the_actor_pool_not_in_the_driver(
        local_ray, data, tmp_path, tiny_bert_dir, monkeypatch):
    from labelaudit import scan
    from labelaudit.engine import EmbedOptions
    from labelaudit.models import _embed

    driver: list[int] = []
    real = _embed.EmbeddingCache.get_or_compute

    def counting(self, texts, compute):
        return real(self, texts, lambda todo: (driver.append(len(todo)), compute(todo))[1])

    monkeypatch.setattr(_embed.EmbeddingCache, "get_or_compute", counting)
    cache = tmp_path / "cache"
    result = scan(data / "parts", out=tmp_path / "ray.parquet", engine="ray",
                         scorers=["tfidf", "embed"],
                         embed=EmbedOptions(model=str(tiny_bert_dir), cache_dir=cache))
    assert driver == [] and set(result.weights) == {"tfidf", "embed"}
    expected = scan(pd.read_parquet(data / "parts"), scorers=["tfidf", "embed"],
                    model=str(tiny_bert_dir), cache_dir=cache).to_frame()
    got = pd.read_parquet(tmp_path / "ray.parquet")
    assert _same_ranking(got, expected) >= 0.999


def test_the_default_members_on_ray_are_screened_as_scan_screens_them(local_ray, data,
                                                                     tmp_path, tiny_bert_dir):
    from labelaudit import scan
    from labelaudit.engine import EmbedOptions
    from labelaudit.models import DEFAULT_SCORERS

    cache = tmp_path / "cache"
    result = scan(data / "parts", out=tmp_path / "ray.parquet", engine="ray",
                         screen=60, embed=EmbedOptions(model=str(tiny_bert_dir),
                                                       cache_dir=cache))
    plain = scan(pd.read_parquet(data / "parts"), screen=60)
    assert set(result.weights) == set(plain.weights)
    assert set(result.screened) == set(plain.screened)
    assert set(result.weights) | set(result.screened) == set(DEFAULT_SCORERS)


def test_scan_tokens_with_folds_as_ray_tasks_gives_the_local_result(local_ray, tiny_bert_dir,
                                                                   monkeypatch):
    from labelaudit.models import _folds
    from labelaudit.scanning import scan_tokens
    from labelaudit.tokens import make_token_dataset

    on_tasks: list[int] = []
    real = _folds._ray_folds
    monkeypatch.setattr(_folds, "_ray_folds",
                        lambda *a, **k: (on_tasks.append(1), real(*a, **k))[1])

    rng = np.random.default_rng(0)
    sentences, tags = [], []
    for _ in range(40):
        sport, food = rng.choice(["goal", "team", "match"]), rng.choice(["pasta", "sauce"])
        sentences.append([sport, "and", food])
        tags.append(["B-SPORT", "O", "B-FOOD"])
    tags[3] = ["B-FOOD", "O", "B-FOOD"]  # a planted error
    data = make_token_dataset(sentences, tags)
    options = {"scorer": "encoder", "model": str(tiny_bert_dir), "cache": False,
               "n_folds": 3}
    local = scan_tokens(data, **options)
    assert on_tasks == []
    on_ray = scan_tokens(data, engine="ray", **options)
    assert on_tasks == [1]
    for a, b in zip(local.pred_probs, on_ray.pred_probs, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-4)


def test_many_classes_on_ray_keep_their_top_classes_and_reserve_memory(local_ray,
                                                                       monkeypatch):
    from tests.scanning.test_scan_top_classes import many_class_frame

    from labelaudit.detect import TopKProbs
    from labelaudit.models import _folds

    asked: list[dict] = []
    real = _folds.ray_fold_resources
    monkeypatch.setattr(_folds, "ray_fold_resources",
                        lambda *a, **k: (asked.append(real(*a, **k)), asked[-1])[1])
    frame = many_class_frame(n=600, n_classes=30).drop(columns=["is_error"])
    local = scan(frame, scorers=["tfidf"], top_classes=4, evidence=False)
    on_ray = scan(frame, scorers=["tfidf"], top_classes=4, evidence=False, engine="ray")
    assert isinstance(on_ray.pred_probs, TopKProbs)
    np.testing.assert_allclose(on_ray.scores["ensemble"], local.scores["ensemble"],
                               atol=1e-6)
    assert asked and asked[0]["memory"] > 0  # the fold's memory, by its class count
