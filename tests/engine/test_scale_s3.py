"""the streamed scan against S3 for real: a local moto server on 127.0.0.1, reached by pyarrow
through ``AWS_ENDPOINT_URL`` (or ``?endpoint_override=...&scheme=http`` in the URI)."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.engine import HashingOptions
from labelaudit.scanning import scan

moto_server = pytest.importorskip(
    "moto.server", reason="the S3 tests need a local S3 server: pip install 'moto[server]'")
boto3 = pytest.importorskip("boto3", reason="the S3 tests need boto3 (installed with moto)")

SMALL = HashingOptions(n_features=2**12, n_buckets=8)
BUCKET = "bucket"


@pytest.fixture(scope="module")
def endpoint():
    """One moto S3 server on a free port of 127.0.0.1 for the module."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(endpoint, monkeypatch):
    """A fresh bucket; pyarrow and boto3 find the server and fake credentials in the
    environment (as a user of MinIO or another S3-compatible store sets them)."""
    import requests

    for name, value in {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_EC2_METADATA_DISABLED": "true",
                        "AWS_CONFIG_FILE": "/nonexistent",
                        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    requests.post(f"{endpoint}/moto-api/reset", timeout=10).raise_for_status()
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture(scope="module")
def frame():
    """300 short texts of two easy topics with 12 planted flips."""
    return make_topic_frame(150, n_errors=12, classes=("sport", "food")).drop(
        columns=["true_label"])


def _put_parquet(client, key: str, part: pd.DataFrame) -> None:
    buffer = io.BytesIO()
    part.to_parquet(buffer, index=False)
    client.put_object(Bucket=BUCKET, Key=key, Body=buffer.getvalue())


def _put_parts(client, frame: pd.DataFrame, prefix: str = "data") -> None:
    for i, start in enumerate(range(0, len(frame), 100)):
        _put_parquet(client, f"{prefix}/part-{i}.parquet", frame.iloc[start:start + 100])


def _keys(client, prefix: str) -> list[str]:
    """The objects under ``prefix``; not the empty ``issues/`` folder marker that pyarrow
    puts after deleting an object (to keep the folder visible; readers ignore it)."""
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for o in listed.get("Contents", []) if not o["Key"].endswith("/"))


def _read_s3(client, prefix: str) -> pd.DataFrame:
    """The Parquet parts under ``prefix`` (or the one file ``prefix``), read with boto3."""
    keys = [k for k in _keys(client, prefix) if k.endswith(".parquet")]
    return pd.concat([pd.read_parquet(io.BytesIO(client.get_object(Bucket=BUCKET, Key=k)
                                                 ["Body"].read())) for k in keys],
                     ignore_index=True)


@pytest.fixture
def local(frame, tmp_path):
    """The same data as a local folder of the same parts."""
    folder = tmp_path / "data"
    folder.mkdir()
    for i, start in enumerate(range(0, len(frame), 100)):
        frame.iloc[start:start + 100].to_parquet(folder / f"part-{i}.parquet", index=False)
    return folder


def test_hashed_scan_reads_and_writes_an_s3_folder(s3, frame, local, tmp_path):
    _put_parts(s3, frame)
    expected = scan(local, scorers=["tfidf"], out=tmp_path / "local.parquet",
                           tfidf="hashing", hashing=SMALL, chunk_size=120)
    result = scan(f"s3://{BUCKET}/data/", scorers=["tfidf"],
                         out=f"s3://{BUCKET}/issues/", tfidf="hashing", hashing=SMALL,
                         chunk_size=120, progress=False)
    assert result.out == f"s3://{BUCKET}/issues/"
    assert (result.model, result.n_items) == ("tfidf-hash", 300)
    assert result.n_flagged == expected.n_flagged
    assert _keys(s3, "issues/") == ["issues/_SUCCESS", "issues/part-00000.parquet",
                                    "issues/part-00001.parquet", "issues/part-00002.parquet"]
    got = _read_s3(s3, "issues/")
    pd.testing.assert_frame_equal(got, pd.read_parquet(tmp_path / "local.parquet"))
    planted = set(frame.loc[frame["is_error"], "id"])
    assert len(planted & set(got["id"].head(12))) >= 10


