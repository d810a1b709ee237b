"""Why an item is flagged, as the report shows it: a scan's ``evidence`` cell, read by
:func:`labelaudit.io.read_evidence` whatever the file made of it, drawn as a compact block
beside the item's text. Of the one readable line CSV and TSV hold
(``toward neg: waste, worst (pair) | like neg: #17 (0.41) | duplicate of #9 (pos)``), the
words are highlighted and the rest is shown as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from labelaudit._errors import InvalidInputError
from labelaudit.io import evidence_text, is_missing, read_evidence
from labelaudit.report._html import esc, fmt_num, label_text


@dataclass(frozen=True)
class Word:
    """A word n-gram of the item that pushes toward the suggested label, from one side."""

    term: str
    weight: float | None = None
    side: str = "text"


@dataclass(frozen=True)
class Neighbour:
    """An item like this one: its id, label, cosine similarity and the start of its text."""

    id: Any
    label: Any = None
    similarity: float | None = None
    snippet: str | None = None


@dataclass(frozen=True)
class Evidence:
    """One item's evidence; ``parts``: the rest of a readable line (CSV), shown as text."""

    toward: Any
    against: Any = None
    words: tuple[Word, ...] = ()
    words_from: str | None = None
    neighbours: tuple[Neighbour, ...] = ()
    duplicate_of: tuple[Neighbour, ...] = ()
    parts: tuple[str, ...] = ()

    def terms(self, side: str = "text") -> list[str]:
        """The terms of one side, to highlight in that side's text."""
        return [w.term for w in self.words if w.side == side]


def cell_evidence(cell: object) -> Evidence | None:
    """The evidence a cell holds, None for an item without; :class:`InvalidInputError` for a
    cell that is no evidence (:func:`labelaudit.io.read_evidence`).

    >>> cell_evidence(None), cell_evidence(float("nan"))
    (None, None)
    >>> ev = cell_evidence("toward neg: waste of time, dull (pair) | duplicate of #9 (pos)")
    >>> ev.toward, ev.terms("text"), ev.terms("text_pair"), ev.parts
    ('neg', ['waste of time'], ['dull'], ('duplicate of #9 (pos)',))
    >>> cell_evidence({"toward": "neg", "words": [{"term": "bad", "weight": 0.5}]}).words
    (Word(term='bad', weight=0.5, side='text'),)
    """
    record = read_evidence(cell)
    if record is None:
        return None
    words = tuple(Word(w["term"], w["weight"], w["side"]) for w in record["words"])
    if isinstance(cell, str) and not cell.strip().startswith("{"):  # a CSV line
        rest = evidence_text({**record, "words": []})
        return Evidence(toward=record["toward"], words=words,
                        parts=tuple(rest.split(" | ")) if rest else ())
    return Evidence(
        toward=record["toward"], against=record["against"], words=words,
        words_from=record["words_from"],
        neighbours=tuple(Neighbour(n["id"], n["label"], n["similarity"], n["snippet"])
                         for n in record["neighbours"]),
        duplicate_of=tuple(Neighbour(d["id"], d["label"], d["similarity"])
                           for d in record["duplicate_of"]))


def evidence_problem(cell: object) -> str | None:
    """What is wrong with a cell, or None when it reads (:func:`cell_evidence`)."""
    try:
        read_evidence(cell)
    except InvalidInputError as error:
        return str(error)
    return None


def _label(value: object) -> str:
    return esc(label_text(value))


def _neighbour_line(n: Neighbour) -> str:
    similarity = f' <span class="num">{fmt_num(n.similarity, 2)}</span>' if (
        n.similarity is not None) else ""
    snippet = f' <span class="snip">{esc(n.snippet)}</span>' if n.snippet else ""
    return (f'<li><span class="ev-id">#{_label(n.id)}</span> '
            f'<span class="lab">{_label(n.label)}</span>{similarity}{snippet}</li>')


def evidence_block(evidence: Evidence) -> str:
    """The compact block: ``toward <label>: words``, the nearest items with that label, and,
    strongly marked, the near-identical items with another label (every string escaped).

    >>> html = evidence_block(cell_evidence({"toward": "neg", "against": "pos",
    ...     "words": [{"term": "<b>", "weight": 0.9}],
    ...     "duplicate_of": [{"id": 9, "label": "pos"}]}))
    >>> "<b>" in html, "duplicate of #9, labelled pos" in html
    (False, True)
    """
    toward = f'toward <b class="lab">{_label(evidence.toward)}</b>'
    if not is_missing(evidence.against):
        toward += f' <span class="muted">(given {_label(evidence.against)})</span>'
    lines = []
    if evidence.words:
        chips = ", ".join(
            f'<mark class="ev"{_weight(w, evidence.words_from)}>{esc(w.term)}</mark>'
            + (' <span class="muted">(pair)</span>' if w.side == "text_pair" else "")
            for w in evidence.words)
        lines.append(f'<div class="ev-words">{toward}: {chips}</div>')
    elif not evidence.parts or evidence.words_from:
        lines.append(f'<div class="ev-words">{toward}</div>')
    for dup in evidence.duplicate_of:
        similarity = ("identical" if dup.similarity is None or dup.similarity >= 1 - 1e-9
                      else f"similarity {fmt_num(dup.similarity, 2)}")
        lines.append(f'<div class="ev-dup" role="note">duplicate of #{_label(dup.id)}, '
                     f'labelled {_label(dup.label)} <span class="muted">({similarity})</span>'
                     "</div>")
    if evidence.neighbours:
        lines.append(f'<div class="ev-like">like {_label(evidence.toward)}:</div>'
                     f'<ol class="ev-nb">{"".join(map(_neighbour_line, evidence.neighbours))}'
                     "</ol>")
    for part in evidence.parts:
        cls = "ev-dup" if part.startswith("duplicate of") else "ev-part"
        lines.append(f'<div class="{cls}">{esc(part)}</div>')
    return f'<div class="evidence">{"".join(lines)}</div>'


def _weight(word: Word, source: str | None) -> str:
    if word.weight is None:
        return ""
    return f' title="weight {fmt_num(word.weight, 3)}{f" ({esc(source)})" if source else ""}"'
