"""Load pre-trained sentence encoders offline and cache their embeddings on disk."""

from __future__ import annotations

import hashlib
import os
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditWarning

# Loading and naming models moved to _hub, _loading and _runtime; importable here as before.
from labelaudit.models._hub import DEFAULT_MODEL, resolve_model_path
from labelaudit.models._loading import load_pretrained, load_sentence_encoder, quiet_loading
from labelaudit.models._runtime import torch_setup

__all__ = [
    "DEFAULT_MODEL",
    "EmbeddingCache",
    "MaxLengthWarning",
    "clamp_length",
    "TokenVectorCache",
    "check_cache_dir",
    "default_cache_dir",
    "load_pretrained",
    "load_sentence_encoder",
    "quiet_loading",
    "resolve_model_path",
    "token_limit",
    "torch_setup",
]


class MaxLengthWarning(LabelAuditWarning):
    """The asked-for token length is beyond what the model takes; it was lowered."""


def clamp_length(max_length: int, tokenizer: Any, config: Any = None, *,
                 model: object = None) -> int:
    """``max_length``, or the model's :func:`token_limit` with a :class:`MaxLengthWarning`
    when ``max_length`` is above it (position embeddings end there)."""
    limit = token_limit(tokenizer, config)
    if limit is None or max_length <= limit:
        return int(max_length)
    import warnings

    warnings.warn(f"max_length {max_length} is above what the model {str(model)!r} takes "
                  f"({limit} tokens): using {limit}", MaxLengthWarning, stacklevel=3)
    return limit


def token_limit(tokenizer: Any, config: Any = None) -> int | None:
    """The most tokens a model takes: the tokenizer's ``model_max_length`` when it is set,
    else the config's ``max_position_embeddings``; None when neither says."""
    for cap in (getattr(tokenizer, "model_max_length", None),
                getattr(config, "max_position_embeddings", None)):
        if isinstance(cap, int) and 0 < cap < 100_000:
            return cap
    return None


def bf16_supported() -> bool:
    """True when the CPU has native bfloat16 (AVX512-BF16 or AMX)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def default_cache_dir() -> Path:
    """``$LABELAUDIT_CACHE`` or ``~/.cache/labelaudit``."""
    root = os.environ.get("LABELAUDIT_CACHE") or Path.home() / ".cache" / "labelaudit"
    return Path(root)


def check_cache_dir(cache_dir: object) -> None:
    """Refuse a cache folder that is an existing file (the cache would fail only after
    encoding every text); a folder that does not exist yet is created when written."""
    if Path(str(cache_dir)).exists() and not Path(str(cache_dir)).is_dir():
        raise InvalidParameterError(
            f"cache_dir={str(cache_dir)!r} is a file, not a folder: give a folder for the "
            "embedding cache (created if missing)")


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def _sentence_key(tokens: Sequence[str]) -> bytes:
    return _text_key("\x1f".join(tokens))


# What a damaged shard raises when read (it is skipped and its items are encoded again).
_DAMAGED = (OSError, ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile)


def _keys_of(keys: np.ndarray) -> list[bytes]:
    """The 16-byte keys of a shard's ``keys`` array, one ``bytes`` per row."""
    if keys.dtype.kind == "S":  # numpy's "S16" strips trailing NUL bytes
        return [bytes(k).ljust(16, b"\0") for k in keys]
    raw = np.ascontiguousarray(keys).tobytes()
    width = len(raw) // len(keys) if len(keys) else 16
    return [raw[i:i + width] for i in range(0, len(raw), width)]


