"""Readers of tables (CSV, TSV, JSONL, JSON, Parquet by suffix), UTF-8 text and JSON lines,
and Hugging Face ``datasets`` (objects, ``save_to_disk`` folders and hub names)."""

from __future__ import annotations

import io as _stdio
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows, plain_value

if TYPE_CHECKING:
    import pandas as pd


# ``frame.attrs`` key of the ClassLabel names (in id order) of a frame read from ``datasets``
CLASS_NAMES = "labelaudit_class_names"
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")
# CSV/TSV cells: a number written with a leading zero ("068", "007", "-01"), a number, and a
# cell that may start with a leading zero (a quick look at a whole file's text).
_LEADING_ZERO = re.compile(r"\s*[+-]?0\d")
_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_MAYBE_LEADING_ZERO = re.compile(r'(?:^|[,\t])"?\s*[+-]?0\d', re.MULTILINE)
# A hub dataset name: "imdb", "stanfordnlp/imdb", optionally with ":split".
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?(:[\w.-]+)?$")


def read_data(data: Any, *, split: str | None = None, what: str = "data") -> pd.DataFrame:
    """A labelled table from any source :func:`labelaudit.scan` accepts.

    Parameters
    ----------
    data
        A DataFrame (returned as is), a file or folder (:func:`read_table`), a ``Dataset`` or
        ``DatasetDict``, or a hub dataset name (``"stanfordnlp/imdb"``; network or cache).
    split, what
        The split of a ``DatasetDict``, folder or hub dataset (or ``NAME:SPLIT``); what
        messages call ``data``.

    Returns
    -------
    pandas.DataFrame
        ``ClassLabel`` columns as class names (see :func:`hf_to_frame`).

    Examples
    --------
    >>> import pandas as pd
    >>> read_data(pd.DataFrame({"text": ["a"], "label": [1]})).shape
    (1, 2)
    >>> read_data("no-such-dataset-xyz/none", split="train")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidInputError: no-such-dataset-xyz/none: neither a file nor ...
    """
    import pandas as pd
    if isinstance(data, pd.DataFrame):
        if split is not None:
            raise InvalidParameterError(
                f"split={split!r} picks a split of a DatasetDict, a datasets folder or a hub "
                f"dataset; {what} is a DataFrame, which has none")
        return data
    if isinstance(data, (str, Path)):
        text, split = _path_and_split(str(data), split)
        if Path(text).exists():
            return read_table(text, split=split)
        if isinstance(data, str) and could_be_hub_name(text):
            return _load_hub(text, split)
        return read_table(text, split=split)  # says there is no such file
    if type(data).__module__.split(".")[0] == "datasets":
        return hf_to_frame(data, split=split, name=what)
    raise InvalidParameterError(
        f"{what} must be a DataFrame, a path, a datasets.Dataset or DatasetDict, or a hub "
        f"dataset name; got a {type(data).__name__}")


