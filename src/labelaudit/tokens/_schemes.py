"""Tagging schemes: parsing, detection, conversion, spans and span F1. Span data is held in
IOB2 (``B-`` opens every entity); tags without prefixes (part-of-speech) are ``"plain"``:
atomic classes, no spans."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_choice

Scheme = Literal["iob1", "iob2", "bioes", "plain"]
SCHEMES: tuple[str, ...] = ("iob1", "iob2", "bioes", "plain")
_PREFIXES = {"B": "B", "I": "I", "E": "E", "S": "S", "L": "E", "U": "S"}  # BILOU aliases


@dataclass(frozen=True, order=True)
class Span:
    """An entity: tokens ``start`` to ``end - 1`` of one sentence, of type ``type``."""

    start: int
    end: int
    type: str

    def to_dict(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "type": self.type}


def is_span_tag(tag: str) -> bool:
    """True for ``O`` and for tags with a known position prefix and a type (``B-PER``, ``E-LOC``;
    not ``NNP`` nor ``B-``)."""
    prefix, sep, kind = tag.partition("-")
    return tag == "O" or (bool(sep) and prefix in _PREFIXES and bool(kind))


def split_tag(tag: str) -> tuple[str, str]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", "")``; BILOU ``L``/``U`` map to E/S."""
    if tag == "O":
        return "O", ""
    prefix, sep, kind = tag.partition("-")
    if not sep or prefix not in _PREFIXES or not kind:  # not is_span_tag, without a 2nd split
        raise InvalidInputError(
            f"tag {tag!r} has no known prefix: expected O or B-, I-, E-, S- followed by a type")
    return _PREFIXES[prefix], kind


def detect_scheme(sentences: Sequence[Sequence[str]]) -> Scheme:
    """Guess the tagging scheme of a dataset from its tags.

    ``E-``/``S-`` tags mean BIOES; a ``B-X`` that opens an entity (at the start of a
    sentence or after another type) means IOB2; ``I-`` tags that open entities and no such
    ``B-`` mean IOB1 (where ``B-`` only separates two adjacent entities of one type); no
    prefixed tag at all means plain tags (for example part-of-speech tags).

    Examples
    --------
    >>> detect_scheme([["B-PER", "I-PER", "O"]])
    'iob2'
    >>> detect_scheme([["I-PER", "I-PER", "B-PER", "O"]])
    'iob1'
    >>> detect_scheme([["S-LOC", "O", "B-ORG", "E-ORG"]])
    'bioes'
    >>> detect_scheme([["NNP", "VBZ", "."]])
    'plain'
    """
    any_prefixed = False
    opening_b = False
    opening_i = False
    for tags in sentences:
        previous = ("O", "")
        for tag in tags:
            if not is_span_tag(tag):
                continue
            prefix, kind = split_tag(tag)
            if prefix in ("E", "S"):
                return "bioes"
            if prefix != "O":
                any_prefixed = True
            continues = previous[0] != "O" and previous[1] == kind
            if prefix == "B" and not continues:
                opening_b = True
            if prefix == "I" and not continues:
                opening_i = True
            previous = (prefix, kind)
    if not any_prefixed:
        return "plain"
    if opening_i and not opening_b:
        return "iob1"
    return "iob2"


def spans_from_tags(tags: Sequence[str], *, scheme: Scheme = "iob2") -> list[Span]:
    """The entities of one sentence, read leniently (an ``I-X`` after ``O`` opens an entity).

    We keep our own parser (no runtime dependency) and a test
    (``tests/tokens/test_spans_seqeval.py``) shows it agrees with seqeval's default
    ``get_entities`` on random IOB1, IOB2 and BIOES sequences, ill-formed ones included;
    seqeval's strict mode instead drops an ``I-X`` that does not continue an entity.

    Examples
    --------
    >>> spans = spans_from_tags(["B-PER", "I-PER", "O", "B-LOC", "B-LOC"])
    >>> [(s.start, s.end, s.type) for s in spans]
    [(0, 2, 'PER'), (3, 4, 'LOC'), (4, 5, 'LOC')]
    >>> spans_from_tags(["O", "I-ORG", "I-ORG"])
    [Span(start=1, end=3, type='ORG')]
    """
    check_choice(scheme, "scheme", SCHEMES)
    if scheme == "plain":
        return []
    tags = convert_tags(tags, source=scheme, target="iob2") if scheme != "iob2" else tags
    spans: list[Span] = []
    start, kind = -1, ""
    for i, tag in enumerate(tags):
        prefix, this = split_tag(tag)
        if prefix == "I" and start >= 0 and this == kind:
            continue
        if start >= 0:
            spans.append(Span(start, i, kind))
            start, kind = -1, ""
        if prefix in ("B", "I"):
            start, kind = i, this
    if start >= 0:
        spans.append(Span(start, len(tags), kind))
    return spans