def _signature(path: Path) -> tuple[int, int, int] | None:
    """What tells a damaged file from a new one written in its place."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


class _ShardIndex:
    """Where each cached key lies among the shards of one cache folder.

    One per folder and process (see :func:`_index_of`): a call lists the folder and reads
    only the ``keys`` of shards not indexed yet (other processes may have written some),
    instead of reading every shard each time. When a key is in several shards, the shard
    whose name sorts last wins, as when every shard is read in sorted order.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: list[str] = []  # shard id -> file name
        self.ids: dict[str, int] = {}  # file name -> shard id, for indexed shards only
        self.keys: dict[int, list[bytes]] = {}  # shard id -> its keys, row by row
        self.where: dict[bytes, int] = {}  # key -> shard id << 32 | row
        self.bad: dict[str, tuple[int, int, int] | None] = {}  # damaged -> _signature

    def refresh(self, root: Path) -> None:
        """Drop shards gone from ``root`` and index the keys of the new ones."""
        try:
            present = {entry.name for entry in os.scandir(root) if entry.name.endswith(".npz")}
        except OSError:  # no folder yet
            present = set()
        gone = [name for name in self.ids if name not in present]
        if gone:
            self.drop(gone)
        self.bad = {name: sig for name, sig in self.bad.items() if name in present}
        for name in sorted(present.difference(self.ids)):
            if name in self.bad and self.bad[name] == _signature(root / name):
                continue  # still the same damaged file
            try:
                with np.load(root / name) as data:
                    keys = _keys_of(data["keys"])
            except _DAMAGED:
                self.bad[name] = _signature(root / name)
                continue
            self.add(name, keys)

    def add(self, name: str, keys: list[bytes]) -> None:
        """Index a shard ``name`` holding ``keys`` (a no-op if it is indexed already)."""
        if name in self.ids:
            return
        self.bad.pop(name, None)
        shard = len(self.names)
        self.names.append(name)
        self.ids[name] = shard
        self.keys[shard] = keys
        where = self.where
        before = {key: where[key] for key in keys if key in where}
        where.update(self._places(shard))
        for key, place in before.items():
            if self.names[place >> 32] > name:
                where[key] = place

    def drop(self, names: list[str], root: Path | None = None) -> None:
        """Forget shards ``names`` (gone, or damaged under ``root``: not read again unchanged)."""
        for name in names:
            shard = self.ids.pop(name, None)
            if shard is not None:
                del self.keys[shard]
            if root is not None:
                self.bad[name] = _signature(root / name)
        self.where = {}
        for name in sorted(self.ids):  # the last shard in name order wins, as in add
            self.where.update(self._places(self.ids[name]))

    def _places(self, shard: int) -> Iterator[tuple[bytes, int]]:
        """``(key, shard << 32 | row)`` of every row of ``shard``."""
        keys = self.keys[shard]
        return zip(keys, range(shard << 32, (shard << 32) + len(keys)), strict=True)

    def locate(self, keys: set[bytes]) -> dict[str, tuple[list[bytes], list[int]]]:
        """``{shard name: (keys, rows)}`` of the indexed ones among ``keys``."""
        found: dict[str, tuple[list[bytes], list[int]]] = {}
        for key in keys:
            place = self.where.get(key)
            if place is not None:
                hits = found.setdefault(self.names[place >> 32], ([], []))
                hits[0].append(key)
                hits[1].append(place & 0xFFFFFFFF)
        return found


_INDEXES: dict[Path, _ShardIndex] = {}
_INDEXES_LOCK = threading.Lock()


def _index_of(root: Path) -> _ShardIndex:
    """This process's index of the cache folder ``root``."""
    folder = root.resolve()
    with _INDEXES_LOCK:
        return _INDEXES.setdefault(folder, _ShardIndex())


def _cached(
    root: Path | None,
    wanted: Iterable[bytes],
    read: Callable[[Any, list[int]], Iterable[np.ndarray]],
) -> dict[bytes, np.ndarray]:
    """The cached arrays of the ``wanted`` keys found under ``root``.

    ``read(open .npz, rows)`` returns the arrays of those rows of one shard; it is called
    once per shard that holds a wanted key, and never on the others.
    """
    found: dict[bytes, np.ndarray] = {}
    if root is None:
        return found
    index = _index_of(root)
    with index.lock:
        index.refresh(root)
        missing = set(wanted)
        while missing:
            damaged = []
            for name, (keys, rows) in index.locate(missing).items():
                try:
                    with np.load(root / name) as data:
                        arrays = read(data, rows)
                        found.update(zip(keys, arrays, strict=True))
                except _DAMAGED:  # vanished or damaged since indexed: encoded again
                    damaged.append(name)
            if not damaged:
                break
            index.drop(damaged, root)
            missing.difference_update(found)  # a key may be in another shard too
    return found


def _write_shard(root: Path, keys: list[bytes], **arrays: np.ndarray) -> None:
    """One new shard of 16-byte ``keys`` and their ``arrays``, written atomically."""
    from labelaudit.io import atomic_path

    root.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(b"".join(keys)).hexdigest()[:16] + ".npz"
    payload: dict[str, Any] = {
        "keys": np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 16), **arrays}
    with atomic_path(root / name, record=False) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **payload)
    index = _index_of(root)
    with index.lock:
        index.add(name, list(keys))


