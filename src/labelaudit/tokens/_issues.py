"""The issue record shared by span issues and rule-based issues."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from labelaudit.tokens._schemes import Span

__all__ = ["ISSUE_KINDS", "IssueKind", "TokenIssue"]

IssueKind = Literal[
    "wrong-type",
    "wrong-boundary",
    "missing-entity",
    "spurious-entity",
    "wrong-tag",
    "invalid-sequence",
    "inconsistent-tag",
]
ISSUE_KINDS: tuple[str, ...] = get_args(IssueKind)


@dataclass(frozen=True)
class TokenIssue:
    """One suspect region of a sentence: tokens ``start`` to ``end - 1``.

    Attributes
    ----------
    kind : str
        ``wrong-type`` (same span, another type), ``wrong-boundary`` (overlapping spans that
        differ in extent), ``missing-entity`` (the model finds an entity where the data has
        none), ``spurious-entity`` (the data has an entity the model does not find),
        ``wrong-tag`` (plain tags: another tag), ``invalid-sequence`` and ``inconsistent-tag``
        (rules that need no model).
    score : float
        Label-quality score of the region's given tags; lower means more suspect.
    given, suggested : tuple of Span
        The entities in the region as given and as suggested.
    source : {"model", "rule"}
    detail : str
        A short human-readable explanation.
    """

    kind: IssueKind
    start: int
    end: int
    score: float
    given: tuple[Span, ...] = ()
    suggested: tuple[Span, ...] = ()
    source: Literal["model", "rule"] = "model"
    detail: str = ""

    def to_dict(self, tokens: Sequence[str] | None = None) -> dict[str, object]:
        def span(s: Span) -> dict[str, object]:
            out = s.to_dict()
            if tokens is not None:
                out["text"] = " ".join(tokens[s.start : s.end])
            return out

        record: dict[str, object] = {
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "score": float(f"{float(self.score):.6g}"),
            "source": self.source,
            "given": [span(s) for s in self.given],
            "suggested": [span(s) for s in self.suggested],
            "detail": self.detail,
        }
        if tokens is not None:
            record["text"] = " ".join(tokens[self.start : self.end])
        return record

    @classmethod
    def from_dict(cls, record: dict) -> TokenIssue:
        def spans(items) -> tuple[Span, ...]:
            return tuple(Span(int(s["start"]), int(s["end"]), str(s["type"])) for s in items or ())

        return cls(
            kind=record["kind"],
            start=int(record["start"]),
            end=int(record["end"]),
            score=float(record["score"]),
            given=spans(record.get("given")),
            suggested=spans(record.get("suggested")),
            source=record.get("source", "model"),
            detail=record.get("detail", ""),
        )
