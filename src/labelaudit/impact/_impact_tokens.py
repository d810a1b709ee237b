"""``impact`` for tagged data: sentence sets from an original and a corrected copy, and
entity-level F1 (token accuracy for tags without spans) in place of accuracy.

A sentence is benign (B) when its tags are the same in both copies, correctable (C) when
they differ and unknown (U) when the corrected copy re-tokenised it (its tokens differ), so
that no tag-by-tag comparison exists. Each model's score on a set of sentences is the micro
F1 over exact entity spans, pooled as 2 TP / (2 TP + FP + FN), so the curve of seed 003
keeps its form with per-model weights (see :func:`labelaudit.impact._impact._crossings`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
)
from labelaudit.impact._impact import ItemScores, _check_options, measure_impact
from labelaudit.impact._impact_result import ImpactResult
from labelaudit.impact._impact_sets import BENIGN, CORRECTABLE, UNKNOWN
from labelaudit.tokens import TokenDataset, read_tokens
from labelaudit.tokens._schemes import Scheme, split_tag
from labelaudit.tokens._spans import span_f1_counts

__all__ = ["RetokenisedWarning", "impact_tokens", "token_impact_sets", "token_item_scores"]

TokenSource = TokenDataset | str | Path
TagSource = TokenDataset | str | Path | Sequence[Sequence[str]]


class RetokenisedWarning(LabelAuditWarning):
    """Sentences whose tokens differ between the two copies: counted as unknown (U)."""


def _where(data: TokenDataset, i: int) -> str:
    return f"sentence {i + 1} (line {data.lines[i]})" if data.lines else f"sentence {i + 1}"


def token_impact_sets(original: TokenDataset, corrected: TokenDataset) -> np.ndarray:
    """0 (B), 1 (C) or 2 (U) per sentence of two copies of the same sentences.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> a = make_token_dataset([["a", "b"], ["c"], ["d"]], [["B-X", "O"], ["O"], ["O"]])
    >>> b = make_token_dataset([["a", "b"], ["c"], ["d", "e"]], [["B-Y", "O"], ["O"], ["O", "O"]])
    >>> token_impact_sets(a, b).tolist()
    [1, 0, 2]
    """
    if len(original) != len(corrected):
        raise InvalidInputError(
            f"the original has {len(original)} sentences and the corrected copy "
            f"{len(corrected)}: give two copies of the same sentences in the same order")
    sets = np.full(len(original), BENIGN, dtype=np.int8)
    for i, (toks, fixed) in enumerate(zip(original.tokens, corrected.tokens, strict=True)):
        if toks != fixed:
            sets[i] = UNKNOWN
        elif original.iob2_tags[i] != corrected.iob2_tags[i]:
            sets[i] = CORRECTABLE
    return sets


def _predicted_tags(name: str, source: TagSource, original: TokenDataset,
                    scheme: Scheme | None, tag_column: int) -> list[list[str]]:
    """One model's IOB2 tags, checked against the original's sentences and tokens."""
    if isinstance(source, (TokenDataset, str, Path)):
        data = read_tokens(source, scheme=scheme, tag_column=tag_column)
        tags, tokens = data.iob2_tags, data.tokens
    else:
        tags, tokens = [list(map(str, sent)) for sent in source], None
    if len(tags) != len(original):
        raise InvalidInputError(
            f"predictions {name!r} have {len(tags)} sentences, the data {len(original)}: "
            "predict every sentence of the original file, in its order")
    lengths = [i for i, (got, want) in enumerate(zip(tags, original.tokens, strict=True))
               if len(got) != len(want) or (tokens is not None and tokens[i] != want)]
    if lengths:
        raise InvalidInputError(
            f"predictions {name!r} do not match the data's tokens in {len(lengths)} "
            f"sentences, first {_where(original, lengths[0])}: predict the original file's "
            "tokens, one tag each")
    return tags


def _check_types(name: str, tags: list[list[str]], known: set[str], plain: bool) -> None:
    """Refuse predicted tags (entity types for span tags) the data never uses."""
    seen = {t for sent in tags for t in sent} if plain else {
        split_tag(t)[1] for sent in tags for t in sent if t != "O"}
    outside = sorted(seen - known)
    if outside:
        where = [i for i, sent in enumerate(tags)
                 if any((t if plain else split_tag(t)[1]) in outside for t in sent if t != "O")]
        raise InvalidInputError(
            f"predictions {name!r} have {'tags' if plain else 'entity types'} outside the "
            f"data's {sorted(known)[:10]}: {outside[:5]} in sentences "
            f"{format_rows(np.array(where) + 1).removeprefix('rows ').removeprefix('row ')}")


def token_item_scores(predicted: Sequence[list[list[str]]], original: TokenDataset,
                      corrected: TokenDataset, sets: np.ndarray) -> ItemScores:
    """Entity-F1 numerators and denominators per model and sentence against both copies
    (token hits for plain tags); unknown sentences score 0 over 0."""
    plain = original.scheme == "plain"
    fixed = [corrected.iob2_tags[i] if sets[i] != UNKNOWN else original.iob2_tags[i]
             for i in range(len(original))]
    rows = [(*span_f1_counts(tags, original.iob2_tags, plain=plain),
             *span_f1_counts(tags, fixed, plain=plain))
            for tags in predicted]
    unknown = sets == UNKNOWN
    arrays = [np.vstack([row[k] for row in rows]) for k in range(4)]
    for array in arrays:
        array[:, unknown] = 0.0
    return ItemScores(*arrays)


def impact_tokens(
    corrected: TokenSource,
    original: TokenSource,
    predictions: Mapping[str, TagSource],
    *,
    scheme: Scheme | None = None,
    tag_column: int = -1,
    confidence_level: float = 0.95,
    n_points: int = 101,
) -> ImpactResult:
    """:func:`labelaudit.impact.impact` for tagged data, with sentences as the items and
    entity-level micro F1 (token accuracy for tags without spans) as the score.

    Parameters
    ----------
    corrected, original : TokenDataset or path
        The corrected and the original copy of the same sentences (CoNLL or token JSONL).
        Sentences whose tags differ are correctable (C), the same benign (B), re-tokenised
        unknown (U).
    predictions : mapping of str to TokenDataset, path or list of tag lists
        Model name to its tags for every sentence of ``original`` (same tokens).
    scheme : {"iob1", "iob2", "bioes", "plain"}, optional
        Tagging scheme of the files (default: detected per file).
    tag_column : int, default=-1
        Tag column of CoNLL files.
    confidence_level, n_points
        As for :func:`labelaudit.impact.impact`.

    Returns
    -------
    ImpactResult
        With ``metric="entity_f1"`` (or ``"token_accuracy"``) and ``unit="sentences"``.

    Warns
    -----
    RetokenisedWarning
        Sentences re-tokenised in the corrected copy, counted in U.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> tokens = [["John", "ran"], ["Paris", "."], ["Rome", "."]]
    >>> orig = make_token_dataset(tokens, [["B-PER", "O"], ["B-LOC", "O"], ["B-PER", "O"]])
    >>> fixed = make_token_dataset(tokens, [["B-PER", "O"], ["B-LOC", "O"], ["B-LOC", "O"]])
    >>> preds = {"m": [["B-PER", "O"], ["B-LOC", "O"], ["B-LOC", "O"]]}
    >>> result = impact_tokens(fixed, orig, preds)
    >>> (result.n_benign, result.n_correctable, result.metric)
    (2, 1, 'entity_f1')
    >>> float(result.acc_original[0]), float(result.acc_corrected[0])
    (0.6666666666666666, 1.0)
    """
    _check_options(confidence_level, n_points)
    if not predictions:
        raise InvalidParameterError("predictions is empty: give at least one model")
    source = read_tokens(original, scheme=scheme, tag_column=tag_column)
    fixed = read_tokens(corrected, scheme=scheme, tag_column=tag_column)
    if (source.scheme == "plain") != (fixed.scheme == "plain"):
        raise InvalidInputError(
            f"the original's tags are {source.scheme} and the corrected copy's {fixed.scheme}: "
            "give both in one kind (--scheme)")
    sets = token_impact_sets(source, fixed)
    n_retokenised = int((sets == UNKNOWN).sum())
    if n_retokenised:
        first = int(np.flatnonzero(sets == UNKNOWN)[0])
        warnings.warn(f"{n_retokenised} sentences have other tokens in the corrected copy "
                      f"(first {_where(source, first)}): counted as unknown (U)",
                      RetokenisedWarning, stacklevel=2)
    plain = source.scheme == "plain"
    known = ({t for data in (source, fixed) for sent in data.iob2_tags for t in sent} if plain
             else {split_tag(t)[1] for data in (source, fixed) for sent in data.iob2_tags
                   for t in sent if t != "O"})
    tags = []
    for name, given in predictions.items():
        predicted = _predicted_tags(str(name), given, source, scheme, tag_column)
        _check_types(str(name), predicted, known, plain)
        tags.append(predicted)
    scores = token_item_scores(tags, source, fixed, sets)
    return measure_impact(sets, 0, tuple(map(str, predictions)), scores, confidence_level,
                          n_points, metric="token_accuracy" if plain else "entity_f1",
                          unit="sentences")
