"""Inject controlled label noise: one method or a recipe, at an exact rate, per split and source."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import encode_labels, to_annotations
from labelaudit.noise._class_dependent import _key, check_noise_matrix, random_noise_matrix
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
from labelaudit.noise._recipe import Recipe, parse_recipe
from labelaudit.noise._result import NoiseResult
from labelaudit.registry import NOISE_METHODS as _REGISTRY

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NOISE_METHODS", "NoiseMethod", "inject_noise", "parse_recipe"]

NoiseMethod = Literal[
    "uniform", "class-dependent", "dissenting-label", "dissenting-worker", "crowd-majority",
    "minority-split", "instance-dependent",
]
#: The names of :data:`labelaudit.registry.NOISE_METHODS`, the one list of noise methods.
NOISE_METHODS: tuple[str, ...] = _REGISTRY.names()


def _flips(name: str) -> Callable[..., Flips]:
    """The flip function registered as ``name``."""
    return _REGISTRY.load(name)


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
        from labelaudit.models import encode_texts

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
        components = ((_REGISTRY.check(method), 1.0),)  # type: ignore[arg-type]
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

    Exactly ``round(rate * n_samples)`` items are noised (halves rounded up; a
    :class:`NoiseRateWarning` says when that is no item or every item), or an
    :class:`~labelaudit.InvalidInputError` says how many the data allows. No item is
    noised twice, a noised label always differs from the clean one and is a label of the
    label set, and the same ``random_state`` gives the same result.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        The clean labels (any values: strings or integers).
    method : {"uniform", "class-dependent", "dissenting-label", "dissenting-worker", \
"crowd-majority", "minority-split", "instance-dependent"}
        - ``uniform``: flip to any other class uniformly.
        - ``class-dependent``: flip by a row-stochastic ``noise_matrix`` (drawn at random
          when not given); :attr:`NoiseResult.noise_matrix` reports the achieved one.
        - ``dissenting-label``: adopt a label an annotator gave that disagrees with the
          final label (Chong, Hong & Manning 2022).
        - ``dissenting-worker``: adopt all disagreeing labels of random annotators until the
          rate is reached (needs annotator ids; Chong, Hong & Manning 2022).
        - ``crowd-majority``: adopt the crowd's majority label where it differs, ties broken
          toward the final label (Hovy et al. 2014); ``rate`` is a cap, None takes all.
        - ``minority-split``: on the most evenly split items (3-2 first), adopt the
          minority label (SNLI-5 of Chong, Hong & Manning 2022).
        - ``instance-dependent``: the hard cases, most similar to an item of another class
          by sentence-embedding cosine, take that item's label, or its text with
          ``swap_input`` (NoisywikiHow, Wu et al. 2023).
    rate : float in [0, 1)
        Share of items to noise; per split and per source when those are given.
    recipe : str, mapping or pairs, optional
        Instead of ``method``, several methods and their shares of the noised items, e.g.
        ``{"dissenting-worker": 0.8, "dissenting-label": 0.2}`` (TweetNLP-5). Applied in the
        given order; each split gets its exact share.
    random_state : int or None, default 0
    annotations : DataFrame or sequence, optional
        Crowd labels: a long table (``item_id, annotator_id, label``; item ids are ``ids``)
        or one list per item of labels or ``{"worker": id, "label": value}`` objects.
    ids : array-like of shape (n_samples,), optional
        Item ids that the long annotation table refers to; row numbers by default.
    classes : array-like, optional
        The label set, when it has classes that no item has.
    noise_matrix : ndarray or DataFrame of shape (n_classes, n_classes), optional
        ``T[i, j] = P(noisy j | clean i)`` for class-dependent noise. Its diagonal sets the
        relative noise of each class, its rows where flips go; ``rate`` sets the total.
    texts : sequence of str or of (str, str) pairs, optional
        Texts for instance-dependent noise, embedded with the default sentence encoder.
    embeddings : ndarray of shape (n_samples, dim), optional
        Precomputed embeddings (used instead of ``texts``).
    embed : callable, optional
        ``embed(texts) -> ndarray (n_samples, dim)`` instead of the default encoder.
    model, cache_dir : optional
        Encoder name or folder and embedding cache folder for the default encoder.
    swap_input : bool, default False
        Instance-dependent noise keeps the label and swaps the text (see ``text_source``).
    sources : mapping of class -> source name, optional
        Noise sources (NoisywikiHow's SC/BCC/TC): ``rate`` applies to each source.
    split : array-like of shape (n_samples,), optional
        Split of each item (train/validation/test): ``rate`` applies to each split.
    progress : bool, default False
        Show a progress bar while embedding texts.

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
                flips = _flips(name)(data, eligible, None if count < 0 else count, rng)
            except Shortfall as short:
                if not cap_only:
                    raise _shortfall_error(name, short, count, share, int(sizes[s]), where[s],
                                           rate, len(components) > 1) from None
                flips = _flips(name)(data, eligible, short.available, rng)  # rate is a cap
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
