"""The scan's evidence of a review item, kept as JSON in the project and held back where it
would show a blind reviewer a label.

:func:`labelaudit.io.read_evidence` reads a scan output's ``evidence`` cell whatever the file
made of it; the project keeps that dict as JSON text (:func:`evidence_json`), and
:func:`hide_items` drops the neighbours and duplicates that would show a blind reviewer the
label of an item still to answer.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from labelaudit.io import read_evidence


def evidence_json(evidence: dict[str, Any] | None) -> str | None:
    """An item's evidence (:func:`labelaudit.io.read_evidence`'s dict) as the JSON text of the
    project's ``evidence`` column, or None."""
    return None if evidence is None else json.dumps(evidence, ensure_ascii=False)


def stored_evidence(text: Any) -> dict[str, Any] | None:
    """The evidence kept in a project's ``evidence`` column (JSON text or missing)."""
    return read_evidence(text)


def hide_items(evidence: dict[str, Any] | None, hidden: Collection[str],
               ) -> dict[str, Any] | None:
    """``evidence`` without the neighbours and duplicates whose id is in ``hidden``.

    In a blind review, another item's label in the evidence would give away the given label
    of an item the reviewer has still to answer, if that item is in the review.

    >>> hide_items({"neighbours": [{"id": 1}, {"id": 2}], "duplicate_of": [{"id": 2}]},
    ...            {"2"})
    {'neighbours': [{'id': 1}], 'duplicate_of': []}
    """
    if evidence is None:
        return None
    return {**evidence, **{key: [e for e in evidence.get(key) or []
                                 if str(e.get("id")) not in hidden]
                           for key in ("neighbours", "duplicate_of")}}
