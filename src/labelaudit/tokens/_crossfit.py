"""Out-of-sample token probabilities: cross-fitting by documents, or fit-on-train/score-on-test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.tokens._conll import TokenDataset
from labelaudit.tokens._schemes import split_tag

__all__ = [
    "cross_val_token_probs",
    "document_folds",
    "encode_tags",
    "fit_score_token_probs",
    "token_classes",
]


def token_classes(*datasets: TokenDataset) -> tuple[str, ...]:
    """The tag classes of one or more datasets in IOB2: ``O``, then ``B-X``, ``I-X`` per type.

    Plain tags (no spans) are sorted. Both ``B-`` and ``I-`` of every type are included
    even if one never occurs, so that a model can suggest either.

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
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
        raise InvalidInputError(
            f"tags {unknown[:5]} do not occur in the training data; the model cannot score them"
        )
    return [np.array([index[t] for t in s], dtype=np.int64) for s in dataset.iob2_tags]


def document_folds(
    documents: np.ndarray,
    *,
    n_folds: int = 5,
    sizes: np.ndarray | None = None,
    random_state: int | None = 0,
) -> np.ndarray:
    """Assign whole documents to folds, balancing the tokens per fold.

    Documents are taken in a random order (``random_state``) and each goes to the fold with
    the fewest tokens so far, so no document is ever split across folds.

    Parameters
    ----------
    documents : ndarray of shape (n_sentences,)
        Document of each sentence.
    sizes : ndarray of shape (n_sentences,), optional
        Tokens per sentence (default 1: balance sentences).

    Returns
    -------
    ndarray of int, shape (n_sentences,): the fold of each sentence.

    Examples
    --------
    >>> folds = document_folds(np.array([0, 0, 1, 1, 2, 3]), n_folds=2)
    >>> bool(folds[0] == folds[1] and folds[2] == folds[3])
    True
    """
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InvalidParameterError(f"n_folds must be an integer of at least 2; got {n_folds!r}")
    documents = np.asarray(documents)
    groups, inverse = np.unique(documents, return_inverse=True)
    if len(groups) < n_folds:
        raise InvalidInputError(
            f"{len(groups)} documents cannot fill {n_folds} folds without splitting one; "
            "use fewer folds or more data"
        )
    weight = np.bincount(inverse, weights=np.ones(len(documents)) if sizes is None else sizes)
    rng = np.random.default_rng(random_state)
    order = rng.permutation(len(groups))
    # Largest documents first (stable within the random order) keeps folds even.
    order = order[np.argsort(-weight[order], kind="stable")]
    load = np.zeros(n_folds)
    fold_of_group = np.empty(len(groups), dtype=np.int64)
    for g in order:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += weight[g]
    return fold_of_group[inverse]


def _progress(total: int, enabled: bool, desc: str, unit: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False)


def cross_val_token_probs(
    dataset: TokenDataset,
    scorer,
    *,
    classes: Sequence[str],
    n_folds: int = 5,
    random_state: int | None = 0,
    progress: bool = False,
) -> list[np.ndarray]:
    """Out-of-sample probabilities for every token, each fold fitted on the other folds.

    Folds come from :func:`document_folds` (``-DOCSTART-`` documents; each sentence is its
    own document when the file has none).

    Returns
    -------
    list of ndarray, one ``(n_tokens, n_classes)`` array per sentence.
    """
    labels = encode_tags(dataset, classes)
    sizes = np.array([len(t) for t in dataset.tokens])
    # Folds first: a fold count the documents cannot fill fails before any encoding.
    folds = document_folds(dataset.documents, n_folds=n_folds, sizes=sizes,
                           random_state=random_state)
    features = scorer.prepare(dataset)
    out: list[np.ndarray] = [np.zeros((0, len(classes)))] * len(dataset)
    bar = _progress(n_folds, progress, f"cross-fitting {n_folds} folds", " folds")
    for f in range(n_folds):
        train = np.flatnonzero(folds != f)
        test = np.flatnonzero(folds == f)
        scorer.fit([features[i] for i in train], [labels[i] for i in train], len(classes))
        for i, p in zip(test, scorer.predict_proba([features[i] for i in test]), strict=False):
            out[i] = np.asarray(p, dtype=float)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


def fit_score_token_probs(
    train: TokenDataset,
    test: TokenDataset,
    scorer,
    *,
    classes: Sequence[str],
) -> list[np.ndarray]:
    """Fit ``scorer`` on ``train`` and predict every token of ``test``."""
    labels = encode_tags(train, classes)
    scorer.fit(scorer.prepare(train), labels, len(classes))
    return [np.asarray(p, dtype=float) for p in scorer.predict_proba(scorer.prepare(test))]
