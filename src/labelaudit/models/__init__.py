"""Scorers that produce out-of-sample predicted probabilities, for text and for tokens.

Every scorer implements :class:`Scorer` (``prepare`` once, then ``fit`` and
``predict_proba`` per fold); token scorers are :class:`TokenScorer` subclasses that predict
one ``(n_tokens, n_classes)`` array per sentence. Both kinds are cross-fitted by the same
loop. Scorers are named in :mod:`labelaudit.registry` (``SCORERS``, ``TOKEN_SCORERS``).

The floor also owns the one training loop, :func:`train_networks`: AdamW over the batches of
an :class:`Inputs`, the loss of each batch from a :class:`Method` (``Method()`` itself is
plain cross-entropy), with warm-up, mixed precision, clipping, accumulation and halved
batches after running out of GPU memory. The ``finetune`` scorer and every method of
``labelaudit train`` call it; TAPT and token fine-tuning, whose items are not one labelled
text each, train with its steps (:class:`~labelaudit.models.TrainingSteps`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from labelaudit.models._base import Scorer
from labelaudit.models._checkpoint import (
    CheckpointWarning,
    FoldStore,
    checkpoint_files,
    claim_checkpoint_folder,
    drop_checkpoint_files,
    fold_checkpoints,
    own_checkpoint_file,
    release_checkpoint_folder,
)
from labelaudit.models._crossfit import FoldWarning, check_fold_count, exact_folds
from labelaudit.models._dynamics import DynamicsScorer, TrainingDynamics, training_dynamics
from labelaudit.models._embed import EmbedScorer, encode_texts
from labelaudit.models._encoder import check_cache_dir
from labelaudit.models._finetune import FinetuneScorer
from labelaudit.models._knn import KnnScorer
from labelaudit.models._loop import predict_proba, train_networks
from labelaudit.models._loop_types import (
    Inputs,
    LoopConfig,
    Method,
    Network,
    Step,
    TrainingLog,
)
from labelaudit.models._registry import cross_val_pred_probs, make_scorer
from labelaudit.models._text_inputs import FinetuneNetwork, TextInputs, finetune_factory
from labelaudit.models._tfidf import CharTfidfScorer, ConvergenceWarning, TfidfScorer
from labelaudit.models._token_encoder import EncoderTokenScorer
from labelaudit.models._token_finetune import FinetuneTokenScorer
from labelaudit.models._token_scorer import (
    TokenScorer,
    cross_val_token_probs,
    make_token_scorer,
)

__all__ = [
    "check_cache_dir",
    "CharTfidfScorer",
    "CheckpointWarning",
    "ConvergenceWarning",
    "DynamicsScorer",
    "EmbedScorer",
    "EmbeddingInputs",
    "EncoderTokenScorer",
    "FinetuneNetwork",
    "FinetuneScorer",
    "FinetuneTokenScorer",
    "FoldStore",
    "FoldWarning",
    "HeadNetwork",
    "Inputs",
    "KnnScorer",
    "LoopConfig",
    "Method",
    "Network",
    "Scorer",
    "Step",
    "TaptResult",
    "TextInputs",
    "TfidfScorer",
    "TokenScorer",
    "TrainingDynamics",
    "TrainingLog",
    "check_fold_count",
    "cross_val_pred_probs",
    "cross_val_token_probs",
    "encode_texts",
    "exact_folds",
    "finetune_factory",
    "checkpoint_files",
    "claim_checkpoint_folder",
    "drop_checkpoint_files",
    "own_checkpoint_file",
    "release_checkpoint_folder",
    "fold_checkpoints",
    "head_factory",
    "make_scorer",
    "make_token_scorer",
    "predict_proba",
    "tapt",
    "train_networks",
    "training_dynamics",
]

if TYPE_CHECKING:  # the lazily imported names that other packages use, for type checkers
    from labelaudit.models._head_network import EmbeddingInputs as EmbeddingInputs
    from labelaudit.models._head_network import HeadNetwork as HeadNetwork
    from labelaudit.models._head_network import head_factory as head_factory
    from labelaudit.models._hub import resolve_model_path as resolve_model_path
    from labelaudit.models._loading import keep_umask as keep_umask
    from labelaudit.models._loading import load_pretrained as load_pretrained
    from labelaudit.models._runtime import default_threads as default_threads
    from labelaudit.models._runtime import resolve_device as resolve_device
    from labelaudit.models._runtime import torch_setup as torch_setup
    from labelaudit.models._tapt import tapt as tapt

# Public, but imported on first use (transformers' masked-LM classes and torch are heavy).
_LAZY = {"tapt": "labelaudit.models._tapt", "TaptResult": "labelaudit.models._tapt",
         "EmbeddingInputs": "labelaudit.models._head_network",
         "HeadNetwork": "labelaudit.models._head_network",
         "head_factory": "labelaudit.models._head_network"}

# Importable for labelaudit's own modules, benchmarks and tests, but not public API
# (imported on first use).
_INTERNAL = {
    "DEFAULT_MODEL": "labelaudit.models._hub",
    "EmbeddingCache": "labelaudit.models._encoder",
    "TokenVectorCache": "labelaudit.models._encoder",
    "bf16_supported": "labelaudit.models._encoder",
    "clamp_length": "labelaudit.models._encoder",
    "default_cache_dir": "labelaudit.models._encoder",
    "keep_umask": "labelaudit.models._loading",
    "load_pretrained": "labelaudit.models._loading",
    "load_sentence_encoder": "labelaudit.models._loading",
    "quiet_loading": "labelaudit.models._loading",
    "resolve_model_path": "labelaudit.models._hub",
    "available_devices": "labelaudit.models._runtime",
    "default_threads": "labelaudit.models._runtime",
    "resolve_device": "labelaudit.models._runtime",
    "torch_setup": "labelaudit.models._runtime",
    "torch_threads": "labelaudit.models._runtime",
    "crossfit_pred_probs": "labelaudit.models._crossfit",
    "fit_score_pred_probs": "labelaudit.models._crossfit",
    "group_folds": "labelaudit.models._crossfit",
    "make_folds": "labelaudit.models._crossfit",
    "full_proba": "labelaudit.models._base",
    "mean_epoch_probs": "labelaudit.models._dynamics",
    "recording": "labelaudit.models._dynamics",
    "take": "labelaudit.models._base",
    "DEFAULT_SCORERS": "labelaudit.models._registry",
    "SCORERS": "labelaudit.models._registry",
    "MemberProbs": "labelaudit.models._registry",
    "ScorerName": "labelaudit.models._registry",
    "member_pred_probs": "labelaudit.models._registry",
    "fit_score_token_probs": "labelaudit.models._token_scorer",
    "encode_word_vectors": "labelaudit.models._word_vectors",
    # the steps of the one training loop, shared by TAPT, token fine-tuning and the CRF head
    "TrainingSteps": "labelaudit.models._loop_steps",
    "autocast": "labelaudit.models._loop_steps",
    "autocast_dtype": "labelaudit.models._loop_steps",
    "free_gpu_memory": "labelaudit.models._loop_steps",
    "linear_schedule": "labelaudit.models._loop_steps",
    "transformers_linear_schedule": "labelaudit.models._loop_steps",
}


def __getattr__(name: str) -> object:
    if name in _INTERNAL or name in _LAZY:
        return getattr(importlib.import_module({**_INTERNAL, **_LAZY}[name]), name)
    raise AttributeError(f"module 'labelaudit.models' has no attribute {name!r}")
