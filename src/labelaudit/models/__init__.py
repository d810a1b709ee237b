"""Scorers that produce out-of-sample predicted probabilities, for text (:class:`Scorer`,
named in ``SCORERS``) and for tokens (:class:`TokenScorer`, ``TOKEN_SCORERS``), cross-fitted
by one loop, and the one training loop, :func:`train_networks`, that the ``finetune`` scorer
and every method of ``labelaudit train`` call.
"""

# Names outside __all__ are for labelaudit's other packages (noqa: imported, not used here).
from labelaudit.models._base import (  # noqa: F401
    HeldOutWords,
    Scorer,
    WordCollector,
    default_progress,
    progress_bar,
    take,
)
from labelaudit.models._dynamics import (  # noqa: F401
    DynamicsScorer,
    TrainingDynamics,
    training_dynamics,
)
from labelaudit.models._embed import (  # noqa: F401
    EmbedScorer,
    KnnScorer,
    datalab_features,
    encode_texts,
)
from labelaudit.models._encoder import (  # noqa: F401
    EmbeddingCache,
    check_cache_dir,
    default_threads,
    keep_umask,
    load_pretrained,
    load_sentence_encoder,
    resolve_device,
)
from labelaudit.models._finetune import FinetuneScorer
from labelaudit.models._folds import (  # noqa: F401
    DEFAULT_FOLDS,
    CheckpointWarning,
    Engine,
    FoldStore,
    FoldWarning,
    WorkerPool,
    check_engine,
    check_fits,
    check_fold_count,
    checkpoint_files,
    claim_checkpoint_folder,
    connect,
    crossfit_pred_probs,
    drop_checkpoint_files,
    fit_score_pred_probs,
    fold_checkpoints,
    group_folds,
    import_ray,
    make_folds,
    own_checkpoint_file,
    ray_session,
    release_checkpoint_folder,
    run_fits,
    run_tasks,
    worker_pool,
)
from labelaudit.models._loop import (  # noqa: F401
    Inputs,
    LoopConfig,
    Method,
    Network,
    Step,
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
    cross_val_pred_probs,
    make_scorer,
    member_keys,
    member_pred_probs,
)
from labelaudit.models._tapt import TaptResult, tapt
from labelaudit.models._tfidf import CharTfidfScorer, ConvergenceWarning, TfidfScorer
from labelaudit.models._tokens import (  # noqa: F401
    MAX_SEED,
    TOKEN_SCORERS,
    EncoderTokenScorer,
    FinetuneTokenScorer,
    HeadName,
    TokenScorer,
    as_token_scorer,
    check_seed,
    cross_val_token_probs,
    fit_score_token_probs,
    make_token_scorer,
)

__all__ = [
    "CharTfidfScorer", "CheckpointWarning", "ConvergenceWarning", "cross_val_pred_probs",
    "cross_val_token_probs", "DynamicsScorer", "EmbedScorer", "encode_texts",
    "EncoderTokenScorer", "FinetuneScorer", "FinetuneTokenScorer", "FoldWarning", "KnnScorer",
    "LoopConfig", "make_scorer", "make_token_scorer", "Method", "Scorer", "tapt", "TaptResult",
    "TfidfScorer", "TokenScorer", "train_networks",
]
