"""Inject controlled label noise: one method or a recipe of several, at an exact rate, per
split and source; from arrays (:func:`inject_noise`) or from a table's columns
(:func:`inject_noise_table`). :data:`NOISE_METHODS` is the one list of methods, and the one
it dispatches on."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_number, shown
from labelaudit.io import (
    encode_labels,
    holds_label_sets,
    read_label_sets,
    refuse_single_label_options,
    require_columns,
    to_annotations,
)
from labelaudit.models import encode_texts
from labelaudit.noise._class_dependent import (
    _key,
    check_noise_matrix,
    class_dependent_flips,
    random_noise_matrix,
)
from labelaudit.noise._common import (
    Flips,
    NoiseData,
    Shortfall,
    allocate,
    check_rate,
    target_count,
    warn_rounding,
    warn_wrong_majority,
)
from labelaudit.noise._crowd_majority import crowd_majority_flips
from labelaudit.noise._dissenting_label import dissenting_label_flips
from labelaudit.noise._dissenting_worker import dissenting_worker_flips
from labelaudit.noise._instance_dependent import instance_dependent_flips
from labelaudit.noise._label_sets import LabelSetNoiseResult, inject_label_set_noise
from labelaudit.noise._minority_split import minority_split_flips
from labelaudit.noise._result import NoiseResult
from labelaudit.noise._uniform import uniform_flips

if TYPE_CHECKING:
    import pandas as pd

NoiseMethod = Literal[
    "uniform", "class-dependent", "dissenting-label", "dissenting-worker", "crowd-majority",
    "minority-split", "instance-dependent"]
#: The noise methods by name, in the order users see them: each one's flip function.
NOISE_METHODS: dict[str, Callable[..., Flips]] = {
    "uniform": uniform_flips, "class-dependent": class_dependent_flips,
    "dissenting-label": dissenting_label_flips, "dissenting-worker": dissenting_worker_flips,
    "crowd-majority": crowd_majority_flips, "minority-split": minority_split_flips,
    "instance-dependent": instance_dependent_flips}
Recipe = Mapping[str, float] | Sequence[tuple[str, float]] | str
#: The columns :meth:`NoiseResult.apply_to` adds to every noised table.
ADDED_COLUMNS = ("clean_label", "is_noisy", "noise_method")


def _check_method(method: str, where: str, param: str) -> str:
    if method not in NOISE_METHODS:
        raise InvalidParameterError(f"unknown noise method {method!r}{where}; choose from "
                                    f"{', '.join(NOISE_METHODS)}", param=param)
    return method


def parse_recipe(recipe: Recipe) -> tuple[tuple[str, float], ...]:
    """Validate a recipe: methods with positive shares that sum to 1.

    Accepts ``"dissenting-worker:0.8,dissenting-label:0.2"``, a mapping or pairs.

    Examples
    --------
    >>> parse_recipe("dissenting-worker:0.8, dissenting-label:0.2")
    (('dissenting-worker', 0.8), ('dissenting-label', 0.2))
    >>> parse_recipe({"uniform": 0.5, "uniform ": 0.5})
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidParameterError: recipe names 'uniform' twice
    """
    if isinstance(recipe, str):
        pairs: list[tuple[str, object]] = []
        for part in recipe.split(","):
            name, sep, share = part.strip().rpartition(":")
            if not sep or not name.strip():
                raise InvalidParameterError(
                    f"recipe part {part.strip()!r} is not METHOD:SHARE; write e.g. "
                    "'dissenting-worker:0.8,dissenting-label:0.2'", param="recipe"
                )
            try:
                pairs.append((name, float(share)))
            except ValueError:
                raise InvalidParameterError(
                    f"recipe share {share!r} of {name.strip()!r} is not a number",
                    param="recipe") from None
    elif isinstance(recipe, Mapping):
        pairs = list(recipe.items())
    else:
        try:
            pairs = [(key, share) for key, share in recipe]
        except (TypeError, ValueError):
            raise InvalidParameterError(
                "recipe must be 'METHOD:SHARE,...', a mapping or (method, share) pairs",
                param="recipe") from None
    out: list[tuple[str, float]] = []
    for raw_name, raw_share in pairs:
        method = str(raw_name).strip()
        _check_method(method, " in the recipe", "recipe")
        if any(method == seen for seen, _ in out):
            raise InvalidParameterError(f"recipe names {method!r} twice", param="recipe")
        try:
            number = check_number(raw_share, "share", low=0.0, low_open=True)
        except InvalidParameterError:
            raise InvalidParameterError(f"the share of {method!r} must be a positive number; "
                                        f"got {shown(raw_share)}", param="recipe") from None
        out.append((method, number))
    if not out:
        raise InvalidParameterError("the recipe is empty", param="recipe")
    total = sum(share for _, share in out)
    if abs(total - 1.0) > 1e-6:
        raise InvalidParameterError(f"recipe shares must sum to 1; they sum to {total:g}",
                                    param="recipe")
    return tuple(out)


def parse_noise(noise: str) -> tuple[str, float]:
    """``"method:rate"`` as ``(method, rate)``, checked against the noise methods.

    Examples
    --------
    >>> parse_noise("uniform:0.05")
    ('uniform', 0.05)
    """
    method, sep, rate_text = str(noise).strip().rpartition(":")
    if not sep or not method:
        raise InvalidParameterError(
            f"noise must be METHOD:RATE such as 'uniform:0.05'; got {noise!r}", param="noise")
    _check_method(method, f" in noise={noise!r}", "noise")
    try:
        rate = float(rate_text)
    except ValueError:
        raise InvalidParameterError(
            f"the rate of noise={noise!r} is not a number; write e.g. 'uniform:0.05'",
            param="noise") from None
    if not 0.0 < rate < 1.0:
        raise InvalidParameterError(f"the rate of noise={noise!r} must be in (0, 1)",
                                    param="noise")
    return method, rate


def noisy_labels(frame: pd.DataFrame, *, label: str, method: str, rate: float,
                 classes: np.ndarray, text: str, text_pair: str | None,
                 random_state: int, options: dict[str, Any] | None = None) -> np.ndarray:
    """The ``label`` column noised at ``rate`` by ``method``, as indices into ``classes``."""
    import pandas as pd

    result = inject_noise_table(frame, label=label, method=method,  # type: ignore[arg-type]
                                rate=rate, random_state=random_state, text=text,
                                text_pair=text_pair, **(options or {}))
    assert isinstance(result, NoiseResult)  # noqa: S101 - the callers read one label per item
    return encode_labels(pd.Series(result.labels), np.arange(len(frame)), column=label,
                         classes=classes)[0]


def _text_key(text: object) -> str:
    """A text, or a text pair joined, for comparing texts."""
    if isinstance(text, (tuple, list)):
        return "\x1f".join(str(part) for part in text)
    return str(text)


def _strata(n: int, split: np.ndarray | None, sources: np.ndarray | None
            ) -> tuple[np.ndarray, list[str]]:
    """Code each item by (split, source) and describe each code for error messages."""
    import pandas as pd
    parts = []
    if split is not None:
        parts.append(("split", split))
    if sources is not None:
        parts.append(("source", sources))
    if not parts:
        return np.zeros(n, dtype=np.int64), [""]
    keys = [" and ".join(f"{kind} {values[i]!r}" for kind, values in parts) for i in range(n)]
    codes, uniques = pd.factorize(pd.Series(keys, dtype=object), sort=True)
    return codes.astype(np.int64), [f" in {u}" for u in uniques]


def _component_counts(totals: np.ndarray, shares: list[float]) -> np.ndarray:
    """Counts per (stratum, component): rows sum to ``totals`` exactly, and each column
    to its share of ``totals.sum()`` (largest remainder), allocated stratum by stratum."""
    need = allocate(int(totals.sum()), shares)
    out = np.zeros((len(totals), len(shares)), dtype=np.int64)
    for s, total in enumerate(totals):
        out[s] = allocate(int(total), need.astype(float), caps=need)
        need = need - out[s]
    return out


def _sources(sources: Mapping[object, str], classes: np.ndarray, clean: np.ndarray
             ) -> np.ndarray:
    mapping = {_key(k): v for k, v in sources.items()}
    names = [_key(c) for c in classes.tolist()]
    missing = [c for c in names if c not in mapping]
    if missing:
        raise InvalidParameterError(
            f"the noise sources give no source for the classes {missing}; map every class "
            "to a source"
        )
    extra = sorted(set(mapping) - set(names))
    if extra:
        raise InvalidParameterError(
            f"the noise sources name classes that are not labels of the data: {extra}")
    per_class = np.array([mapping[c] for c in names], dtype=object)
    return per_class[clean]


def _embed(texts: Sequence[object] | None, embeddings: np.ndarray | None,
           embed: Callable[[list], np.ndarray] | None, model: str | None,
           cache_dir: str | Path | None, progress: bool, n: int) -> np.ndarray:
    if embeddings is not None:
        vectors = np.asarray(embeddings, dtype=float)
    elif texts is None:
        raise InvalidParameterError(
            "instance-dependent noise needs the texts (or precomputed embeddings) to find "
            "similar items")
    elif embed is not None:
        vectors = np.asarray(embed(list(texts)), dtype=float)
    else:
        vectors = encode_texts(list(texts), model=model, cache_dir=cache_dir,  # type: ignore[arg-type]
                               progress=progress)
    if vectors.ndim != 2 or len(vectors) != n:
        raise InvalidInputError(
            f"embeddings must have shape (n_samples, dim) = ({n}, dim); got {vectors.shape}")
    return vectors


def _plan(method: str | None, recipe: Recipe | None, rate: object, noise_matrix: object,
          swap_input: object) -> tuple[tuple[tuple[str, float], ...], float | None]:
    """The methods with their shares, and the checked rate (None: crowd-majority, all)."""
    if (method is None) == (recipe is None):
        raise InvalidParameterError("give exactly one of method and recipe")
    if recipe is not None:
        components = parse_recipe(recipe)
    else:
        components = ((_check_method(str(method), "", "method"), 1.0),)
    names = [name for name, _ in components]
    checked = check_rate(rate, allow_none=names == ["crowd-majority"])
    if noise_matrix is not None and "class-dependent" not in names:
        raise InvalidParameterError("noise_matrix is only used by class-dependent noise",
                                    param=("noise_matrix", "method"))
    if not isinstance(swap_input, (bool, np.bool_)):
        raise InvalidParameterError(f"swap_input must be True or False; got {swap_input!r}",
                                    param="swap_input")
    if swap_input and "instance-dependent" not in names:
        raise InvalidParameterError("swap_input is only used by instance-dependent noise",
                                    param=("swap_input", "method"))
    return components, checked


def _encode(labels: object, ids: object, classes: object
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row ids, the labels as class indices, and the label set."""
    import pandas as pd
    values = pd.Series(list(labels) if not isinstance(labels, pd.Series)  # type: ignore[call-overload]
                       else labels.tolist(), dtype=object)
    n = len(values)
    if n == 0:
        raise InvalidInputError("there are no labels to noise")
    row_ids = np.arange(n) if ids is None else np.asarray(ids, dtype=object)
    if len(row_ids) != n:
        raise InvalidInputError(f"ids has {len(row_ids)} entries but there are {n} labels")
    if ids is not None and pd.Series(row_ids).duplicated().any():
        raise InvalidInputError("ids must be unique")
    coded, label_set = encode_labels(values, row_ids, column="labels",
                                     classes=None if classes is None else np.asarray(classes))
    if classes is not None and pd.Series(label_set).duplicated().any():
        raise InvalidParameterError("classes must not repeat a value")
    if len(label_set) < 2:
        raise InvalidInputError(
            f"the label set has {len(label_set)} class ({label_set.tolist()}); noise needs at "
            "least two classes (pass the full label set as classes)")
    return row_ids, coded, label_set


