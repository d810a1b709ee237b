"""Frozen sentence embeddings from a pre-trained encoder + a logistic-regression head."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer, full_proba
from labelaudit.models._encoder import (
    EmbeddingCache,
    bf16_supported,
    default_cache_dir,
    load_sentence_encoder,
    resolve_model_path,
)
from labelaudit.models._progress import progress_bar

__all__ = ["EmbedScorer", "encode_texts", "encode_windows"]

PairMode = Literal["features", "joint"]


def encode_texts(
    texts: list[str] | list[tuple[str, str]],
    *,
    model: str | None = None,
    batch_size: int = 32,
    max_length: int = 256,
    cache_dir: str | Path | None | Literal[False] = None,
    progress: bool = False,
    encoder: Any = None,
) -> np.ndarray:
    """Sentence embeddings, shape (n_samples, dim), L2-normalised, cached on disk.

    ``texts`` may hold pairs ``(a, b)``: they are encoded jointly, as the tokenizer's
    text pair (``[CLS] a [SEP] b [SEP]``). ``cache_dir=False`` turns the cache off.
    """
    path = resolve_model_path(model)
    joint = bool(texts) and isinstance(texts[0], (tuple, list))
    keys: list[str] = ([str(p[0]) + "\x1f[SEP]\x1f" + str(p[1]) for p in texts] if joint
                       else [str(t) for t in texts])
    root = None if cache_dir is False else Path(cache_dir or default_cache_dir() / "embeddings")
    cache = EmbeddingCache(root, f"{path}|max_length={max_length}|pairs={joint}")

    def compute(batch_keys: list[str]) -> np.ndarray:
        import torch

        st = encoder if encoder is not None else load_sentence_encoder(path, progress=progress)
        st.max_seq_length = max_length
        inputs: list[Any] = ([list(k.split("\x1f[SEP]\x1f", 1)) for k in batch_keys] if joint
                             else batch_keys)
        use_bf16 = st.device.type == "cpu" and bf16_supported()
        what = "text pairs" if joint else "texts"
        chunk = max(batch_size, 1) * 8  # one bar step per few batches, not per text
        parts = []
        with progress_bar(len(inputs), f"encoding {len(inputs):,} {what}", unit=" texts",
                          enabled=progress) as bar:
            for start in range(0, len(inputs), chunk):
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                    part = st.encode(inputs[start:start + chunk], batch_size=batch_size,
                                     show_progress_bar=False, convert_to_numpy=True,
                                     normalize_embeddings=True)
                parts.append(np.asarray(part, dtype=np.float32))
                bar.update(len(parts[-1]))
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    return cache.get_or_compute(keys, compute)


def encode_windows(
    texts: list[str],
    *,
    model: str | None = None,
    max_length: int = 256,
    **options: Any,
) -> np.ndarray:
    """Embeddings of long texts as the mean of their windows' embeddings.

    A text longer than ``max_length`` tokens (special tokens aside) is cut into consecutive
    windows of that many tokens; each window is embedded (and cached) as a text of its own
    and the text's embedding is their L2-normalised mean, so the whole document counts, not
    only its first ``max_length`` tokens. Shorter texts are embedded as they are, exactly
    as :func:`encode_texts` does.
    """
    from transformers import AutoTokenizer

    from labelaudit.models._encoder import load_pretrained

    tokenizer = load_pretrained(AutoTokenizer, model)
    tokenizer.model_max_length = 10**9  # tokenize whole documents without a length warning
    width = max(1, max_length - 2)
    pieces: list[str] = []
    owner: list[int] = []
    for i, text in enumerate(texts):
        tokens = tokenizer.tokenize(str(text))
        if len(tokens) <= width:
            pieces.append(str(text))
            owner.append(i)
            continue
        for start in range(0, len(tokens), width):
            pieces.append(tokenizer.convert_tokens_to_string(tokens[start:start + width]))
            owner.append(i)
    vectors = encode_texts(pieces, model=model, max_length=max_length, **options)
    out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float64)
    np.add.at(out, np.asarray(owner), vectors)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out.astype(np.float32)


@dataclass(eq=False, kw_only=True)
class EmbedScorer(Scorer):
    """Frozen sentence embeddings (default all-MiniLM-L6-v2) + logistic regression.

    Parameters
    ----------
    model : str or None
        A sentence-transformers / Hugging Face id or a local folder; None is the packaged
        all-MiniLM-L6-v2, which loads offline.
    pair_mode : {"features", "joint"}
        How sentence pairs are encoded: ``"features"`` embeds each side and combines them
        as ``[u, v, |u - v|, u * v]`` (Conneau et al. 2017); ``"joint"`` encodes the pair
        together as one tokenizer text pair.
    C : float
        Inverse regularisation strength of the head.
    long_texts : {"truncate", "windows"}
        Single texts longer than ``max_length`` tokens: cut (the encoder's own truncation),
        or embedded as the mean of their windows (:func:`encode_windows`), which sees the
        whole document at the cost of encoding every window.
    """

    name = "embed"

    model: str | None = None
    pair_mode: PairMode = "features"
    C: float = 1.0
    batch_size: int = 32
    max_length: int = 256
    cache_dir: str | Path | None | Literal[False] = None
    long_texts: Literal["truncate", "windows"] = "truncate"

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        options: dict[str, Any] = dict(model=self.model, batch_size=self.batch_size,
                       max_length=self.max_length, cache_dir=self.cache_dir, progress=progress)
        if self.long_texts not in ("truncate", "windows"):
            raise InvalidParameterError(
                f"long_texts must be 'truncate' or 'windows'; got {self.long_texts!r}")
        if data.text_pairs is None and self.long_texts == "windows":
            return encode_windows(list(data.texts), **options)
        if data.text_pairs is None:
            return encode_texts(data.texts, **options)
        if self.pair_mode == "joint":
            return encode_texts(list(zip(data.texts, data.text_pairs, strict=True)), **options)
        if self.pair_mode != "features":
            raise InvalidParameterError(
                f"pair_mode must be 'features' or 'joint'; got {self.pair_mode!r}")
        both = encode_texts(list(data.texts) + list(data.text_pairs), **options)
        u, v = both[: len(data)], both[len(data):]
        return np.hstack([u, v, np.abs(u - v), u * v])

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> EmbedScorer:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        from labelaudit.models._tfidf import fit_converged

        self.n_classes_ = n_classes
        self.model_ = fit_converged(make_pipeline(
            StandardScaler(), LogisticRegression(C=self.C, max_iter=2000)
        ), features, labels, member=self.name)
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        proba = self.model_.predict_proba(features)
        return full_proba(proba, self.model_.classes_, self.n_classes_)
