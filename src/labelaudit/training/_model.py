"""A model trained by :func:`labelaudit.training.train`: its backbone (``head`` over frozen sentence
embeddings, or ``finetune``, a whole encoder), the inputs each reads, prediction, and a folder
to save it in and load it from (the networks themselves are the models floor's)."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_int
from labelaudit._version import __version__
from labelaudit.io import (
    SET_THRESHOLD,
    check_output_folder,
    format_label_set,
    plain_value,
    prepare_text_dataset,
    read_table,
    replace_folder,
    write_manifest,
)
from labelaudit.models import (
    EmbeddingInputs,
    FinetuneNetwork,
    HeadNetwork,
    TextInputs,
    finetune_factory,
    head_factory,
    keep_umask,
    load_pretrained,
    make_scorer,
    predict_proba,
)

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "labelaudit-model"
FORMAT_VERSION = 1
META = "labelaudit-model.json"  # the description of a model folder
_WEIGHTS = "head.pt"
DAMAGED = "the file is damaged; retrain the model, or restore the file from a copy"
BACKBONES: tuple[str, ...] = ("head", "finetune")


def read_frame(data: pd.DataFrame | str | Path) -> pd.DataFrame:
    """A table given as a DataFrame or as a file."""
    import pandas as pd
    return data if isinstance(data, pd.DataFrame) else read_table(data)


def _columns(frame: pd.DataFrame) -> str:
    """The first 12 columns of ``frame``, for a message."""
    return ", ".join(map(repr, map(str, frame.columns[:12]))) + (
        " ..." if len(frame.columns) > 12 else "")


def embed(dataset: Any, settings: dict[str, Any], *, progress: bool = False) -> np.ndarray:
    """Sentence embeddings of a dataset through the scan's ``embed`` scorer (and its
    on-disk cache); pairs as ``[u, v, |u - v|, u * v]``."""
    scorer = make_scorer("embed", model=settings.get("encoder"),
                         cache_dir=settings.get("cache_dir"))
    return np.asarray(scorer.prepare(dataset, progress=progress), dtype=np.float32)


def network_factory(settings: dict[str, Any], n_classes: int) -> Any:
    """A function making a fresh network for ``settings`` (``dim``: the input width of
    the head)."""
    if settings["backbone"] == "finetune":
        return finetune_factory(settings, n_classes)
    if settings["backbone"] != "head":
        raise InvalidParameterError(
            f"backbone must be one of {', '.join(BACKBONES)}; got {settings['backbone']!r}")
    return head_factory(settings["dim"], n_classes, hidden=settings["hidden"],
                        dropout=settings["dropout"])


def load_finetuned(folder: Path, settings: dict[str, Any], n_classes: int) -> Any:
    """A saved fine-tuned network; new texts are tokenised with the original tokenizer.
    A damaged or mismatched file is one line naming it (:func:`load_weights`)."""
    from transformers import AutoModel

    encoder = load_pretrained(AutoModel, folder)
    network = FinetuneNetwork(encoder, n_classes, float(settings.get("dropout", 0.1)))
    load_weights(network.head, folder / "classifier.pt", n_classes=n_classes)
    return network


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

        trained = (self.settings.get("text", "text"), self.settings.get("text_pair"))
        if text_pair is not None and trained[1] is None:
            raise InvalidParameterError(
                f"text_pair={text_pair!r}: the model was trained on single texts (column "
                f"{trained[0]!r}), not text pairs, and reads no second text; drop text_pair=",
                param="text_pair")
        pairs = (f"the model was trained on text pairs (columns {trained[0]!r} and "
                 f"{trained[1]!r}) and reads two texts per item")
        if isinstance(data, list):
            if trained[1] is not None:
                raise InvalidParameterError(f"{pairs}; give a table with both")
            frame = pd.DataFrame({"text": data})
            text, text_pair = "text", None
        else:
            frame = read_frame(data)
            text = text or trained[0]
            text_pair = text_pair if text_pair is not None else trained[1]
            if text_pair is not None and text_pair not in frame.columns:
                raise InvalidInputError(
                    f"{pairs}, and the table has no column {text_pair!r}; its columns are "
                    f"{_columns(frame)}: give text_pair=COLUMN, the column of the second texts",
                    param="text_pair")
        dataset = prepare_text_dataset(frame, text=text, text_pair=text_pair, label=None)
        if self.settings["backbone"] == "finetune":
            return TextInputs.from_dataset(dataset, self.settings)
        return EmbeddingInputs(embed(dataset, self.settings))

    def predict_proba(self, data: pd.DataFrame | str | Path | list[str], *, text: str | None = None,
                      text_pair: str | None = None, progress: bool = False) -> np.ndarray:
        """Class probabilities, shape ``(n_samples, n_classes)``, columns in ``classes``
        order. ``data`` is a table (the training text columns unless given) or a list of
        texts."""
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
        """The predictions, one row per item of ``data`` (a table or its file): ``id`` (the
        ``id`` column, else a column named id, else the row number), then the ``top_k`` most
        probable labels and their probabilities (``label_1, prob_1, label_2...``); for a
        multi-label model, the predicted set (``labels``: the classes at probability 0.5 or
        more, a list or text joined by ``sep``) and every class's ``prob_<class>``."""
        import pandas as pd

        check_int(top_k, "top_k", minimum=1)
        frame = read_frame(data)
        if id is not None and id not in frame.columns:
            where = "the table" if isinstance(data, pd.DataFrame) else data
            raise InvalidInputError(f"id={id!r}: {where} has no such column; its columns are "
                                    f"{_columns(frame)}", param="id")
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

    def save(self, folder: str | Path) -> Path:
        """Write the model to ``folder`` (a JSON description and the weights), beside it and
        renamed into place; a folder labelaudit wrote earlier (its manifest lists its files)
        is replaced, any other non-empty folder refused."""
        import torch

        target = check_output_folder(folder, kind="model", name="the model folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
        try:
            meta = {"format": FORMAT, "format_version": FORMAT_VERSION,
                    "labelaudit_version": __version__, "method": self.method,
                    "backbone": self.backbone, "classes": [str(c) for c in self.classes],
                    "settings": self.settings, "log": self.log}
            (staging / META).write_text(json.dumps(meta, indent=2, default=plain_value),
                                         encoding="utf-8")
            if self.backbone == "finetune":
                from transformers import AutoTokenizer

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


def load_model(folder: str | Path) -> TrainedModel:
    """Read a model that :meth:`TrainedModel.save` wrote.

    Raises
    ------
    InvalidInputError
        Naming the file, when the folder is no labelaudit model, is in a format this
        version does not read, or is damaged (invalid JSON, an entry missing, a truncated
        file, a class list edited so that it no longer matches the output layer).
    """
    root = Path(folder)
    if not (root / META).is_file():
        raise InvalidInputError(f"{root} is not a labelaudit model folder (no {META}); "
                                "train one with `labelaudit train ... --out FOLDER`")
    meta = _read_meta(root / META)
    version = meta.get("format_version")
    if meta.get("format") != FORMAT or version != FORMAT_VERSION:
        raise InvalidInputError(
            f"{root} holds a model in format {meta.get('format')!r} version {version!r}, "
            f"written by labelaudit {meta.get('labelaudit_version', '?')}; this labelaudit "
            f"reads {FORMAT!r} version {FORMAT_VERSION}: retrain it, or use the labelaudit "
            "version that wrote it")
    _check_meta(meta, root / META)
    classes = np.array(meta["classes"], dtype=object)
    settings = dict(meta["settings"])
    if meta["backbone"] == "finetune":  # new texts use the tokenizer saved with it
        settings["encoder"] = str((root / "backbone").resolve())
    if meta["backbone"] == "finetune":
        network = load_finetuned(root / "backbone", settings, len(classes))
    else:
        network = HeadNetwork(settings["dim"], len(classes), hidden=settings["hidden"],
                              dropout=settings["dropout"])
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
        raise InvalidInputError(f"{path} is not valid JSON ({exc}): {DAMAGED}") from None
    if not isinstance(meta, dict):
        raise InvalidInputError(f"{path} holds a JSON {type(meta).__name__}, not the "
                                f"model's description (an object): {DAMAGED}")
    return meta


def _check_meta(meta: dict[str, Any], path: Path) -> None:
    """Refuse a description that lacks an entry or holds one of the wrong kind."""
    missing = [key for key in ("method", "backbone", "classes", "settings") if key not in meta]
    if missing:
        raise InvalidInputError(f"{path} lacks {', '.join(map(repr, missing))}: {DAMAGED}")
    classes, settings = meta["classes"], meta["settings"]
    if not isinstance(classes, list) or len(classes) < 2:
        raise InvalidInputError(f"{path}: 'classes' must list the model's classes (at least "
                                f"2); it holds {str(classes)[:60]}: {DAMAGED}")
    if meta["backbone"] not in BACKBONES:
        raise InvalidInputError(f"{path}: backbone {meta['backbone']!r} is not one of "
                                f"{', '.join(BACKBONES)}: {DAMAGED}")
    needed = ("dim", "hidden", "dropout") if meta["backbone"] == "head" else ()
    lacking = [key for key in needed if not isinstance(settings, dict) or key not in settings]
    if not isinstance(settings, dict) or lacking:
        what = f"lacks {', '.join(map(repr, lacking))}" if lacking else "is not an object"
        raise InvalidInputError(f"{path}: 'settings' {what}: {DAMAGED}")
