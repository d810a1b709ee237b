"""Building the token scorers a scan asks for by name, and writing a token scan's result:
the records (JSON lines), the text view, or the table of issues."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidParameterError

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.evaluation import TokenEvaluation
    from labelaudit.scanning._token_result import TokenScanResult
    from labelaudit.tokens._schemes import Scheme

__all__ = ["describe_token_scan", "evaluate_token_scan", "make_token_scorers",
           "token_output_format", "write_token_scan"]

# Line separators that JSON allows raw inside strings but str.splitlines() breaks at.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def make_token_scorers(names: Sequence[str] | None = None, *, model: str | None = None,
                       head: str = "crf", cache: bool = True, cache_dir: str | None = None,
                       epochs: int = 3, batch_size: int = 16, progress: bool = False,
                       random_state: int | None = 0) -> list[Any]:
    """The token scorers named (each once), each with the options that apply to it.

    Without ``names``: ``finetune`` when a ``model`` is given, else ``encoder``.

    Examples
    --------
    >>> [type(s).__name__ for s in make_token_scorers(["encoder"], head="linear")]
    ['EncoderTokenScorer']
    """
    from labelaudit.models import make_token_scorer

    kinds = names or ["finetune" if model else "encoder"]
    return [make_token_scorer("finetune", model=model, epochs=epochs, batch_size=batch_size,
                              progress=progress, random_state=random_state)
            if kind == "finetune" else
            make_token_scorer(kind, model=model, head=head, cache=cache, cache_dir=cache_dir,
                              progress=progress, random_state=random_state)
            for kind in dict.fromkeys(kinds)]


def token_output_format(out: str | None, format: str | None = None) -> str:
    """The format of a token scan's output: ``format``, else the one ``out``'s suffix picks
    (``.txt``: the text view, ``.jsonl``: records, others: the table of issues).

    Examples
    --------
    >>> token_output_format("issues.txt"), token_output_format(None)
    ('table', 'table')
    """
    if not out:
        return format or "table"
    suffix = Path(out).suffix.lower()
    formats = {".txt": ("table", "csv"), ".jsonl": ("jsonl",), ".csv": ("csv",)}.get(
        suffix, (suffix[1:], "csv"))
    if format and format not in formats:
        raise InvalidParameterError(
            f"--format {format} does not match --out {out}: a {suffix} file gets "
            f"--format {' or '.join(formats)}; change the suffix or leave out --format",
            param=("format", "out"))
    return format or formats[0]


def _json_line(record: dict) -> str:
    """One JSON line, with U+0085, U+2028 and U+2029 escaped so any line reader keeps it whole."""
    import json

    text = json.dumps(record, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text + "\n"


def write_token_scan(result: TokenScanResult, out: str | None = None, *, format: str = "table",
                     show: int | None = 20) -> None:
    """Write ``result`` to ``out`` (atomically) or to standard output: records (``jsonl``)
    or the text view of the ``show`` most suspect sentences (``table``, all with 0 or None)
    as text; any other format is the table of issues through :func:`labelaudit.io.emit`
    (CSV in a ``.txt`` file)."""
    from labelaudit.io import atomic_path, emit
    from labelaudit.tokens import format_issue_table, issues_to_frame

    records = result.to_records()
    if format == "jsonl":
        text = "".join(_json_line(r) for r in records)
    elif format == "table":
        text = format_issue_table(records, top=show or None) + "\n"
    elif out and Path(out).suffix.lower() == ".txt":
        text = issues_to_frame(records).to_csv(index=False)
    else:
        emit(issues_to_frame(records), out, format=None if out else format)
        return
    if not out:
        sys.stdout.write(text)
        return
    with atomic_path(out) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def describe_token_scan(result: TokenScanResult, seconds: float) -> str:
    """One line: sentences and tokens audited, the scorer, the time, and the issues found
    by kind, most frequent first."""
    audited = result.dataset
    kinds: dict[str, int] = {}
    for issues in result.issues:
        for x in issues:
            kinds[x.kind] = kinds.get(x.kind, 0) + 1
    flagged = sum(1 for issues in result.issues if issues)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return (f"{len(audited)} sentences ({audited.n_tokens} tokens, "
            f"{audited.scheme.upper()}) scored by {result.scorer} in {seconds:.1f}s; "
            f"{flagged} sentences with issues" + (f": {summary}" if summary else ""))


def evaluate_token_scan(issues: str | Path, truth: str | Path, *, tag_column: int = -1,
                        scheme: Scheme | None = None,
                        ks: Sequence[int] = (10, 50, 100)) -> TokenEvaluation:
    """:func:`labelaudit.evaluation.evaluate_tokens` of a ``scan-tokens`` JSONL file (read by
    :func:`labelaudit.evaluation.read_token_issues`) against a corrected copy of the sentences
    (a CoNLL or JSONL file read by :func:`labelaudit.tokens.read_tokens` with ``tag_column``
    and ``scheme``, detected when None)."""
    from labelaudit.evaluation import evaluate_tokens, read_token_issues
    from labelaudit.tokens import read_tokens

    records = read_token_issues(issues)
    return evaluate_tokens(records, read_tokens(truth, tag_column=tag_column, scheme=scheme),
                           ks=ks)
