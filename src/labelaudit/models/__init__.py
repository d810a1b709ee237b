"""Scorers that produce out-of-sample predicted probabilities for text data."""

from labelaudit.models._base import Scorer, full_proba, take
from labelaudit.models._crossfit import (
    FoldWarning,
    crossfit_pred_probs,
    fit_score_pred_probs,
    make_folds,
)
from labelaudit.models._embed import EmbedScorer, encode_texts
from labelaudit.models._encoder import (
    DEFAULT_MODEL,
    EmbeddingCache,
    bf16_supported,
    default_cache_dir,
    load_sentence_encoder,
    resolve_model_path,
    torch_setup,
)
from labelaudit.models._finetune import FinetuneScorer
from labelaudit.models._registry import (
    DEFAULT_SCORERS,
    SCORERS,
    MemberProbs,
    ScorerName,
    cross_val_pred_probs,
    make_scorer,
    member_pred_probs,
)
from labelaudit.models._tfidf import TfidfScorer

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SCORERS",
    "SCORERS",
    "EmbedScorer",
    "EmbeddingCache",
    "FinetuneScorer",
    "FoldWarning",
    "MemberProbs",
    "Scorer",
    "ScorerName",
    "TfidfScorer",
    "bf16_supported",
    "cross_val_pred_probs",
    "crossfit_pred_probs",
    "default_cache_dir",
    "encode_texts",
    "fit_score_pred_probs",
    "full_proba",
    "load_sentence_encoder",
    "make_folds",
    "make_scorer",
    "member_pred_probs",
    "resolve_model_path",
    "take",
    "torch_setup",
]
