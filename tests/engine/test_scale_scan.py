"""the streamed scan end to end on small data: the same output as scan, chunking does not matter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.engine import HashingOptions
from labelaudit.io import read_table
from labelaudit.scanning import StreamScanResult, scan

SMALL = HashingOptions(n_features=2**12, n_buckets=8)


@pytest.fixture(scope="module")
def topics(tmp_path_factory):
    """300 short topic texts with 15 planted flips, as Parquet, CSV and JSONL files."""
    folder = tmp_path_factory.mktemp("topics")
    frame = make_topic_frame(100, n_errors=15).drop(columns=["true_label"])
    frame.to_parquet(folder / "data.parquet", index=False)
    frame.to_csv(folder / "data.csv", index=False)
    frame.to_json(folder / "data.jsonl", orient="records", lines=True)
    return folder, frame


def test_small_data_gives_exactly_scans_output(topics, tmp_path):
    folder, frame = topics
    result = scan(folder / "data.parquet", scorers=["tfidf"],
                         out=tmp_path / "issues.parquet",
                         chunk_size=37)
    expected = scan(frame, scorers=["tfidf"]).to_frame()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "issues.parquet"), expected,
                                  check_dtype=False)
    assert isinstance(result, StreamScanResult)
    assert (result.model, result.n_items, result.n_classes) == ("tfidf", 300, 3)
    assert result.n_flagged == int(expected["flagged"].sum())
    assert not (tmp_path / "issues.parquet.parts").exists()
    assert "items: 300" in result.summary()


def test_csv_in_csv_out_matches_too(topics, tmp_path):
    folder, frame = topics
    scan(folder / "data.csv", scorers=["tfidf"],
                out=tmp_path / "issues.csv", chunk_size=37, top=10)
    expected = scan(frame, scorers=["tfidf"], top=10).to_frame(readable=True)
    got = read_table(tmp_path / "issues.csv")
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    assert got["flagged"].sum() == 10


def test_hashed_output_does_not_depend_on_chunks_or_format(topics, tmp_path):
    folder, _ = topics
    small = scan(folder / "data.parquet", scorers=["tfidf"],
                        out=tmp_path / "a.parquet", chunk_size=37,
                        tfidf="hashing", hashing=SMALL)
    scan(folder / "data.jsonl", scorers=["tfidf"], out=tmp_path / "b.jsonl", chunk_size=1000,
                tfidf="hashing", hashing=SMALL)
    a, b = pd.read_parquet(tmp_path / "a.parquet"), read_table(tmp_path / "b.jsonl")
    pd.testing.assert_frame_equal(a, b, check_dtype=False, rtol=1e-5)
    assert small.model == "tfidf-hash"
    # out of core there is no evidence; every other column is the in-memory scan's
    columns = scan(topics[1], scorers=["tfidf"], evidence=False).to_frame().columns
    assert list(a.columns) == list(columns)
    assert a["rank"].tolist() == list(range(1, 301))


def test_hashed_model_ranks_planted_flips_first(topics, tmp_path):
    folder, frame = topics
    scan(folder / "data.parquet", scorers=["tfidf"],
                out=tmp_path / "a.parquet", tfidf="hashing",
                hashing=SMALL)
    out = pd.read_parquet(tmp_path / "a.parquet")
    planted = set(frame.loc[frame["is_error"], "id"])
    assert len(planted & set(out["id"].head(15))) >= 13
    assert out.loc[out["id"].isin(planted), "flagged"].mean() > 0.8


def test_auto_switches_to_hashing_above_the_threshold(topics, tmp_path):
    folder, _ = topics
    below = scan(folder / "data.parquet", scorers=["tfidf"], out=tmp_path / "a.parquet",
                        hashing_threshold=300, hashing=SMALL, chunk_size=50)
    above = scan(folder / "data.parquet", scorers=["tfidf"], out=tmp_path / "b.parquet",
                        hashing_threshold=299, hashing=SMALL, chunk_size=50)
    assert (below.model, above.model) == ("tfidf", "tfidf-hash")


def test_pairs_threshold_and_kept_columns(tmp_path):
    rng = np.random.default_rng(0)
    words = {"yes": ["same", "alike", "equal"], "no": ["other", "unlike", "apart"]}
    rows = [(f"premise {i}", f"{rng.choice(words[c])} {rng.integers(9)}", c, i * 2)
            for i, c in enumerate(["yes", "no"] * 60)]
    frame = pd.DataFrame(rows, columns=["premise", "hypothesis", "label", "rank"])
    frame.to_parquet(tmp_path / "pairs.parquet", index=False)
    result = scan(tmp_path / "pairs.parquet", scorers=["tfidf"],
                         text="premise", text_pair="hypothesis",
                         out=tmp_path / "out.parquet", tfidf="hashing", hashing=SMALL,
                         threshold=0.3, chunk_size=25)
    out = pd.read_parquet(tmp_path / "out.parquet")
    assert list(out.columns[:3]) == ["id", "text", "text_pair"]
    assert out.columns[-1] == "input_rank"  # the input's own "rank" column, renamed
    assert (out["flagged"] == (out["given_prob"] < 0.3)).all()
    assert result.flag_rule == "given-label probability < 0.3"
    assert result.accuracy > 0.9


def test_string_ids_are_carried(topics, tmp_path):
    folder, frame = topics
    scan(folder / "data.parquet", scorers=["tfidf"], out=tmp_path / "a.csv", tfidf="hashing",
                hashing=SMALL, keep_columns=False)
    out = read_table(tmp_path / "a.csv")
    assert sorted(out["id"]) == sorted(frame["id"])
    assert "is_error" not in out.columns


def test_an_earlier_scan_output_is_replaced(topics, tmp_path):
    folder, _ = topics
    target = tmp_path / "issues.parquet"
    scan(folder / "data.parquet", scorers=["tfidf"], out=target, top=3)
    scan(folder / "data.parquet", scorers=["tfidf"], out=target, top=5)
    assert pd.read_parquet(target)["flagged"].sum() == 5


def test_confident_learning_without_a_pool_matches_the_library():
    from labelaudit.detect import confident_learning

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4) * 0.5, size=400)
    labels = np.where(rng.random(400) < 0.8, probs.argmax(1), rng.integers(4, size=400))
    ours = confident_learning(labels, probs, n_jobs=1)
    theirs = confident_learning(labels, probs)
    np.testing.assert_array_equal(ours.is_issue, theirs.is_issue)
    np.testing.assert_allclose(ours.scores, theirs.scores)
    assert ours.n_issues == theirs.n_issues


def test_a_folder_output_holds_parts_in_rank_order(topics, tmp_path):
    folder, _ = topics
    scan(folder / "data.parquet", scorers=["tfidf"],
                out=tmp_path / "one.parquet", tfidf="hashing",
                hashing=SMALL)
    result = scan(folder / "data.parquet", scorers=["tfidf"], out=f"{tmp_path / 'issues'}/",
                         tfidf="hashing", hashing=SMALL, chunk_size=100)
    parts = sorted(p.name for p in (tmp_path / "issues").iterdir())
    assert parts == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "issues"),
                                  pd.read_parquet(tmp_path / "one.parquet"))
    assert not (tmp_path / "issues.parts").exists() and result.n_items == 300
    (tmp_path / "issues" / "notes.txt").write_text("mine")
    from labelaudit._errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="not a labelaudit output folder"):
        scan(folder / "data.parquet", scorers=["tfidf"], out=f"{tmp_path / 'issues'}/")


def test_uris_are_listed_read_and_written_through_pyarrow(topics, tmp_path):
    folder, _ = topics
    (tmp_path / "in").mkdir()
    frame = pd.read_parquet(folder / "data.parquet")
    frame.iloc[:100].to_parquet(tmp_path / "in" / "part-0.parquet", index=False)
    frame.iloc[100:].to_parquet(tmp_path / "in" / "part-1.parquet", index=False)
    local = scan(tmp_path / "in", scorers=["tfidf"],
                        out=tmp_path / "local.parquet", tfidf="hashing",
                        hashing=SMALL)
    remote = scan(f"file://{tmp_path}/in/*.parquet", scorers=["tfidf"],
                         out=f"file://{tmp_path}/out",
                         tfidf="hashing", hashing=SMALL, chunk_size=120)
    assert remote.out == f"file://{tmp_path}/out"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "_SUCCESS", "part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out"),
                                  pd.read_parquet(tmp_path / "local.parquet"))
    assert local.n_items == remote.n_items == 300