def tags_from_spans(spans: Sequence[Span], length: int, *, scheme: Scheme = "iob2") -> list[str]:
    """Tags of a sentence of ``length`` tokens holding ``spans`` (which must not overlap).

    Examples
    --------
    >>> tags_from_spans([Span(1, 3, "ORG")], 4)
    ['O', 'B-ORG', 'I-ORG', 'O']
    >>> tags_from_spans([Span(1, 3, "ORG")], 4, scheme="bioes")
    ['O', 'B-ORG', 'E-ORG', 'O']
    """
    tags = ["O"] * length
    for span in spans:
        if span.start < 0 or span.end > length or span.start >= span.end:
            raise InvalidInputError(f"span {span} does not fit in a sentence of {length} tokens")
        if any(t != "O" for t in tags[span.start : span.end]):
            raise InvalidInputError(f"span {span} overlaps another span")
        tags[span.start] = f"B-{span.type}"
        for i in range(span.start + 1, span.end):
            tags[i] = f"I-{span.type}"
    return convert_tags(tags, source="iob2", target=scheme) if scheme != "iob2" else tags


def convert_tags(tags: Sequence[str], *, source: Scheme, target: Scheme) -> list[str]:
    """Convert one sentence's tags between IOB1, IOB2 and BIOES.

    Ill-formed sequences are read the way conlleval reads them: a continuation tag that
    does not continue an entity of its type opens a new one. Plain tags pass unchanged.

    Examples
    --------
    >>> convert_tags(["I-PER", "I-PER", "B-PER", "O"], source="iob1", target="iob2")
    ['B-PER', 'I-PER', 'B-PER', 'O']
    >>> convert_tags(["B-LOC", "I-LOC", "B-PER"], source="iob2", target="bioes")
    ['B-LOC', 'E-LOC', 'S-PER']
    >>> convert_tags(["B-LOC", "B-LOC", "O"], source="iob2", target="iob1")
    ['I-LOC', 'B-LOC', 'O']
    """
    check_choice(source, "source", SCHEMES)
    check_choice(target, "target", SCHEMES)
    if source == "plain" or target == "plain":
        if source != target:
            raise InvalidParameterError("plain tags cannot be converted to or from a span scheme")
        return list(tags)
    # Step 1: any scheme -> IOB2.
    iob2: list[str] = []
    previous = ("O", "")
    for tag in tags:
        prefix, kind = split_tag(tag)
        if prefix == "O":
            iob2.append("O")
        elif prefix in ("B", "S"):
            iob2.append(f"B-{kind}")
        else:  # I or E: continue an open entity of the same type, else open one
            inside = previous[0] in ("B", "I") and previous[1] == kind
            iob2.append(f"I-{kind}" if inside else f"B-{kind}")
        # After E- or S- the entity is closed.
        previous = ("O", "") if prefix in ("O", "E", "S") else (prefix, kind)
    if target == "iob2":
        return iob2
    out: list[str] = []
    for i, tag in enumerate(iob2):
        prefix, kind = split_tag(tag)
        nxt = split_tag(iob2[i + 1]) if i + 1 < len(iob2) else ("O", "")
        continues = nxt == ("I", kind)
        if prefix == "O":
            out.append("O")
        elif target == "bioes":
            if prefix == "B":
                out.append(f"B-{kind}" if continues else f"S-{kind}")
            else:
                out.append(f"I-{kind}" if continues else f"E-{kind}")
        else:  # iob1: B- only where an entity directly follows another of the same type
            before = split_tag(iob2[i - 1]) if i > 0 else ("O", "")
            after_same = prefix == "B" and before[0] != "O" and before[1] == kind
            out.append(f"B-{kind}" if after_same else f"I-{kind}")
    return out


def invalid_transitions(tags: Sequence[str], *, scheme: Scheme) -> list[tuple[int, str]]:
    """Positions whose tag cannot follow the previous one (or end a sentence) in ``scheme``.

    Returns ``(token index, reason)`` pairs. In IOB2 an ``I-X`` must follow ``B-X`` or
    ``I-X``; in BIOES ``I-X``/``E-X`` must follow ``B-X``/``I-X`` and ``B-X``/``I-X`` must be
    followed by ``I-X``/``E-X``; IOB1 and plain tags have no invalid sequences.

    Examples
    --------
    >>> invalid_transitions(["O", "I-PER", "B-LOC", "I-ORG"], scheme="iob2")
    [(1, 'I-PER after O'), (3, 'I-ORG after B-LOC')]
    >>> invalid_transitions(["B-PER", "O"], scheme="bioes")
    [(0, 'B-PER not closed by I-PER or E-PER')]
    """
    check_choice(scheme, "scheme", SCHEMES)
    if scheme in ("iob1", "plain"):
        return []
    found: list[tuple[int, str]] = []
    previous_tag = "O"
    for i, tag in enumerate(tags):
        prefix, kind = split_tag(tag)
        before = split_tag(previous_tag)
        if prefix in ("I", "E"):
            if before[0] not in ("B", "I") or before[1] != kind:
                where = "the sentence start" if i == 0 else previous_tag
                found.append((i, f"{tag} after {where}"))
        if scheme == "bioes" and prefix in ("B", "I"):
            nxt = split_tag(tags[i + 1]) if i + 1 < len(tags) else ("O", "")
            if nxt[0] not in ("I", "E") or nxt[1] != kind:
                found.append((i, f"{tag} not closed by I-{kind} or E-{kind}"))
        previous_tag = tag
    return found


def span_f1_counts(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], *,
                   plain: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, 2 TP and 2 TP + FP + FN over exact entity spans of IOB2 tags, so that
    ``num.sum() / den.sum()`` is the micro F1 of any set of sentences (``plain``: accuracy).

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
