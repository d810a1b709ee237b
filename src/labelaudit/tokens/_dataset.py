"""Token-tagged sentences: the :class:`TokenDataset` every token tool works on, read from and
written to CoNLL column files and JSONL with ``tokens``/``tags``, and its tags as classes."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_choice
from labelaudit.io import atomic_path, json_lines, read_text, split_lines
from labelaudit.tokens._schemes import (
    SCHEMES,
    Scheme,
    convert_tags,
    detect_scheme,
    is_span_tag,
    split_tag,
)


@dataclass(frozen=True)
class TokenDataset:
    """Sentences of tokens with one tag per token.

    Attributes
    ----------
    ids : list
        One id per sentence (its index in the file unless the file names them).
    documents : ndarray of int, shape (n_sentences,)
        Document of each sentence; its own unless the file marks documents (``has_documents``).
    tokens, tags : list of list of str
        Tags as written in the file (in ``scheme``).
    scheme : {"iob1", "iob2", "bioes", "plain"}
    lines : list of int
        1-based line number where each sentence starts (for messages).
    has_documents : bool
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
        return TokenDataset(ids=[self.ids[i] for i in idx],
                            documents=self.documents[idx] if idx else self.documents[:0],
                            tokens=[self.tokens[i] for i in idx],
                            tags=[self.tags[i] for i in idx], scheme=self.scheme,
                            lines=[self.lines[i] for i in idx], has_documents=self.has_documents,
                            _iob2=[self._iob2[i] for i in idx])


