"""Full fine-tuning of a Hugging Face encoder as a classifier (the FML of Chong et al. 2022)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int, check_number
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer, TrainsOnGpu
from labelaudit.models._encoder import resolve_device
from labelaudit.models._loop import (
    LoopConfig,
    Method,
    free_gpu_memory,
    predict_proba,
    train_networks,
)
from labelaudit.models._networks import TextInputs, finetune_factory


@dataclass(eq=False, kw_only=True)
class FinetuneScorer(TrainsOnGpu, Scorer):
    """Fine-tune a pre-trained transformer per fold and predict held-out items (FML).

    Trained by :func:`train_networks` with plain cross-entropy (length-sorted batches,
    AdamW with warm-up and decay, clipping, accumulation, mixed precision on CUDA). Long
    texts keep their first quarter and last three quarters of ``max_length`` tokens
    (head+tail truncation, Sun et al. 2019), so the end of a review still counts. Each
    ``fit`` starts from the pre-trained weights: encoder, mean pooling, linear classifier.

    Parameters
    ----------
    model : a Hugging Face id or local folder (a ``labelaudit tapt`` output works); None is
        the packaged all-MiniLM-L6-v2.
    epochs, learning_rate, batch_size, max_length, eval_batch_size : training settings
        (``eval_batch_size``: items per forward pass when predicting).
    truncation : {"head_tail", "head"}
        How single texts longer than ``max_length`` are cut (pairs: longest-first).
    warmup, weight_decay, max_grad_norm, accumulate : optimiser settings.
    random_state : seeds the classifier's initialisation, dropout and the batch order.
    device : ``"cuda"``, ``"cpu"``...; None picks CUDA when available.
    devices : devices to cross-fit folds on at once, one process each (``["cuda:0",
        "cuda:1"]``). None, with ``device`` None, uses every visible GPU when there are
        several. Each fold is seeded by ``random_state``, wherever it runs.

    References
    ----------
    Chong, Hong & Manning (2022), section 3: "we fine-tune a pre-trained foundation model
    on the noisy data and rank items by their loss" (FML). Sun, Qiu, Xu & Huang (2019),
    How to Fine-Tune BERT for Text Classification? (head+tail truncation).

    Examples
    --------
    >>> FinetuneScorer(epochs=3, max_length=512).max_length
    512
    """

    name = "finetune"

    model: str | None = None
    epochs: int = 2
    learning_rate: float = 5e-5
    batch_size: int = 16
    eval_batch_size: int = 128
    max_length: int = 256
    truncation: str = "head_tail"
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_grad_norm: float | None = 1.0
    accumulate: int = 1
    random_state: int = 0
    device: str | None = None
    devices: Sequence[str] | None = None
    progress: bool = False

    def fold_devices(self) -> list[str]:
        """``devices``, or every GPU when there are several and no ``device`` is set.

        Each named device is checked to exist here (:func:`resolve_device`), so a missing
        GPU is one line before any fold starts."""
        if self.devices is not None:
            if isinstance(self.devices, str) or not all(isinstance(d, str)
                                                        for d in self.devices):
                raise InvalidParameterError(
                    f"devices must be a list of device names such as ['cuda:0', 'cuda:1']; "
                    f"got {self.devices!r}")
            for device in self.devices:
                resolve_device(device)
            return list(self.devices)
        if self.device is not None:
            resolve_device(self.device)
            return []
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        return [f"cuda:{i}" for i in range(count)] if count > 1 else []

    def on_device(self, device: str) -> FinetuneScorer:
        """An unfitted copy that trains and predicts on ``device`` alone."""
        return dataclasses.replace(self, device=device, devices=None)

    def _settings(self) -> dict[str, Any]:
        return {"encoder": self.model, "max_length": self.max_length,
                "truncation": self.truncation, "dropout": 0.1}

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        """Token ids of every item, computed once (see :class:`TextInputs`)."""
        check_int(self.max_length, "max_length", minimum=8)
        if self.truncation not in ("head_tail", "head"):
            raise InvalidParameterError(
                f"truncation must be 'head_tail' or 'head'; got {self.truncation!r}")
        self._progress = progress or self.progress
        return TextInputs.from_dataset(data, self._settings())

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> FinetuneScorer:
        check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        free_gpu_memory()  # the previous fold's cached GPU memory, before a model loads
        config = LoopConfig(
            epochs=check_int(self.epochs, "epochs", minimum=1),
            batch_size=check_int(self.batch_size, "batch_size", minimum=1),
            learning_rate=float(self.learning_rate), weight_decay=self.weight_decay,
            warmup=self.warmup, device=self.device, bf16=True,
            max_grad_norm=self.max_grad_norm, accumulate=self.accumulate,
            random_state=self.random_state, progress=getattr(self, "_progress", False))
        networks, _ = train_networks(finetune_factory(self._settings(), n_classes), features,
                                     np.asarray(labels), n_classes, Method(), config)

        self.model_ = networks[0]
        self.device_ = str(resolve_device(self.device))
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        return predict_proba(self.model_, features,
                             batch_size=check_int(self.eval_batch_size, "eval_batch_size",
                                                  minimum=1))
