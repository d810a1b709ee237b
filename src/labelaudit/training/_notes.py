"""What ``labelaudit train`` tells a person about a trained model: the screen of
``--method auto``, what filter did and why, the noise rate used, and the facts kept beside
the metrics."""

from __future__ import annotations

from typing import Any

from labelaudit.training._auto import Screen
from labelaudit.training._model import TrainedModel

__all__ = ["training_facts", "training_notes"]

# The training log's entries that the metrics file keeps.
_FACTS = ("flagged", "filter", "dropped", "relabelled", "filter_scorers", "filter_noise_share",
          "filter_noise_share_cleanlab", "filter_detector", "filter_then", "filter_rounds",
          "auto", "filter_accuracy", "noise_rate", "noise_rate_source", "noise_rate_estimated",
          "noise_rate_cleanlab", "achieved_noise_rate", "multi_label", "filter_rule")


def training_notes(model: TrainedModel) -> list[str]:
    """Lines for a person: ``--method auto``'s screen, the run, the items filter dropped
    (or relabelled) and why, and the noise rate co-teaching or CNLCU used and where it
    came from."""
    record = model.log
    notes = [Screen.from_dict(record["auto"]).summary()] if "auto" in record else []
    notes.append(f"trained {model.method} ({model.backbone}) on {record['n_used']} of "
                 f"{record['n_train']} items in {record['seconds']:.1f} s")
    if record.get("multi_label") and "filter" in record:
        done = "dropped" if record["filter"] == "drop" else "gave their suggested set to"
        notes.append(f"filter: {done} {record['flagged']} of {record['n_train']} items whose "
                     f"label set a cross-fitted multi-label scan "
                     f"({', '.join(record['filter_scorers'])}) flags ({record['filter_rule']})")
    elif "filter" in record and "filter_scorers" in record:
        done = "dropped" if record["filter"] == "drop" else "relabelled"
        n, total = record["flagged"], record["n_train"]
        notes.append(
            f"filter: {done} {n} of {total} items ({n / max(total, 1):.1%}): those a "
            f"cross-fitted scan ({', '.join(record['filter_scorers'])}, out-of-sample "
            f"accuracy {record['filter_accuracy']:.3f}) flags as cleanlab's estimated number "
            f"of label errors; estimated share of wrong labels {record['filter_noise_share']:.1%}")
    elif "filter" in record:
        total = record["n_train"]
        for step in record["filter_rounds"]:
            notes.append(
                f"filter round {step['round']}: a cross-fitted {record['filter_detector']} "
                f"head ({record['filter_folds']} folds, every class in every training part) "
                f"estimates {step['noise_share']:.1%} of the labels wrong "
                f"(cleanlab's confident joint: {step['noise_share_cleanlab']:.1%}); flagged "
                f"{step['flagged']} of {total} ({step['flagged'] / max(total, 1):.1%})")
        notes.append(
            f"filter: {'dropped' if record['filter'] == 'drop' else 'soft-relabelled'} the "
            f"{record['flagged']} flagged items, then trained {record['filter_then']}")
    if "noise_rate_source" in record:
        notes.append(f"noise rate: {record['noise_rate']:.3f} ({record['noise_rate_source']}"
                     f"{' with --noise-rate' if record['noise_rate_source'] == 'given' else ''})")
    return notes


def training_facts(model: TrainedModel, **more: Any) -> dict[str, Any]:
    """Method, time, item counts and what the training log knows (items dropped by filter,
    the noise rate given or estimated, the achieved noise rate of a file with
    clean_label), with ``more`` (the seed...) after the method."""
    facts = {"method": model.method, "backbone": model.backbone, **more,
             "train_seconds": model.log["seconds"], "n_train": model.log["n_train"],
             "n_used": model.log["n_used"]}
    return facts | {key: model.log[key] for key in _FACTS if key in model.log}
