"""What the learning-curve test draws from: the pool of training items, suspect items and
(with a correction) the suspect items again with their corrected labels, as one dataset; and
the training orders (Zeng et al., Figures 1 and 2) as index arrays into it.

Identify (Figure 1): three exclusive training subsets of size x, T0 (the new test set), T1
(green) and T2 (blue), and the suspect set S (x items of it):

- ``TrainTest`` = T2 then S, ``PureTrain`` = T1 then T2, ``TestTrain`` = S then T2.

Validate (Figure 2): the suspect set splits into the items the correction changed, with
their original labels (``Mistake``, z) or corrected ones (``Correct``, z), and the unchanged
rest (``Test``, y); training subsets X (the new test set, x), Y (y), W (w) and Z (z):

- ``TestTrain{M}`` = Test, W, M;  ``PureTrain{M}`` = Y, W, M;
- ``{M}TestTrain`` = M, Test, W;  ``{M}PureTrain`` = M, Y, W   for M in Mistake, Correct;

and two references of training data only, each scheme's suspect parts replaced by training
subsets of the same size: ``PureTrainTrain`` = Y, W, Z (for the schemes that end with M)
and ``TrainPureTrain`` = Z, Y, W (for those that start with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit.io import (
    TextDataset,
    check_label_values,
    prepare_text_dataset,
    read_table,
    text_keys,
)
from labelaudit.tokens import TokenDataset, encode_tags, read_tokens, split_tag, token_classes

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Pool:
    """Every item the schemes can feed, in the order training, suspect, corrected.

    ``data`` is a ``TextDataset`` or ``TokenDataset`` for the scorer's ``prepare``;
    ``labels`` the encoded labels ``fit`` takes; ``mistakes`` the suspect positions whose
    label the correction changed (None without a correction).
    """

    kind: Literal["text", "tokens"]
    data: Any
    labels: Any
    classes: tuple[str, ...]
    n_train: int
    n_suspect: int
    mistakes: np.ndarray | None
    plain: bool = False


def _only_in(train: set[str], other: set[str], name: str, unit: str) -> None:
    """Refuse labels of the suspect (or corrected) file that the training file never uses."""
    extra = sorted(other - train)
    if extra:
        raise InvalidInputError(
            f"the label sets differ: {unit} only in the {name} file: {extra[:10]}"
            f"{' ...' if len(extra) > 10 else ''} (the training file has "
            f"{sorted(train)[:10]}); a model fitted on the training file cannot learn them")


def token_pool(train: Any, suspect: Any, corrected: Any = None, *, scheme: Any = None,
               tag_column: int = -1) -> Pool:
    """The pool of tagged sentences; tags are compared in IOB2."""
    try:
        parts = [read_tokens(source, tag_column=tag_column, scheme=scheme)
                 for source in (train, suspect, corrected) if source is not None]
    except InvalidInputError as exc:  # a table read as tagged text: say how to read it
        raise InvalidInputError(f"{exc} (without text= the files are read as tagged files, "
                                "CoNLL or token JSONL; for tables of texts, give "
                                "text=COLUMN)", param="text") from None
    plain = parts[0].scheme == "plain"
    if any((p.scheme == "plain") != plain for p in parts):
        raise InvalidInputError("one file has tags without spans (plain) and another span "
                                "tags: give all files in one kind (--scheme)")

    def kinds(data: TokenDataset) -> set[str]:
        tags = {t for sent in data.iob2_tags for t in sent}
        return tags if plain else {split_tag(t)[1] for t in tags if t != "O"}

    unit = "tags" if plain else "entity types"
    for name, data in zip(("suspect", "corrected"), parts[1:], strict=False):
        _only_in(kinds(parts[0]), kinds(data), name, unit)
    mistakes = None
    if corrected is not None:
        original, fixed = parts[1], parts[2]
        if len(original) != len(fixed):
            raise InvalidInputError(
                f"the suspect file has {len(original)} sentences and the corrected file "
                f"{len(fixed)}: give two copies of the same sentences in the same order")
        for i, (a, b) in enumerate(zip(original.tokens, fixed.tokens, strict=True)):
            if a != b:
                raise InvalidInputError(
                    f"the corrected file's tokens differ from the suspect file's in sentence "
                    f"{i + 1} (line {fixed.lines[i]} of the corrected file): {b[:8]} vs "
                    f"{a[:8]}; the corrected file must keep the suspect file's tokens")
        mistakes = np.array([i for i in range(len(original))
                             if original.iob2_tags[i] != fixed.iob2_tags[i]], dtype=int)
    tokens = [sent for p in parts for sent in p.tokens]
    tags = [sent for p in parts for sent in p.iob2_tags]
    pool = TokenDataset(ids=list(range(len(tokens))), documents=np.arange(len(tokens)),
                        tokens=tokens, tags=tags, scheme="plain" if plain else "iob2",
                        lines=[line for p in parts for line in p.lines], _iob2=tags)
    classes = token_classes(pool)
    return Pool("tokens", pool, encode_tags(pool, classes), classes, len(parts[0]),
                len(parts[1]), mistakes, plain)


def _frame(source: pd.DataFrame | str | Path) -> pd.DataFrame:
    import pandas as pd

    frame = source if isinstance(source, pd.DataFrame) else read_table(source)
    if len(frame) == 0:
        where = "" if isinstance(source, pd.DataFrame) else f"{source}: "
        raise InvalidInputError(f"{where}the table has no rows")
    return frame


def _aligned(suspect: pd.DataFrame, fixed: pd.DataFrame, text: str,
             id: str | None) -> pd.DataFrame:  # noqa: A002 - mirrors the CLI flag
    """The corrected table in the suspect table's row order, by id or by row."""
    import pandas as pd
    if id is not None and id in suspect.columns and id in fixed.columns:
        keys, fixed_keys = text_keys(suspect[id]), text_keys(fixed[id])
        for name, values in (("suspect", keys), ("corrected", fixed_keys)):
            twice = pd.Series(values).duplicated().to_numpy()
            if twice.any():
                rows = format_rows(np.flatnonzero(twice))
                raise InvalidInputError(
                    f"the {name} file has duplicate ids in column {id!r}: "
                    f"{values[twice][0]!r} first (repeated in {rows}); ids must be unique to "
                    "match the corrected file to the suspect file")
        position = pd.Index(fixed_keys).get_indexer(keys)
        if (position < 0).any() or len(fixed) != len(suspect):
            missing = keys[position < 0]
            raise InvalidInputError(
                f"the corrected file's ids do not match the suspect file's: "
                f"{len(missing)} suspect ids are missing from it"
                + (f" (first {format_rows(missing[:5]).removeprefix('rows ')})"
                   if len(missing) else f"; it has {len(fixed)} rows, the suspect "
                   f"file {len(suspect)}"))
        return fixed.iloc[position].reset_index(drop=True)
    if len(fixed) != len(suspect):
        raise InvalidInputError(
            f"the corrected file has {len(fixed)} rows and the suspect file {len(suspect)}; "
            "give the same items (matched by --id, else by row)")
    differ = np.flatnonzero(fixed[text].astype(str).to_numpy()
                            != suspect[text].astype(str).to_numpy())
    if len(differ):
        raise InvalidInputError(
            f"the corrected file's {text!r} differs from the suspect file's in "
            f"{len(differ)} rows, first row {differ[0]}: match the items by --id or keep "
            "the suspect file's rows")
    return fixed.reset_index(drop=True)