def _per_item(values: np.ndarray | Sequence[object] | pd.Series, what: str, n: int
              ) -> np.ndarray:
    """One value per item (a split), none missing."""
    import pandas as pd
    out = np.asarray(list(values), dtype=object)
    if len(out) != n:
        raise InvalidInputError(f"{what} has {len(out)} entries but there are {n} labels")
    if pd.Series(out).isna().any():
        raise InvalidInputError(f"{what} has missing values; give every item a {what}")
    return out


def inject_noise(
    labels: np.ndarray | Sequence[object] | pd.Series,
    *,
    method: NoiseMethod | None = None,
    rate: float | None = None,
    recipe: Recipe | None = None,
    random_state: int | None = 0,
    annotations: pd.DataFrame | Sequence[object] | pd.Series | None = None,
    ids: np.ndarray | Sequence[object] | None = None,
    classes: np.ndarray | Sequence[object] | None = None,
    noise_matrix: np.ndarray | pd.DataFrame | None = None,
    texts: Sequence[object] | None = None,
    embeddings: np.ndarray | None = None,
    embed: Callable[[list], np.ndarray] | None = None,
    model: str | None = None,
    cache_dir: str | Path | None = None,
    swap_input: bool = False,
    sources: Mapping[object, str] | None = None,
    split: np.ndarray | Sequence[object] | pd.Series | None = None,
    progress: bool = False,
) -> NoiseResult:
    """Noise a share of the labels in a controlled, reproducible way.

    Exactly ``round(rate * n_samples)`` items are noised (halves up; a
    :class:`NoiseRateWarning` when that is none or all), or an error says how many the data
    allows. No item is noised twice, a noised label differs from the clean one and is in the
    label set, and the same ``random_state`` gives the same result.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        The clean labels (any values: strings or integers).
    method : {"uniform", "class-dependent", "dissenting-label", "dissenting-worker", \
"crowd-majority", "minority-split", "instance-dependent"}
        - ``uniform``: flip to any other class uniformly.
        - ``class-dependent``: flip by a row-stochastic ``noise_matrix`` (random when not
          given); :attr:`NoiseResult.noise_matrix` reports the achieved one.
        - ``dissenting-label``: adopt an annotator's label that disagrees with the final one.
        - ``dissenting-worker``: adopt all disagreeing labels of random annotators until the
          rate is reached (needs annotator ids).
        - ``crowd-majority``: adopt the crowd's majority label where it differs, ties toward
          the final label (Hovy et al. 2014); ``rate`` is a cap, None takes all.
        - ``minority-split``: on the most evenly split items (3-2 first), adopt the minority
          label (SNLI-5).
        - ``instance-dependent``: the items most similar (embedding cosine) to an item of
          another class take its label, or its text with ``swap_input`` (Wu et al. 2023).
    rate : float in [0, 1)
        Share of items to noise; per split and per source when those are given.
    recipe : str, mapping or pairs, optional
        Instead of ``method``, methods and their shares of the noised items, applied in order,
        e.g. ``{"dissenting-worker": 0.8, "dissenting-label": 0.2}`` (TweetNLP-5).
    random_state : int or None
    annotations : DataFrame or sequence, optional
        Crowd labels: a long table (``item_id, annotator_id, label``; item ids are ``ids``)
        or one list per item of labels or ``{"worker": id, "label": value}`` objects.
    ids, classes : array-like, optional
        Item ids the long annotation table refers to (default row numbers); the label set,
        when some class has no item.
    noise_matrix : ndarray or DataFrame of shape (n_classes, n_classes), optional
        ``T[i, j] = P(noisy j | clean i)``: its diagonal sets each class's relative noise,
        its rows where flips go; ``rate`` sets the total.
    texts, embeddings, embed : optional
        Instance-dependent noise embeds ``texts`` (str or pairs) with the default encoder,
        with ``embed(texts) -> (n_samples, dim)``, or takes precomputed ``embeddings``.
    model, cache_dir, progress : optional
        Encoder name, embedding cache folder and progress bar of the default encoder.
    swap_input : bool
        Instance-dependent noise keeps the label and swaps the text (see ``text_source``).
    sources, split : optional
        Noise source per class (NoisywikiHow's SC/BCC/TC) and split per item: ``rate``
        applies to each source and each split.

    Returns
    -------
    NoiseResult

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 4 and appendix A. Wu et al. (2023), NoisywikiHow, section 3.3.

    Examples
    --------
    >>> result = inject_noise(["a", "b", "c", "a"] * 5, method="uniform", rate=0.2)
    >>> result.n_noisy, bool((result.labels != result.clean_labels).sum() == 4)
    (4, True)
    >>> crowd = [["a", "b", "b"], ["a", "a", "a"], ["b", "c", "b"], ["c", "a", "a"]]
    >>> result = inject_noise(["a", "a", "b", "c"], method="crowd-majority", annotations=crowd)
    >>> result.labels.tolist(), result.noise_method.tolist()
    (['b', 'a', 'b', 'a'], ['crowd-majority', None, None, 'crowd-majority'])
    """
    components, rate = _plan(method, recipe, rate, noise_matrix, swap_input)
    names = [name for name, _ in components]
    row_ids, coded, label_set = _encode(labels, ids, classes)
    n = len(coded)
    rng = np.random.default_rng(random_state)
    matrix = None
    if "class-dependent" in names:
        matrix = (check_noise_matrix(noise_matrix, label_set) if noise_matrix is not None
                  else random_noise_matrix(len(label_set), float(rate or 0.0), rng))
    text_list = None if texts is None else [_text_key(t) for t in texts]
    if text_list is not None and len(text_list) != n:
        raise InvalidInputError(f"texts has {len(text_list)} entries but there are {n} labels")
    vectors = None
    if "instance-dependent" in names:
        vectors = _embed(texts, embeddings, embed, model, cache_dir, progress, n)
        if swap_input and text_list is None:
            raise InvalidParameterError("swap_input needs the texts")
    split_arr = None if split is None else _per_item(split, "split", n)
    source_arr = _sources(sources, label_set, coded) if sources is not None else None
    data = NoiseData(
        labels=coded, n_classes=len(label_set), noise_matrix=matrix, embeddings=vectors,
        crowd=(to_annotations(annotations, ids=row_ids, classes=label_set)
               if annotations is not None else None),
        texts=text_list, swap_input=bool(swap_input))
    new_labels, text_source, method_of = _noise(data, components, rate, split_arr,
                                                source_arr, rng)
    warn_wrong_majority(coded, new_labels, label_set, rate=rate,
                        method=names[0] if len(names) == 1 else "recipe")
    return NoiseResult(
        labels=label_set[new_labels], clean_labels=label_set[coded],
        is_noisy=np.array([m is not None for m in method_of.tolist()], dtype=bool),
        noise_method=method_of,
        classes=label_set, ids=row_ids, text_source=text_source, sources=source_arr,
        split=split_arr, target_matrix=matrix, rate=rate, recipe=components,
        similarity=data.cache["neighbours"][1] if "neighbours" in data.cache else None,
        random_state=random_state)


