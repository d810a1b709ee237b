"""Backbones of :func:`labelaudit.train`: ``head`` (a small network over frozen sentence
embeddings, from the scan's embedding cache) and ``finetune`` (a Hugging Face encoder with a
linear classifier, trained whole); the inputs each one trains on, and rebuilding a saved one.
The networks and inputs themselves are the models floor's (:class:`labelaudit.models.
HeadNetwork`, :class:`labelaudit.models.TextInputs`, :func:`labelaudit.models.
finetune_factory`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BACKBONES", "encode_inputs", "load_finetuned", "make_inputs", "network_factory",
           "rebuild_network"]

Backbone = Literal["head", "finetune"]
BACKBONES: tuple[str, ...] = ("head", "finetune")


def _dataset(frame: pd.DataFrame, text: str, text_pair: str | None) -> Any:
    from labelaudit.io import prepare_text_dataset

    return prepare_text_dataset(frame, text=text, text_pair=text_pair, label=None)


def embed(dataset: Any, settings: dict[str, Any], *, progress: bool = False) -> np.ndarray:
    """Sentence embeddings of a dataset through the scan's ``embed`` scorer (and its
    on-disk cache); pairs as ``[u, v, |u - v|, u * v]``."""
    from labelaudit.models import make_scorer

    scorer = make_scorer("embed", model=settings.get("encoder"),
                         cache_dir=settings.get("cache_dir"))
    return np.asarray(scorer.prepare(dataset, progress=progress), dtype=np.float32)


def make_inputs(dataset: Any, settings: dict[str, Any], *, progress: bool = False) -> Any:
    """What the backbone's network reads, for every item of ``dataset``."""
    if settings["backbone"] == "finetune":
        from labelaudit.models import TextInputs

        return TextInputs.from_dataset(dataset, settings)
    from labelaudit.models import EmbeddingInputs

    return EmbeddingInputs(embed(dataset, settings, progress=progress))


def encode_inputs(model: Any, frame: pd.DataFrame, *, text: str,
                  text_pair: str | None) -> Any:
    """Inputs of new items for a trained model."""
    return make_inputs(_dataset(frame, text, text_pair), model.settings)


def network_factory(settings: dict[str, Any], n_classes: int) -> Any:
    """A function making a fresh network for ``settings`` (``dim``: the input width of
    the head)."""
    if settings["backbone"] == "finetune":
        from labelaudit.models import finetune_factory

        return finetune_factory(settings, n_classes)
    if settings["backbone"] != "head":
        raise InvalidParameterError(
            f"backbone must be one of {', '.join(BACKBONES)}; got {settings['backbone']!r}")
    from labelaudit.models import head_factory

    return head_factory(settings["dim"], n_classes, hidden=settings["hidden"],
                        dropout=settings["dropout"])


def rebuild_network(backbone: str, settings: dict[str, Any], n_classes: int,
                    root: Path) -> Any:
    """An untrained network of a saved model's shape (the finetune backbone loads its
    weights from ``root / "backbone"``)."""
    if backbone == "finetune":
        return load_finetuned(root / "backbone", settings, n_classes)
    from labelaudit.models import HeadNetwork

    return HeadNetwork(settings["dim"], n_classes, hidden=settings["hidden"],
                       dropout=settings["dropout"])


def load_finetuned(folder: Path, settings: dict[str, Any], n_classes: int) -> Any:
    """A saved fine-tuned network; new texts are tokenised with the original tokenizer.
    A damaged or mismatched file is one line naming it (:func:`load_weights`)."""
    from transformers import AutoModel

    from labelaudit.models import FinetuneNetwork, load_pretrained
    from labelaudit.training._weights import load_weights

    encoder = load_pretrained(AutoModel, folder)
    network = FinetuneNetwork(encoder, n_classes, float(settings.get("dropout", 0.1)))
    load_weights(network.head, folder / "classifier.pt", n_classes=n_classes)
    return network
