"""Plain-text views of token scan records: sentences with the suspect spans marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


__all__ = ["format_issue_table", "issues_to_frame", "mark_sentence"]


def _spans_text(spans: Sequence[dict]) -> str:
    return " + ".join(f"{s['type']}" for s in spans) or "O"


def mark_sentence(
    tokens: Sequence[str], regions: Sequence[tuple[int, int, str]], *, context: int = 12
) -> str:
    """The sentence with each region written ``[tokens]{note}``, cut to ``context`` words
    around the marked regions.

    Examples
    --------
    >>> mark_sentence(["He", "met", "John", "Smith"], [(2, 4, "O->PER")])
    'He met [John Smith]{O->PER}'
    """
    opens: dict[int, list[str]] = {}
    closes: dict[int, list[str]] = {}
    taken: list[tuple[int, int]] = []
    for start, end, note in regions:
        if any(start < b and a < end for a, b in taken):
            continue  # overlapping regions are listed below the sentence, not marked twice
        taken.append((start, end))
        opens.setdefault(start, []).append("[")
        closes.setdefault(end - 1, []).append(f"]{{{note}}}" if note else "]")
    words = []
    for i, tok in enumerate(tokens):
        words.append("".join(opens.get(i, [])) + tok + "".join(closes.get(i, [])))
    if not taken:
        return " ".join(words)
    lo = max(0, min(a for a, _ in taken) - context)
    hi = min(len(words), max(b for _, b in taken) + context)
    text = " ".join(words[lo:hi])
    return ("… " if lo > 0 else "") + text + (" …" if hi < len(words) else "")


def _note(issue: dict) -> str:
    if issue["kind"] == "invalid-sequence":
        return issue["detail"].split(" (")[0]
    return f"{_spans_text(issue['given'])}->{_spans_text(issue['suggested'])}"


def format_issue_table(records: Sequence[dict], *, top: int | None = 20) -> str:
    """Text view of the most suspect sentences: the sentence with suspect spans marked, then
    one line per issue (kind, score, source, detail).

    Examples
    --------
    >>> record = {"id": 7, "rank": 1, "score": 0.01, "tokens": ["Rome", "wins"],
    ...           "tags": ["B-ORG", "O"], "token_scores": [-4.6, -0.1],
    ...           "issues": [{"kind": "wrong-type", "start": 0, "end": 1, "score": 0.02,
    ...                       "source": "model", "given": [{"type": "ORG"}],
    ...                       "suggested": [{"type": "LOC"}], "detail": "ORG -> LOC"}]}
    >>> print(format_issue_table([record]))
    #1  sentence 7  score 0.01
        [Rome]{ORG->LOC} wins
        wrong-type        0.02      model  Rome: ORG -> LOC
    """
    lines: list[str] = []
    for record in records[: top if top is not None else len(records)]:
        tokens = record["tokens"]
        issues = record.get("issues", [])
        regions = [(i["start"], i["end"], _note(i)) for i in issues]
        if not regions and record.get("token_scores"):
            worst = min(range(len(tokens)), key=lambda t: record["token_scores"][t])
            regions = [(worst, worst + 1, f"{record['tags'][worst]}?")]
        lines.append(f"#{record.get('rank', '?')}  sentence {record['id']}  "
                     f"score {float(record['score']):.3g}")
        lines.append("    " + mark_sentence(tokens, regions))
        for i in issues:
            text = " ".join(tokens[i["start"] : i["end"]])
            lines.append(f"    {i['kind']:<17} {float(i['score']):<9.3g} {i['source']:<5}  "
                         f"{text}: {i['detail']}")
    return "\n".join(lines)


def issues_to_frame(records: Sequence[dict]) -> pd.DataFrame:
    """One row per issue: ``id, rank, sentence_score, kind, source, start, end, text, given,
    suggested, score, detail``, most suspect issue first."""
    import pandas as pd
    rows = []
    for r in records:
        for i in r.get("issues", []):
            rows.append({
                "id": r["id"], "rank": r.get("rank"), "sentence_score": r["score"],
                "kind": i["kind"], "source": i["source"], "start": i["start"], "end": i["end"],
                "text": " ".join(r["tokens"][i["start"] : i["end"]]),
                "given": " ".join(f"{s['type']}[{s['start']}:{s['end']}]" for s in i["given"]),
                "suggested": " ".join(f"{s['type']}[{s['start']}:{s['end']}]"
                                      for s in i["suggested"]),
                "score": i["score"], "detail": i["detail"],
            })
    columns = ["id", "rank", "sentence_score", "kind", "source", "start", "end", "text",
               "given", "suggested", "score", "detail"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values(["score", "rank"], kind="stable", ignore_index=True)
