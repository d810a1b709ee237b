"""Fine-tune a transformer for token classification (for GPU users; slow but exact on CPU)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from labelaudit._validation import check_int, check_number
from labelaudit.tokens._conll import TokenDataset
from labelaudit.tokens._scorer import check_seed
from labelaudit.tokens._vectors import quiet_loading, sentence_pieces

__all__ = ["FinetuneTokenScorer"]


class FinetuneTokenScorer:
    """``AutoModelForTokenClassification`` fine-tuned from ``model`` on each training fold.

    Each word's tag is predicted at its first sub-word (the usual recipe); the other
    sub-words are ignored in the loss. Sentences longer than ``max_length`` sub-words are
    split into chunks of whole words. The encoder is re-loaded from ``model`` for every
    ``fit``, so folds never share weights.

    Parameters
    ----------
    model : str, optional
        A local folder or hub name with a fast tokenizer; default all-MiniLM-L6-v2.
    epochs, batch_size, learning_rate, weight_decay : training settings (AdamW, linear decay).
    device : str, optional
        ``"cuda"`` when available, else ``"cpu"``.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        epochs: int = 3,
        batch_size: int = 16,
        learning_rate: float = 5e-5,
        weight_decay: float = 0.01,
        max_length: int = 256,
        device: str | None = None,
        progress: bool = False,
        random_state: int | None = 0,
    ) -> None:
        self.model = model
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_length = max_length
        self.device = device
        self.progress = progress
        self.random_state = random_state

    @property
    def name(self) -> str:
        """Short description for reports."""
        return f"finetune({self.model or 'all-MiniLM-L6-v2'})"

    def _check_params(self) -> None:
        """Refuse bad training settings before the model loads."""
        check_int(self.epochs, "epochs", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.max_length, "max_length", minimum=3)  # room for a word
        check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        check_number(self.weight_decay, "weight_decay", low=0.0)
        check_seed(self.random_state)

    def prepare(self, dataset: TokenDataset) -> list[list[str]]:
        """The features of a sentence are its tokens; encoding happens in ``fit``."""
        self._check_params()
        return [list(t) for t in dataset.tokens]

    def _tokenizer(self):
        from transformers import AutoTokenizer

        from labelaudit.models import resolve_model_path

        return AutoTokenizer.from_pretrained(resolve_model_path(self.model))

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

    def fit(self, features: Sequence[Sequence[str]], labels: Sequence[np.ndarray], n_classes: int):
        import torch
        from transformers import AutoModelForTokenClassification, get_linear_schedule_with_warmup

        from labelaudit.models import resolve_model_path, torch_setup

        self._check_params()
        torch_setup()
        rng = np.random.default_rng(self.random_state)
        torch.manual_seed(int(rng.integers(2**31)))
        device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        tokenizer = self._tokenizer()
        with quiet_loading():
            net = AutoModelForTokenClassification.from_pretrained(
                resolve_model_path(self.model), num_labels=n_classes,
                ignore_mismatched_sizes=True,
            ).to(device)
        pieces = self._chunks(tokenizer, features)
        n_batches = -(-len(pieces) // self.batch_size)
        optimizer = torch.optim.AdamW(
            net.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay
        )
        schedule = get_linear_schedule_with_warmup(
            optimizer, int(0.1 * n_batches * self.epochs), n_batches * self.epochs
        )
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            epochs = f"{self.epochs} epoch" + ("s" if self.epochs > 1 else "")
            bar = tqdm(total=n_batches * self.epochs, unit=" batches", leave=False,
                       desc=f"fine-tuning on {len(features):,} sentences ({epochs})")
        net.train()
        for _ in range(self.epochs):
            order = rng.permutation(len(pieces))
            for b in range(n_batches):
                batch = [pieces[i] for i in order[b * self.batch_size : (b + 1) * self.batch_size]]
                words = [list(features[s][a:e]) for s, a, e in batch]
                enc = self._encode(tokenizer, words)
                target = torch.full(enc["input_ids"].shape, -100, dtype=torch.long)
                for row, (s, a, _) in enumerate(batch):
                    for word, position in self._first_subwords(enc, row).items():
                        target[row, position] = int(labels[s][a + word])
                out = net(**{k: v.to(device) for k, v in enc.items()}, labels=target.to(device))
                optimizer.zero_grad()
                out.loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                optimizer.step()
                schedule.step()
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()
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
