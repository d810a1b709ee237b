"""A model trained by :func:`labelaudit.train`: prediction, and a folder to save it in."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import SET_THRESHOLD
from labelaudit.training._weights import DAMAGED as _DAMAGED
from labelaudit.training._weights import META as _META
from labelaudit.training._weights import load_weights

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FORMAT", "FORMAT_VERSION", "TrainedModel", "is_model_folder",
           "load_model", "load_weights"]

FORMAT = "labelaudit-model"
FORMAT_VERSION = 1
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
        import pandas as pd

        from labelaudit.io import read_table
        from labelaudit.training._backbones import encode_inputs

        trained = (self.settings.get("text", "text"), self.settings.get("text_pair"))
        if text_pair is not None and trained[1] is None:
            raise InvalidParameterError(
                f"text_pair={text_pair!r}: the model was trained on single texts (column "
                f"{trained[0]!r}), not text pairs, and reads no second text; drop text_pair=",
                param="text_pair")
        if isinstance(data, list):
            if trained[1] is not None:
                raise InvalidParameterError(
                    f"the model was trained on text pairs (columns {trained[0]!r} and "
                    f"{trained[1]!r}) and reads two texts per item; give a table with both")
            frame = pd.DataFrame({"text": data})
            text, text_pair = "text", None
        else:
            frame = data if isinstance(data, pd.DataFrame) else read_table(data)
            text = text or trained[0]
            text_pair = text_pair if text_pair is not None else trained[1]
            if text_pair is not None and text_pair not in frame.columns:
                raise InvalidInputError(
                    f"the model was trained on text pairs (columns {trained[0]!r} and "
                    f"{trained[1]!r}) and reads two texts per item, and the table has no "
                    f"column {text_pair!r}; its columns are "
                    f"{', '.join(map(repr, map(str, frame.columns[:12])))}"
                    f"{' ...' if len(frame.columns) > 12 else ''}: give text_pair=COLUMN, the "
                    "column of the second texts")
        return encode_inputs(self, frame, text=text, text_pair=text_pair)

    def predict_proba(self, data: pd.DataFrame | str | Path | list[str], *,
                      text: str | None = None, text_pair: str | None = None,
                      progress: bool = False) -> np.ndarray:
        """Class probabilities, shape ``(n_samples, n_classes)``, columns in ``classes``
        order. ``data`` is a table (the training text columns unless given) or a list of
        texts."""
        from labelaudit.models import predict_proba

        inputs = self._inputs(data, text, text_pair)
        return predict_proba(self.network, inputs, multi_label=self.multi_label)

    @property
    def multi_label(self) -> bool:
        """Whether the model predicts label sets (one sigmoid per class)."""
        return bool(self.settings.get("multi_label"))

    def predict(self, data: pd.DataFrame | str | Path | list[str], *, text: str | None = None,
                text_pair: str | None = None) -> np.ndarray:
        """The most probable label of each item; for a multi-label model, each item's set
        (a list of the classes at probability 0.5 or more)."""
        probs = self.predict_proba(data, text=text, text_pair=text_pair)
        if self.multi_label:
            sets = np.empty(len(probs), dtype=object)
            sets[:] = [[str(c) for c in self.classes[row >= SET_THRESHOLD]] for row in probs]
            return sets
        return self.classes[probs.argmax(axis=1)]

    def predict_table(self, data: pd.DataFrame | str | Path, *, text: str | None = None,
                      text_pair: str | None = None, id: str | None = None,  # noqa: A002
                      top_k: int = 5, sep: str | None = None) -> pd.DataFrame:
        """The predictions as a table, one row per item of ``data`` (a table or its file).

        Columns: ``id`` (the ``id`` column, else a column named id, else the row number),
        then the ``top_k`` most probable labels and their probabilities (``label_1,
        prob_1, label_2...``); for a multi-label model, the predicted set (``labels``: the
        classes at probability 0.5 or more, a list or text joined by ``sep``) and every
        class's probability (``prob_<class>``).

        Raises
        ------
        InvalidInputError
            ``id`` names no column of ``data``.
        """
        import pandas as pd

        from labelaudit._validation import check_int
        from labelaudit.io import format_label_set, read_table

        check_int(top_k, "top_k", minimum=1)
        frame = data if isinstance(data, pd.DataFrame) else read_table(data)
        if id is not None and id not in frame.columns:
            where = "the table" if isinstance(data, pd.DataFrame) else data
            raise InvalidInputError(
                f"id={id!r}: {where} has no such column; its columns are "
                f"{', '.join(map(repr, map(str, frame.columns[:12])))}"
                f"{' ...' if len(frame.columns) > 12 else ''}")
        column = id or "id"
        out = pd.DataFrame({"id": frame[column].to_numpy() if column in frame.columns
                            else np.arange(len(frame))})
        probs = self.predict_proba(frame, text=text, text_pair=text_pair)
        if self.multi_label:
            out["labels"] = [format_label_set(row >= SET_THRESHOLD, self.classes, sep)
                             for row in probs]
            for j, name in enumerate(self.classes):
                out[f"prob_{name}"] = probs[:, j]
            return out
        top = np.argsort(-probs, axis=1, kind="stable")[:, :top_k]
        for j in range(top.shape[1]):
            out[f"label_{j + 1}"] = self.classes[top[:, j]]
            out[f"prob_{j + 1}"] = probs[np.arange(len(frame)), top[:, j]]
        return out

    def save(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write the model to ``folder``: a JSON description and the network's weights.

        A new or empty folder is written; a folder labelaudit wrote earlier (its manifest
        lists every file it holds) is replaced; any other folder is refused, with or
        without ``overwrite`` (kept for compatibility: labelaudit never deletes a file it
        did not write). The folder is written beside its target and renamed into place, so
        an interrupted save leaves the old model or the new one.
        """
        import torch

        from labelaudit._version import __version__
        from labelaudit.io import check_output_folder, replace_folder, write_manifest
        from labelaudit.models._loading import keep_umask

        del overwrite
        target = check_output_folder(folder, kind="model", name="the model folder")
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

                from labelaudit.models._loading import load_pretrained

                self.network.save(staging / "backbone")
                load_pretrained(AutoTokenizer, self.settings.get("encoder")).save_pretrained(
                    staging / "backbone")
            else:
                torch.save(self.network.state_dict(), staging / _WEIGHTS)
            keep_umask(staging)  # safetensors writes the encoder's weights 0600
            write_manifest(staging, kind="model")
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


