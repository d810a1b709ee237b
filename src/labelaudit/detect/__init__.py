"""Ranking and flagging methods over out-of-sample predicted probabilities."""

# Names outside __all__ are for labelaudit's other packages (noqa: imported, not used here).
from labelaudit.detect._cleanlab import import_cleanlab  # noqa: F401
from labelaudit.detect._confident import (  # noqa: F401
    ConfidentLearning,
    IssueCount,
    confident_learning,
    count_label_issues,
)
from labelaudit.detect._datalab import DatalabIssues, datalab_issues  # noqa: F401
from labelaudit.detect._ensemble import (  # noqa: F401
    Ensemble,
    apply_temperature,
    ensemble_pred_probs,
    mean_probs,
    temperature_scale,
)
from labelaudit.detect._multiannotator import (  # noqa: F401
    CrowdLab,
    annotation_matrix,
    crowdlab,
)
from labelaudit.detect._scores import (  # noqa: F401
    RANKING_METHODS,
    Predictions,
    Probs,
    best_other,
    check_pred_probs,
    dense_probs,
    given_probs,
    label_quality_scores,
    per_item_loss,
    suggest_labels,
)
from labelaudit.detect._tokens import sentence_scores, token_scores
from labelaudit.detect._topk import (  # noqa: F401
    DENSE_CLASSES,
    TOP_CLASSES,
    TopKProbs,
    resolve_top_classes,
)

__all__ = [
    "annotation_matrix", "confident_learning", "count_label_issues", "crowdlab",
    "datalab_issues", "ensemble_pred_probs", "label_quality_scores", "per_item_loss",
    "RANKING_METHODS", "sentence_scores", "suggest_labels", "token_scores", "TopKProbs",
]
