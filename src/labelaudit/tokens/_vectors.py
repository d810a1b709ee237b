"""Contextual word vectors from a pre-trained encoder, cached on disk per sentence."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int

__all__ = ["TokenVectorCache", "encode_word_vectors", "word_chunks"]

_SEP = "\x1f"  # joins a sentence's tokens into its cache key


def _sentence_key(tokens: Sequence[str]) -> bytes:
    return hashlib.sha256(_SEP.join(tokens).encode("utf-8")).digest()[:16]


class TokenVectorCache:
    """Per-sentence arrays ``(n_tokens, dim)`` on disk, keyed by model and by the sentence.

    A sibling of :class:`labelaudit.models.EmbeddingCache` for ragged data: each call that
    encodes new sentences appends one shard (``.npz`` with keys, lengths and the stacked
    vectors in float16) under ``root/<model key>/``. ``root=None`` keeps nothing.

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
        self.root = None if root is None else (
            Path(root) / "tokens" / hashlib.sha256(model_key.encode()).hexdigest()[:20]
        )

    def _load(self, wanted: set[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        if self.root is None or not self.root.exists():
            return found
        for shard in sorted(self.root.glob("*.npz")):
            try:
                with np.load(shard) as data:
                    # numpy's "S16" drops trailing NUL bytes of a key: pad them back.
                    keys = [bytes(k).ljust(16, b"\0") for k in data["keys"]]
                    lengths = data["lengths"]
                    hit = [k in wanted for k in keys]
                    if not any(hit):
                        continue
                    vectors = data["vectors"]
            except (OSError, ValueError, KeyError):
                continue  # a damaged shard is ignored; its sentences are encoded again
            offsets = np.concatenate([[0], np.cumsum(lengths)])
            for i, key in enumerate(keys):
                if hit[i]:
                    found[key] = vectors[offsets[i] : offsets[i + 1]]
        return found

    def get_or_compute(
        self,
        sentences: Sequence[Sequence[str]],
        compute: Callable[[list[list[str]]], list[np.ndarray]],
    ) -> list[np.ndarray]:
        """Vectors of each sentence, shape ``(len(sentence), dim)``, computing only new ones."""
        keys = [_sentence_key(s) for s in sentences]
        known = self._load(set(keys))
        order: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            if key not in known:
                order.setdefault(key, i)
        if order:
            todo = list(order.values())
            computed = compute([list(sentences[i]) for i in todo])
            for i, vectors in zip(todo, computed, strict=False):
                known[keys[i]] = np.asarray(vectors, dtype=np.float16)
            if self.root is not None:
                self._save([keys[i] for i in todo], [known[keys[i]] for i in todo])
        return [known[k].astype(np.float32) for k in keys]

    def _save(self, keys: list[bytes], arrays: list[np.ndarray]) -> None:
        from labelaudit.io import atomic_path

        assert self.root is not None
        self.root.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(b"".join(keys)).hexdigest()[:16] + ".npz"
        with atomic_path(self.root / name) as tmp, open(tmp, "wb") as handle:
            np.savez(
                handle,
                keys=np.array(keys, dtype="S16"),
                lengths=np.array([len(a) for a in arrays], dtype=np.int64),
                vectors=np.concatenate(arrays).astype(np.float16),
            )


def word_chunks(word_lengths: Sequence[int], max_subwords: int) -> list[tuple[int, int]]:
    """Split a sentence into runs of words whose sub-word counts fit in ``max_subwords``.

    Examples
    --------
    >>> word_chunks([3, 3, 3, 1], 6)
    [(0, 2), (2, 4)]
    """
    chunks: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, n in enumerate(word_lengths):
        n = max(1, min(n, max_subwords))
        if used + n > max_subwords and i > start:
            chunks.append((start, i))
            start, used = i, 0
        used += n
    chunks.append((start, len(word_lengths)))
    return chunks


def sentence_pieces(
    tokenizer, sentences: Sequence[Sequence[str]], limit: int
) -> list[tuple[int, int, int]]:
    """``(sentence, start word, end word)`` pieces of at most ``limit`` sub-words each.

    A sentence that fits is one piece; a longer one is split by :func:`word_chunks` on the
    sub-word counts of its words (special tokens not counted).
    """
    pieces: list[tuple[int, int, int]] = []
    plain = tokenizer([list(w) for w in sentences], is_split_into_words=True,
                      add_special_tokens=False)
    for s, words in enumerate(sentences):
        word_ids = plain.word_ids(s)
        if len(word_ids) <= limit:
            pieces.append((s, 0, len(words)))
            continue
        counts = np.bincount([w for w in word_ids if w is not None], minlength=len(words))
        pieces.extend((s, a, b) for a, b in word_chunks(counts.tolist(), limit))
    return pieces


def encode_word_vectors(
    sentences: Sequence[Sequence[str]],
    *,
    model: str | None = None,
    layers: Sequence[int] = (-1,),
    batch_size: int = 32,
    max_length: int = 256,
    progress: bool = False,
) -> list[np.ndarray]:
    """Contextual vectors of every word: the mean of its sub-word vectors.

    Each sentence is encoded as pre-split words (``is_split_into_words``); sub-word vectors
    from the hidden ``layers`` (concatenated) are averaged per word through the fast
    tokenizer's ``word_ids()``. Sentences longer than ``max_length`` sub-words are encoded in
    consecutive chunks. A word the tokenizer drops entirely gets a zero vector.

    Returns
    -------
    list of ndarray, each of shape (n_words, n_layers * hidden_size)
    """
    check_int(batch_size, "batch_size", minimum=1)
    check_int(max_length, "max_length", minimum=3)  # room for a word
    if isinstance(layers, (str, bytes)) or not len(layers):
        raise InvalidParameterError(f"layers must be a non-empty list of layer numbers; "
                                    f"got {layers!r}")
    import torch
    from transformers import AutoModel, AutoTokenizer

    from labelaudit.models import resolve_model_path, torch_setup

    torch_setup()
    path = resolve_model_path(model)
    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(path)
        encoder = AutoModel.from_pretrained(path)
    encoder.eval()
    limit = min(max_length, getattr(tokenizer, "model_max_length", max_length) or max_length) - 2
    # Split sentences into chunks of words that fit; encode chunks sorted by length.
    pieces = sentence_pieces(tokenizer, sentences, limit)
    pieces.sort(key=lambda p: p[2] - p[1])
    hidden = encoder.config.hidden_size * len(layers)
    out = [np.zeros((len(words), hidden), dtype=np.float32) for words in sentences]
    bar = _progress(len(sentences), progress)
    with torch.inference_mode():
        for b in range(0, len(pieces), batch_size):
            batch = pieces[b : b + batch_size]
            chunk_words: list[list[str]] = [list(sentences[s][a:e]) for s, a, e in batch]
            enc = tokenizer(
                chunk_words,
                is_split_into_words=True,
                truncation=True,
                max_length=limit + 2,
                padding=True,
                return_tensors="pt",
            )
            states = encoder(**enc, output_hidden_states=True).hidden_states
            stacked = torch.cat([states[layer] for layer in layers], dim=-1).float().numpy()
            for row, (s, a, _) in enumerate(batch):
                word_ids = enc.word_ids(row)
                index = np.array([-1 if w is None else w for w in word_ids])
                valid = index >= 0
                n_words = len(chunk_words[row])
                sums = np.zeros((n_words, stacked.shape[-1]), dtype=np.float32)
                np.add.at(sums, index[valid], stacked[row][valid])
                counts = np.bincount(index[valid], minlength=n_words)[:, None]
                out[s][a : a + n_words] = sums / np.maximum(counts, 1)
            if bar is not None:  # a sentence is done with its last piece
                bar.update(sum(e == len(sentences[s]) for s, _, e in batch))
    if bar is not None:
        bar.close()
    return out


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Hide transformers' "Loading weights" bars and load reports while a model loads.

    The scan's own bars say what is happening; the load report (a classifier newly
    initialised for fine-tuning, an unused pooler) is expected and would land between those
    bars, once per fold.
    """
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if was_enabled:
            hf_logging.enable_progress_bar()


def _progress(n_sentences: int, enabled: bool):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=n_sentences, desc=f"encoding {n_sentences:,} sentences",
                unit=" sentences", leave=False)