def _first_of_each(keys: list[bytes], known: dict[bytes, Any]) -> list[int]:
    """Positions of the first occurrence of every key not in ``known``."""
    first: dict[bytes, int] = {}
    for i, key in enumerate(keys):
        if key not in known:
            first.setdefault(key, i)
    return list(first.values())


def _vector_rows(data: Any, rows: list[int]) -> np.ndarray:
    return data["vectors"][rows]


def _token_rows(data: Any, rows: list[int]) -> list[np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum(data["lengths"])])
    vectors = data["vectors"]
    return [vectors[offsets[i]:offsets[i + 1]] for i in rows]


class EmbeddingCache:
    """Embeddings on disk, keyed by model and by the hash of each input text.

    Each call that encodes new texts appends one shard (``.npz`` with keys and vectors)
    under ``root/<model key>/``; a second scan of the same data encodes nothing. A call
    reads the vectors of only the shards that hold its texts, and the keys of only the
    shards it has not seen yet (the index is kept per folder in the process), so a scan
    in many calls costs time linear in its size. ``root=None`` keeps nothing.

    Examples
    --------
    >>> import tempfile
    >>> cache = EmbeddingCache(tempfile.mkdtemp(), "toy")
    >>> fake = lambda texts: [[len(t), 1.0] for t in texts]
    >>> cache.get_or_compute(["ab", "c", "ab"], fake).tolist()
    [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]]
    >>> cache.get_or_compute(["c"], lambda texts: 1 / 0).tolist()  # from disk
    [[1.0, 1.0]]
    """

    def __init__(self, root: str | Path | None, model_key: str) -> None:
        if root is not None:
            check_cache_dir(root)
        self.root = None if root is None else Path(root) / hashlib.sha256(
            model_key.encode()).hexdigest()[:20]

    def get_or_compute(self, texts: list[str], compute: Callable[[list[str]], Any]) -> np.ndarray:
        """Return embeddings of ``texts``, computing only those not cached."""
        keys = [_text_key(t) for t in texts]
        known = _cached(self.root, keys, _vector_rows)
        order = _first_of_each(keys, known)
        if order:
            vectors = np.asarray(compute([texts[i] for i in order]), dtype=np.float32)
            known.update(zip([keys[i] for i in order], vectors, strict=True))
            if self.root is not None:
                _write_shard(self.root, [keys[i] for i in order], vectors=vectors)
        return np.stack([known[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)


class TokenVectorCache:
    """Per-sentence arrays ``(n_tokens, dim)`` on disk, keyed by model and by the sentence.

    The sibling of :class:`EmbeddingCache` for ragged data: each call that encodes new
    sentences appends one shard (``.npz`` with keys, lengths and the stacked vectors in
    float16) under ``root/tokens/<model key>/``. ``root=None`` keeps nothing.

    Examples
    --------
    >>> import tempfile
    >>> cache = TokenVectorCache(tempfile.mkdtemp(), "toy")
    >>> fake = lambda sents: [np.full((len(s), 2), len(s), np.float32) for s in sents]
    >>> [v.shape for v in cache.get_or_compute([["a", "b"], ["c"]], fake)]
    [(2, 2), (1, 2)]
    >>> cache.get_or_compute([["a", "b"]], lambda s: 1 / 0)[0].tolist()  # from disk
    [[2.0, 2.0], [2.0, 2.0]]
    """

    def __init__(self, root: str | Path | None, model_key: str) -> None:
        if root is not None:
            check_cache_dir(root)
        self.root = None if root is None else (
            Path(root) / "tokens" / hashlib.sha256(model_key.encode()).hexdigest()[:20]
        )

    def get_or_compute(
        self,
        sentences: Sequence[Sequence[str]],
        compute: Callable[[list[list[str]]], list[np.ndarray]],
    ) -> list[np.ndarray]:
        """Vectors of each sentence, shape ``(len(sentence), dim)``, computing only new ones."""
        keys = [_sentence_key(s) for s in sentences]
        known = _cached(self.root, keys, _token_rows)
        todo = _first_of_each(keys, known)
        if todo:
            computed = compute([list(sentences[i]) for i in todo])
            for i, vectors in zip(todo, computed, strict=False):
                known[keys[i]] = np.asarray(vectors, dtype=np.float16)
            if self.root is not None:
                arrays = [known[keys[i]] for i in todo]
                _write_shard(self.root, [keys[i] for i in todo],
                             lengths=np.array([len(a) for a in arrays], dtype=np.int64),
                             vectors=np.concatenate(arrays).astype(np.float16))
        return [known[k].astype(np.float32) for k in keys]
