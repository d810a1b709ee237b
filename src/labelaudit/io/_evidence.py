"""The ``evidence`` cell of a scan output, as files hold it: read from any of them, written as
the readable line of a CSV.

A flagged item's cell says why it was flagged: the words of the item that push toward the
suggested label (``toward``) and against the given one (``against``), its nearest items
carrying the suggested label (``neighbours``) and the items with the same text but another
label (``duplicate_of``). A ``ScanResult`` frame, JSON lines and JSON give it as a dict, Parquet
as a dict whose lists are numpy arrays, CSV and TSV as one readable line
(``toward neg: waste, worst (pair) | like neg: #17 (0.41) | duplicate of #9 (pos)``).
:func:`read_evidence` turns any of them into one plain dict, :func:`evidence_text` writes the
line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from labelaudit._errors import InvalidInputError
from labelaudit.io._labels import is_missing

KEYS = ("toward", "against", "words", "words_from", "neighbours", "duplicate_of")
SIDES = ("text", "text_pair")
_PAIR = " (pair)"
_REFERENCE = re.compile(r"#(\S+) \(([^()]*)\)")
_DECIMAL = re.compile(r"-?\d+(\.\d*)?")


def _plain(value: Any) -> Any:
    """A JSON-ready copy: numpy scalars and arrays as Python ones, NaN as None."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy arrays (Parquet's lists) and numpy scalars
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return None if is_missing(value) else value


def _missing(value: object) -> bool:
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def read_evidence(cell: object) -> dict[str, Any] | None:
    """One item's evidence as a plain dict with every key of :data:`KEYS`, or None.

    Parameters
    ----------
    cell : dict, str or None
        A cell of a scan output's ``evidence`` column: a dict (lists may be numpy arrays), a
        JSON object's text, the readable line of a CSV, or missing (None, NaN, "").

    Returns
    -------
    dict or None
        Words as ``{"term", "weight", "side"}``, neighbours as ``{"id", "label",
        "similarity", "snippet"}``, duplicates as ``{"id", "label", "similarity"}``; what a
        line does not say is None, and its parts that are none of these are kept in
        ``other``.

    Raises
    ------
    InvalidInputError
        For a cell that is no evidence; the message says what it holds (the caller names the
        row).

    Examples
    --------
    >>> ev = read_evidence("toward neg: waste, dull (pair) | like neg: #17 (0.41) | "
    ...                    "duplicate of #9 (pos)")
    >>> ev["toward"], [w["side"] for w in ev["words"]], ev["neighbours"][0]["id"]
    ('neg', ['text', 'text_pair'], '17')
    >>> ev["duplicate_of"]
    [{'id': '9', 'label': 'pos', 'similarity': None}]
    >>> read_evidence(float("nan")) is None
    True
    >>> read_evidence(42)
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidInputError: 42 (expected an object, its JSON, or its text)
    """
    if _missing(cell):
        return None
    if isinstance(cell, str):
        text = cell.strip()
        if not text.startswith(("{", "[")):  # no readable line starts so
            return _from_text(text)
        try:
            cell = json.loads(text)
        except json.JSONDecodeError:
            raise InvalidInputError(f"text that is not JSON: {text[:60]!r}") from None
    if not isinstance(cell, Mapping):
        raise InvalidInputError(f"{cell!r} (expected an object, its JSON, or its text)")
    value = _plain(cell)
    if _missing(value.get("toward")):
        raise InvalidInputError(f"an object without 'toward' (keys: {', '.join(value)})")
    source = value.get("words_from")
    return {**value, "against": value.get("against"),
            "words": [_word(e) for e in _entries(value, "words")],
            "words_from": None if _missing(source) else str(source),
            "neighbours": [{**_reference(e, "neighbours"), "snippet": _snippet(e)}
                           for e in _entries(value, "neighbours")],
            "duplicate_of": [_reference(e, "duplicate_of")
                             for e in _entries(value, "duplicate_of")]}


