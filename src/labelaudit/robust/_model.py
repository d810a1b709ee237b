"""A model trained by :func:`labelaudit.train`: prediction, and a folder to save it in."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError

__all__ = ["FORMAT", "FORMAT_VERSION", "TrainedModel", "is_model_folder", "load_model"]

FORMAT = "labelaudit-model"
FORMAT_VERSION = 1
_META = "labelaudit-model.json"
_WEIGHTS = "head.pt"


def is_model_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder a labelaudit model was saved in."""
    return (Path(path) / _META).is_file()


@dataclass
class TrainedModel:
    """A classifier trained with a learning-with-noisy-labels method.

    Attributes
    ----------
    classes : ndarray of str, shape (n_classes,)
    method : str
    backbone : {"head", "finetune"}
    network : torch.nn.Module
        The trained network (the first of co-teaching's two).
    settings : dict
        What is needed to rebuild the network and encode new texts: the encoder, the pair
        mode, the head's size, the text columns.
    log : dict
        Training facts for reports: losses per epoch, time, items dropped by ``filter``...
    """

    classes: np.ndarray
    method: str
    backbone: str
    network: Any
    settings: dict[str, Any]
    log: dict[str, Any] = field(default_factory=dict)

    def _inputs(self, data: pd.DataFrame | str | Path | list[str], text: str | None,
                text_pair: str | None) -> Any:
        from labelaudit.io import read_table
        from labelaudit.robust._backbones import encode_inputs

        if isinstance(data, list):
            frame = pd.DataFrame({"text": data})
            text, text_pair = "text", None
        else:
            frame = data if isinstance(data, pd.DataFrame) else read_table(data)
            text = text or self.settings.get("text", "text")
            text_pair = text_pair if text_pair is not None else self.settings.get("text_pair")
        return encode_inputs(self, frame, text=text, text_pair=text_pair)

    def predict_proba(self, data: pd.DataFrame | str | Path | list[str], *,
                      text: str | None = None, text_pair: str | None = None,
                      progress: bool = False) -> np.ndarray:
        """Class probabilities, shape ``(n_samples, n_classes)``, columns in ``classes``
        order. ``data`` is a table (the training text columns unless given) or a list of
        texts."""
        from labelaudit.robust._loop import predict_proba

        inputs = self._inputs(data, text, text_pair)
        return predict_proba(self.network, inputs)

    def predict(self, data: pd.DataFrame | str | Path | list[str], *, text: str | None = None,
                text_pair: str | None = None) -> np.ndarray:
        """The most probable label of each item."""
        return self.classes[self.predict_proba(data, text=text, text_pair=text_pair)
                            .argmax(axis=1)]

    def save(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write the model to ``folder``: a JSON description and the network's weights.

        An existing labelaudit model folder is replaced; any other existing, non-empty
        folder is refused unless ``overwrite``. The folder is written beside its target and
        renamed into place, so an interrupted save leaves the old model or the new one.
        """
        import torch

        from labelaudit import __version__
        from labelaudit.io._write import replace_folder

        target = Path(folder)
        check_model_folder(target, overwrite=overwrite)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
                    "labelaudit_version": __version__, "method": self.method,
                    "backbone": self.backbone, "classes": [str(c) for c in self.classes],
                    "settings": self.settings, "log": self.log}
            (staging / _META).write_text(json.dumps(meta, indent=2, default=_plain),
                                         encoding="utf-8")
            if self.backbone == "finetune":
                from transformers import AutoTokenizer

                from labelaudit.robust._finetune import _model_path

                self.network.save(staging / "backbone")
                AutoTokenizer.from_pretrained(_model_path(self.settings)).save_pretrained(
                    staging / "backbone")
            else:
                torch.save(self.network.state_dict(), staging / _WEIGHTS)
            replace_folder(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target


def _plain(value: Any) -> Any:
    """JSON for numpy values in the log."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def check_model_folder(target: Path, *, overwrite: bool) -> None:
    """Refuse an output folder that holds something other than a labelaudit model."""
    if target.exists() and not target.is_dir():
        raise InvalidParameterError(f"{target} is a file, not a folder: choose a folder for "
                                    "the model")
    if (target.is_dir() and any(target.iterdir()) and not is_model_folder(target)
            and not overwrite):
        raise InvalidParameterError(
            f"{target} exists and is not a labelaudit model folder: choose a new folder, or "
            "pass --overwrite to replace it")


def load_model(folder: str | Path) -> TrainedModel:
    """Read a model that :meth:`TrainedModel.save` wrote.

    Raises
    ------
    InvalidInputError
        The folder is not a labelaudit model, or was written in a format this version of
        labelaudit does not read.
    """
    import torch

    from labelaudit.robust._backbones import rebuild_network

    root = Path(folder)
    if not is_model_folder(root):
        raise InvalidInputError(f"{root} is not a labelaudit model folder (no {_META}); "
                                "train one with `labelaudit train ... --out FOLDER`")
    try:
        meta = json.loads((root / _META).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInputError(f"{root / _META} cannot be read: {exc}") from None
    version = meta.get("format_version")
    if meta.get("format") != FORMAT or version != FORMAT_VERSION:
        raise InvalidInputError(
            f"{root} holds a model in format {meta.get('format')!r} version {version!r}, "
            f"written by labelaudit {meta.get('labelaudit_version', '?')}; this labelaudit "
            f"reads {FORMAT!r} version {FORMAT_VERSION}: retrain it, or use the labelaudit "
            "version that wrote it")
    classes = np.array(meta["classes"], dtype=object)
    settings = dict(meta["settings"])
    if meta["backbone"] == "finetune":  # new texts use the tokenizer saved with it
        settings["encoder"] = str((root / "backbone").resolve())
    network = rebuild_network(meta["backbone"], settings, len(classes), root)
    if meta["backbone"] != "finetune":
        network.load_state_dict(torch.load(root / _WEIGHTS, map_location="cpu",
                                           weights_only=True))
    network.eval()
    return TrainedModel(classes=classes, method=meta["method"], backbone=meta["backbone"],
                        network=network, settings=settings, log=meta.get("log", {}))