def make_token_dataset(tokens: Sequence[Sequence[str]], tags: Sequence[Sequence[str]], *,
                       ids: Sequence[object] | None = None, documents: Sequence[int] | None = None,
                       scheme: Scheme | None = None, lines: Sequence[int] | None = None,
                       source: str = "data") -> TokenDataset:
    """Validate sentences of tokens and tags and build a :class:`TokenDataset`.

    Parameters
    ----------
    tokens, tags : list of list of str
        One list per sentence, of equal lengths.
    ids : list, optional
        Unique sentence ids (default ``0 .. n_sentences - 1``).
    documents : list of int, optional
        Document of each sentence; default: each sentence is its own document.
    scheme : {"iob1", "iob2", "bioes", "plain"}, optional
        Detected from the tags when not given.
    lines, source : optional
        Where each sentence starts in the source file, and its name, for error messages.

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
    _check_sentences(toks, tgs, where, unit, source)
    sentence_ids: list[object] = list(ids) if ids is not None else list(range(len(toks)))
    _check_ids(sentence_ids, len(toks), source)
    if scheme is not None:
        check_choice(scheme, "scheme", SCHEMES)
    found = scheme or detect_scheme(tgs)
    _check_prefixes(tgs, found, source, lambda i, j: f"{unit} {where[i]}"
                    + (f" token {j + 1}" if unit == "sentence" else ""))
    # IOB2 data is kept as given, ill-formed sequences included (the rules report them and
    # the model scores them); IOB1 and BIOES are converted, the way conlleval reads them.
    if found in ("iob2", "plain"):
        iob2 = tgs
    else:
        iob2 = [convert_tags(t, source=found, target="iob2") for t in tgs]
    docs = np.arange(len(toks)) if documents is None else np.asarray(documents, dtype=np.int64)
    if docs.shape != (len(toks),):
        raise InvalidInputError(f"{source}: {docs.shape[0]} document numbers for {len(toks)} "
                                "sentences")
    return TokenDataset(ids=sentence_ids, documents=docs, tokens=toks, tags=tgs, scheme=found,
                        lines=where, has_documents=documents is not None, _iob2=iob2)


def _check_sentences(toks: list[list[str]], tgs: list[list[str]], where: list[int], unit: str,
                     source: str) -> None:
    for i, (a, b) in enumerate(zip(toks, tgs, strict=False)):
        if len(a) != len(b):
            raise InvalidInputError(f"{source}, {unit} {where[i]}: {len(a)} tokens but "
                                    f"{len(b)} tags; every token needs exactly one tag")
        if not a:
            raise InvalidInputError(f"{source}, {unit} {where[i]}: empty sentence")
    if not toks:
        raise InvalidInputError(f"{source}: no sentences found")


def _check_ids(sentence_ids: list[object], n_sentences: int, source: str) -> None:
    if len(sentence_ids) != n_sentences:
        raise InvalidInputError(f"{source}: {len(sentence_ids)} ids for {n_sentences} sentences")
    counts = Counter(map(repr, sentence_ids))
    if len(counts) != len(sentence_ids):
        dups = [s for s in sentence_ids if counts[repr(s)] > 1]
        raise InvalidInputError(f"{source}: duplicate sentence ids {dups[:5]}; ids must be unique")


def _check_prefixes(tags: list[list[str]], scheme: str, source: str,
                    place: Callable[[int, int], str], *, columns: bool = False) -> None:
    """The one check of tag prefixes in span data; ``place(i, j)`` says where token j of
    sentence i is, ``columns`` that the tags came from a column the caller may change."""
    if scheme == "plain":
        return
    bad = [f"{place(i, j)}: {tag!r}" for i, sent in enumerate(tags)
           for j, tag in enumerate(sent) if not is_span_tag(tag)]
    if bad:
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise InvalidInputError(
            f"{source}: unknown tag prefix in {scheme.upper()} data ({'; '.join(bad[:5])}"
            f"{more}); expected O or B-/I-/E-/S- followed by a type; give scheme='plain' for "
            "tags without spans" + (", or tag_column=N to read another column" if columns
                                    else ""),
            param=("scheme", "tag_column") if columns else "scheme")


def token_classes(*datasets: TokenDataset) -> tuple[str, ...]:
    """The tag classes of datasets in IOB2: ``O``, then ``B-X``, ``I-X`` per type, both even
    if one never occurs, so that a model can suggest either (plain tags: sorted).

    Examples
    --------
    >>> token_classes(make_token_dataset([["a", "b"]], [["B-PER", "O"]]))
    ('O', 'B-PER', 'I-PER')
    """
    tags = {t for ds in datasets for sent in ds.iob2_tags for t in sent}
    if any(ds.scheme == "plain" for ds in datasets):
        return tuple(sorted(tags))
    types = sorted({split_tag(t)[1] for t in tags if t != "O"})
    return ("O",) + tuple(f"{p}-{kind}" for kind in types for p in ("B", "I"))


def encode_tags(dataset: TokenDataset, classes: Sequence[str]) -> list[np.ndarray]:
    """IOB2 tags of each sentence as indices into ``classes``."""
    index = {c: i for i, c in enumerate(classes)}
    unknown = sorted({t for s in dataset.iob2_tags for t in s if t not in index})
    if unknown:
        raise InvalidInputError(f"tags {unknown[:5]} do not occur in the training data; the "
                                "model cannot score them")
    return [np.array([index[t] for t in s], dtype=np.int64) for s in dataset.iob2_tags]


def decode_tags(pred_probs: np.ndarray, classes: Sequence[str], *, spans: bool = True) -> list[str]:
    """The most probable valid IOB2 tag sequence under independent token probabilities.

    Viterbi over ``sum_t log p(y_t)`` with the IOB2 constraint that ``I-X`` only follows
    ``B-X`` or ``I-X``; with ``spans=False`` (plain tags) the per-token argmax.

    Examples
    --------
    >>> classes = ("O", "B-PER", "I-PER")
    >>> probs = np.array([[0.4, 0.35, 0.25], [0.2, 0.1, 0.7]])
    >>> decode_tags(probs, classes)  # argmax would be O I-PER, which IOB2 forbids
    ['B-PER', 'I-PER']
    """
    logp = np.log(np.clip(np.asarray(pred_probs, dtype=float), 1e-12, 1.0))
    n, k = logp.shape
    if n == 0:
        return []
    if not spans:
        return [classes[j] for j in logp.argmax(1)]
    parts = [split_tag(c) for c in classes]
    allowed = np.ones((k, k), dtype=bool)  # allowed[previous, current]
    for j, (prefix, kind) in enumerate(parts):
        if prefix == "I":
            allowed[:, j] = [p in ("B", "I") and t == kind for p, t in parts]
    start_ok = np.array([p != "I" for p, _ in parts])
    penalty = np.where(allowed, 0.0, -np.inf)
    score = np.where(start_ok, logp[0], -np.inf)
    back = np.zeros((n, k), dtype=np.int64)
    for t in range(1, n):
        cand = score[:, None] + penalty
        back[t] = cand.argmax(0)
        score = cand[back[t], np.arange(k)] + logp[t]
    path = [int(score.argmax())]
    for t in range(n - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return [classes[j] for j in path[::-1]]


DOCSTART = "-DOCSTART-"
# Keys of the tag list in token JSONL, in the order they are looked for.
TAG_KEYS = ("tags", "labels")


# ASCII whitespace only: str.split() and str.strip() would also cut at U+0085, U+00A0,
# U+2028 and U+2029, which tokens may hold.
_BLANKS = " \t\r\f\v"
_BLANK_RUN = re.compile(r"[ \t\r\f\v]+")


def read_conll(path: str | Path, *, tag_column: int = -1,
               scheme: Scheme | None = None) -> TokenDataset:
    """A CoNLL column file as :func:`read_tokens` describes it; a wrong column count or an
    unknown tag prefix is reported with its line number."""
    path = Path(path)
    parsed = _parse_conll(read_text(path), path, tag_column)
    if not parsed.tokens:
        raise InvalidInputError(f"{path}: no sentences found (expected token and tag columns)")
    found = scheme or detect_scheme(parsed.tags)
    _check_prefixes(parsed.tags, found, str(path), lambda i, j: f"line {parsed.tag_lines[i][j]}",
                    columns=True)
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
        raise InvalidInputError(f"{path}, line {number}: one column only; a CoNLL file needs "
                                "the token and its tag on each line")
    if not -n_columns <= tag_column < n_columns or tag_column == 0:
        raise InvalidParameterError(
            f"tag column {tag_column} does not exist in {path}: its lines have "
            f"{n_columns} columns (0 is the token; use 1..{n_columns - 1} or -1)")


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
        columns = ([] if not line.strip(_BLANKS) else line.split("\t") if use_tabs
                   else _BLANK_RUN.split(line.strip(_BLANKS)))
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
        raise InvalidInputError(f"{path}: wrong number of columns ({'; '.join(bad_columns[:5])}"
                                f"{more}); expected {n_columns} like line {first_line}")
    return out


def read_token_jsonl(path: str | Path, *, scheme: Scheme | None = None) -> TokenDataset:
    """Token JSONL as :func:`read_tokens` describes it, one sentence per line."""
    path = Path(path)
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    ids: list[object] = []
    docs: list[int] = []
    lines: list[int] = []
    doc_ids: dict[str, int] = {}
    has_docs = False
    for number, record in json_lines(path):
        key = next((k for k in TAG_KEYS if k in record), None) if isinstance(record, dict) else None
        if not isinstance(record, dict) or "tokens" not in record or key is None:
            found = (f"; the line has {', '.join(map(repr, list(record)[:12]))}"
                     if isinstance(record, dict) else "")
            raise InvalidInputError(
                f"{path}, line {number}: expected an object with a 'tokens' list and a list "
                f"of tags under {' or '.join(map(repr, TAG_KEYS))}{found}")
        if not isinstance(record["tokens"], list) or not isinstance(record[key], list):
            raise InvalidInputError(f"{path}, line {number}: 'tokens' and {key!r} must be lists")
        tokens.append(record["tokens"])
        tags.append(record[key])
        ids.append(record.get("id", len(ids)))
        has_docs = has_docs or "doc" in record
        doc_key = json.dumps(record.get("doc", f"#line{number}"))
        docs.append(doc_ids.setdefault(doc_key, len(doc_ids)))
        lines.append(number)
    return make_token_dataset(tokens, tags, ids=ids, documents=docs if has_docs else None,
                              scheme=scheme, lines=lines, source=str(path))


def read_tokens(path: str | Path | TokenDataset, *, tag_column: int = -1,
                scheme: Scheme | None = None) -> TokenDataset:
    """Read tagged sentences from a CoNLL column file or, for ``.jsonl``/``.ndjson``, JSONL.

    CoNLL: one token per line, blank lines between sentences, ``-DOCSTART-`` lines start a
    document; columns are tab-separated when the file holds a tab, else split at blanks,
    and every token line has the same number of them. JSONL: one sentence per line,
    ``{"tokens": [...], "tags": [...]}`` (the tags may be under ``labels``, as in
    CoNLL-2003 exports; ``tags`` wins when both are there), with an optional ``id`` and
    ``doc`` (document, for cross-fitting). A :class:`TokenDataset` is returned as it is,
    so functions can take either.

    Parameters
    ----------
    path : path or TokenDataset
    tag_column : int, default=-1
        CoNLL column of the tags (0-based, 0 is the token; negative counts from the end).
    scheme : {"iob1", "iob2", "bioes", "plain"}, optional
        As in :func:`make_token_dataset`.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> text = "-DOCSTART- O\\n\\nJohn B-PER\\nruns O\\n\\nParis B-LOC\\n"
    >>> _ = (folder / "a.conll").write_text(text)
    >>> ds = read_tokens(folder / "a.conll")
    >>> ds.tokens, ds.tags, ds.documents.tolist(), ds.scheme
    ([['John', 'runs'], ['Paris']], [['B-PER', 'O'], ['B-LOC']], [0, 0], 'iob2')
    >>> record = {"id": "a", "tokens": ["Rome"], "tags": ["S-LOC"]}
    >>> _ = (folder / "b.jsonl").write_text(json.dumps(record) + "\\n")
    >>> ds = read_tokens(folder / "b.jsonl")
    >>> ds.ids, ds.scheme, ds.iob2_tags
    (['a'], 'bioes', [['B-LOC']])
    """
    if isinstance(path, TokenDataset):
        return path
    if Path(path).suffix.lower() in (".jsonl", ".ndjson"):
        return read_token_jsonl(path, scheme=scheme)
    return read_conll(path, tag_column=tag_column, scheme=scheme)


def write_conll(dataset: TokenDataset, path: str | Path, *,
                tags: Sequence[Sequence[str]] | None = None) -> Path:
    """Write tokens and tags (default: the dataset's own) as a two-column CoNLL file, atomically.

    Documents are separated by ``-DOCSTART-`` lines when the dataset has documents.
    """
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