def _entries(value: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The objects listed under ``key``, none when it is missing."""
    entries = value.get(key)
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InvalidInputError(f"{key!r} is a {type(entries).__name__} (expected a list)")
    bad = [e for e in entries if not isinstance(e, dict)]
    if bad:
        raise InvalidInputError(f"{key!r} holds {bad[0]!r} (expected objects)")
    return entries


def _number(value: object, what: str) -> float | None:
    if _missing(value):
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"{what} {value!r} (expected a number)")
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} {value!r} (expected a number)") from None


def _word(entry: dict[str, Any]) -> dict[str, Any]:
    term = entry.get("term")
    if not isinstance(term, str) or not term.strip():
        raise InvalidInputError(f"a word without a term: {entry!r}")
    side = entry.get("side") or "text"
    if side not in SIDES:
        raise InvalidInputError(f"word {term!r} has side {side!r} (expected text or text_pair)")
    return {**entry, "weight": _number(entry.get("weight"), f"word {term!r} has weight"),
            "side": side}


def _reference(entry: dict[str, Any], key: str) -> dict[str, Any]:
    """A neighbour or duplicate: another item's ``id``, ``label`` and ``similarity``."""
    if _missing(entry.get("id")):
        raise InvalidInputError(f"an entry of {key!r} without an id: {entry!r}")
    return {**entry, "label": entry.get("label"),
            "similarity": _number(entry.get("similarity"), f"{key!r} has similarity")}


def _snippet(entry: dict[str, Any]) -> str | None:
    snippet = entry.get("snippet")
    return None if _missing(snippet) else str(snippet)


def _from_text(text: str) -> dict[str, Any]:
    """The readable line of a CSV cell, parsed back as far as it goes."""
    evidence: dict[str, Any] = {**dict.fromkeys(KEYS), "words": [], "neighbours": [],
                                "duplicate_of": []}
    other = []
    for part in (p.strip() for p in text.split(" | ")):
        head, _, rest = part.partition(": ")
        if part.startswith("toward ") and rest and not evidence["words"]:
            evidence["toward"] = head[len("toward "):]
            for term in (t.strip() for t in rest.split(", ")):
                pair = term.endswith(_PAIR)
                term = term[:-len(_PAIR)].strip() if pair else term
                if term:
                    evidence["words"].append({"term": term, "weight": None,
                                              "side": "text_pair" if pair else "text"})
        elif part.startswith("like ") and rest:
            label = head[len("like "):]
            evidence["toward"] = evidence["toward"] or label
            evidence["neighbours"] = [
                {"id": ref, "label": label, "snippet": None,
                 "similarity": float(sim) if _DECIMAL.fullmatch(sim) else None}
                for ref, sim in _REFERENCE.findall(rest)]
        elif part.startswith("duplicate of "):
            evidence["duplicate_of"] = [
                {"id": ref, "label": label, "similarity": None}
                for ref, label in _REFERENCE.findall(part[len("duplicate of "):])]
        elif part:
            other.append(part)
    if other:
        evidence["other"] = other
    return evidence


def evidence_text(record: Mapping[str, Any] | None) -> str | None:
    """One evidence record as the readable line a CSV cell holds, a part with nothing left
    out (None stays None); :func:`read_evidence` reads it back.

    Examples
    --------
    >>> evidence_text({"toward": "neg", "against": "pos", "words_from": "tfidf",
    ...     "words": [{"term": "waste", "weight": 1.2, "side": "text"},
    ...               {"term": "dull", "weight": 0.4, "side": "text_pair"}],
    ...     "neighbours": [{"id": 17, "label": "neg", "similarity": 0.41, "snippet": "x"}],
    ...     "duplicate_of": [{"id": 9, "label": "pos", "similarity": 1.0}]})
    'toward neg: waste, dull (pair) | like neg: #17 (0.41) | duplicate of #9 (pos)'
    """
    if record is None:
        return None
    words, neighbours, duplicates = (_listed(record, key) for key in
                                     ("words", "neighbours", "duplicate_of"))
    parts = []
    if words:
        parts.append(f"toward {record.get('toward')}: " + ", ".join(
            str(w.get("term")) + (_PAIR if w.get("side") == "text_pair" else "")
            for w in words))
    if neighbours:
        parts.append(f"like {record.get('toward')}: " + ", ".join(
            f"#{n.get('id')}" + (f" ({n['similarity']:.2f})" if isinstance(
                n.get("similarity"), (int, float)) else "") for n in neighbours))
    if duplicates:
        parts.append("duplicate of " + ", ".join(f"#{d.get('id')} ({d.get('label')})"
                                                 for d in duplicates))
    return " | ".join(parts + [str(p) for p in _listed(record, "other")])


def _listed(record: Mapping[str, Any], key: str) -> list[Any]:
    """The entries under ``key`` (a list, or a numpy array from Parquet), none when missing."""
    value = record.get(key)
    return [] if value is None else list(value)
