"""Why an item is flagged: the evidence beside it (:class:`Evidence`).

Three kinds, each cheap next to the scan: the **words** of the item that push its member's
out-of-fold model toward the suggested label and against the given one (the fold model
that scored the item never saw it, so an item cannot explain itself); its 3 nearest
**neighbours** that carry the suggested label (cosine on label-free TF-IDF of every scored
text, or on the ``embed`` member's embeddings); and **conflicting duplicates**: items whose
normalised text (lower-cased, punctuation dropped) is identical, or nearly (cosine at least
:data:`NEAR_DUPLICATE`), with another label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labelaudit._errors import plain_value
from labelaudit.detect import Probs, suggest_labels
from labelaudit.models import WordCollector

N_WORDS = 5
N_NEIGHBOURS = 3
NEAR_DUPLICATE = 0.95  # cosine at least this: "nearly identical"
SNIPPET = 120  # characters of a neighbour's text shown
_CHUNK = 256  # items whose similarities are computed at once
_PUNCTUATION = re.compile(r"[^\w\s]+")


def normalised(text: object) -> str:
    """The text compared for duplicates: lower-cased, punctuation dropped, spaces collapsed.

    Examples
    --------
    >>> normalised("  Great film!!  A must-see. ")
    'great film a mustsee'
    """
    return " ".join(_PUNCTUATION.sub("", str(text).lower()).split())


def duplicate_groups(texts: Sequence[object], text_pairs: Sequence[object] | None = None,
                     ) -> np.ndarray:
    """Each item's group of identical normalised texts (pairs: both sides), numbered from 0.

    Examples
    --------
    >>> duplicate_groups(["A b.", "a B", "c"]).tolist()
    [0, 0, 1]
    """
    keys = [normalised(t) for t in texts] if text_pairs is None else [
        f"{normalised(a)}\t{normalised(b)}" for a, b in zip(texts, text_pairs, strict=True)]
    number: dict[str, int] = {}
    return np.array([number.setdefault(k, len(number)) for k in keys], dtype=np.int64)


def conflicting_groups(groups: np.ndarray, labels: np.ndarray) -> tuple[int, int]:
    """How many groups of identical texts hold several items, and how many of those
    carry different labels.

    Examples
    --------
    >>> conflicting_groups(np.array([0, 0, 1, 2, 2]), np.array([1, 1, 0, 0, 1]))
    (2, 1)
    """
    sizes = np.bincount(groups)
    several = sizes > 1
    pairs = np.unique(np.stack([groups, labels]), axis=1)
    labels_per_group = np.bincount(pairs[0], minlength=len(sizes))
    return int(several.sum()), int((labels_per_group > 1).sum())


def snippet(text: object, pair: object = None, limit: int = SNIPPET) -> str:
    """The start of an item's text (pairs: both sides), at most ``limit`` characters.

    Examples
    --------
    >>> snippet("a  long\\ntext", "its pair", limit=12)
    'a long text…'
    """
    whole = " ".join(str(text).split()) + ("" if pair is None else
                                            " / " + " ".join(str(pair).split()))
    return whole if len(whole) <= limit else whole[:limit - 1].rstrip() + "…"


def neighbour_features(texts: Sequence[str], text_pairs: Sequence[str] | None,
                       embeddings: np.ndarray | None = None) -> Any:
    """Rows of unit length for cosine similarity: the ``embed`` member's embeddings when
    given, else TF-IDF of word 1-2-grams (sublinear tf) fitted on these texts alone, which
    reads no label."""
    if embeddings is not None:
        vectors = np.asarray(embeddings, dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    from sklearn.feature_extraction.text import TfidfVectorizer

    joined = texts if text_pairs is None else [f"{a} {b}" for a, b in
                                               zip(texts, text_pairs, strict=True)]
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, max_features=200_000,
                                 token_pattern=r"(?u)\b\w+\b", dtype=np.float32)
    return vectorizer.fit_transform(joined)  # rows are l2-normalised


@dataclass(frozen=True)
class Evidence:
    """What explains the items of one scan: each item's ``words`` (the member's out-of-fold
    words, None when no member explains: ``pred_probs``), the ``features`` its neighbours
    are found by, its duplicate ``groups``, and the ``records`` computed so far by position
    (:meth:`records_of`)."""

    words: WordCollector | None
    features: Any
    groups: np.ndarray
    records: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def words_from(self) -> str | None:
        """The member whose words explain the ranking, or None."""
        return None if self.words is None else self.words.member

    def records_of(self, positions: Sequence[int] | np.ndarray, *, ids: np.ndarray,
                   texts: Sequence[str], text_pairs: Sequence[str] | None,
                   labels: np.ndarray, classes: np.ndarray,
                   pred_probs: Probs) -> list[dict[str, Any]]:
        """The evidence of the items at ``positions`` (kept in :attr:`records`): the dicts
        of the scan output's ``evidence`` column (docs/concepts/how-scan-ranks.md, 6)."""
        wanted = [int(p) for p in positions if int(p) not in self.records]
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            suggested = suggest_labels(labels[chunk], pred_probs[chunk])[0]
            similar = self.features[chunk] @ self.features.T
            similar = similar.toarray() if hasattr(similar, "toarray") else np.asarray(similar)
            for row, position, toward in zip(similar, chunk, suggested, strict=True):
                self.records[position] = self._record(
                    position, row, toward, ids=ids, texts=texts,
                    text_pairs=text_pairs, labels=labels, classes=classes)
        return [self.records[int(p)] for p in positions]

    def _record(self, position: int, similar: np.ndarray, suggested: int, *, ids: np.ndarray,
                texts: Sequence[str], text_pairs: Sequence[str] | None, labels: np.ndarray,
                classes: np.ndarray) -> dict[str, Any]:
        similar = np.asarray(similar, dtype=np.float64).copy()
        similar[position] = -np.inf  # never the item itself
        given = labels[position]
        same = np.flatnonzero((labels == suggested) & (similar > 0))
        near = same[np.argsort(-similar[same], kind="stable")[:N_NEIGHBOURS]]
        twins = np.flatnonzero(((self.groups == self.groups[position])
                                | (similar >= NEAR_DUPLICATE)) & (labels != given))
        twins = twins[twins != position]
        twins = twins[np.argsort(-np.minimum(similar[twins], 1.0), kind="stable")][:N_WORDS]
        said = self.words.toward(position, int(suggested)) if self.words is not None else None
        return {
            "toward": plain_value(classes[suggested]),
            "against": plain_value(classes[given]),
            "words": [{"term": term, "weight": round(weight, 4),
                       "side": "text_pair" if pair else "text"}
                      for term, weight, pair in (said or [])[:N_WORDS]],
            "words_from": self.words_from if said is not None else None,
            "neighbours": [{"id": plain_value(ids[i]), "label": plain_value(classes[labels[i]]),
                            "similarity": round(float(similar[i]), 4),
                            "snippet": snippet(texts[i], None if text_pairs is None
                                               else text_pairs[i])} for i in near],
            "duplicate_of": [{"id": plain_value(ids[i]),
                              "label": plain_value(classes[labels[i]]),
                              "similarity": 1.0 if self.groups[i] == self.groups[position]
                              else round(min(float(similar[i]), 1.0), 4)} for i in twins],
        }


def build_evidence(texts: Sequence[str], text_pairs: Sequence[str] | None, *,
                   words: WordCollector | None, embeddings: np.ndarray | None) -> Evidence:
    """The :class:`Evidence` of the scored items (no record computed yet)."""
    return Evidence(words=words, features=neighbour_features(texts, text_pairs, embeddings),
                    groups=duplicate_groups(texts, text_pairs))