def read_table(path: str | Path, *, split: str | None = None) -> pd.DataFrame:
    """Read a data file into a DataFrame, choosing the format by its suffix.

    Parameters
    ----------
    path
        ``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``, ``.json`` (an array or JSON
        lines), ``.parquet``, or a ``save_to_disk`` folder (``folder:split`` picks a split).
    split
        The split of a ``DatasetDict`` folder, instead of ``folder:split``.

    Returns
    -------
    pandas.DataFrame
        No dates parsed; a CSV column of numbers one of which has a leading zero (``"068"``)
        is text (:func:`zero_padded_columns`), so ids and codes come out as they went in.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text("text,label\\nhello,1\\n")
    >>> read_table(folder / "a.csv").to_dict("records")
    [{'text': 'hello', 'label': 1}]
    >>> _ = (folder / "b.csv").write_text("id,label\\n068,1\\n100,2\\n")
    >>> read_table(folder / "b.csv")["id"].tolist()
    ['068', '100']
    """
    import pandas as pd
    text, split = _path_and_split(str(path), split, hub=False)
    path = Path(text)
    if not path.exists():
        raise InvalidInputError(f"{path}: no such file or folder")
    if path.is_dir():
        return _read_hf_folder(path, split)
    if split is not None:
        raise InvalidParameterError(
            f"{path}: split={split!r} picks a split of a datasets folder or hub dataset; "
            "a file has none")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several types
            raise InvalidInputError(f"{path}: not a readable Parquet file ({exc})") from None
    if suffix not in TABLE_SUFFIXES:
        raise InvalidInputError(
            f"{path}: unknown file type {suffix or '(none)'!r}; use one of "
            ".csv .tsv .jsonl .json .parquet or a datasets folder")
    text = read_text(path)
    if not text.strip():
        raise InvalidInputError(f"{path}: the file is empty")
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(path, text)
    if suffix == ".json":
        stripped = text.lstrip()
        if stripped.startswith("["):
            try:
                records = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}: not valid JSON ({exc})") from None
            bad = [i for i, r in enumerate(records) if not isinstance(r, dict)]
            if bad:
                kind = type(records[bad[0]]).__name__
                raise InvalidInputError(
                    f"{path}: element {bad[0]} of the JSON array is a {kind}, not an object "
                    f"({len(bad)} of {len(records)} are not); the file must be an array of "
                    'objects like [{"text": ..., "label": ...}] or JSON lines')
            return pd.DataFrame.from_records(records)
        return _read_jsonl(path, text)
    sep = "\t" if suffix in (".tsv", ".tab") else ","
    try:
        frame = pd.read_csv(_stdio.StringIO(text), sep=sep, keep_default_na=True)
        numbers = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
        if numbers and _MAYBE_LEADING_ZERO.search(text):  # read those again, as written
            raw = pd.read_csv(_stdio.StringIO(text), sep=sep, keep_default_na=True, dtype=str,
                              usecols=numbers)
            for name in zero_padded_columns(raw):
                frame[name] = raw[name]
        return frame
    except pd.errors.ParserError as exc:
        kind = "TSV" if sep == "\t" else "CSV"
        raise InvalidInputError(f"{path}: cannot parse as {kind}: {exc}") from None


def read_pred_probs(path: str | Path) -> np.ndarray | pd.DataFrame:
    """Probabilities from a file: a ``.npy`` array, or a table with one column per class."""
    path = Path(path)
    if path.is_dir():
        raise InvalidInputError(
            f"pred_probs {path}: a folder; give a .npy file or a table with one column per "
            "class")
    if not path.is_file():
        raise InvalidInputError(f"pred_probs {path}: no such file")
    if path.suffix.lower() != ".npy":
        return read_table(path)
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InvalidInputError(
            f"pred_probs {path}: not a readable .npy array ({' '.join(str(exc).split())}); "
            "save it with numpy.save") from None


def zero_padded_columns(raw: pd.DataFrame) -> list[Any]:
    """The columns (read as text) holding only numbers, one at least with a leading zero.

    >>> import pandas as pd
    >>> raw = pd.DataFrame({"id": ["068", "100"], "n": ["1", "0.5"], "t": ["007", "x"]})
    >>> zero_padded_columns(raw)
    ['id']
    """
    padded = []
    for name in raw.columns:
        values = raw[name].dropna().astype(str)
        if values.str.match(_LEADING_ZERO).any() and values.str.fullmatch(_NUMBER).all():
            padded.append(name)
    return padded


def could_be_hub_name(text: str) -> bool:
    """Whether a string that is no file could be a hub dataset name (``data.csv`` is not)."""
    base = text.partition(":")[0]
    return bool(_HUB_NAME.match(text)) and Path(base).suffix.lower() not in (
        *TABLE_SUFFIXES, ".npy")


