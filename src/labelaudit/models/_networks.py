"""The networks :func:`train_networks` trains, and their inputs: a Hugging Face encoder with
mean pooling and a linear classifier over token ids (:class:`TextInputs`; mixup mixes the
pooled representation), or :func:`HeadNetwork` over fixed embeddings
(:class:`EmbeddingInputs`). The ``torch.nn.Module`` classes are defined on first use, so
torch loads lazily.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.models._encoder import (
    clamp_length,
    load_pretrained,
    resolve_model_path,
    torch_setup,
)

if TYPE_CHECKING:
    import torch


_POOL = 50  # batches per length-sorted pool


def _model_path(settings: dict[str, Any]) -> str:
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

    torch_setup()
    path = _model_path(settings)

    def make() -> Any:
        encoder = load_pretrained(AutoModel, path)
        return FinetuneNetwork(encoder, n_classes, float(settings.get("dropout", 0.1)))

    return make


class EmbeddingInputs:
    """Training items given as an embedding array, shape ``(n_samples, dim)``: converted to
    float32 once, and copied to a device once per device."""

    def __init__(self, embeddings: np.ndarray) -> None:
        array = np.asarray(embeddings, dtype=np.float32)
        if array.ndim != 2:
            raise InvalidInputError(
                f"embeddings must be a 2-d array (n_samples, dim), got shape {array.shape}")
        if not np.isfinite(array).all():
            rows = np.flatnonzero(~np.isfinite(array).all(axis=1))
            raise InvalidInputError(
                f"embeddings hold NaN or infinite values in {len(rows)} rows "
                f"(first row {int(rows[0])}); drop or re-encode those items")
        self.embeddings = np.ascontiguousarray(array)
        self._on: dict[str, Any] = {}

    @property
    def dim(self) -> int:
        """Embedding width."""
        return int(self.embeddings.shape[1])

    def __len__(self) -> int:
        return int(self.embeddings.shape[0])

    def batches(self, rng: np.random.Generator, batch_size: int, *,
                shuffle: bool) -> list[np.ndarray]:
        """Batches of ``batch_size`` items covering every item once (shuffled or not)."""
        n = len(self)
        order = rng.permutation(n) if shuffle else np.arange(n)
        return [order[i:i + batch_size] for i in range(0, n, batch_size)]

    def batch(self, index: np.ndarray, device: torch.device) -> torch.Tensor:
        """The embeddings at ``index`` as a float32 tensor on ``device``."""
        import torch

        key = str(device)
        data = self._on.get(key)
        if data is None:
            data = torch.from_numpy(self.embeddings).to(device)
            self._on[key] = data
        return data[torch.as_tensor(np.asarray(index, dtype=np.int64), device=data.device)]


@functools.cache
def _head_class() -> type:
    """The head class, defined once on first use (so torch loads lazily)."""
    import torch

    class HeadNetwork(torch.nn.Module):
        def __init__(self, dim: int, n_classes: int, *, hidden: int = 256,
                     dropout: float = 0.1) -> None:
            super().__init__()
            _check_head(dim, n_classes, hidden, dropout)
            self.dim, self.n_classes, self.hidden = int(dim), int(n_classes), int(hidden)
            layers: list[torch.nn.Module]
            if hidden > 0:
                layers = [torch.nn.Linear(dim, hidden), torch.nn.ReLU(),
                          torch.nn.Dropout(dropout), torch.nn.Linear(hidden, n_classes)]
            else:
                layers = [torch.nn.Dropout(dropout), torch.nn.Linear(dim, n_classes)]
            self.mlp = torch.nn.Sequential(*layers)

        def features(self, batch: torch.Tensor) -> torch.Tensor:
            """The standardised input embeddings, shape ``(b, dim)``."""
            return torch.nn.functional.layer_norm(batch, (self.dim,))

        def classify(self, features: torch.Tensor) -> torch.Tensor:
            """Logits ``(b, n_classes)`` from :meth:`features`."""
            out: torch.Tensor = self.mlp(features)
            return out

        def forward(self, batch: torch.Tensor) -> torch.Tensor:
            """Logits of a batch of embeddings."""
            return self.classify(self.features(batch))

    return HeadNetwork


def HeadNetwork(dim: int, n_classes: int, *, hidden: int = 256,  # noqa: N802
                dropout: float = 0.1) -> Any:
    """An MLP (``hidden`` > 0) or linear classifier on fixed embeddings of width ``dim``.

    ``features(x)`` is a parameter-free ``layer_norm(x)``, so the head trains at one
    learning rate whatever the encoder's scale, and mixup mixes the standardised inputs
    (as Zhang et al. 2018 mix inputs). ``classify(h)`` is ``Linear -> ReLU -> Dropout ->
    Linear``, or ``Dropout -> Linear`` when ``hidden`` is 0."""
    return _head_class()(dim, n_classes, hidden=hidden, dropout=dropout)


def _check_head(dim: int, n_classes: int, hidden: int, dropout: float) -> None:
    for name, value, low in (("dim", dim, 1), ("n_classes", n_classes, 2), ("hidden", hidden, 0)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise InvalidParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    if not 0.0 <= float(dropout) < 1.0:
        raise InvalidParameterError(f"dropout must be in [0, 1), got {dropout!r}")


def head_factory(dim: int, n_classes: int, *, hidden: int = 256,
                 dropout: float = 0.1) -> Callable[[], Any]:
    """A function that makes a new :class:`HeadNetwork` each call (the options are checked
    now, not at the first call)."""
    _check_head(dim, n_classes, hidden, dropout)

    def make() -> Any:
        return HeadNetwork(dim, n_classes, hidden=hidden, dropout=dropout)

    return make
