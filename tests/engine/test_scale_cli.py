"""`labelaudit scan` streams a scan of a file (--scorers tfidf --out, or --engine) with the
output of the in-memory scan, and refuses what streaming cannot do."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import scan
from labelaudit.cli import main


@pytest.fixture
def data(tmp_path):
    frame = make_topic_frame(12, n_errors=3)
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    return frame, path


def test_a_tfidf_scan_of_a_file_streams_with_the_in_memory_output(data, tmp_path, capsys):
    frame, path = data
    out = tmp_path / "issues.parquet"
    assert main(["scan", str(path), "--scorers", "tfidf", "--out", str(out),
                 "--chunk-size", "7"]) == 0
    assert "engine: local" in capsys.readouterr().err  # the streamed scan's summary
    expected = scan(frame, scorers=["tfidf"]).to_frame()
    pd.testing.assert_frame_equal(pd.read_parquet(out), expected, check_dtype=False)


def test_engine_local_gives_the_same_file(data, tmp_path):
    _, path = data
    plain, engine = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["scan", str(path), "--scorers", "tfidf", "--out", str(plain)]) == 0
    assert main(["scan", str(path), "--engine", "local", "--scorers", "tfidf",
                 "--out", str(engine)]) == 0
    assert plain.read_bytes() == engine.read_bytes()


def test_engine_with_the_default_members_is_the_default_scan(data, tmp_path, tiny_bert_dir,
                                                             capsys):
    _, path = data
    plain, engine = tmp_path / "a.csv", tmp_path / "b.csv"
    model = ["--model", str(tiny_bert_dir), "--cache-dir", str(tmp_path / "cache")]
    # the in-memory default members (tfidf, tfidf-char) take no encoder: --model is refused
    assert main(["scan", str(path), *model, "--out", str(plain)]) == 2
    assert main(["scan", str(path), "--out", str(plain)]) == 0
    assert main(["scan", str(path), "--engine", "local", *model, "--out", str(engine)]) == 0
    assert "members (weight): tfidf" in capsys.readouterr().err
    assert plain.read_bytes() == engine.read_bytes()
    assert "score_loss_tfidf" in pd.read_csv(engine).columns


@pytest.mark.parametrize(("extra", "message", "code"), [
    # options that cannot go together, or one missing: usage errors (exit 2)
    (["--engine", "local", "--datalab", "--out", "x.csv"], "--datalab need", 2),
    (["--engine", "local", "--scorers", "finetune", "--out", "x.csv"], "--scorers finetune", 2),
    (["--engine", "local", "--model", "a", "--model", "b", "--out", "x.csv"], "more than one",
     2),
    (["--engine", "local"], "give --out", 2),
    (["--ray-address", "auto", "--out", "x.csv"], "--engine ray", 2),
    (["--scorers", "tfidf", "--datalab", "--out", "s3://bucket/x.csv"], "only a streamed scan",
     1),
    (["--scorers", "tfidf", "--datalab", "--out", "issues/"], "only a streamed scan", 1),
])
def test_what_streaming_cannot_do_is_one_line(data, tmp_path, capsys, extra, message, code):
    _, path = data
    extra = [str(tmp_path / e) if e == "x.csv" else e for e in extra]
    assert main(["scan", str(path), *extra]) == code
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.csv").exists()


def test_other_scans_stay_in_memory(data, tmp_path, capsys):
    _, path = data
    assert main(["scan", str(path), "--scorers", "tfidf", "--datalab",
                 "--out", str(tmp_path / "c.csv")]) == 0
    err = capsys.readouterr().err
    assert "engine:" not in err and "datalab:" in err


def test_other_commands_write_local_files_only(data, capsys):
    _, path = data
    assert main(["noise", str(path), "--label", "label", "--method", "uniform",
                 "--rate", "0.1", "--out", "s3://bucket/noisy.csv"]) == 1
    assert "writes local files only" in capsys.readouterr().err
