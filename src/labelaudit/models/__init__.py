"""Scorers that produce out-of-sample predicted probabilities for text data."""

from labelaudit.models._encoder import (
    DEFAULT_MODEL,
    EmbeddingCache,
    default_cache_dir,
    load_sentence_encoder,
    resolve_model_path,
    torch_setup,
)

__all__ = [
    "DEFAULT_MODEL",
    "EmbeddingCache",
    "default_cache_dir",
    "load_sentence_encoder",
    "resolve_model_path",
    "torch_setup",
]