def text_pool(train: Any, suspect: Any, corrected: Any = None, *, text: str,
              label: str = "label", text_pair: str | None = None,
              id: str | None = "id") -> Pool:  # noqa: A002 - mirrors the CLI flag
    """The pool of text (or text-pair) items with one label each."""
    import pandas as pd

    frames = [_frame(train), _frame(suspect)]
    if corrected is not None:
        frames.append(_aligned(frames[1], _frame(corrected), text, id))
    for frame, name in zip(frames, ("training", "suspect", "corrected"), strict=False):
        if label not in frame.columns:
            raise InvalidParameterError(
                f"the {name} file has no label column {label!r}; its columns are "
                f"{list(map(str, frame.columns[:12]))}")
        check_label_values(frame[label], column=label, where=f"the {name} file")
    keys = [text_keys(f[label]) for f in frames]
    for name, values in zip(("suspect", "corrected"), keys[1:], strict=False):
        _only_in(set(keys[0]) - {""}, set(values) - {""}, name, "labels")
    # labels as text in every file, so that 1 and "1" and 1.0 are one class
    as_text = [f.assign(**{label: pd.Series(k, index=f.index).where(f[label].notna(), None)})
               for f, k in zip(frames, keys, strict=True)]
    first = prepare_text_dataset(as_text[0], text=text, label=label, text_pair=text_pair)
    datasets = [first] + [prepare_text_dataset(f, text=text, label=label, text_pair=text_pair,
                                               classes=first.classes, min_classes=1)
                          for f in as_text[1:]]
    mistakes = None
    if corrected is not None:
        mistakes = np.flatnonzero(datasets[1].labels != datasets[2].labels)
    pairs = ([t for d in datasets for t in (d.text_pairs or [])] if text_pair else None)
    pool = TextDataset(ids=np.arange(sum(len(d) for d in datasets)),
                       texts=[t for d in datasets for t in d.texts], text_pairs=pairs,
                       labels=np.concatenate([d.labels for d in datasets]),
                       classes=first.classes)
    return Pool("text", pool, pool.labels, tuple(map(str, first.classes)), len(datasets[0]),
                len(datasets[1]), mistakes)


