"""Full fine-tuning of a Hugging Face sequence classifier (the FML of Chong et al. 2022)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer
from labelaudit.models._encoder import quiet_loading, resolve_model_path, torch_setup
from labelaudit.models._progress import progress_bar

__all__ = ["FinetuneScorer"]


def _device(requested: str | None) -> str:
    import torch

    if requested:
        return requested
    return "cuda" if torch.cuda.is_available() else "cpu"


@dataclass(eq=False, kw_only=True)
class FinetuneScorer(Scorer):
    """Fine-tune a pre-trained transformer per fold and predict held-out items.

    Meant for GPU users (it picks CUDA when present); on a CPU it runs, slowly, for
    small data. Each ``fit`` starts again from the pre-trained weights.

    Parameters
    ----------
    model : str or None
        A Hugging Face id or local folder; None is the packaged all-MiniLM-L6-v2.
    epochs, learning_rate, batch_size, max_length : training settings.
    random_state : int
        Seeds torch for the classifier head's initialisation and the batch order.
    device : str or None
        ``"cuda"``, ``"cpu"``...; None picks CUDA when available.

    References
    ----------
    Chong, Hong & Manning (2022), section 3: "we fine-tune a pre-trained foundation model
    on the noisy data and rank items by their loss" (FML).
    """

    name = "finetune"

    model: str | None = None
    epochs: int = 2
    learning_rate: float = 5e-5
    batch_size: int = 16
    max_length: int = 128
    random_state: int = 0
    device: str | None = None

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        pairs = data.text_pairs if data.text_pairs is not None else [None] * len(data)
        self._progress = progress
        return list(zip(data.texts, pairs, strict=True))

    def _encode(self, tokenizer: Any, rows: list[tuple[str, str | None]]):
        firsts = [a for a, _ in rows]
        seconds = [b for _, b in rows]
        if all(b is None for b in seconds):
            return tokenizer(firsts, truncation=True, max_length=self.max_length,
                             padding=True, return_tensors="pt")
        return tokenizer(firsts, seconds, truncation=True, max_length=self.max_length,
                         padding=True, return_tensors="pt")

    def _batches(self, n: int, *, shuffle: bool, rng: np.random.Generator):
        order = rng.permutation(n) if shuffle else np.arange(n)
        for start in range(0, n, self.batch_size):
            yield order[start:start + self.batch_size]

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> FinetuneScorer:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        torch_setup()
        torch.manual_seed(self.random_state)
        path = resolve_model_path(self.model)
        device = _device(self.device)
        with quiet_loading(bars=True):
            self.tokenizer_ = AutoTokenizer.from_pretrained(path)
            model = AutoModelForSequenceClassification.from_pretrained(
                path, num_labels=n_classes).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=self.learning_rate)
        rng = np.random.default_rng(self.random_state)
        targets = torch.as_tensor(np.asarray(labels), dtype=torch.long)
        steps = self.epochs * -(-len(features) // self.batch_size)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: max(0.0, 1.0 - step / max(steps, 1)))
        model.train()
        with progress_bar(steps, "fine-tune", unit=" batches",
                          enabled=getattr(self, "_progress", False)) as bar:
            for _ in range(self.epochs):
                for index in self._batches(len(features), shuffle=True, rng=rng):
                    batch = self._encode(self.tokenizer_, [features[i] for i in index])
                    out = model(**batch.to(device), labels=targets[index].to(device))
                    out.loss.backward()
                    optimizer.step()
                    schedule.step()
                    optimizer.zero_grad()
                    bar.update(1)
        model.eval()
        self.model_ = model
        self.device_ = device
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        import torch

        outputs = []
        with torch.no_grad():
            for index in self._batches(len(features), shuffle=False,
                                       rng=np.random.default_rng(0)):
                batch = self._encode(self.tokenizer_, [features[i] for i in index])
                logits = self.model_(**batch.to(self.device_)).logits
                outputs.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
        return np.concatenate(outputs) if outputs else np.zeros((0, self.model_.num_labels))
