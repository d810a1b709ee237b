"""Fine-tune a transformer for token classification (for GPU users; slow but exact on CPU)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._validation import check_int, check_number
from labelaudit.models._encoder import load_pretrained, torch_setup
from labelaudit.models._loop_steps import TrainingSteps, transformers_linear_schedule
from labelaudit.models._progress import progress_bar
from labelaudit.models._runtime import resolve_device
from labelaudit.models._token_scorer import TokenScorer, check_seed
from labelaudit.models._word_vectors import sentence_pieces

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.tokens import TokenDataset

__all__ = ["FinetuneTokenScorer"]


@dataclass(eq=False, kw_only=True)
class FinetuneTokenScorer(TokenScorer):
    """``AutoModelForTokenClassification`` fine-tuned from ``model`` on each training fold.

    Each word's tag is predicted at its first sub-word (the usual recipe); the other
    sub-words are ignored in the loss. Sentences longer than ``max_length`` sub-words are
    split into chunks of whole words. The encoder is re-loaded from ``model`` for every
    ``fit``, so folds never share weights.

    Parameters
    ----------
    model : str, optional
        A local folder or hub name with a fast tokenizer; default all-MiniLM-L6-v2.
    epochs, batch_size, learning_rate, weight_decay : training settings, trained with the
        steps of labelaudit's one training loop (:class:`~labelaudit.models.TrainingSteps`):
        AdamW with transformers' linear schedule (a warm-up over the first 10 % of the
        steps, then a decay to 0), gradients clipped at norm 1.0, in float32.
    device : str, optional
        ``"cuda"`` when available, else ``"cpu"``.
    """

    model: str | None = None
    epochs: int = 3
    batch_size: int = 16
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    max_length: int = 256
    device: str | None = None
    progress: bool = False
    random_state: int | None = 0

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        """Short description for reports."""
        return f"finetune({self.model or 'all-MiniLM-L6-v2'})"

    def fold_gpus(self) -> int:
        """1: a fold trains on a GPU, unless ``device`` names the CPU."""
        return 0 if str(self.device or "").startswith("cpu") else 1

    def on_device(self, device: str) -> FinetuneTokenScorer:
        """An unfitted copy that trains and predicts on ``device``."""
        import dataclasses

        return dataclasses.replace(self, device=device)

    def _check_params(self) -> None:
        """Refuse bad training settings before the model loads."""
        check_int(self.epochs, "epochs", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.max_length, "max_length", minimum=3)  # room for a word
        check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        check_number(self.weight_decay, "weight_decay", low=0.0)
        check_seed(self.random_state)

    def prepare(self, data: TokenDataset, *, progress: bool = False) -> list[list[str]]:
        """The features of a sentence are its tokens; encoding happens in ``fit``."""
        self._check_params()
        return [list(t) for t in data.tokens]

    def _tokenizer(self):
        from transformers import AutoTokenizer

        return load_pretrained(AutoTokenizer, self.model)

    def _chunks(self, tokenizer, sentences: Sequence[Sequence[str]]):
        """``(sentence, start word, end word)`` pieces that fit in ``max_length``."""
        return sentence_pieces(tokenizer, sentences, self.max_length - 2)

    def _encode(self, tokenizer, words: list[list[str]]):
        return tokenizer(words, is_split_into_words=True, truncation=True,
                         max_length=self.max_length, padding=True, return_tensors="pt")

    @staticmethod
    def _first_subwords(enc, row: int) -> dict[int, int]:
        first: dict[int, int] = {}
        for position, word in enumerate(enc.word_ids(row)):
            if word is not None and word not in first:
                first[word] = position
        return first

    def _start(self, n_classes: int) -> tuple[Any, Any, str, np.random.Generator]:
        """A fresh network from ``model`` with ``n_classes`` outputs, its tokenizer, the
        device and the random generator of this fit."""
        import torch
        from transformers import AutoModelForTokenClassification

        self._check_params()
        torch_setup()
        rng = np.random.default_rng(self.random_state)
        torch.manual_seed(int(rng.integers(2**31)))
        device = str(resolve_device(self.device))
        net = load_pretrained(AutoModelForTokenClassification, self.model,
                              num_labels=n_classes, ignore_mismatched_sizes=True).to(device)
        return net, self._tokenizer(), device, rng

    def fit(self, features: Sequence[Sequence[str]], labels: Sequence[np.ndarray],
            n_classes: int) -> FinetuneTokenScorer:
        import torch

        net, tokenizer, device, rng = self._start(n_classes)
        pieces = self._chunks(tokenizer, features)
        n_batches = -(-len(pieces) // self.batch_size)
        steps = TrainingSteps.adamw(
            net.parameters(), learning_rate=self.learning_rate, weight_decay=self.weight_decay,
            lr_factor=transformers_linear_schedule(n_batches * self.epochs,
                                                   int(0.1 * n_batches * self.epochs)),
            max_grad_norm=1.0)
        epochs = f"{self.epochs} epoch" + ("s" if self.epochs > 1 else "")
        net.train()
        with progress_bar(n_batches * self.epochs, unit=" batches", enabled=self.progress,
                          desc=f"fine-tuning on {len(features):,} sentences ({epochs})") as bar:
            for _ in range(self.epochs):
                order = rng.permutation(len(pieces))
                for start in range(0, n_batches * self.batch_size, self.batch_size):
                    batch = [pieces[i] for i in order[start:start + self.batch_size]]
                    words = [list(features[s][a:e]) for s, a, e in batch]
                    enc = self._encode(tokenizer, words)
                    target = torch.full(enc["input_ids"].shape, -100, dtype=torch.long)
                    for row, (s, a, _) in enumerate(batch):
                        for word, position in self._first_subwords(enc, row).items():
                            target[row, position] = int(labels[s][a + word])
                    out = net(**{k: v.to(device) for k, v in enc.items()},
                              labels=target.to(device))
                    steps.backward(out.loss)
                    steps.step()
                    bar.update(1)
        net.eval()
        self.net_, self.tokenizer_ = net, tokenizer
        self.device_, self.n_classes_ = device, n_classes
        return self

    def predict_proba(self, features: Sequence[Sequence[str]]) -> list[np.ndarray]:
        import torch

        out = [np.full((len(s), self.n_classes_), 1.0 / self.n_classes_) for s in features]
        pieces = sorted(self._chunks(self.tokenizer_, features), key=lambda p: p[2] - p[1])
        with torch.inference_mode():
            for b in range(0, len(pieces), self.batch_size * 2):
                batch = pieces[b : b + self.batch_size * 2]
                words = [list(features[s][a:e]) for s, a, e in batch]
                enc = self._encode(self.tokenizer_, words)
                logits = self.net_(**{k: v.to(self.device_) for k, v in enc.items()}).logits
                probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
                for row, (s, a, _) in enumerate(batch):
                    for word, position in self._first_subwords(enc, row).items():
                        out[s][a + word] = probs[row, position]
        return out