def load_model(folder: str | Path) -> TrainedModel:
    """Read a model that :meth:`TrainedModel.save` wrote.

    Raises
    ------
    InvalidInputError
        The folder is not a labelaudit model, was written in a format this version of
        labelaudit does not read, or is damaged: a file that is not valid JSON, lacks an
        entry, is truncated, or no longer matches the others (a class list edited so that
        it does not match the output layer). The message names the file.
    """
    from labelaudit.training._backbones import rebuild_network

    root = Path(folder)
    if not is_model_folder(root):
        raise InvalidInputError(f"{root} is not a labelaudit model folder (no {_META}); "
                                "train one with `labelaudit train ... --out FOLDER`")
    meta = _read_meta(root / _META)
    version = meta.get("format_version")
    if meta.get("format") != FORMAT or version != FORMAT_VERSION:
        raise InvalidInputError(
            f"{root} holds a model in format {meta.get('format')!r} version {version!r}, "
            f"written by labelaudit {meta.get('labelaudit_version', '?')}; this labelaudit "
            f"reads {FORMAT!r} version {FORMAT_VERSION}: retrain it, or use the labelaudit "
            "version that wrote it")
    _check_meta(meta, root / _META)
    classes = np.array(meta["classes"], dtype=object)
    settings = dict(meta["settings"])
    if meta["backbone"] == "finetune":  # new texts use the tokenizer saved with it
        settings["encoder"] = str((root / "backbone").resolve())
    network = rebuild_network(meta["backbone"], settings, len(classes), root)
    if meta["backbone"] != "finetune":
        load_weights(network, root / _WEIGHTS, n_classes=len(classes))
    network.eval()
    return TrainedModel(classes=classes, method=meta["method"], backbone=meta["backbone"],
                        network=network, settings=settings, log=meta.get("log", {}))


def _read_meta(path: Path) -> dict[str, Any]:
    """The model's JSON description, or one line saying why it cannot be used."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInputError(f"{path} cannot be read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{path} is not valid JSON ({exc}): {_DAMAGED}") from None
    if not isinstance(meta, dict):
        raise InvalidInputError(f"{path} holds a JSON {type(meta).__name__}, not the "
                                f"model's description (an object): {_DAMAGED}")
    return meta


def _check_meta(meta: dict[str, Any], path: Path) -> None:
    """Refuse a description that lacks an entry or holds one of the wrong kind."""
    from labelaudit.training._backbones import BACKBONES

    missing = [key for key in ("method", "backbone", "classes", "settings") if key not in meta]
    if missing:
        raise InvalidInputError(f"{path} lacks {', '.join(map(repr, missing))}: {_DAMAGED}")
    classes, settings = meta["classes"], meta["settings"]
    if not isinstance(classes, list) or len(classes) < 2:
        raise InvalidInputError(f"{path}: 'classes' must list the model's classes (at least "
                                f"2); it holds {str(classes)[:60]}: {_DAMAGED}")
    if meta["backbone"] not in BACKBONES:
        raise InvalidInputError(f"{path}: backbone {meta['backbone']!r} is not one of "
                                f"{', '.join(BACKBONES)}: {_DAMAGED}")
    needed = ("dim", "hidden", "dropout") if meta["backbone"] == "head" else ()
    lacking = [key for key in needed if not isinstance(settings, dict) or key not in settings]
    if not isinstance(settings, dict) or lacking:
        what = f"lacks {', '.join(map(repr, lacking))}" if lacking else "is not an object"
        raise InvalidInputError(f"{path}: 'settings' {what}: {_DAMAGED}")
