"""Frozen sentence embeddings from a pre-trained encoder, and what is built on them without
training the encoder: a logistic-regression head (:class:`EmbedScorer`), deep k-nearest-
neighbour label disagreement (:class:`KnnScorer`, Bahri et al. 2020), and the items'
features for Datalab's issue types (:func:`datalab_features`: the embeddings, or TF-IDF
reduced by SVD).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_int, check_number
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer, full_proba, progress_bar
from labelaudit.models._encoder import (
    EmbeddingCache,
    bf16_supported,
    default_cache_dir,
    load_pretrained,
    load_sentence_encoder,
    resolve_model_path,
)
from labelaudit.models._tfidf import fit_converged

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
    """Embeddings of texts longer than ``max_length`` tokens as the L2-normalised mean of
    their consecutive windows' (each cached as a text), so the whole document counts;
    shorter texts as :func:`encode_texts` embeds them."""
    from transformers import AutoTokenizer

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
    model : a sentence-transformers / Hugging Face id or a local folder; None is the
        packaged all-MiniLM-L6-v2, which loads offline.
    pair_mode : {"features", "joint"}
        ``"features"`` embeds each side and combines them as ``[u, v, |u - v|, u * v]``
        (Conneau et al. 2017); ``"joint"`` encodes the pair as one tokenizer text pair.
    C : inverse regularisation strength of the head.
    long_texts : {"truncate", "windows"}
        Texts longer than ``max_length`` tokens: cut, or the mean of their windows
        (:func:`encode_windows`: sees the whole document, encodes every window).
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

        self.n_classes_ = n_classes
        self.model_ = fit_converged(make_pipeline(
            StandardScaler(), LogisticRegression(C=self.C, max_iter=2000)
        ), features, labels, member=self.name)
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        proba = self.model_.predict_proba(features)
        return full_proba(proba, self.model_.classes_, self.n_classes_)


@dataclass(eq=False, kw_only=True)
class KnnScorer(Scorer):
    """Class probabilities from the labels of an item's nearest training neighbours.

    ``p(c) = (count_c + alpha) / (k + alpha * n_classes)`` over the ``k`` nearest training
    items by cosine similarity of the ``embed`` scorer's embeddings: the deep-kNN filter of
    Bahri, Jiang & Gupta (2020) as a probability, so it joins the ensemble like any member.

    Parameters
    ----------
    k : neighbours per item.
    alpha : additive smoothing of the counts.
    model, batch_size, max_length, cache_dir : embedding options, as in :class:`EmbedScorer`.

    References
    ----------
    Bahri, Jiang & Gupta (2020), Deep k-NN for Noisy Labels, ICML.

    Examples
    --------
    >>> scorer = KnnScorer(k=2)
    >>> x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> scorer.fit(x, np.array([0, 0, 1, 1]), n_classes=2).predict_proba(x[:1]).round(2)
    array([[0.83, 0.17]])
    """

    name = "knn"

    k: int = 10
    alpha: float = 0.5
    model: str | None = None
    batch_size: int = 32
    max_length: int = 256
    cache_dir: str | Path | None = None

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        return EmbedScorer(model=self.model, batch_size=self.batch_size,
                           max_length=self.max_length,
                           cache_dir=self.cache_dir).prepare(data, progress=progress)

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> KnnScorer:
        check_int(self.k, "k", minimum=1)
        check_number(self.alpha, "alpha", low=0.0, low_open=True)
        vectors = np.asarray(features, dtype=np.float32)
        self.vectors_ = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True),
                                             1e-12)
        self.labels_ = np.asarray(labels, dtype=int)
        self.n_classes_ = n_classes
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        queries = np.asarray(features, dtype=np.float32)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        k = min(self.k, len(self.labels_))
        out = np.zeros((len(queries), self.n_classes_))
        for start in range(0, len(queries), 1024):  # bounded memory: 1,024 rows at a time
            sims = queries[start:start + 1024] @ self.vectors_.T
            nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            votes = self.labels_[nearest]
            for c in range(self.n_classes_):
                out[start:start + 1024, c] = (votes == c).sum(axis=1)
        return (out + self.alpha) / (k + self.alpha * self.n_classes_)


FeatureMethod = Literal["tfidf", "embed"]


def datalab_features(
    texts: Sequence[str],
    *,
    text_pairs: Sequence[str] | None = None,
    method: FeatureMethod = "tfidf",
    model: str | None = None,
    cache_dir: str | Path | None = None,
    n_components: int = 256,
    random_state: int | None = 0,
    progress: bool = False,
) -> np.ndarray:
    """Item features for :func:`datalab_issues`, shape (n_samples, n_features), L2-normalised;
    each side of a pair is featurised on its own, then concatenated and renormalised.

    ``method="tfidf"``: TF-IDF (sublinear tf, min_df 2) reduced by TruncatedSVD to
    ``n_components``; ``"embed"``: the ``embed`` member's cached sentence embeddings. On 20
    Newsgroups (7,532 posts, 2 cores; ``python -m benchmarks.datalab_speed``) TF-IDF + SVD
    took 13 s against 866 s to encode cold, and found 297 near-duplicates in 129 sets against
    122 in 53, with every one of the embeddings' 4 label-conflict items; its 15 hold 8
    human-verified errors (base rate 1.1%), the embeddings' 4 hold 3: re-posts share words
    over the whole text, while the encoder reads 256 tokens (TF-IDF also pairs posts sharing
    an author's headers and signature: related, not copies).

    Examples
    --------
    >>> texts = ["the cat sat", "the cat sat", "a dog ran", "a dog ran home"]
    >>> features = datalab_features(texts, n_components=2)
    >>> features.shape, bool(np.allclose(features[0], features[1]))
    ((4, 2), True)
    """
    if method not in ("embed", "tfidf"):
        raise InvalidParameterError(f"method must be 'tfidf' or 'embed'; got {method!r}")
    if isinstance(n_components, bool) or not isinstance(n_components, int) or n_components < 1:
        raise InvalidParameterError(f"n_components must be a positive integer; got "
                                    f"{n_components!r}")
    texts = [str(t) for t in texts]
    if text_pairs is not None and len(text_pairs) != len(texts):
        raise InvalidInputError(
            f"text_pairs has {len(text_pairs)} entries but texts has {len(texts)}")
    if not texts:
        raise InvalidInputError("no texts to featurise")
    sides = [texts] if text_pairs is None else [texts, [str(t) for t in text_pairs]]
    if method == "embed":
        both = encode_texts([t for side in sides for t in side], model=model,
                            cache_dir=cache_dir, progress=progress)
        parts = [both[i * len(texts):(i + 1) * len(texts)] for i in range(len(sides))]
    else:
        parts = [_tfidf_svd(side, n_components=n_components, random_state=random_state)
                 for side in sides]
    out = np.hstack(parts).astype(np.float32)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def _tfidf_svd(texts: list[str], *, n_components: int, random_state: int | None) -> np.ndarray:
    """TF-IDF reduced to at most ``n_components`` dimensions, L2-normalised rows."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2 if len(texts) > 50 else 1,
                                 max_features=200_000, dtype=np.float32)
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # every text empty or stop words only
        return np.zeros((len(texts), 1), np.float32)
    width = min(n_components, matrix.shape[1] - 1, len(texts) - 1)
    if width < 1:
        dense = matrix.toarray()
    else:
        seed = None if random_state is None else int(random_state)
        dense = TruncatedSVD(n_components=width, random_state=seed).fit_transform(matrix)
    dense = np.asarray(dense, dtype=np.float32)
    return dense / np.maximum(np.linalg.norm(dense, axis=1, keepdims=True), 1e-12)
