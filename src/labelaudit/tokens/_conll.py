"""Read and write token-tagged data: CoNLL column files and JSONL with ``tokens``/``tags``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import json_lines, read_text, split_lines
from labelaudit.tokens._dataset import TokenDataset, make_token_dataset
from labelaudit.tokens._schemes import Scheme, detect_scheme, is_span_tag

__all__ = ["TAG_KEYS", "read_conll", "read_token_jsonl", "read_tokens", "write_conll"]

DOCSTART = "-DOCSTART-"
# Keys of the tag list in token JSONL, in the order they are looked for.
TAG_KEYS = ("tags", "labels")


# ASCII whitespace only: str.split() and str.strip() would also cut at U+0085, U+00A0,
# U+2028 and U+2029, which tokens may hold.
_BLANKS = " \t\r\f\v"
_BLANK_RUN = re.compile(r"[ \t\r\f\v]+")


def _split_line(line: str, use_tabs: bool) -> list[str]:
    if use_tabs:
        return line.split("\t")
    return _BLANK_RUN.split(line.strip(_BLANKS))


def read_conll(
    path: str | Path,
    *,
    tag_column: int = -1,
    scheme: Scheme | None = None,
) -> TokenDataset:
    """Read a CoNLL-style column file: one token per line, blank lines between sentences.

    Columns are tab-separated when the file contains a tab, whitespace-separated otherwise.
    The token is the first column and the tag the column ``tag_column`` (0-based; negative
    counts from the end, default the last). ``-DOCSTART-`` lines start a new document.
    Every token line must have the same number of columns; a wrong count or an unknown tag
    prefix is reported with its line number.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.conll"
    >>> _ = path.write_text("-DOCSTART- O\\n\\nJohn B-PER\\nruns O\\n\\nParis B-LOC\\n")
    >>> ds = read_conll(path)
    >>> ds.tokens, ds.tags, ds.documents.tolist(), ds.scheme
    ([['John', 'runs'], ['Paris']], [['B-PER', 'O'], ['B-LOC']], [0, 0], 'iob2')
    """
    path = Path(path)
    parsed = _parse_conll(read_text(path), path, tag_column)
    if not parsed.tokens:
        raise InvalidInputError(f"{path}: no sentences found (expected token and tag columns)")
    found = scheme or detect_scheme(parsed.tags)
    if found != "plain":
        bad = [f"line {parsed.tag_lines[i][j]}: {tag!r}"
               for i, sent in enumerate(parsed.tags) for j, tag in enumerate(sent)
               if not is_span_tag(tag)]
        if bad:
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            raise InvalidInputError(
                f"{path}: unknown tag prefix ({'; '.join(bad[:5])}{more}); expected O or "
                "B-/I-/E-/S- followed by a type (use --scheme plain for tags without spans, "
                "--tag-column to pick another column)"
            )
    return make_token_dataset(
        parsed.tokens, parsed.tags, documents=parsed.documents if parsed.has_documents else None,
        scheme=found, lines=[lines[0] for lines in parsed.tag_lines], source=str(path),
    )


@dataclass
class _Parsed:
    """Sentences of a CoNLL file, with the line of every tag and the document breaks."""

    tokens: list[list[str]] = field(default_factory=list)
    tags: list[list[str]] = field(default_factory=list)
    tag_lines: list[list[int]] = field(default_factory=list)
    documents: list[int] = field(default_factory=list)
    has_documents: bool = False

    def add(self, tokens: list[str], tags: list[str], lines: list[int], doc: int) -> None:
        if tokens:
            self.tokens.append(tokens)
            self.tags.append(tags)
            self.tag_lines.append(lines)
            self.documents.append(doc)


def _check_tag_column(path: Path, number: int, n_columns: int, tag_column: int) -> None:
    if n_columns < 2:
        raise InvalidInputError(
            f"{path}, line {number}: one column only; a CoNLL file needs the token and "
            "its tag on each line"
        )
    if not -n_columns <= tag_column < n_columns or tag_column == 0:
        raise InvalidParameterError(
            f"tag column {tag_column} does not exist in {path}: its lines have "
            f"{n_columns} columns (0 is the token; use 1..{n_columns - 1} or -1)"
        )


def _parse_conll(text: str, path: Path, tag_column: int) -> _Parsed:
    use_tabs = "\t" in text
    out = _Parsed()
    tokens: list[str] = []
    tags: list[str] = []
    lines: list[int] = []
    doc, n_columns, first_line = 0, 0, 0
    bad_columns: list[str] = []
    # io.split_lines, not str.splitlines(), which would also break a line at U+0085,
    # U+2028 or U+2029 inside a token.
    for number, line in enumerate(split_lines(text), start=1):
        columns = _split_line(line, use_tabs) if line.strip(_BLANKS) else []
        if not columns or columns[0].strip(_BLANKS) == DOCSTART:
            out.add(tokens, tags, lines, doc)
            tokens, tags, lines = [], [], []
            if columns:  # a -DOCSTART- line
                doc += 1 if (out.has_documents or out.tokens) else 0
                out.has_documents = True
            continue
        if not n_columns:
            n_columns, first_line = len(columns), number
            _check_tag_column(path, number, n_columns, tag_column)
        if len(columns) != n_columns:
            bad_columns.append(f"line {number} has {len(columns)}")
            continue
        tokens.append(columns[0].strip(_BLANKS))
        tags.append(columns[tag_column].strip(_BLANKS))
        lines.append(number)
    out.add(tokens, tags, lines, doc)
    if bad_columns:
        more = f" and {len(bad_columns) - 5} more" if len(bad_columns) > 5 else ""
        raise InvalidInputError(
            f"{path}: wrong number of columns ({'; '.join(bad_columns[:5])}{more}); "
            f"expected {n_columns} like line {first_line}"
        )
    return out


def read_token_jsonl(path: str | Path, *, scheme: Scheme | None = None) -> TokenDataset:
    """Read JSONL with one sentence per line: ``{"tokens": [...], "tags": [...]}``.

    The tags may be under ``labels`` instead (as in CoNLL-2003 exports); a line with both
    keys uses ``tags``. Optional fields: ``id`` (sentence id) and ``doc`` (document id,
    for cross-fitting).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> record = {"id": "a", "tokens": ["Rome"], "tags": ["S-LOC"]}
    >>> path = pathlib.Path(tempfile.mkdtemp(), "tiny.jsonl")
    >>> _ = path.write_text(json.dumps(record) + "\\n")
    >>> ds = read_token_jsonl(path)
    >>> ds.ids, ds.scheme, ds.iob2_tags
    (['a'], 'bioes', [['B-LOC']])
    """
    path = Path(path)
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    ids: list[object] = []
    docs: list[int] = []
    lines: list[int] = []
    doc_ids: dict[str, int] = {}
    has_docs = False
    for number, record in json_lines(path):
        key = next((k for k in TAG_KEYS if k in record), None) \
            if isinstance(record, dict) else None
        if not isinstance(record, dict) or "tokens" not in record or key is None:
            found = (f"; the line has {', '.join(map(repr, list(record)[:12]))}"
                     if isinstance(record, dict) else "")
            raise InvalidInputError(
                f"{path}, line {number}: expected an object with a 'tokens' list and a list "
                f"of tags under {' or '.join(map(repr, TAG_KEYS))}{found}"
            )
        if not isinstance(record["tokens"], list) or not isinstance(record[key], list):
            raise InvalidInputError(
                f"{path}, line {number}: 'tokens' and {key!r} must be lists")
        tokens.append(record["tokens"])
        tags.append(record[key])
        ids.append(record.get("id", len(ids)))
        has_docs = has_docs or "doc" in record
        doc_key = json.dumps(record.get("doc", f"#line{number}"))
        docs.append(doc_ids.setdefault(doc_key, len(doc_ids)))
        lines.append(number)
    return make_token_dataset(
        tokens,
        tags,
        ids=ids,
        documents=docs if has_docs else None,
        scheme=scheme,
        lines=lines,
        source=str(path),
    )


def read_tokens(
    path: str | Path | TokenDataset, *, tag_column: int = -1, scheme: Scheme | None = None
) -> TokenDataset:
    """Read ``.jsonl`` token files with :func:`read_token_jsonl`, anything else as CoNLL;
    a :class:`TokenDataset` is returned as it is, so functions can take either."""
    if isinstance(path, TokenDataset):
        return path
    if Path(path).suffix.lower() in (".jsonl", ".ndjson"):
        return read_token_jsonl(path, scheme=scheme)
    return read_conll(path, tag_column=tag_column, scheme=scheme)


def write_conll(
    dataset: TokenDataset, path: str | Path, *, tags: Sequence[Sequence[str]] | None = None
) -> Path:
    """Write tokens and tags (default: the dataset's own) as a two-column CoNLL file, atomically.

    Documents are separated by ``-DOCSTART-`` lines when the dataset has documents.
    """
    from labelaudit.io import atomic_path

    rows = dataset.tags if tags is None else tags
    target = Path(path)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        previous = None
        for i, (toks, tgs) in enumerate(zip(dataset.tokens, rows, strict=False)):
            if dataset.has_documents and dataset.documents[i] != previous:
                handle.write(f"{DOCSTART}\tO\n\n")
                previous = dataset.documents[i]
            for token, tag in zip(toks, tgs, strict=False):
                handle.write(f"{token}\t{tag}\n")
            handle.write("\n")
    return target
