"""Texts as training items, and a Hugging Face encoder as a network, for the one training
loop (:func:`labelaudit.models.train_networks`): the ``finetune`` scorer and the
``finetune`` backbone of ``labelaudit train``.

:class:`TextInputs` holds the token ids of every item; batches are sorted by length within
shuffled pools, so padding stays small. :func:`finetune_factory` makes networks of any
Hugging Face encoder with a linear classifier over its mean-pooled last hidden states,
trained whole; mixup mixes the pooled representation (the seed's text setting mixes
embeddings, not tokens). The loop adds bf16 autocast and warmup on a GPU.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FinetuneNetwork", "TextInputs", "finetune_factory", "head_tail",
           "length_sorted_batches"]

_POOL = 50  # batches per length-sorted pool


def _model_path(settings: dict[str, Any]) -> str:
    from labelaudit.models._encoder import resolve_model_path

    return resolve_model_path(settings.get("encoder"))


def head_tail(ids: list[int], limit: int) -> list[int]:
    """The first quarter and the last three quarters of ``limit`` tokens of a sequence that
    is longer (its first and last tokens, the special ones, kept).

    Examples
    --------
    >>> head_tail(list(range(20)), 8)
    [0, 1, 14, 15, 16, 17, 18, 19]
    """
    if len(ids) <= limit:
        return list(ids)
    head = max(1, limit // 4)
    return list(ids[:head]) + list(ids[len(ids) - (limit - head):])


def length_sorted_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator,
                          *, shuffle: bool = True) -> list[np.ndarray]:
    """Index arrays covering every item once, so that padding stays small: pools of
    ``50 * batch_size`` items (in an order drawn from ``rng`` when ``shuffle``), each sorted
    by ``lengths`` and cut into batches; the batches then shuffled (when ``shuffle``).

    Examples
    --------
    >>> lengths = np.array([5, 1, 4, 2, 3])
    >>> rng = np.random.default_rng(0)
    >>> [b.tolist() for b in length_sorted_batches(lengths, 2, rng, shuffle=False)]
    [[1, 3], [4, 2], [0]]
    """
    order = rng.permutation(len(lengths)) if shuffle else np.arange(len(lengths))
    out = []
    pool = _POOL * batch_size
    for start in range(0, len(order), pool):
        chunk = order[start:start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        out += [chunk[i:i + batch_size] for i in range(0, len(chunk), batch_size)]
    if shuffle:
        out = [out[i] for i in rng.permutation(len(out))]
    return out


class TextInputs:
    """Token ids of every item, padded per batch; batches of similar length."""

    def __init__(self, ids: list[list[int]], pad_id: int) -> None:
        self.ids = ids
        self.pad_id = pad_id
        self.lengths = np.array([len(i) for i in ids])

    @classmethod
    def from_dataset(cls, dataset: Any, settings: dict[str, Any]) -> TextInputs:
        from transformers import AutoConfig, AutoTokenizer

        from labelaudit.models._encoder import clamp_length, load_pretrained

        model = settings.get("encoder")
        tokenizer = load_pretrained(AutoTokenizer, model)
        pairs = dataset.text_pairs
        limit = clamp_length(int(settings.get("max_length", 128)), tokenizer,
                             load_pretrained(AutoConfig, model), model=model or "default")
        settings["max_length"] = limit
        if pairs is not None or settings.get("truncation", "head_tail") != "head_tail":
            encoded = tokenizer(list(dataset.texts), list(pairs) if pairs is not None else None,
                                truncation=True, max_length=limit)
            rows = encoded["input_ids"]
        else:
            encoded = tokenizer(list(dataset.texts), truncation=False, verbose=False)
            rows = [head_tail(row, limit) for row in encoded["input_ids"]]
        return cls([list(map(int, row)) for row in rows], int(tokenizer.pad_token_id or 0))

    def __getitem__(self, index: np.ndarray | slice) -> TextInputs:
        """The items at ``index`` (how cross-fitting takes a fold's rows), or a slice."""
        if isinstance(index, slice):
            return self.subset(np.arange(len(self))[index])
        return self.subset(np.asarray(index))

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, index: np.ndarray) -> TextInputs:
        return TextInputs([self.ids[i] for i in index], self.pad_id)

    def batches(self, rng: np.random.Generator, batch_size: int, *,
                shuffle: bool) -> list[np.ndarray]:
        """Index arrays covering every item once: shuffled pools of ``50 * batch_size``
        items, each sorted by length and cut into batches, the batches shuffled."""
        return length_sorted_batches(self.lengths, batch_size, rng, shuffle=shuffle)

    def batch(self, index: np.ndarray, device: Any) -> dict[str, Any]:
        import torch

        width = int(self.lengths[index].max())
        ids = torch.full((len(index), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(index), width), dtype=torch.long)
        for row, i in enumerate(index):
            ids[row, :self.lengths[i]] = torch.tensor(self.ids[i])
            mask[row, :self.lengths[i]] = 1
        return {"input_ids": ids.to(device), "attention_mask": mask.to(device)}


@functools.cache
def _network_class() -> type:
    """The network class, defined once on first use (so torch loads lazily)."""
    import torch

    class FinetuneNetwork(torch.nn.Module):
        """A pre-trained encoder, mean pooling and a linear classifier."""

        def __init__(self, encoder: Any, n_classes: int, dropout: float = 0.1) -> None:
            super().__init__()
            self.encoder = encoder
            width = int(encoder.config.hidden_size)
            self.dropout = torch.nn.Dropout(dropout)
            self.head = torch.nn.Linear(width, n_classes)

        def features(self, batch: dict[str, Any]) -> Any:
            hidden = self.encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)

        def classify(self, features: Any) -> Any:
            return self.head(self.dropout(features))

        def save(self, folder: Path) -> None:
            folder.mkdir(parents=True, exist_ok=True)
            self.encoder.save_pretrained(folder)
            torch.save(self.head.state_dict(), folder / "classifier.pt")

    return FinetuneNetwork


def FinetuneNetwork(encoder: Any, n_classes: int, dropout: float = 0.1) -> Any:  # noqa: N802
    """Build the network."""
    return _network_class()(encoder, n_classes, dropout)


def finetune_factory(settings: dict[str, Any], n_classes: int) -> Any:
    """A function making a fresh network from the pre-trained encoder."""
    from transformers import AutoModel

    from labelaudit.models._encoder import load_pretrained, torch_setup

    torch_setup()
    path = _model_path(settings)

    def make() -> Any:
        encoder = load_pretrained(AutoModel, path)
        return FinetuneNetwork(encoder, n_classes, float(settings.get("dropout", 0.1)))

    return make

