"""Scorers that produce out-of-sample predicted probabilities, for text and for tokens.

Every scorer implements :class:`Scorer` (``prepare`` once, then ``fit`` and
``predict_proba`` per fold); token scorers are :class:`TokenScorer` subclasses that predict
one ``(n_tokens, n_classes)`` array per sentence. Both kinds are cross-fitted by the same
loop. Scorers are named in :mod:`labelaudit.registry` (``SCORERS``, ``TOKEN_SCORERS``).
"""

from __future__ import annotations

import importlib

from labelaudit.models._base import Scorer
from labelaudit.models._crossfit import FoldWarning
from labelaudit.models._embed import EmbedScorer, encode_texts
from labelaudit.models._finetune import FinetuneScorer
from labelaudit.models._knn import KnnScorer
from labelaudit.models._registry import cross_val_pred_probs, make_scorer
from labelaudit.models._tfidf import CharTfidfScorer, TfidfScorer
from labelaudit.models._token_encoder import EncoderTokenScorer
from labelaudit.models._token_finetune import FinetuneTokenScorer
from labelaudit.models._token_scorer import (
    TokenScorer,
    cross_val_token_probs,
    make_token_scorer,
)

__all__ = [
    "CharTfidfScorer",
    "EmbedScorer",
    "EncoderTokenScorer",
    "FinetuneScorer",
    "FinetuneTokenScorer",
    "FoldWarning",
    "KnnScorer",
    "Scorer",
    "TaptResult",
    "TfidfScorer",
    "TokenScorer",
    "cross_val_pred_probs",
    "cross_val_token_probs",
    "encode_texts",
    "make_scorer",
    "make_token_scorer",
    "tapt",
]

# Public, but imported on first use (transformers' masked-LM classes are heavy).
_LAZY = {"tapt": "labelaudit.models._tapt", "TaptResult": "labelaudit.models._tapt"}

# Importable for labelaudit's own modules, benchmarks and tests, but not public API
# (imported on first use).
_INTERNAL = {
    "DEFAULT_MODEL": "labelaudit.models._encoder",
    "EmbeddingCache": "labelaudit.models._encoder",
    "TokenVectorCache": "labelaudit.models._encoder",
    "bf16_supported": "labelaudit.models._encoder",
    "default_cache_dir": "labelaudit.models._encoder",
    "load_sentence_encoder": "labelaudit.models._encoder",
    "resolve_model_path": "labelaudit.models._encoder",
    "torch_setup": "labelaudit.models._encoder",
    "crossfit_pred_probs": "labelaudit.models._crossfit",
    "fit_score_pred_probs": "labelaudit.models._crossfit",
    "group_folds": "labelaudit.models._crossfit",
    "make_folds": "labelaudit.models._crossfit",
    "full_proba": "labelaudit.models._base",
    "take": "labelaudit.models._base",
    "DEFAULT_SCORERS": "labelaudit.models._registry",
    "SCORERS": "labelaudit.models._registry",
    "MemberProbs": "labelaudit.models._registry",
    "ScorerName": "labelaudit.models._registry",
    "member_pred_probs": "labelaudit.models._registry",
    "fit_score_token_probs": "labelaudit.models._token_scorer",
    "encode_word_vectors": "labelaudit.models._word_vectors",
}


def __getattr__(name: str) -> object:
    if name in _INTERNAL or name in _LAZY:
        return getattr(importlib.import_module({**_INTERNAL, **_LAZY}[name]), name)
    raise AttributeError(f"module 'labelaudit.models' has no attribute {name!r}")
