"""Read and write token-tagged data: CoNLL column files and JSONL with ``tokens``/``tags``."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io._read import json_lines, read_text
from labelaudit.tokens._schemes import (
    SCHEMES,
    Scheme,
    convert_tags,
    detect_scheme,
    is_span_tag,
)

__all__ = [
    "TokenDataset",
    "make_token_dataset",
    "read_conll",
    "read_token_jsonl",
    "read_tokens",
    "write_conll",
]

DOCSTART = "-DOCSTART-"


@dataclass(frozen=True)
class TokenDataset:
    """Sentences of tokens with one tag per token.

    Attributes
    ----------
    ids : list
        One id per sentence (the sentence's index in the file unless the file names them).
    documents : ndarray of int, shape (n_sentences,)
        Document of each sentence (``-DOCSTART-`` breaks); each sentence is its own document
        when the file has none.
    tokens : list of list of str
    tags : list of list of str
        Tags as written in the file (in ``scheme``).
    scheme : {"iob1", "iob2", "bioes", "plain"}
    lines : list of int
        1-based line number where each sentence starts (for messages).
    has_documents : bool
        Whether the file marked documents.
    """

    ids: list
    documents: np.ndarray
    tokens: list[list[str]]
    tags: list[list[str]]
    scheme: Scheme
    lines: list[int]
    has_documents: bool = False
    _iob2: list[list[str]] = field(default_factory=list, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def n_tokens(self) -> int:
        return sum(len(t) for t in self.tokens)

    @property
    def iob2_tags(self) -> list[list[str]]:
        """Tags in IOB2, the internal scheme: IOB1 and BIOES converted, IOB2 and plain tags
        as given (an ill-formed ``I-X`` after ``O`` stays, to be scored and reported)."""
        return self._iob2

    def to_scheme(self, tags: Sequence[str]) -> list[str]:
        """Convert one sentence's IOB2 tags back to this dataset's scheme."""
        if self.scheme in ("iob2", "plain"):
            return list(tags)
        return convert_tags(tags, source="iob2", target=self.scheme)

    def subset(self, index: Sequence[int]) -> TokenDataset:
        """The sentences at ``index``, in that order."""
        idx = list(index)
        return TokenDataset(
            ids=[self.ids[i] for i in idx],
            documents=self.documents[idx] if idx else self.documents[:0],
            tokens=[self.tokens[i] for i in idx],
            tags=[self.tags[i] for i in idx],
            scheme=self.scheme,
            lines=[self.lines[i] for i in idx],
            has_documents=self.has_documents,
            _iob2=[self._iob2[i] for i in idx],
        )


def make_token_dataset(
    tokens: Sequence[Sequence[str]],
    tags: Sequence[Sequence[str]],
    *,
    ids: Sequence[object] | None = None,
    documents: Sequence[int] | None = None,
    scheme: Scheme | None = None,
    lines: Sequence[int] | None = None,
    source: str = "data",
) -> TokenDataset:
    """Validate sentences of tokens and tags and build a :class:`TokenDataset`.

    Parameters
    ----------
    tokens, tags : list of list of str
        One list per sentence, of equal lengths.
    ids : list, optional
        Sentence ids (default ``0 .. n_sentences - 1``); must be unique.
    documents : list of int, optional
        Document of each sentence; default: each sentence is its own document.
    scheme : {"iob1", "iob2", "bioes", "plain"}, optional
        Detected from the tags when not given.
    lines : list of int, optional
        Where each sentence starts in the source file, used in error messages.
    source : str
        Name of the source for error messages.

    Examples
    --------
    >>> ds = make_token_dataset([["John", "lives", "here"]], [["I-PER", "O", "O"]])
    >>> ds.scheme, ds.iob2_tags
    ('iob1', [['B-PER', 'O', 'O']])
    """
    if len(tokens) != len(tags):
        raise InvalidInputError(f"{source}: {len(tokens)} token lists but {len(tags)} tag lists")
    toks = [[str(t) for t in sent] for sent in tokens]
    tgs = [[str(t) for t in sent] for sent in tags]
    where = list(lines) if lines is not None else list(range(1, len(toks) + 1))
    unit = "line" if lines is not None else "sentence"
    for i, (a, b) in enumerate(zip(toks, tgs, strict=False)):
        if len(a) != len(b):
            raise InvalidInputError(
                f"{source}, {unit} {where[i]}: {len(a)} tokens but {len(b)} tags; "
                "every token needs exactly one tag"
            )
        if not a:
            raise InvalidInputError(f"{source}, {unit} {where[i]}: empty sentence")
    if not toks:
        raise InvalidInputError(f"{source}: no sentences found")
    sentence_ids = list(ids) if ids is not None else list(range(len(toks)))
    if len(sentence_ids) != len(toks):
        raise InvalidInputError(f"{source}: {len(sentence_ids)} ids for {len(toks)} sentences")
    if len(set(map(repr, sentence_ids))) != len(sentence_ids):
        from collections import Counter

        counts = Counter(map(repr, sentence_ids))
        dups = [s for s in sentence_ids if counts[repr(s)] > 1]
        raise InvalidInputError(f"{source}: duplicate sentence ids {dups[:5]}; ids must be unique")
    if scheme is not None and scheme not in SCHEMES:
        raise InvalidParameterError(
            f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}"
        )
    found = scheme or detect_scheme(tgs)
    if found != "plain":
        bad = [
            (where[i], j, tag)
            for i, sent in enumerate(tgs)
            for j, tag in enumerate(sent)
            if not is_span_tag(tag)
        ]
        if bad:
            shown = "; ".join(
                f"{unit} {w}" + (f" token {j + 1}" if unit == "sentence" else "") + f": {t!r}"
                for w, j, t in bad[:5]
            )
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            raise InvalidInputError(
                f"{source}: unknown tag prefix in {found.upper()} data ({shown}{more}); "
                "expected O or B-/I-/E-/S- followed by a type, or pass scheme 'plain' "
                "for tags without spans"
            )
    # IOB2 data is kept as given, ill-formed sequences included (the rules report them and
    # the model scores them); IOB1 and BIOES are converted, the way conlleval reads them.
    if found in ("iob2", "plain"):
        iob2 = tgs
    else:
        iob2 = [convert_tags(t, source=found, target="iob2") for t in tgs]
    docs = np.arange(len(toks)) if documents is None else np.asarray(documents, dtype=np.int64)
    if docs.shape != (len(toks),):
        raise InvalidInputError(
            f"{source}: {docs.shape[0]} document numbers for {len(toks)} sentences"
        )
    return TokenDataset(
        ids=sentence_ids,
        documents=docs,
        tokens=toks,
        tags=tgs,
        scheme=found,
        lines=where,
        has_documents=documents is not None,
        _iob2=iob2,
    )


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
    text = read_text(path)
    use_tabs = "\t" in text
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    documents: list[int] = []
    starts: list[int] = []
    line_of_tag: list[list[int]] = []
    cur_tokens: list[str] = []
    cur_tags: list[str] = []
    cur_lines: list[int] = []
    doc = 0
    has_docs = False
    n_columns: int | None = None
    first_columns_line = 0
    bad_columns: list[str] = []

    def close() -> None:
        nonlocal cur_tokens, cur_tags, cur_lines
        if cur_tokens:
            tokens.append(cur_tokens)
            tags.append(cur_tags)
            documents.append(doc)
            starts.append(cur_lines[0])
            line_of_tag.append(cur_lines)
        cur_tokens, cur_tags, cur_lines = [], [], []

    # Lines end at "\n" only (and a "\r" before it): str.splitlines() would also break a
    # line at U+0085, U+2028 or U+2029 inside a token.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.strip(_BLANKS):
            close()
            continue
        columns = _split_line(line, use_tabs)
        if columns[0].strip(_BLANKS) == DOCSTART:
            close()
            if has_docs or tokens:
                doc += 1
            has_docs = True
            continue
        if n_columns is None:
            n_columns, first_columns_line = len(columns), number
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
        if len(columns) != n_columns:
            bad_columns.append(f"line {number} has {len(columns)}")
            continue
        cur_tokens.append(columns[0].strip(_BLANKS))
        cur_tags.append(columns[tag_column].strip(_BLANKS))
        cur_lines.append(number)
    close()
    if bad_columns:
        more = f" and {len(bad_columns) - 5} more" if len(bad_columns) > 5 else ""
        raise InvalidInputError(
            f"{path}: wrong number of columns ({'; '.join(bad_columns[:5])}{more}); "
            f"expected {n_columns} like line {first_columns_line}"
        )
    if not tokens:
        raise InvalidInputError(f"{path}: no sentences found (expected token and tag columns)")
    found = scheme or detect_scheme(tags)
    if found != "plain":
        bad = [
            f"line {line_of_tag[i][j]}: {tag!r}"
            for i, sent in enumerate(tags)
            for j, tag in enumerate(sent)
            if not is_span_tag(tag)
        ]
        if bad:
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            raise InvalidInputError(
                f"{path}: unknown tag prefix ({'; '.join(bad[:5])}{more}); expected O or "
                "B-/I-/E-/S- followed by a type (use --scheme plain for tags without spans, "
                "--tag-column to pick another column)"
            )
    return make_token_dataset(
        tokens,
        tags,
        documents=documents if has_docs else None,
        scheme=found,
        lines=starts,
        source=str(path),
    )


def read_token_jsonl(path: str | Path, *, scheme: Scheme | None = None) -> TokenDataset:
    """Read JSONL with one sentence per line: ``{"tokens": [...], "tags": [...]}``.

    Optional fields: ``id`` (sentence id) and ``doc`` (document id, for cross-fitting).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.jsonl"
    >>> _ = path.write_text('{"id": "a", "tokens": ["Rome"], "tags": ["S-LOC"]}\\n')
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
        if not isinstance(record, dict) or "tokens" not in record or "tags" not in record:
            raise InvalidInputError(
                f"{path}, line {number}: expected an object with 'tokens' and 'tags' lists"
            )
        if not isinstance(record["tokens"], list) or not isinstance(record["tags"], list):
            raise InvalidInputError(f"{path}, line {number}: 'tokens' and 'tags' must be lists")
        tokens.append(record["tokens"])
        tags.append(record["tags"])
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
    path: str | Path, *, tag_column: int = -1, scheme: Scheme | None = None
) -> TokenDataset:
    """Read ``.jsonl`` token files with :func:`read_token_jsonl`, anything else as CoNLL."""
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
