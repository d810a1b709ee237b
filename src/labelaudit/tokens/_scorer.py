"""Token scorers: turn a tagged dataset into per-token predicted probabilities.

A scorer has three steps, like the scan's scorers: ``prepare(dataset)`` computes features
once for every sentence (cached embeddings), ``fit(features, labels, n_classes)`` learns
from a subset, and ``predict_proba(features)`` returns one ``(n_tokens, n_classes)`` array
per sentence. Cross-fitting calls ``fit``/``predict_proba`` once per fold.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int
from labelaudit.tokens._conll import TokenDataset
from labelaudit.tokens._heads import HeadName, make_head, window_features

__all__ = ["EncoderTokenScorer", "ScorerName", "check_seed", "make_token_scorer"]

ScorerName = Literal["encoder", "finetune"]
Encode = Callable[[list[list[str]]], list[np.ndarray]]
MAX_SEED = 2**32 - 1  # the largest seed that numpy, torch and scikit-learn all take


def check_seed(random_state: object) -> int | None:
    """``None`` or an integer seed from 0 to ``2**32 - 1``."""
    if random_state is None:
        return None
    return check_int(random_state, "random_state", minimum=0, maximum=MAX_SEED)


def _default_layer(model: str | None) -> int:
    """Two thirds of the encoder's depth: word identity and context are both still there."""
    from transformers import AutoConfig

    from labelaudit.models import resolve_model_path

    config = AutoConfig.from_pretrained(resolve_model_path(model))
    n_layers = int(getattr(config, "num_hidden_layers", 6))
    return max(1, round(2 * n_layers / 3))


class EncoderTokenScorer:
    """Contextual word vectors from a frozen encoder, fed to a linear or CRF head.

    Parameters
    ----------
    model : str, optional
        Encoder name or folder; default the packaged all-MiniLM-L6-v2.
    head : {"crf", "linear"}
        ``crf``: a linear-chain CRF, token probabilities from its marginals (default; on
        CoNLL-03 as accurate as ``linear`` and ten times faster to train);
        ``linear``: multinomial logistic regression (scikit-learn, L-BFGS).
    layers : sequence of int, optional
        Hidden layers to concatenate (``0`` = embeddings); default two thirds of the depth
        (layer 4 of 6 for MiniLM, which tagged CoNLL-03 better than the last layer).
    window : int
        Neighbouring words on each side whose features are appended.
    cache : bool
        Keep word vectors on disk under ``cache_dir`` (default
        :func:`labelaudit.models.default_cache_dir`), keyed by model, layers and sentence.
    encode : callable, optional
        ``encode(sentences) -> list of (n_words, dim) arrays`` replacing the encoder (tests).
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        head: HeadName = "crf",
        layers: Sequence[int] | None = None,
        window: int = 1,
        batch_size: int = 32,
        cache: bool = True,
        cache_dir: str | Path | None = None,
        progress: bool = False,
        random_state: int | None = 0,
        encode: Encode | None = None,
        head_options: dict | None = None,
    ) -> None:
        self.model = model
        self.head = head
        self.layers = layers
        self.window = window
        self.batch_size = batch_size
        self.cache = cache
        self.cache_dir = cache_dir
        self.progress = progress
        self.random_state = random_state
        self.encode = encode
        self.head_options = head_options

    def _vectors(self, sentences: list[list[str]]) -> list[np.ndarray]:
        from labelaudit.models import DEFAULT_MODEL, default_cache_dir
        from labelaudit.tokens._vectors import TokenVectorCache, encode_word_vectors

        if self.encode is not None:
            return [np.asarray(v, dtype=np.float32) for v in self.encode(sentences)]
        layers = tuple(self.layers) if self.layers is not None else (_default_layer(self.model),)

        def compute(todo: list[list[str]]) -> list[np.ndarray]:
            return encode_word_vectors(
                todo, model=self.model, layers=layers, batch_size=self.batch_size,
                progress=self.progress,
            )

        if not self.cache:
            return compute(sentences)
        root = Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()
        key = f"words|{self.model or DEFAULT_MODEL}|layers={','.join(map(str, layers))}|v1"
        return TokenVectorCache(root, key).get_or_compute(sentences, compute)

    @property
    def name(self) -> str:
        """Short description for reports, e.g. ``encoder+crf``."""
        return f"encoder+{self.head}" + (f"({self.model})" if self.model else "")

    def _check_params(self) -> None:
        """Refuse bad options before the encoder loads."""
        if self.head not in ("linear", "crf"):
            raise InvalidParameterError(f"unknown head {self.head!r}; choose 'linear' or 'crf'")
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.window, "window", minimum=0)
        check_seed(self.random_state)
        if self.layers is not None:
            layers = self.layers
            if (isinstance(layers, (str, bytes)) or not len(layers)
                    or not all(isinstance(x, numbers.Integral) and not isinstance(x, bool)
                               for x in layers)):
                raise InvalidParameterError(
                    f"layers must be a non-empty list of layer numbers; got {layers!r}")

    def prepare(self, dataset: TokenDataset) -> list[np.ndarray]:
        """Per-sentence features ``(n_tokens, n_features)`` for every sentence of ``dataset``."""
        self._check_params()
        vectors = self._vectors(dataset.tokens)
        return [
            window_features(v, toks, window=self.window)
            for v, toks in zip(vectors, dataset.tokens, strict=False)
        ]

    def fit(self, features: Sequence[np.ndarray], labels: Sequence[np.ndarray], n_classes: int):
        self._check_params()
        self.head_ = make_head(
            self.head, random_state=self.random_state, **(self.head_options or {})
        ).fit(features, labels, n_classes)
        return self

    def predict_proba(self, features: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self.head_.predict_proba(features)


def make_token_scorer(name: ScorerName = "encoder", **options):
    """Build a token scorer: ``"encoder"`` (frozen encoder + head) or ``"finetune"``.

    Examples
    --------
    >>> make_token_scorer("encoder", head="crf").head
    'crf'
    """
    if name == "encoder":
        return EncoderTokenScorer(**options)
    if name == "finetune":
        from labelaudit.tokens._finetune import FinetuneTokenScorer

        return FinetuneTokenScorer(**options)
    raise InvalidParameterError(f"unknown token scorer {name!r}; choose 'encoder' or 'finetune'")