def test_in_memory_scan_writes_one_s3_file(s3, frame, local, tmp_path):
    _put_parts(s3, frame)
    scan(local, scorers=["tfidf"], out=tmp_path / "local.parquet", top=12)
    result = scan(f"s3://{BUCKET}/data", scorers=["tfidf"],
                         out=f"s3://{BUCKET}/issues.parquet", top=12, chunk_size=70)
    assert result.model == "tfidf" and str(result.out) == f"s3://{BUCKET}/issues.parquet"
    assert _keys(s3, "issues") == ["issues.parquet"]  # no temporary file left beside it
    pd.testing.assert_frame_equal(_read_s3(s3, "issues.parquet"),
                                  pd.read_parquet(tmp_path / "local.parquet"))
    # an earlier scan output is replaced
    scan(f"s3://{BUCKET}/data", scorers=["tfidf"], out=f"s3://{BUCKET}/issues.parquet",
                top=5)
    assert _read_s3(s3, "issues.parquet")["flagged"].sum() == 5


def test_a_csv_source_and_a_glob(s3, frame, local, tmp_path):
    for i, start in enumerate(range(0, len(frame), 100)):
        s3.put_object(Bucket=BUCKET, Key=f"csv/part-{i}.csv",
                      Body=frame.iloc[start:start + 100].to_csv(index=False).encode())
    _put_parts(s3, frame)
    _put_parquet(s3, "data/other.parquet", frame.iloc[:10])  # not matched by the glob
    scan(local, scorers=["tfidf"], out=tmp_path / "local.parquet", tfidf="hashing",
                hashing=SMALL)
    expected = pd.read_parquet(tmp_path / "local.parquet")
    by_glob = scan(f"s3://{BUCKET}/data/part-*.parquet", scorers=["tfidf"],
                          out=tmp_path / "glob.parquet", tfidf="hashing", hashing=SMALL,
                          chunk_size=64)
    assert by_glob.n_items == 300
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "glob.parquet"), expected)
    scan(f"s3://{BUCKET}/csv/", scorers=["tfidf"], out=f"s3://{BUCKET}/from-csv.csv",
                tfidf="hashing", hashing=SMALL, chunk_size=64)
    body = s3.get_object(Bucket=BUCKET, Key="from-csv.csv")["Body"].read()
    got = pd.read_csv(io.BytesIO(body))
    assert got["id"].tolist() == expected["id"].tolist()


def test_the_endpoint_can_be_given_in_the_uri(s3, frame, local, tmp_path, monkeypatch,
                                              endpoint):
    _put_parts(s3, frame)
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    query = f"?endpoint_override={endpoint.split('://')[1]}&scheme=http"
    scan(local, scorers=["tfidf"], out=tmp_path / "local.parquet", tfidf="hashing",
                hashing=SMALL)
    result = scan(f"s3://{BUCKET}/data/{query}", scorers=["tfidf"],
                         out=f"s3://{BUCKET}/issues/{query}", tfidf="hashing", hashing=SMALL)
    assert result.n_items == 300
    pd.testing.assert_frame_equal(_read_s3(s3, "issues/"),
                                  pd.read_parquet(tmp_path / "local.parquet"))
    scan(f"s3://{BUCKET}/data/part-*.parquet{query}", scorers=["tfidf"],
                out=f"s3://{BUCKET}/one.parquet{query}")
    assert _keys(s3, "one") == ["one.parquet"]


@pytest.mark.parametrize("uri", [f"s3://{BUCKET}/nothing/", "s3://no-such-bucket/data/",
                                 f"s3://{BUCKET}/data/*.csv"])
def test_a_missing_bucket_or_prefix_is_one_clear_line(s3, frame, uri, tmp_path):
    _put_parts(s3, frame)
    with pytest.raises(InvalidInputError) as caught:
        scan(uri, scorers=["tfidf"], out=tmp_path / "issues.parquet")
    message = str(caught.value)
    assert "\n" not in message and uri.split("*")[0] in message
    assert caught.value.__cause__ is None  # no botocore or pyarrow error chained
    assert caught.value.__suppress_context__ or caught.value.__context__ is None


