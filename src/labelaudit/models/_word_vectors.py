"""Contextual word vectors from a pre-trained encoder: the mean of each word's sub-words."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int
from labelaudit.models._encoder import load_pretrained, torch_setup
from labelaudit.models._progress import progress_bar

__all__ = ["encode_word_vectors", "sentence_pieces", "word_chunks"]


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

    torch_setup()
    tokenizer = load_pretrained(AutoTokenizer, model)
    encoder = load_pretrained(AutoModel, model)
    encoder.eval()
    limit = min(max_length, getattr(tokenizer, "model_max_length", max_length) or max_length) - 2
    # Split sentences into chunks of words that fit; encode chunks sorted by length.
    pieces = sentence_pieces(tokenizer, sentences, limit)
    pieces.sort(key=lambda p: p[2] - p[1])
    hidden = encoder.config.hidden_size * len(layers)
    out = [np.zeros((len(words), hidden), dtype=np.float32) for words in sentences]
    with torch.inference_mode(), progress_bar(
            len(sentences), f"encoding {len(sentences):,} sentences", unit=" sentences",
            enabled=progress) as bar:
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
            # A sentence is done with its last piece.
            bar.update(sum(e == len(sentences[s]) for s, _, e in batch))
    return out
