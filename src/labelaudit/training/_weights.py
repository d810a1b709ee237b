"""Loading a trained network's weights, or one line saying what is wrong with the file.

Shared by :func:`labelaudit.training.load_model` (the ``head`` backbone's weights) and the
``finetune`` backbone (its classifier), so that neither imports the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidInputError

__all__ = ["DAMAGED", "META", "load_weights"]

META = "labelaudit-model.json"  # the description of a model folder
DAMAGED = "the file is damaged; retrain the model, or restore the file from a copy"


def load_weights(module: Any, path: Path, *, n_classes: int) -> None:
    """Load the weights saved at ``path`` into ``module`` (whose output layer has
    ``n_classes`` rows), or say in one line what is wrong with the file: missing,
    truncated, or for another number of classes than the model's description lists."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise InvalidInputError(f"{path} is missing: the model folder is incomplete; "
                                "retrain the model, or restore the file from a copy") from None
    except Exception as exc:  # noqa: BLE001 - torch raises many kinds for a damaged file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidInputError(f"{path} cannot be read as torch weights ({first[:120]}): "
                                f"{DAMAGED.replace('damaged', 'truncated or damaged')}"
                                ) from None
    expected = module.state_dict()
    if not isinstance(state, dict) or set(state) != set(expected):
        raise InvalidInputError(f"{path} does not hold the weights of this model's network "
                                f"(other layers): {DAMAGED}")
    for key, tensor in expected.items():
        saved = tuple(getattr(state[key], "shape", ()))
        if saved == tuple(tensor.shape):
            continue
        if saved and tensor.ndim and tensor.shape[0] == n_classes and saved[1:] == tuple(
                tensor.shape[1:]):
            described = next((folder / META for folder in path.parents
                              if (folder / META).is_file()), path.parent / META)
            raise InvalidInputError(
                f"{described} lists {n_classes} classes but {path.name} has an "
                f"output layer for {saved[0]}: the class list was edited, or the files come "
                "from different models; restore the class list or retrain the model")
        raise InvalidInputError(f"{path}: layer {key!r} has shape {list(saved)}, the network "
                                f"needs {list(tensor.shape)}: {DAMAGED}")
    module.load_state_dict(state)