def test_a_missing_bucket_is_one_line_from_the_cli(s3, tmp_path, capsys):
    from labelaudit.cli import main

    code = main(["scan", "s3://no-such-bucket/data/", "--text", "text", "--label", "label",
                 "--scorers", "tfidf", "--out", str(tmp_path / "issues.parquet")])
    err = capsys.readouterr().err.strip()
    assert code == 1
    assert len(err.splitlines()) == 1 and "s3://no-such-bucket/data/" in err, err
    assert "Traceback" not in err


def test_an_s3_output_that_is_not_ours_is_refused(s3, frame):
    _put_parts(s3, frame)
    s3.put_object(Bucket=BUCKET, Key="issues/notes.txt", Body=b"mine")
    with pytest.raises(InvalidParameterError, match="not a labelaudit output folder"):
        scan(f"s3://{BUCKET}/data/", scorers=["tfidf"], out=f"s3://{BUCKET}/issues/")
    _put_parquet(s3, "other.parquet", frame.iloc[:5])
    with pytest.raises(InvalidParameterError, match="not a labelaudit scan output"):
        scan(f"s3://{BUCKET}/data/", scorers=["tfidf"],
                    out=f"s3://{BUCKET}/other.parquet")
    s3.put_object(Bucket=BUCKET, Key="notes.csv", Body=b"a,b\n1,2\n")
    with pytest.raises(InvalidParameterError, match="not a labelaudit scan output"):
        scan(f"s3://{BUCKET}/data/", scorers=["tfidf"], out=f"s3://{BUCKET}/notes.csv")
    with pytest.raises(InvalidParameterError, match="is an input file"):
        scan(f"s3://{BUCKET}/data/part-0.parquet", scorers=["tfidf"],
                    out=f"s3://{BUCKET}/data/part-0.parquet")
    assert _keys(s3, "issues/") == ["issues/notes.txt"]  # untouched
    assert len(_read_s3(s3, "other.parquet")) == 5


def test_a_shorter_rerun_replaces_every_part(s3, frame):
    _put_parts(s3, frame)
    target = f"s3://{BUCKET}/issues/"
    scan(f"s3://{BUCKET}/data/", scorers=["tfidf"], out=target, tfidf="hashing",
                hashing=SMALL, chunk_size=50)
    assert len(_keys(s3, "issues/")) == 7
    scan(f"s3://{BUCKET}/data/part-0.parquet", scorers=["tfidf"], out=target,
                tfidf="hashing", hashing=SMALL, chunk_size=100)
    assert _keys(s3, "issues/") == ["issues/_SUCCESS", "issues/part-00000.parquet"]
    assert len(_read_s3(s3, "issues/")) == 100
    import pyarrow.parquet as pq

    assert pq.read_table(target).num_rows == 100  # as a dataset, through pyarrow's S3


def test_the_ray_engine_reads_s3(s3, frame, local, tmp_path):
    ray = pytest.importorskip("ray", reason="the Ray engine needs the scale extra")
    _put_parts(s3, frame)
    scan(local, scorers=["tfidf"], out=tmp_path / "local.parquet", tfidf="hashing",
                hashing=SMALL, chunk_size=64)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=True, logging_level="ERROR")
    try:
        result = scan(f"s3://{BUCKET}/data/", scorers=["tfidf"],
                             out=f"s3://{BUCKET}/issues/", tfidf="hashing", hashing=SMALL,
                             chunk_size=64, engine="ray")
    finally:
        ray.shutdown()
    assert (result.engine, result.n_items) == ("ray", 300)
    got, expected = _read_s3(s3, "issues/"), pd.read_parquet(tmp_path / "local.parquet")
    assert set(got["id"].head(12)) == set(expected["id"].head(12))
    assert got["id"].tolist()[:5] == expected["id"].tolist()[:5]