def _noise(data: NoiseData, components: tuple[tuple[str, float], ...], rate: float | None,
           split: np.ndarray | None, sources: np.ndarray | None, rng: np.random.Generator
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run every component in every (split, source) stratum: noisy labels, text sources and
    the method of each noised item (None elsewhere)."""
    n = data.n_samples
    cap_only = [name for name, _ in components] == ["crowd-majority"]
    strata, where = _strata(n, split, sources)
    sizes = np.bincount(strata, minlength=len(where))
    if rate is None:
        counts = np.full((len(where), 1), -1, dtype=np.int64)  # crowd-majority: all
    else:
        if not cap_only:
            warn_rounding(rate, n, stacklevel=4)
        totals = allocate(target_count(rate, n), sizes.astype(float), caps=sizes)
        counts = _component_counts(totals, [share for _, share in components])
    new_labels = data.labels.copy()
    text_source = np.full(n, -1, dtype=np.int64)
    method_of = np.full(n, None, dtype=object)
    taken = np.zeros(n, dtype=bool)
    for s in range(len(where)):
        for c, (name, share) in enumerate(components):
            count = int(counts[s, c])
            eligible = (strata == s) & ~taken
            try:
                flips = NOISE_METHODS[name](data, eligible, None if count < 0 else count, rng)
            except Shortfall as short:
                if not cap_only:
                    raise _shortfall_error(name, short, count, share, int(sizes[s]), where[s],
                                           rate, len(components) > 1) from None
                flips = NOISE_METHODS[name](data, eligible, short.available, rng)  # a cap
            _apply(flips, name, data, new_labels, text_source, method_of, taken)
    return new_labels, text_source, method_of


def _apply(flips: Flips, name: str, data: NoiseData, new_labels: np.ndarray,
           text_source: np.ndarray, method_of: np.ndarray, taken: np.ndarray) -> None:
    """Record one method's flips, checking the guarantees every method must keep."""
    items = flips.items
    swapped = flips.text_from >= 0
    if len(np.unique(items)) != len(items) or taken[items].any():  # pragma: no cover
        raise RuntimeError(f"{name} noised an item twice")
    bad = ~swapped & (flips.new_labels == data.labels[items])
    bad |= (flips.new_labels < 0) | (flips.new_labels >= data.n_classes)
    if bad.any():  # pragma: no cover - a bug in a method, never the user's fault
        raise RuntimeError(f"{name} produced a label that is unchanged or outside the label set")
    new_labels[items] = flips.new_labels
    text_source[items] = flips.text_from
    method_of[items] = name
    taken[items] = True


def _shortfall_error(name: str, short: Shortfall, count: int, share: float, size: int,
                     where: str, rate: float | None, in_recipe: bool) -> InvalidInputError:
    part = f" (its {share:g} share of the recipe)" if in_recipe else ""
    reason = f" ({short.reason})" if short.reason else ""
    possible = short.available / size / share if size else 0.0
    return InvalidInputError(
        f"{name} can noise at most {short.available} of the {size} items{where}{reason}, "
        f"but rate {rate:g} needs {count}{part}; the most this data allows is "
        f"{'about ' if in_recipe else ''}rate {math.floor(possible * 1e4) / 1e4:.4f}: "
        "lower the rate or use another method"
    )


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
    taken = [c for c in ADDED_COLUMNS if c in frame.columns]
    if taken:
        raise InvalidInputError(
            f"the input already has the column{'s' if len(taken) > 1 else ''} "
            f"{', '.join(map(repr, taken))}: is it noised already? rename or drop them")
    require_columns(frame, [c for c in columns if c])
    if id and frame[id].duplicated().any():
        raise InvalidInputError(f"column {id!r} has duplicate ids; ids must be unique")


def inject_noise_table(
    frame: pd.DataFrame, *, label: str = "label", method: NoiseMethod | None = None,
    rate: float | None = None, recipe: Recipe | None = None, random_state: int | None = 0,
    id: str | None = None, text: str | None = None, text_pair: str | None = None,
    annotations: str | pd.DataFrame | None = None, split: str | None = None,
    noise_matrix: np.ndarray | pd.DataFrame | None = None, sources: Mapping[Any, str] | None = None,
    swap_input: bool = False, model: str | None = None, cache_dir: str | Path | None = None,
    label_sep: str | None = None, progress: bool = False) -> NoiseResult | LabelSetNoiseResult:
    """Noise the ``label`` column of a table, reading every input of :func:`inject_noise`
    from its columns; :meth:`NoiseResult.apply_to` then gives the noised table.

    A column of label sets (lists, or text joined by ``label_sep``) gets multi-label noise
    (:func:`inject_label_set_noise`) and a :class:`LabelSetNoiseResult`.

    Parameters
    ----------
    frame : DataFrame
        One row per item, the clean labels in ``label``.
    method, rate, recipe, random_state, noise_matrix, sources, swap_input, model, cache_dir
        As :func:`inject_noise`; so is ``progress``.
    id, text, text_pair, split : str, optional
        Columns: item ids (default row numbers), texts for instance-dependent noise (a pair
        for NLI), the split of each item.
    annotations : str or DataFrame, optional
        A column of per-item lists of crowd labels, or a long ``item_id, annotator_id,
        label`` table.

    Returns
    -------
    NoiseResult

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": list("abcdefgh"), "label": ["x", "y"] * 4})
    >>> result = inject_noise_table(frame, method="uniform", rate=0.25, id="id")
    >>> noisy = result.apply_to(frame)
    >>> int(noisy["is_noisy"].sum()), bool((noisy["label"] != noisy["clean_label"]).sum() == 2)
    (2, True)
    """
    column = annotations if isinstance(annotations, str) else None
    _check_columns(frame, [label, id, text, text_pair, column, split], id)
    ids = frame[id].to_numpy() if id else np.arange(len(frame))
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
