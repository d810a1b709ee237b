"""Tag classes, and span-level issues: compare the given entities with the entities a model
predicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.tokens._issues import IssueKind, TokenIssue
from labelaudit.tokens._schemes import Span, spans_from_tags, split_tag

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.tokens._dataset import TokenDataset

__all__ = ["decode_tags", "encode_tags", "region_score", "span_issues", "tag_issues",
           "token_classes"]

_EPS = 1e-12


def token_classes(*datasets: TokenDataset) -> tuple[str, ...]:
    """The tag classes of one or more datasets in IOB2: ``O``, then ``B-X``, ``I-X`` per type.

    Plain tags (no spans) are sorted. Both ``B-`` and ``I-`` of every type are included
    even if one never occurs, so that a model can suggest either.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> token_classes(make_token_dataset([["a", "b"]], [["B-PER", "O"]]))
    ('O', 'B-PER', 'I-PER')
    """
    tags = {t for ds in datasets for sent in ds.iob2_tags for t in sent}
    if any(ds.scheme == "plain" for ds in datasets):
        return tuple(sorted(tags))
    types = sorted({split_tag(t)[1] for t in tags if t != "O"})
    return ("O",) + tuple(f"{p}-{kind}" for kind in types for p in ("B", "I"))


def encode_tags(dataset: TokenDataset, classes: Sequence[str]) -> list[np.ndarray]:
    """IOB2 tags of each sentence as indices into ``classes``."""
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted({t for s in dataset.iob2_tags for t in s if t not in index})
    if unknown:
        raise InvalidInputError(
            f"tags {unknown[:5]} do not occur in the training data; the model cannot score them"
        )
    return [np.array([index[t] for t in s], dtype=np.int64) for s in dataset.iob2_tags]


def decode_tags(pred_probs: np.ndarray, classes: Sequence[str], *, spans: bool = True) -> list[str]:
    """The most probable valid IOB2 tag sequence under independent token probabilities.

    Viterbi over ``sum_t log p(y_t)`` with the IOB2 constraint that ``I-X`` only follows
    ``B-X`` or ``I-X``; with ``spans=False`` (plain tags) the per-token argmax.

    Examples
    --------
    >>> classes = ("O", "B-PER", "I-PER")
    >>> probs = np.array([[0.4, 0.35, 0.25], [0.2, 0.1, 0.7]])
    >>> decode_tags(probs, classes)  # argmax would be O I-PER, which IOB2 forbids
    ['B-PER', 'I-PER']
    """
    logp = np.log(np.clip(np.asarray(pred_probs, dtype=float), _EPS, 1.0))
    n, k = logp.shape
    if n == 0:
        return []
    if not spans:
        return [classes[j] for j in logp.argmax(1)]
    parts = [split_tag(c) for c in classes]
    allowed = np.ones((k, k), dtype=bool)  # allowed[previous, current]
    for j, (prefix, kind) in enumerate(parts):
        if prefix == "I":
            allowed[:, j] = [p in ("B", "I") and t == kind for p, t in parts]
    start_ok = np.array([p != "I" for p, _ in parts])
    penalty = np.where(allowed, 0.0, -np.inf)
    score = np.where(start_ok, logp[0], -np.inf)
    back = np.zeros((n, k), dtype=np.int64)
    for t in range(1, n):
        cand = score[:, None] + penalty
        back[t] = cand.argmax(0)
        score = cand[back[t], np.arange(k)] + logp[t]
    path = [int(score.argmax())]
    for t in range(n - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return [classes[j] for j in path[::-1]]


def region_score(
    pred_probs: np.ndarray,
    classes: Sequence[str],
    given: Sequence[str],
    suggested: Sequence[str],
    start: int,
    end: int,
) -> float:
    """How much the model prefers the given tags of tokens ``start:end`` to the suggested ones.

    With token probabilities treated as independent, ``p_g = prod_t p(given_t)`` and
    ``p_s = prod_t p(suggested_t)``; the score is ``p_g / (p_g + p_s)``, in (0, 1), 0.5 when
    the model cannot tell them apart and lower when it prefers the suggestion.

    Examples
    --------
    >>> probs = np.array([[0.1, 0.9]])
    >>> round(region_score(probs, ("O", "B-LOC"), ["O"], ["B-LOC"], 0, 1), 3)
    0.1
    """
    index = {c: i for i, c in enumerate(classes)}
    rows = np.arange(start, end)
    p = np.clip(np.asarray(pred_probs, dtype=float)[rows], _EPS, 1.0)
    log_given = np.log(p[np.arange(len(rows)), [index[t] for t in given[start:end]]]).sum()
    log_sugg = np.log(p[np.arange(len(rows)), [index[t] for t in suggested[start:end]]]).sum()
    return float(1.0 / (1.0 + np.exp(np.clip(log_sugg - log_given, -700, 700))))


def _components(given: list[Span], predicted: list[Span]) -> list[tuple[list[Span], list[Span]]]:
    """Groups of given and predicted spans connected by overlap, in sentence order."""
    items = [(s, 0) for s in given] + [(s, 1) for s in predicted]
    items.sort(key=lambda x: (x[0].start, x[0].end))
    groups: list[tuple[list[Span], list[Span], int]] = []
    for span, side in items:
        if groups and span.start < groups[-1][2]:
            g, p, end = groups[-1]
            groups[-1] = (g, p, max(end, span.end))
        else:
            groups.append(([], [], span.end))
        (groups[-1][0] if side == 0 else groups[-1][1]).append(span)
    return [(g, p) for g, p, _ in groups]


def span_issues(
    given_tags: Sequence[str],
    suggested_tags: Sequence[str],
    pred_probs: np.ndarray,
    classes: Sequence[str],
) -> list[TokenIssue]:
    """Typed issues where the given entities and the suggested entities of a sentence differ.

    Every given entity and every suggested entity is a candidate. Overlapping ones are
    grouped; a group where both sides agree exactly is no issue. Otherwise the group is one
    issue of kind ``wrong-type`` (same extent, another type), ``wrong-boundary``
    (overlapping, different extent), ``missing-entity`` (only the model has an entity) or
    ``spurious-entity`` (only the data has one), scored by :func:`region_score` over the
    tokens of the group.

    Parameters
    ----------
    given_tags, suggested_tags : list of str
        IOB2 tags of one sentence, as given and as decoded from the model.
    pred_probs : ndarray of shape (n_tokens, n_classes)

    Examples
    --------
    >>> classes = ("O", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
    >>> probs = np.full((3, 5), 0.02); probs[[0, 1, 2], [0, 3, 0]] = 0.92
    >>> [i.kind for i in span_issues(["O", "B-LOC", "O"], ["O", "B-ORG", "O"], probs, classes)]
    ['wrong-type']
    """
    given = spans_from_tags(given_tags)
    predicted = spans_from_tags(suggested_tags)
    issues: list[TokenIssue] = []
    for g, p in _components(given, predicted):
        if sorted(g) == sorted(p):
            continue
        start = min(s.start for s in g + p)
        end = max(s.end for s in g + p)
        score = region_score(pred_probs, classes, given_tags, suggested_tags, start, end)
        kind: IssueKind
        if not p:
            kind = "spurious-entity"
            detail = ", ".join(f"{s.type} not found by the model" for s in g)
        elif not g:
            kind = "missing-entity"
            detail = ", ".join(f"model finds {s.type}" for s in p)
        elif len(g) == 1 and len(p) == 1 and (g[0].start, g[0].end) == (p[0].start, p[0].end):
            kind = "wrong-type"
            detail = f"{g[0].type} -> {p[0].type}"
        else:
            kind = "wrong-boundary"
            detail = f"{' + '.join(s.type for s in g)} -> {' + '.join(s.type for s in p)}"
        issues.append(TokenIssue(kind, start, end, score, tuple(g), tuple(p), "model", detail))
    return issues


def tag_issues(
    given_tags: Sequence[str],
    suggested_tags: Sequence[str],
    pred_probs: np.ndarray,
    classes: Sequence[str],
) -> list[TokenIssue]:
    """For plain tags (no spans): one ``wrong-tag`` issue per token whose suggestion differs.

    Examples
    --------
    >>> probs = np.array([[0.8, 0.2], [0.3, 0.7]])
    >>> [(i.start, i.detail) for i in tag_issues(["NN", "NN"], ["NN", "VB"], probs, ("NN", "VB"))]
    [(1, 'NN -> VB')]
    """
    issues = []
    for t, (g, s) in enumerate(zip(given_tags, suggested_tags, strict=False)):
        if g != s:
            score = region_score(pred_probs, classes, given_tags, suggested_tags, t, t + 1)
            issues.append(TokenIssue("wrong-tag", t, t + 1, score, (Span(t, t + 1, g),),
                                     (Span(t, t + 1, s),), "model", f"{g} -> {s}"))
    return issues


def span_f1_counts(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], *,
                   plain: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, 2 TP and 2 TP + FP + FN over exact entity spans of IOB2 tags, so that
    ``num.sum() / den.sum()`` is the micro F1 of any set of sentences (for ``plain`` tags:
    token hits and token counts, i.e. token accuracy).

    Examples
    --------
    >>> num, den = span_f1_counts([["B-PER", "O"], ["B-LOC"]], [["B-PER", "O"], ["B-ORG"]])
    >>> num.tolist(), den.tolist(), float(num.sum() / den.sum())
    ([2.0, 0.0], [2.0, 2.0], 0.5)
    """
    num = np.zeros(len(gold))
    den = np.zeros(len(gold))
    for i, (pred, true) in enumerate(zip(predicted, gold, strict=True)):
        if plain:
            num[i] = sum(p == t for p, t in zip(pred, true, strict=True))
            den[i] = len(true)
            continue
        found = {(s.start, s.end, s.type) for s in spans_from_tags(pred)}
        wanted = {(s.start, s.end, s.type) for s in spans_from_tags(true)}
        num[i] = 2 * len(found & wanted)
        den[i] = len(found) + len(wanted)
    return num, den
