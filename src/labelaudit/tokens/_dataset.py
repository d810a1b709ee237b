"""Token-tagged sentences: the :class:`TokenDataset` every token tool works on."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.tokens._schemes import SCHEMES, Scheme, convert_tags, detect_scheme, is_span_tag

__all__ = ["TokenDataset", "make_token_dataset"]


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
    _check_sentences(toks, tgs, where, unit, source)
    sentence_ids: list[object] = list(ids) if ids is not None else list(range(len(toks)))
    _check_ids(sentence_ids, len(toks), source)
    if scheme is not None and scheme not in SCHEMES:
        raise InvalidParameterError(
            f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}"
        )
    found = scheme or detect_scheme(tgs)
    if found != "plain":
        _check_prefixes(tgs, where, unit, source, found)
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


def _check_sentences(toks: list[list[str]], tgs: list[list[str]], where: list[int], unit: str,
                     source: str) -> None:
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


def _check_ids(sentence_ids: list[object], n_sentences: int, source: str) -> None:
    if len(sentence_ids) != n_sentences:
        raise InvalidInputError(f"{source}: {len(sentence_ids)} ids for {n_sentences} sentences")
    counts = Counter(map(repr, sentence_ids))
    if len(counts) != len(sentence_ids):
        dups = [s for s in sentence_ids if counts[repr(s)] > 1]
        raise InvalidInputError(f"{source}: duplicate sentence ids {dups[:5]}; ids must be unique")


def _check_prefixes(tgs: list[list[str]], where: list[int], unit: str, source: str,
                    scheme: str) -> None:
    bad = [(where[i], j, tag) for i, sent in enumerate(tgs) for j, tag in enumerate(sent)
           if not is_span_tag(tag)]
    if bad:
        shown = "; ".join(
            f"{unit} {w}" + (f" token {j + 1}" if unit == "sentence" else "") + f": {t!r}"
            for w, j, t in bad[:5]
        )
        more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        raise InvalidInputError(
            f"{source}: unknown tag prefix in {scheme.upper()} data ({shown}{more}); "
            "expected O or B-/I-/E-/S- followed by a type, or pass scheme 'plain' "
            "for tags without spans"
        )
