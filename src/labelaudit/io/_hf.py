"""Read Hugging Face ``datasets``: Dataset objects, ``save_to_disk`` folders and hub names."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows, plain_value

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLASS_NAMES", "hf_to_frame"]

# ``frame.attrs`` key of the ClassLabel names (in id order) of a frame read from ``datasets``
CLASS_NAMES = "labelaudit_class_names"


def hf_to_frame(dataset: Any, *, split: str | None = None, name: str = "the dataset",
                choose: str = "split=NAME") -> pd.DataFrame:
    """A Hugging Face ``Dataset``, or one split of a ``DatasetDict``, as a DataFrame.

    ``ClassLabel`` columns hold integer ids; they come back as the class names, since
    users know their classes by name. An id of -1 is the ``datasets`` spelling of "no
    label" and becomes a missing value; any other id without a name is an error naming
    the rows. The names in id order are kept in ``frame.attrs[CLASS_NAMES]`` (a dict of
    column to list), the column order a model trained on the dataset predicts in.

    Parameters
    ----------
    dataset : datasets.Dataset or datasets.DatasetDict
    split : str, optional
        The split of a ``DatasetDict``; may be left out when it has only one.
    name : str
        What messages call the dataset (its path or hub name).
    choose : str
        How the message for a missing split tells the user to pick one.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import datasets
    >>> features = datasets.Features({"text": datasets.Value("string"),
    ...                                "label": datasets.ClassLabel(names=["neg", "pos"])})
    >>> ds = datasets.Dataset.from_dict({"text": ["bad", "good"], "label": [0, 1]}, features)
    >>> frame = hf_to_frame(datasets.DatasetDict({"test": ds}), split="test")
    >>> frame["label"].tolist(), frame.attrs[CLASS_NAMES]
    (['neg', 'pos'], {'label': ['neg', 'pos']})
    """
    import datasets
    import pandas as pd

    if isinstance(dataset, datasets.DatasetDict):
        names = list(dataset.keys())
        if split is None:
            if len(names) != 1:
                raise InvalidInputError(
                    f"{name}: a DatasetDict with splits {names}; choose one with {choose}")
            split = names[0]
        if split not in dataset:
            raise InvalidInputError(f"{name}: no split {split!r}; the splits are {names}")
        dataset = dataset[split]
    elif not isinstance(dataset, datasets.Dataset):
        raise InvalidParameterError(
            f"{name}: a {type(dataset).__name__} cannot be scanned; give a datasets.Dataset "
            "or DatasetDict (load without streaming=True)")
    elif split is not None:
        raise InvalidParameterError(
            f"{name}: a single Dataset has no splits; drop split={split!r}", param="split")
    frame = dataset.to_pandas()
    assert isinstance(frame, pd.DataFrame)  # noqa: S101 - not batched
    class_names: dict[str, list[str]] = {}
    for column, feature in dataset.features.items():
        if column not in frame.columns:
            continue
        if isinstance(feature, datasets.ClassLabel):
            frame[column] = _class_names(frame[column], list(feature.names), column, name)
            class_names[column] = list(feature.names)
        elif isinstance(getattr(feature, "feature", None), datasets.ClassLabel):
            # a Sequence (List) of ClassLabel: label sets, each id as its name
            names = list(feature.feature.names)
            frame[column] = _class_name_sets(frame[column], names, column, name)
            class_names[column] = names
    frame.attrs[CLASS_NAMES] = class_names
    return frame


def _class_name_sets(column_values: pd.Series, names: list[str], column: str,
                     name: str) -> list[list[str]]:
    """A ``Sequence(ClassLabel)`` column as label sets of class names: every id of every
    row checked and named in one pass (a bad id is named by its item's row)."""
    import pandas as pd
    lists = [list(ids) for ids in column_values]
    lengths = np.array([len(ids) for ids in lists], dtype=np.int64)
    flat = pd.Series([i for ids in lists for i in ids], dtype=object)
    named = _class_names(flat, names, column, name,
                         rows=np.repeat(np.arange(len(lists)), lengths))
    ends = np.cumsum(lengths)
    values = named.to_numpy(dtype=object)
    return [[str(v) for v in values[end - n:end] if v is not pd.NA]
            for n, end in zip(lengths, ends, strict=True)]


def _class_names(values: pd.Series, names: list[str], column: str, name: str, *,
                 rows: np.ndarray | None = None) -> pd.Series:
    """ClassLabel ids as their names; -1 and None (no label) as missing values. A bad id
    is named by its position, or by ``rows[position]`` when given."""
    import pandas as pd
    ids = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isnan(ids) & ((ids < -1) | (ids >= len(names)) | (ids != np.round(ids)))
    if bad.any():
        shown = ", ".join(str(plain_value(v)) for v in pd.unique(values[bad])[:5])
        where = np.flatnonzero(bad) if rows is None else np.unique(rows[bad])
        raise InvalidInputError(
            f"{name}: column {column!r} holds ClassLabel ids with no name ({shown}) in "
            f"{format_rows(where)}; the feature names {len(names)} classes "
            f"(ids 0 to {len(names) - 1}: {names[:10]}) and -1 means no label; fix those "
            "ids or the feature's names")
    known = ~np.isnan(ids) & (ids >= 0)
    out = pd.Series(pd.NA, index=values.index, dtype=object)
    out[known] = np.asarray(names, dtype=object)[ids[known].astype(np.int64)]
    return out


# The JSON files of a save_to_disk folder (and of each split's folder in a DatasetDict's)
_HF_METADATA = ("dataset_dict.json", "state.json", "dataset_info.json")


def _check_hf_metadata(folder: Path) -> None:
    """Refuse, naming the file, a damaged JSON file of a ``save_to_disk`` folder (or of one
    of its splits): not JSON, not a JSON object, a ``state.json`` whose ``_data_files`` is
    not a list of ``{"filename": ...}``, a ``dataset_dict.json`` whose ``splits`` is not a
    list of names; ``datasets`` would fail on it with a traceback.
    """
    import json

    folders = [folder, *sorted(p for p in folder.iterdir() if p.is_dir())]
    for where in folders:
        for name in _HF_METADATA:
            file = where / name
            if not file.is_file():
                continue
            try:
                content = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise InvalidInputError(
                    f"{file}: not valid JSON ({' '.join(str(exc).split())}); the "
                    "save_to_disk folder is damaged: save the dataset again") from None
            problem = None
            if not isinstance(content, dict):
                problem = f"a JSON {type(content).__name__}, not an object"
            elif name == "state.json":
                files = content.get("_data_files")
                if not (isinstance(files, list) and files and all(
                        isinstance(f, dict) and isinstance(f.get("filename"), str)
                        for f in files)):
                    problem = '"_data_files" is not a list of {"filename": ...}'
            elif name == "dataset_dict.json" and not (
                    isinstance(content.get("splits"), list)
                    and all(isinstance(s, str) for s in content["splits"])):
                problem = '"splits" is not a list of split names'
            if problem:
                raise InvalidInputError(
                    f"{file}: {problem}; the save_to_disk folder is damaged: save the "
                    "dataset again")


def read_hf_folder(path: Path, split: str | None) -> pd.DataFrame:
    import datasets

    _check_hf_metadata(path)
    try:
        loaded = datasets.load_from_disk(str(path))
    except FileNotFoundError:
        raise InvalidInputError(
            f"{path}: a folder, but not one written by Dataset.save_to_disk (or "
            "DatasetDict.save_to_disk)") from None
    except Exception as exc:  # noqa: BLE001 - datasets' errors on damaged metadata vary
        raise InvalidInputError(
            f"{path}: cannot load this save_to_disk folder ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:200]}); its {', '.join(_HF_METADATA)} may be "
            "damaged: save the dataset again") from None
    return hf_to_frame(loaded, split=split, name=str(path),
                       choose=f"split=NAME or as {path}:SPLIT")



def _hub_unreachable() -> bool:
    """Whether the hub's host refuses a connection within 3 seconds (checked only when
    online mode is on and no proxy is set), so that a hub name fails at once offline
    instead of after a minute of retries."""
    import os
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    proxies = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY",
               "all_proxy")
    if constants.HF_HUB_OFFLINE or any(os.environ.get(v) for v in proxies):
        return False
    url = urlparse(constants.ENDPOINT)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "huggingface.co", port), timeout=3).close()
    except OSError:
        return True
    return False


@contextmanager
def _offline_mode() -> Iterator[None]:
    """``datasets`` and ``huggingface_hub`` in offline mode: the local cache only."""
    import datasets.config
    from huggingface_hub import constants

    saved = constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved


def load_hub(name: str, split: str | None) -> pd.DataFrame:
    """A hub dataset through ``datasets.load_dataset`` (the network or the local cache)."""
    import datasets

    unreachable = _hub_unreachable()
    try:
        with _offline_mode() if unreachable else nullcontext():
            loaded = datasets.load_dataset(name, split=split)
    except Exception as exc:  # noqa: BLE001 - offline, unknown name, bad split: one message
        detail = " ".join(str(exc).split())[:300]
        tried = "; the hub cannot be reached, so only the local cache was tried" \
            if unreachable else ""
        raise InvalidInputError(
            f"{name}: neither a file nor a loadable Hugging Face dataset ({type(exc).__name__}: "
            f"{detail}{tried}); loading from the hub needs network access (or the dataset in "
            "the local Hugging Face cache): check the name, or give a file or a save_to_disk "
            "folder") from None
    return hf_to_frame(loaded, name=name)
