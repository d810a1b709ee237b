"""EmbeddingCache over many calls: each call reads only the shards it needs."""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
import pytest

import labelaudit.models._encoder as encoder
from labelaudit.models._encoder import EmbeddingCache


@pytest.fixture(autouse=True)
def fresh_indexes(monkeypatch):
    """Each test starts as a new process: no cache folder indexed yet."""
    monkeypatch.setattr(encoder, "_INDEXES", {})


@contextmanager
def another_process():
    """Run the block as another process would: with its own indexes, then come back."""
    mine = encoder._INDEXES
    encoder._INDEXES = {}
    try:
        yield
    finally:
        encoder._INDEXES = mine


class Encoder:
    """A fake model: random vectors, remembering what it was asked to encode."""

    def __init__(self, seed: int = 0, dim: int = 3) -> None:
        self.rng = np.random.default_rng(seed)
        self.dim = dim
        self.calls: list[list[str]] = []
        self.vectors: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        self.vectors.update(zip(texts, out, strict=True))
        return out


class Recorded:
    """An open ``.npz`` that logs which arrays are read from which file."""

    def __init__(self, inner, path, log) -> None:
        self.inner, self.name, self.log = inner, Path(path).name, log

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.inner.close()

    def __getitem__(self, array: str):
        self.log.append((self.name, array))
        return self.inner[array]


@pytest.fixture
def reads(monkeypatch) -> list[tuple[str, str]]:
    """``[(shard file name, array name), ...]`` read through ``np.load``."""
    log: list[tuple[str, str]] = []
    load = np.load
    monkeypatch.setattr(np, "load", lambda path, *a, **k: Recorded(load(path, *a, **k), path, log))
    return log


def chunk(i: int, size: int = 4) -> list[str]:
    return [f"text {i} {j}" for j in range(size)]


def shards(tmp_path) -> set[str]:
    return {p.name for p in tmp_path.rglob("*.npz")}


def test_a_call_reads_the_vectors_of_the_shards_it_needs_only(tmp_path, reads):
    cache, compute = EmbeddingCache(tmp_path, "m"), Encoder()
    for i in range(50):
        before = shards(tmp_path)
        cache.get_or_compute(chunk(i), compute)
        if i == 17:
            (wanted,) = shards(tmp_path) - before
    assert len(shards(tmp_path)) == 50 and len(compute.calls) == 50
    reads.clear()
    got = cache.get_or_compute(chunk(17)[::-1], compute)
    assert len(compute.calls) == 50  # nothing encoded again
    assert reads == [(wanted, "vectors")]  # no other shard opened, no keys read again
    np.testing.assert_array_equal(got, [compute.vectors[t] for t in chunk(17)[::-1]])


def test_a_new_process_reads_the_keys_of_each_shard_once(tmp_path, reads):
    compute = Encoder()
    for i in range(5):
        EmbeddingCache(tmp_path, "m").get_or_compute(chunk(i), compute)
    with another_process():
        cache = EmbeddingCache(tmp_path, "m")
        cache.get_or_compute(chunk(0), compute)
        assert sorted(a for _, a in reads).count("keys") == 5
        reads.clear()
        cache.get_or_compute(chunk(1) + chunk(2), compute)
    assert sorted(a for _, a in reads) == ["vectors", "vectors"]
    assert len(compute.calls) == 5


def test_a_shard_written_by_another_process_is_found(tmp_path):
    compute = Encoder()
    mine = EmbeddingCache(tmp_path, "m")
    mine.get_or_compute(chunk(0), compute)
    with another_process():
        EmbeddingCache(tmp_path, "m").get_or_compute(chunk(1), compute)
    assert len(compute.calls) == 2
    got = mine.get_or_compute(chunk(1) + chunk(0), compute)
    assert len(compute.calls) == 2  # the other process's shard is read, not recomputed
    np.testing.assert_array_equal(got, [compute.vectors[t] for t in chunk(1) + chunk(0)])


@pytest.mark.parametrize("damage", ["deleted", "garbage", "truncated"])
def test_a_shard_damaged_after_indexing_is_encoded_again(tmp_path, damage):
    compute = Encoder()
    cache = EmbeddingCache(tmp_path, "m")
    cache.get_or_compute(chunk(0), compute)
    (first,) = tmp_path.rglob("*.npz")
    cache.get_or_compute(chunk(1), compute)
    if damage == "deleted":
        first.unlink()
    elif damage == "garbage":
        first.write_bytes(b"broken")
    else:
        first.write_bytes(first.read_bytes()[: first.stat().st_size // 2])
    got = cache.get_or_compute(chunk(1) + chunk(0), compute)
    assert compute.calls[2:] == [chunk(0)]  # only the damaged shard's items
    np.testing.assert_array_equal(got, [compute.vectors[t] for t in chunk(1) + chunk(0)])
    cache.get_or_compute(chunk(0), compute)
    with another_process():
        EmbeddingCache(tmp_path, "m").get_or_compute(chunk(0) + chunk(1), compute)
    assert len(compute.calls) == 3  # the new shard is found, by this process and others


def test_same_vectors_as_a_fresh_cache_and_as_reading_every_shard(tmp_path):
    compute = Encoder()
    cache = EmbeddingCache(tmp_path, "m")
    texts = [f"t{i}" for i in range(40)]
    rng = np.random.default_rng(0)
    for _ in range(12):
        cache.get_or_compute([str(t) for t in rng.choice(texts, size=7)], compute)
    cache.get_or_compute(texts, compute)
    for seed in (1, 2, 3):  # racing processes wrote some texts again, with other vectors
        again = texts[::seed + 1]
        with another_process() if seed != 2 else nullcontext():
            encoder._write_shard(cache.root, [encoder._text_key(t) for t in again],
                                 vectors=Encoder(seed)(again))
    ordered = {}  # what reading every shard in name order gives
    for shard in sorted(tmp_path.rglob("*.npz")):
        with np.load(shard) as data:
            ordered.update(zip(map(bytes, data["keys"]), data["vectors"], strict=True))
    query = [str(t) for t in rng.permutation(texts)] + texts[:3]
    got = cache.get_or_compute(query, lambda t: pytest.fail(f"recomputed {t}"))
    with another_process():
        fresh = EmbeddingCache(tmp_path, "m").get_or_compute(query, compute)
    expected = [ordered[encoder._text_key(t)] for t in query if encoder._text_key(t) in ordered]
    assert len(expected) == len(query) and got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(fresh, expected)


def test_no_root_keeps_nothing_and_empty_input(tmp_path):
    compute = Encoder()
    assert EmbeddingCache(None, "m").get_or_compute(["a"], compute).shape == (1, 3)
    assert EmbeddingCache(None, "m").get_or_compute(["a"], compute).shape == (1, 3)
    assert len(compute.calls) == 2
    assert EmbeddingCache(tmp_path, "m").get_or_compute([], compute).shape == (0, 0)