IDENTIFY = {"TrainTest": "PureTrain", "TestTrain": "PureTrain"}
VALIDATE = {
    **{f"TestTrain{m}": "PureTrainTrain" for m in ("Mistake", "Correct")},
    **{f"PureTrain{m}": "PureTrainTrain" for m in ("Mistake", "Correct")},
    **{f"{m}TestTrain": "TrainPureTrain" for m in ("Mistake", "Correct")},
    **{f"{m}PureTrain": "TrainPureTrain" for m in ("Mistake", "Correct")}}


@dataclass(frozen=True)
class SchemeDraw:
    """One repeat's draw: the new test set and each scheme's training order.

    ``schemes`` maps a scheme name to its segments ``(part, indices)`` in feeding order;
    indices point into the pool (training items first, then the suspect items, then their
    corrected copies).
    """

    test: np.ndarray
    schemes: dict[str, list[tuple[str, np.ndarray]]]

    def order(self, name: str) -> np.ndarray:
        """The scheme's items in the order they are fed."""
        return np.concatenate([part for _, part in self.schemes[name]])


def validate_sizes(n_train: int, n_suspect: int, n_mistakes: int, size: int,
                   extra: int) -> tuple[int, int, int, int]:
    """(x, y, w, z) of Figure 2, checked against the training set's size."""
    y, z = n_suspect - n_mistakes, n_mistakes
    if z == 0:
        raise InvalidParameterError(
            "the corrected file changes no label of the suspect set: there is nothing to "
            "validate")
    need = size + y + extra + z
    if need > n_train:
        room = max(0, (n_train - y - z) // 2)
        raise InvalidParameterError(
            f"validating needs exclusive training subsets of {size} + {y} + {extra} + {z} = "
            f"{need} items, the training set has {n_train}: use --size (and --train-size) so "
            f"that size + train-size <= {n_train - y - z} (e.g. --size {room})")
    return size, y, extra, z


def draw_schemes(
    n_train: int, n_suspect: int, *, size: int, rng: np.random.Generator,
    mistakes: np.ndarray | None = None, extra: int | None = None) -> SchemeDraw:
    """Draw one repeat's subsets and build the schemes (see the module docstring).

    The pool holds ``n_train`` training items, then ``n_suspect`` suspect items, then their
    corrected copies; ``mistakes`` are the suspect positions the correction changed, ``size``
    is x and ``extra`` w (default ``size``).

    Examples
    --------
    >>> draw = draw_schemes(9, 3, size=3, rng=np.random.default_rng(0))
    >>> sorted(draw.schemes), len(draw.test), len(draw.order("TestTrain"))
    (['PureTrain', 'TestTrain', 'TrainTest'], 3, 6)
    """
    if size < 1:
        raise InvalidParameterError(f"size must be at least 1, got {size}")
    if 3 * size > n_train:
        raise InvalidParameterError(
            f"identifying needs three exclusive training subsets of size {size} "
            f"({3 * size} items); the training set has {n_train}: use --size {n_train // 3} "
            "or less")
    if size > n_suspect:
        raise InvalidParameterError(
            f"size {size} is larger than the suspect set ({n_suspect} items)")
    perm = rng.permutation(n_train)
    test, t1, t2 = perm[:size], perm[size:2 * size], perm[2 * size:3 * size]
    suspect = n_train + rng.permutation(n_suspect)[:size]
    schemes: dict[str, list[tuple[str, np.ndarray]]] = {
        "TrainTest": [("T2", t2), ("S", suspect)], "PureTrain": [("T1", t1), ("T2", t2)],
        "TestTrain": [("S", suspect), ("T2", t2)]}
    if mistakes is not None:
        w = size if extra is None else extra
        x, y, w, z = validate_sizes(n_train, n_suspect, len(mistakes), size, w)
        changed = np.zeros(n_suspect, dtype=bool)
        changed[np.asarray(mistakes, dtype=int)] = True
        order = rng.permutation(n_suspect)
        wrong = n_train + order[changed[order]]
        parts = {
            "Test": n_train + order[~changed[order]],
            "Mistake": wrong,
            "Correct": wrong + n_suspect,  # the same items, corrected, in the same order
            "Y": perm[x:x + y], "W": perm[x + y:x + y + w], "Z": perm[x + y + w:x + y + w + z],
        }
        for m in ("Mistake", "Correct"):
            schemes[f"TestTrain{m}"] = [(p, parts[p]) for p in ("Test", "W", m)]
            schemes[f"PureTrain{m}"] = [(p, parts[p]) for p in ("Y", "W", m)]
            schemes[f"{m}TestTrain"] = [(p, parts[p]) for p in (m, "Test", "W")]
            schemes[f"{m}PureTrain"] = [(p, parts[p]) for p in (m, "Y", "W")]
        schemes["PureTrainTrain"] = [(p, parts[p]) for p in ("Y", "W", "Z")]
        schemes["TrainPureTrain"] = [(p, parts[p]) for p in ("Z", "Y", "W")]
    return SchemeDraw(test=test, schemes=schemes)
