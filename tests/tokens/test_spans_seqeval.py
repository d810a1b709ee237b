"""Our span parsing agrees with seqeval's, the reference implementation of CoNLL-style
entity extraction (seqeval is a dev dependency; the test skips without it).

``spans_from_tags`` reads tags leniently, as conlleval does: a continuation tag (``I-X``, or
``E-X`` in BIOES) that does not continue an entity of its type opens a new one. That is
seqeval's default mode (``get_entities``). seqeval's strict mode (``mode="strict"`` with a
``scheme``) drops such ill-formed entities instead; on well-formed tags both agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from labelaudit.tokens import Span, spans_from_tags, tags_from_spans

seqeval_labeling = pytest.importorskip("seqeval.metrics.sequence_labeling")
seqeval_scheme = pytest.importorskip("seqeval.scheme")

TYPES = ("PER", "LOC", "ORG")
PREFIXES = {"iob1": ("B", "I"), "iob2": ("B", "I"), "bioes": ("B", "I", "E", "S")}
STRICT = {"iob1": "IOB1", "iob2": "IOB2", "bioes": "IOBES"}


def _ours(tags: list[str], scheme: str) -> list[tuple[str, int, int]]:
    return [(s.type, s.start, s.end) for s in spans_from_tags(tags, scheme=scheme)]


def _random_tags(rng: np.random.Generator, scheme: str) -> list[str]:
    """Any sequence of the scheme's tags, ill-formed ones included."""
    alphabet = ["O"] + [f"{p}-{t}" for p in PREFIXES[scheme] for t in TYPES]
    return [alphabet[i] for i in rng.integers(len(alphabet), size=rng.integers(0, 12))]


def _random_spans(rng: np.random.Generator, length: int) -> list[Span]:
    """Non-overlapping spans, adjacent ones of one type included."""
    spans, i = [], int(rng.integers(0, 2))
    while i < length:
        end = min(length, i + int(rng.integers(1, 4)))
        spans.append(Span(i, end, TYPES[int(rng.integers(len(TYPES)))]))
        i = end + int(rng.integers(0, 2))
    return spans


@pytest.mark.parametrize("scheme", ["iob1", "iob2", "bioes"])
def test_spans_agree_with_seqeval_get_entities_on_random_tags(scheme):
    rng = np.random.default_rng(0)
    for _ in range(2000):
        tags = _random_tags(rng, scheme)
        theirs = [(kind, start, end + 1)  # seqeval's end is inclusive
                  for kind, start, end in seqeval_labeling.get_entities(tags, suffix=False)]
        assert _ours(tags, scheme) == theirs, tags


@pytest.mark.parametrize("scheme", ["iob1", "iob2", "bioes"])
def test_spans_agree_with_seqeval_strict_mode_on_well_formed_tags(scheme):
    rng = np.random.default_rng(1)
    strict = getattr(seqeval_scheme, STRICT[scheme])
    for _ in range(500):
        length = int(rng.integers(0, 12))
        spans = _random_spans(rng, length)
        tags = tags_from_spans(spans, length, scheme=scheme)
        entities = seqeval_scheme.Entities([tags], scheme=strict, suffix=False).entities[0]
        theirs = [(e.tag, e.start, e.end) for e in entities]
        assert _ours(tags, scheme) == theirs == [(s.type, s.start, s.end) for s in spans], tags


def test_intended_difference_from_seqeval_strict_mode():
    """An I-X after O opens an entity for us (and seqeval's default mode); strict drops it."""
    tags = ["O", "I-PER", "I-PER", "O", "B-LOC"]
    assert _ours(tags, "iob2") == [("PER", 1, 3), ("LOC", 4, 5)]
    strict = seqeval_scheme.Entities([tags], scheme=seqeval_scheme.IOB2).entities[0]
    assert [(e.tag, e.start, e.end) for e in strict] == [("LOC", 4, 5)]
