"""Scorers that produce out-of-sample predicted probabilities, for text and for tokens.

Every scorer implements :class:`Scorer` (``prepare`` once, then ``fit`` and
``predict_proba`` per fold); token scorers are :class:`TokenScorer` subclasses that predict
one ``(n_tokens, n_classes)`` array per sentence. Both kinds are cross-fitted by the same
loop. Scorers are named in ``SCORERS`` and ``TOKEN_SCORERS``, the lists that dispatch.

The floor also owns the one training loop, :func:`train_networks`: AdamW over the batches of
an :class:`Inputs`, the loss of each batch from a :class:`Method` (``Method()`` itself is
plain cross-entropy), with warm-up, mixed precision, clipping, accumulation and halved
batches after running out of GPU memory. The ``finetune`` scorer and every method of
``labelaudit train`` call it; TAPT and token fine-tuning, whose items are not one labelled
text each, train with its steps (``TrainingSteps``).
"""

# Names outside __all__ are for labelaudit's other packages (noqa: imported, not used here).
from labelaudit.models._base import Scorer, full_proba, take  # noqa: F401
from labelaudit.models._checkpoint import (  # noqa: F401
    CheckpointWarning,
    FoldStore,
    checkpoint_files,
    claim_checkpoint_folder,
    drop_checkpoint_files,
    fold_checkpoints,
    own_checkpoint_file,
    release_checkpoint_folder,
)
from labelaudit.models._crossfit import (  # noqa: F401
    DEFAULT_FOLDS,
    FoldWarning,
    check_fold_count,
    crossfit_pred_probs,
    fit_score_pred_probs,
    group_folds,
    make_folds,
)
from labelaudit.models._dynamics import (  # noqa: F401
    DynamicsScorer,
    TrainingDynamics,
    mean_epoch_probs,
    recording,
    training_dynamics,
)
from labelaudit.models._embed import EmbedScorer, KnnScorer, datalab_features, encode_texts
from labelaudit.models._encoder import (  # noqa: F401
    DEFAULT_MODEL,
    EmbeddingCache,
    TokenVectorCache,
    check_cache_dir,
    default_progress,
    default_threads,
    keep_umask,
    load_pretrained,
    load_sentence_encoder,
    progress_bar,
    resolve_device,
    resolve_model_path,
    torch_setup,
)
from labelaudit.models._finetune import FinetuneScorer
from labelaudit.models._loop import (  # noqa: F401
    Inputs,
    LoopConfig,
    Method,
    Network,
    Step,
    TrainingLog,
    TrainingSteps,
    predict_proba,
    train_networks,
)
from labelaudit.models._multilabel import OneVsRestScorer, label_set_folds  # noqa: F401
from labelaudit.models._networks import (  # noqa: F401
    EmbeddingInputs,
    FinetuneNetwork,
    HeadNetwork,
    TextInputs,
    finetune_factory,
    head_factory,
)
from labelaudit.models._registry import (  # noqa: F401
    DEFAULT_SCORERS,
    SCORERS,
    MemberProbs,
    cross_val_pred_probs,
    make_scorer,
    member_keys,
    member_pred_probs,
)
from labelaudit.models._tapt import TaptResult, tapt
from labelaudit.models._tasks import Engine, WorkerPool, run_tasks, worker_pool  # noqa: F401
from labelaudit.models._tfidf import CharTfidfScorer, ConvergenceWarning, TfidfScorer
from labelaudit.models._tokens import (  # noqa: F401
    TOKEN_SCORERS,
    EncoderTokenScorer,
    FinetuneTokenScorer,
    HeadName,
    TokenScorer,
    as_token_scorer,
    check_seed,
    cross_val_token_probs,
    encode_word_vectors,
    fit_score_token_probs,
    make_token_scorer,
)

__all__ = [
    "CharTfidfScorer", "CheckpointWarning", "ConvergenceWarning", "cross_val_pred_probs",
    "cross_val_token_probs", "datalab_features", "DynamicsScorer", "EmbeddingInputs", "EmbedScorer",
    "encode_texts", "EncoderTokenScorer", "finetune_factory", "FinetuneScorer",
    "FinetuneTokenScorer", "FoldWarning", "head_factory", "HeadNetwork", "Inputs", "KnnScorer",
    "LoopConfig", "make_scorer", "make_token_scorer", "Method", "Network", "predict_proba",
    "Scorer", "Step", "tapt", "TaptResult", "TextInputs", "TfidfScorer", "TokenScorer",
    "train_networks", "training_dynamics", "TrainingDynamics", "TrainingLog",
]
