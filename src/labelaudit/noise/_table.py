"""Noise a table: its columns in, the noised table out (the library behind ``noise``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.noise._inject import NoiseMethod, inject_noise
from labelaudit.noise._label_sets import LabelSetNoiseResult, inject_label_set_noise
from labelaudit.noise._recipe import Recipe, parse_recipe
from labelaudit.noise._result import NoiseResult

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ADDED_COLUMNS", "inject_noise_table", "read_noise_matrix", "read_noise_sources"]

#: The columns :meth:`NoiseResult.apply_to` adds to every noised table.
ADDED_COLUMNS = ("clean_label", "is_noisy", "noise_method")


def _json_object(file: Path, expected: str) -> dict:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{file}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{file}: expected a JSON object {expected}")
    return data


def read_noise_matrix(path: str | Path) -> pd.DataFrame:
    """Read a noise matrix: CSV/TSV with clean classes as rows and noisy classes as columns,
    or JSON ``{clean: {noisy: p}}`` (missing entries are 0).

    Examples
    --------
    >>> import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "m.json"
    >>> _ = file.write_text('{"a": {"a": 0.9, "b": 0.1}, "b": {"b": 1}}')
    >>> read_noise_matrix(file).to_numpy().tolist()
    [[0.9, 0.1], [0.0, 1.0]]
    """
    import pandas as pd
    file = Path(path)
    if not file.is_file():
        raise InvalidInputError(f"{file}: no such noise-matrix file")
    if file.suffix.lower() == ".json":
        data = _json_object(file, "{clean: {noisy: p}}")
        if not all(isinstance(v, dict) for v in data.values()):
            raise InvalidInputError(f"{file}: expected a JSON object {{clean: {{noisy: p}}}}")
        return pd.DataFrame.from_dict(data, orient="index").fillna(0.0)
    sep = "\t" if file.suffix.lower() in (".tsv", ".tab") else ","
    try:
        return pd.read_csv(file, sep=sep, index_col=0)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{file}: cannot read the noise matrix ({exc})") from None


def read_noise_sources(spec: str | Path) -> dict[str, str]:
    """Noise sources by class: a JSON file ``{class: source}`` or ``"CLASS=SOURCE,..."``.

    Examples
    --------
    >>> read_noise_sources("a=S1, b=S1, c=S2")
    {'a': 'S1', 'b': 'S1', 'c': 'S2'}
    """
    file = Path(spec)
    if file.is_file():
        return {k: str(v) for k, v in _json_object(file, "{class: source}").items()}
    mapping = {}
    for part in str(spec).split(","):
        name, sep, source = part.strip().partition("=")
        if not sep or not name.strip() or not source.strip():
            raise InvalidParameterError(
                f"sources part {part.strip()!r} is not CLASS=SOURCE (or {spec!r} is not a file)",
                param="sources")
        mapping[name.strip()] = source.strip()
    return mapping


def _check_columns(frame: pd.DataFrame, columns: list[str | None], id: str | None) -> None:
    from labelaudit.io import require_columns

    taken = [c for c in ADDED_COLUMNS if c in frame.columns]
    if taken:
        raise InvalidInputError(
            f"the input already has the column{'s' if len(taken) > 1 else ''} "
            f"{', '.join(map(repr, taken))}: is it noised already? rename or drop them")
    require_columns(frame, [c for c in columns if c])
    if id and frame[id].duplicated().any():
        raise InvalidInputError(f"column {id!r} has duplicate ids; ids must be unique")


def inject_noise_table(
    frame: pd.DataFrame,
    *,
    label: str = "label",
    method: NoiseMethod | None = None,
    rate: float | None = None,
    recipe: Recipe | None = None,
    random_state: int | None = 0,
    id: str | None = None,
    text: str | None = None,
    text_pair: str | None = None,
    annotations: str | pd.DataFrame | None = None,
    split: str | None = None,
    noise_matrix: np.ndarray | pd.DataFrame | None = None,
    sources: Mapping[Any, str] | None = None,
    swap_input: bool = False,
    model: str | None = None,
    cache_dir: str | Path | None = None,
    label_sep: str | None = None,
    progress: bool = False,
) -> NoiseResult | LabelSetNoiseResult:
    """Noise the ``label`` column of a table, reading every input of :func:`inject_noise`
    from its columns; :meth:`NoiseResult.apply_to` then gives the noised table.

    A column of label sets (lists, or text joined by ``label_sep``) gets multi-label noise
    (:func:`inject_label_set_noise`: ``uniform`` or ``class-dependent`` flips per class)
    and a :class:`LabelSetNoiseResult`.

    Parameters
    ----------
    frame : DataFrame
        One row per item.
    label : str, default "label"
        The clean labels.
    method, rate, recipe, random_state, noise_matrix, sources, swap_input
        As :func:`inject_noise`; so are ``model``, ``cache_dir`` and ``progress``.
    id : str, optional
        Item ids (default: the row numbers); a long ``annotations`` table refers to them.
    text, text_pair : str, optional
        Text columns, for instance-dependent noise (a pair for NLI).
    annotations : str or DataFrame, optional
        A column of per-item lists of crowd labels, or a long table ``item_id,
        annotator_id, label``.
    split : str, optional
        A split column; the rate applies per split.

    Returns
    -------
    NoiseResult

    Examples
    --------
    >>> frame = pd.DataFrame({"id": list("abcdefgh"), "label": ["x", "y"] * 4})
    >>> result = inject_noise_table(frame, method="uniform", rate=0.25, id="id")
    >>> noisy = result.apply_to(frame)
    >>> int(noisy["is_noisy"].sum()), bool((noisy["label"] != noisy["clean_label"]).sum() == 2)
    (2, True)
    """
    column = annotations if isinstance(annotations, str) else None
    _check_columns(frame, [label, id, text, text_pair, column, split], id)
    ids = frame[id].to_numpy() if id else np.arange(len(frame))
    from labelaudit.io import (
        encode_labels,
        holds_label_sets,
        read_label_sets,
        refuse_single_label_options,
    )

    if label_sep is not None or holds_label_sets(frame[label]):
        refuse_single_label_options(
            "multi-label noise takes method (uniform or class-dependent), rate and "
            "random_state", recipe=recipe, annotations=annotations, split=split,
            noise_matrix=noise_matrix, sources=sources, swap_input=swap_input or None)
        sets, classes = read_label_sets(frame[label], column=label, ids=ids, sep=label_sep)
        return inject_label_set_noise(sets, classes, method=str(method), rate=rate,  # type: ignore[arg-type]
                                      ids=ids, random_state=random_state)

    encode_labels(frame[label], ids, column=label)  # errors name the column
    names = [method] if recipe is None else [name for name, _ in parse_recipe(recipe)]
    needs_text = "instance-dependent" in names
    if needs_text and not text:
        raise InvalidParameterError("instance-dependent noise needs text=COLUMN",
                                    param=("text", "method"))
    texts = None
    if needs_text and text:
        texts = frame[text].astype(str).tolist()
        if text_pair:
            texts = list(zip(texts, frame[text_pair].astype(str).tolist(), strict=True))
    return inject_noise(
        frame[label], method=method, recipe=recipe, rate=rate, random_state=random_state,
        annotations=frame[column].tolist() if column else annotations,  # type: ignore[arg-type]
        ids=ids, noise_matrix=noise_matrix, texts=texts, model=model, cache_dir=cache_dir,
        swap_input=swap_input, sources=sources,
        split=frame[split].tolist() if split else None, progress=progress)
