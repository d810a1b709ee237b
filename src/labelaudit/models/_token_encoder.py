"""Contextual word vectors from a frozen encoder with a linear or CRF head, per token."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int
from labelaudit.models._heads import CRFHead, HeadName, make_head, window_features
from labelaudit.models._token_scorer import TokenScorer, check_seed

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.tokens import TokenDataset

__all__ = ["EncoderTokenScorer"]

Encode = Callable[[list[list[str]]], list[np.ndarray]]


def _default_layer(model: str | None) -> int:
    """Two thirds of the encoder's depth: word identity and context are both still there."""
    from transformers import AutoConfig

    from labelaudit.models._encoder import load_pretrained

    config = load_pretrained(AutoConfig, model)
    n_layers = int(getattr(config, "num_hidden_layers", 6))
    return max(1, round(2 * n_layers / 3))


@dataclass(eq=False, kw_only=True)
class EncoderTokenScorer(TokenScorer):
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

    Examples
    --------
    >>> EncoderTokenScorer(head="linear").name
    'encoder+linear'
    """

    model: str | None = None
    head: HeadName = "crf"
    layers: Sequence[int] | None = None
    window: int = 1
    batch_size: int = 32
    cache: bool = True
    cache_dir: str | Path | None = None
    progress: bool = False
    random_state: int | None = 0
    encode: Encode | None = None
    head_options: dict | None = None

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        """Short description for reports, e.g. ``encoder+crf``."""
        return f"encoder+{self.head}" + (f"({self.model})" if self.model else "")

    def _vectors(self, sentences: list[list[str]], progress: bool) -> list[np.ndarray]:
        from labelaudit.models._encoder import DEFAULT_MODEL, TokenVectorCache, default_cache_dir
        from labelaudit.models._word_vectors import encode_word_vectors

        if self.encode is not None:
            return [np.asarray(v, dtype=np.float32) for v in self.encode(sentences)]
        layers = tuple(self.layers) if self.layers is not None else (_default_layer(self.model),)

        def compute(todo: list[list[str]]) -> list[np.ndarray]:
            return encode_word_vectors(todo, model=self.model, layers=layers,
                                       batch_size=self.batch_size, progress=progress)

        if not self.cache:
            return compute(sentences)
        root = Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()
        key = f"words|{self.model or DEFAULT_MODEL}|layers={','.join(map(str, layers))}|v1"
        return TokenVectorCache(root, key).get_or_compute(sentences, compute)

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

    def prepare(self, data: TokenDataset, *, progress: bool = False) -> list[np.ndarray]:
        """Per-sentence features ``(n_tokens, n_features)`` for every sentence of ``data``."""
        self._check_params()
        vectors = self._vectors(data.tokens, progress or self.progress)
        return [window_features(v, toks, window=self.window)
                for v, toks in zip(vectors, data.tokens, strict=False)]

    @property
    def warm_starts(self) -> bool:
        """Whether :meth:`fit` can start from an earlier fit (``init``): the CRF head can."""
        return self.head == "crf"

    def fit_cost(self, n_items: int, *, warm: bool = False) -> float:
        """A fit's cost on ``n_items`` sentences in the head's units (the CRF's updates, the
        linear head's items), to plan a run of many fits."""
        if self.head != "crf":
            return float(n_items)
        return float(CRFHead(**(self.head_options or {})).steps(n_items, warm=warm))

    def fit(self, features: Sequence[np.ndarray], labels: Sequence[np.ndarray],
            n_classes: int, *, init: EncoderTokenScorer | None = None) -> EncoderTokenScorer:
        """Fit the head; with ``init`` (a CRF scorer fitted before on part of these items),
        start from its head and make the head's ``warm_epochs`` passes."""
        self._check_params()
        head = make_head(self.head, random_state=self.random_state, **(self.head_options or {}))
        if init is not None:
            if not self.warm_starts:
                raise InvalidParameterError(f"the {self.head} head cannot start from an "
                                            "earlier fit; the crf head can")
            self.head_: Any = head.fit(features, labels, n_classes,  # type: ignore[call-arg]
                                       init=init.head_)
        else:
            self.head_ = head.fit(features, labels, n_classes)
        return self

    def predict_proba(self, features: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self.head_.predict_proba(features)
