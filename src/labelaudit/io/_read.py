"""Read tables from CSV, TSV, JSONL, JSON, Parquet and Hugging Face ``datasets`` folders.

The suffix picks the reader: text formats here (JSON lines in :mod:`labelaudit.io._text`),
``datasets`` folders and hub names in :mod:`labelaudit.io._hf`.
"""

from __future__ import annotations

import io as _stdio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io._hf import CLASS_NAMES, hf_to_frame, load_hub, read_hf_folder
from labelaudit.io._text import json_lines, read_jsonl, read_text, split_lines

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLASS_NAMES", "TABLE_SUFFIXES", "could_be_hub_name", "hf_to_frame", "json_lines",
           "read_data", "read_pred_probs", "read_table", "read_text", "split_lines",
           "zero_padded_columns"]

TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")

# CSV/TSV cells: a number written with a leading zero ("068", "007", "-01"), a number, and a
# cell that may start with a leading zero (a quick look at a whole file's text).
_LEADING_ZERO = re.compile(r"\s*[+-]?0\d")
_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_MAYBE_LEADING_ZERO = re.compile(r'(?:^|[,\t])"?\s*[+-]?0\d', re.MULTILINE)


def zero_padded_columns(raw: pd.DataFrame) -> list[Any]:
    """The columns of a CSV or TSV read as text (``dtype=str``) that hold only numbers,
    one at least written with a leading zero (``"068"``, ``"007"``, ``"-01"``): the ones
    :func:`read_table` keeps as text, so that ids, zip codes and codes keep their zeros.

    Examples
    --------
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


# A hub dataset name: "imdb", "stanfordnlp/imdb", optionally with ":split".
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?(:[\w.-]+)?$")


def could_be_hub_name(text: str) -> bool:
    """Whether a string that is no file could be a hub dataset name (``data.csv`` is not)."""
    base = text.partition(":")[0]
    return bool(_HUB_NAME.match(text)) and Path(base).suffix.lower() not in (
        *TABLE_SUFFIXES, ".npy")



def _path_and_split(text: str, split: str | None) -> tuple[str, str | None]:
    """``folder:split`` (or ``hub-name:split``) as the name and the split; a split in
    the name and a different ``split`` are an error."""
    if Path(text).exists() or ":" not in text:
        return text, split
    base, _, in_name = text.rpartition(":")
    if not (Path(base).is_dir() or (could_be_hub_name(text) and not Path(base).exists())):
        return text, split
    if split is not None and split != in_name:
        raise InvalidParameterError(
            f"{text} names split {in_name!r} but split={split!r}; give the split once")
    return base, in_name


def read_data(data: Any, *, split: str | None = None, what: str = "data") -> pd.DataFrame:
    """A labelled table from any source :func:`labelaudit.scan` accepts.

    Parameters
    ----------
    data : DataFrame, path, datasets.Dataset, datasets.DatasetDict or str
        A DataFrame (returned as is); a file or ``save_to_disk`` folder read by
        :func:`read_table`; a ``Dataset`` or ``DatasetDict``; or a Hugging Face hub
        dataset name (``"imdb"``, ``"stanfordnlp/imdb"``) that is not an existing path,
        loaded with ``datasets.load_dataset(name, split=split)``, which needs network
        access or the dataset in the local Hugging Face cache.
    split : str, optional
        The split of a ``DatasetDict``, folder or hub dataset (``NAME:SPLIT`` works too);
        needed when there are several.
    what : str
        What messages call ``data``.

    Returns
    -------
    pandas.DataFrame
        ``ClassLabel`` columns as class names (see :func:`hf_to_frame`).

    Examples
    --------
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
            return load_hub(text, split)
        return read_table(text, split=split)  # says there is no such file
    if type(data).__module__.split(".")[0] == "datasets":
        return hf_to_frame(data, split=split, name=what)
    raise InvalidParameterError(
        f"{what} must be a DataFrame, a path, a datasets.Dataset or DatasetDict, or a hub "
        f"dataset name; got a {type(data).__name__}")


def read_pred_probs(path: str | Path) -> np.ndarray | pd.DataFrame:
    """Probabilities from a file: a ``.npy`` array, or a table with one column per class.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "probs.npy"
    >>> np.save(path, np.array([[0.9, 0.1]]))
    >>> read_pred_probs(path).shape
    (1, 2)
    """
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


def read_table(path: str | Path, *, split: str | None = None) -> pd.DataFrame:
    """Read a data file into a DataFrame, choosing the format by its suffix.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``, ``.json`` (an array of
        objects or JSON lines), ``.parquet``, or a folder written by a Hugging Face
        ``Dataset.save_to_disk`` (``folder:split`` picks a split of a DatasetDict).
    split : str, optional
        The split of a ``DatasetDict`` folder, instead of ``folder:split``.

    Returns
    -------
    pandas.DataFrame
        Text columns stay strings; nothing is parsed as dates. In a CSV or TSV, a column
        of numbers any of which is written with a leading zero (``"068"``, ``"007"``,
        ``"-01"``) is read as text, all of its values (:func:`zero_padded_columns`), so
        that ids, zip codes and codes come out as they went in; other numbers are read as
        numbers. JSON lines and Parquet keep the types they were written with.

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
    text_path = str(path)
    candidate = Path(text_path)
    if not candidate.exists() and ":" in text_path:
        base, _, maybe_split = text_path.rpartition(":")
        if Path(base).is_dir():
            if split is not None and split != maybe_split:
                raise InvalidParameterError(
                    f"{text_path} names split {maybe_split!r} but split={split!r}; give the "
                    "split once")
            candidate, split = Path(base), maybe_split
    path = candidate
    if not path.exists():
        raise InvalidInputError(f"{path}: no such file or folder")
    if path.is_dir():
        return read_hf_folder(path, split)
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
            ".csv .tsv .jsonl .json .parquet or a datasets folder"
        )
    text = read_text(path)
    if not text.strip():
        raise InvalidInputError(f"{path}: the file is empty")
    if suffix in (".jsonl", ".ndjson"):
        return read_jsonl(path, text)
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
        return read_jsonl(path, text)
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
