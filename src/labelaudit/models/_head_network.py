"""A small classifier head on fixed embeddings, and the embeddings as loop inputs.

:class:`HeadNetwork` is the network the robust methods of ``labelaudit train`` train through
the one loop (:func:`labelaudit.models.train_networks`) when the text encoder is frozen: it
reads one embedding per item (:class:`EmbeddingInputs`). Its :meth:`~HeadNetwork.features`
is the input embedding itself (standardised by a parameter-free layer norm), so mixup mixes
input embeddings, as Zhang et al. (2018) mix inputs; :meth:`~HeadNetwork.classify` is the
MLP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch  # imported on first use of these names (labelaudit.models is lazy)

from labelaudit._errors import InvalidInputError, InvalidParameterError

__all__ = ["EmbeddingInputs", "HeadNetwork", "head_factory"]


class EmbeddingInputs:
    """Training items given as an embedding array, shape ``(n_samples, dim)``.

    The array is converted to float32 once, and copied to a device once per device.

    Examples
    --------
    >>> import numpy as np
    >>> inputs = EmbeddingInputs(np.zeros((5, 3)))
    >>> len(inputs), inputs.dim
    (5, 3)
    >>> [b.tolist() for b in inputs.batches(np.random.default_rng(0), 2, shuffle=False)]
    [[0, 1], [2, 3], [4]]
    """

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
        """Index arrays of ``batch_size`` items (the last may be shorter) covering every
        item once; in a random order drawn from ``rng`` when ``shuffle``."""
        n = len(self)
        order = rng.permutation(n) if shuffle else np.arange(n)
        return [order[i:i + batch_size] for i in range(0, n, batch_size)]

    def batch(self, index: np.ndarray, device: torch.device) -> torch.Tensor:
        """The embeddings at ``index`` as a float32 tensor on ``device``."""
        key = str(device)
        data = self._on.get(key)
        if data is None:
            data = torch.from_numpy(self.embeddings).to(device)
            self._on[key] = data
        return data[torch.as_tensor(np.asarray(index, dtype=np.int64), device=data.device)]


class HeadNetwork(torch.nn.Module):
    """An MLP (or linear) classifier on fixed embeddings.

    ``features(x)`` is ``layer_norm(x)`` without learned parameters: each embedding
    standardised to mean 0 and variance 1 over its ``dim`` coordinates, so the head trains
    at the same learning rate whatever the encoder's scale. ``classify(h)`` is
    ``Linear(dim, hidden) -> ReLU -> Dropout -> Linear(hidden, n_classes)``, or
    ``Dropout -> Linear(dim, n_classes)`` when ``hidden`` is 0. Mixup therefore mixes the
    (standardised) input embeddings.

    Parameters
    ----------
    dim : int
        Embedding width.
    n_classes : int
        Number of classes.
    hidden : int, default=256
        Width of the hidden layer; 0 for a linear (softmax regression) head.
    dropout : float, default=0.1
        Dropout rate before the last linear layer.

    Examples
    --------
    >>> import torch
    >>> net = HeadNetwork(8, 3, hidden=4)
    >>> net(torch.zeros(2, 8)).shape
    torch.Size([2, 3])
    """

    def __init__(self, dim: int, n_classes: int, *, hidden: int = 256,
                 dropout: float = 0.1) -> None:
        super().__init__()
        _check_head(dim, n_classes, hidden, dropout)
        self.dim, self.n_classes, self.hidden = int(dim), int(n_classes), int(hidden)
        layers: list[torch.nn.Module]
        if hidden > 0:
            layers = [torch.nn.Linear(dim, hidden), torch.nn.ReLU(), torch.nn.Dropout(dropout),
                      torch.nn.Linear(hidden, n_classes)]
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


def _check_head(dim: int, n_classes: int, hidden: int, dropout: float) -> None:
    for name, value, low in (("dim", dim, 1), ("n_classes", n_classes, 2), ("hidden", hidden, 0)):
        if not isinstance(value, (int, np.integer)) or value < low:
            raise InvalidParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    if not 0.0 <= float(dropout) < 1.0:
        raise InvalidParameterError(f"dropout must be in [0, 1), got {dropout!r}")


def head_factory(dim: int, n_classes: int, *, hidden: int = 256,
                 dropout: float = 0.1) -> Callable[[], HeadNetwork]:
    """A function that makes a new :class:`HeadNetwork` each call (the options are checked
    now, not at the first call).

    Examples
    --------
    >>> make = head_factory(8, 3, hidden=0)
    >>> make() is not make()
    True
    """
    _check_head(dim, n_classes, hidden, dropout)

    def make() -> HeadNetwork:
        return HeadNetwork(dim, n_classes, hidden=hidden, dropout=dropout)

    return make