def _path_and_split(text: str, split: str | None, *, hub: bool = True) -> tuple[str, str | None]:
    """``folder:split`` (or, with ``hub``, ``hub-name:split``) as the name and the split."""
    if Path(text).exists() or ":" not in text:
        return text, split
    base, _, in_name = text.rpartition(":")
    if not (Path(base).is_dir() or (hub and could_be_hub_name(text) and not Path(base).exists())):
        return text, split
    if split is not None and split != in_name:
        raise InvalidParameterError(
            f"{text} names split {in_name!r} but split={split!r}; give the split once")
    return base, in_name


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (a BOM dropped); undecodable bytes refused with their line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{path}: is a folder, not a file") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInputError(
            f"{path}: undecodable bytes at line {line} (byte offset {exc.start}): the file is not "
            "UTF-8; convert it, e.g. `iconv -f latin1 -t utf-8`"
        ) from None


def split_lines(text: str) -> list[str]:
    r"""Lines split at ``\n`` only (``\r`` dropped): U+0085, U+2028 and U+2029, unlike in
    :meth:`str.splitlines`, stay inside a line, where JSON strings may hold them.

    >>> split_lines('{"a": "x\u2028y"}\r\n{"b": 1}') == ['{"a": "x\u2028y"}', '{"b": 1}']
    True
    >>> split_lines('a\u0085b\nc')
    ['a\x85b', 'c']
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def json_lines(path: str | Path, text: str | None = None) -> Iterator[tuple[int, Any]]:
    """Line number and JSON value of each non-blank line (``text``: the content if read)."""
    if text is None:
        text = read_text(path)
    for number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"{path}: line {number} is not valid JSON ({exc.msg})") from None
        yield number, record


def _read_jsonl(path: Path, text: str) -> pd.DataFrame:
    import pandas as pd
    records = []
    for number, record in json_lines(path, text):
        if not isinstance(record, dict):
            raise InvalidInputError(f"{path}: line {number} is not a JSON object")
        records.append(record)
    return pd.DataFrame.from_records(records)


def hf_to_frame(dataset: Any, *, split: str | None = None, name: str = "the dataset",
                choose: str = "split=NAME") -> pd.DataFrame:
    """A ``Dataset`` or a ``DatasetDict`` split as a DataFrame, ``ClassLabel`` ids as names
    (-1 missing), the names in id order in ``frame.attrs[CLASS_NAMES]``.

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
                    f"{name}: a DatasetDict with splits {names}; choose one with {choose}",
                    param="split")
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
    """A ``Sequence(ClassLabel)`` column as label sets of class names, checked in one pass."""
    import pandas as pd
    lists = [list(ids) for ids in column_values]
    lengths = np.array([len(ids) for ids in lists], dtype=np.int64)
    flat = pd.Series([i for ids in lists for i in ids], dtype=object)
    named = _class_names(flat, names, column, name, rows=np.repeat(np.arange(len(lists)), lengths))
    ends = np.cumsum(lengths)
    values = named.to_numpy(dtype=object)
    return [[str(v) for v in values[end - n:end] if v is not pd.NA]
            for n, end in zip(lengths, ends, strict=True)]


def _class_names(values: pd.Series, names: list[str], column: str, name: str, *,
                 rows: np.ndarray | None = None) -> pd.Series:
    """ClassLabel ids as names, -1 and None as missing; a bad id named by ``rows`` if given."""
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
    """Refuse a damaged JSON file of a ``save_to_disk`` folder (``datasets`` would crash)."""
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


def _read_hf_folder(path: Path, split: str | None) -> pd.DataFrame:
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
    return hf_to_frame(loaded, split=split, name=str(path), choose=f"split=NAME or as {path}:SPLIT")


def _hub_unreachable() -> bool:
    """Whether the hub refuses a connection within 3 seconds (no proxy): offline, a hub name
    fails at once instead of after a minute of retries."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants

    proxies = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
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


def _load_hub(name: str, split: str | None) -> pd.DataFrame:
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
