"""A ladder of our own models of increasing capacity, for users of ``impact`` who have no
model predictions of their own: fitted on a training file, predicting the test items."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.io import prepare_text_dataset, read_table
from labelaudit.models import make_scorer, make_token_scorer
from labelaudit.tokens import decode_tags, encode_tags, read_tokens, token_classes

if TYPE_CHECKING:
    import pandas as pd

KINDS: tuple[str, ...] = ("tfidf", "embed", "finetune")
_TFIDF_C = (0.01, 0.1, 1.0, 10.0, 100.0)


@dataclass(frozen=True)
class LadderMember:
    """One rung: a display name, a scorer name for ``make_scorer`` and its options."""

    name: str
    scorer: str
    options: dict[str, Any] = field(default_factory=dict)


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _check_members(members: Sequence[str] | str, kinds: Sequence[str]) -> list[str]:
    """The kinds of rung asked for, as a list, each one of ``kinds``."""
    chosen = [members] if isinstance(members, str) else list(members)
    if not chosen or any(m not in kinds for m in chosen):
        raise InvalidParameterError(f"members={chosen!r}: choose from {', '.join(kinds)}",
                                    param="members")
    return chosen


def model_ladder(members: Sequence[str] = KINDS) -> list[LadderMember]:
    """The rungs, weakest first: TF-IDF + logistic regression at C = 0.01 to 100, frozen
    MiniLM embeddings + logistic regression, and fine-tuning when a CUDA GPU is present.

    >>> [m.name for m in model_ladder(["tfidf"])]
    ['tfidf-C0.01', 'tfidf-C0.1', 'tfidf-C1', 'tfidf-C10', 'tfidf-C100']
    """
    members = _check_members(members, KINDS)
    ladder = []
    if "tfidf" in members:
        ladder += [LadderMember(f"tfidf-C{c:g}", "tfidf", {"C": c}) for c in _TFIDF_C]
    if "embed" in members:
        ladder.append(LadderMember("embed-C1", "embed", {"C": 1.0}))
    if "finetune" in members and _cuda():
        ladder.append(LadderMember("finetune", "finetune", {}))
    return ladder


def ladder_predictions(
    train: pd.DataFrame | str | Path,
    data: pd.DataFrame | str | Path,
    *,
    text: str,
    text_pair: str | None = None,
    label: str = "label",
    id: str = "id",  # noqa: A002 - mirrors the CLI flag
    members: Sequence[str] = KINDS,
    progress: bool = False,
) -> dict[str, pd.DataFrame]:
    """Fit every rung of :func:`model_ladder` on ``train`` and predict the items of ``data``.

    Parameters
    ----------
    train, data : DataFrame or path
        Training items (``text``, ``text_pair``, ``label``), and the items to predict (the
        corrected table, with ``id``).
    members : sequence of {"tfidf", "embed", "finetune"}
        Kinds of rung (see :func:`model_ladder`).

    Returns
    -------
    dict of str to DataFrame
        Model name to a table ``id, predicted_label``, ready for :func:`measure_impact`.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"text": ["good film", "bad film", "great", "awful"] * 3,
    ...                       "label": ["pos", "neg", "pos", "neg"] * 3})
    >>> test = pd.DataFrame({"id": [7, 8], "text": ["good", "awful film"]})
    >>> preds = ladder_predictions(train, test, text="text", members=["tfidf"])
    >>> preds["tfidf-C100"]["predicted_label"].tolist()
    ['pos', 'neg']
    """
    import pandas as pd

    ladder = model_ladder(members)
    train_frame = train if isinstance(train, pd.DataFrame) else read_table(train)
    test_frame = data if isinstance(data, pd.DataFrame) else read_table(data)
    fitted = prepare_text_dataset(train_frame, text=text, text_pair=text_pair, label=label)
    target = prepare_text_dataset(test_frame, text=text, text_pair=text_pair, label=None,
                                  id=id if id in test_frame.columns else None)
    assert fitted.labels is not None  # noqa: S101 - label is given, so labels are encoded
    out: dict[str, pd.DataFrame] = {}
    for member, probs in _fit_rungs(
            ladder, lambda m: make_scorer(m.scorer, progress=progress, **m.options), fitted,
            target, fitted.labels, len(fitted.classes), progress):
        out[member.name] = pd.DataFrame({
            id: test_frame[id].to_numpy() if id in test_frame.columns else target.ids,
            "predicted_label": fitted.classes[np.asarray(probs).argmax(axis=1)]})
    return out


def _fit_rungs(ladder: list[LadderMember], make: Callable[[LadderMember], Any], fitted: Any,
               target: Any, labels: Any, n_classes: int, progress: bool
               ) -> Iterator[tuple[LadderMember, Any]]:
    """Each rung fitted on ``fitted`` and its probabilities on ``target``; rungs of one
    scorer share its prepared features (but fine-tuning, which prepares its own)."""
    features: dict[str, tuple[Any, Any]] = {}
    for member in ladder:
        scorer = make(member)
        if member.scorer not in features or member.scorer == "finetune":
            features[member.scorer] = (scorer.prepare(fitted, progress=progress),
                                       scorer.prepare(target, progress=progress))
        train_x, test_x = features[member.scorer]
        scorer.fit(train_x, labels, n_classes=n_classes)
        yield member, scorer.predict_proba(test_x)


TOKEN_KINDS: tuple[str, ...] = ("encoder", "finetune")
_TOKEN_C = (0.01, 0.1, 1.0)


def token_model_ladder(members: Sequence[str] = TOKEN_KINDS) -> list[LadderMember]:
    """The rungs for tagged data, weakest first: frozen MiniLM word vectors with a linear
    head at C = 0.01 to 1 and with a CRF head, and fine-tuning when a CUDA GPU is present.

    Examples
    --------
    >>> [m.name for m in token_model_ladder(["encoder"])]
    ['encoder+linear-C0.01', 'encoder+linear-C0.1', 'encoder+linear-C1', 'encoder+crf']
    """
    members = _check_members(members, TOKEN_KINDS)
    ladder = []
    if "encoder" in members:
        ladder += [LadderMember(f"encoder+linear-C{c:g}", "encoder",
                                {"head": "linear", "head_options": {"C": c}})
                   for c in _TOKEN_C]
        ladder.append(LadderMember("encoder+crf", "encoder", {"head": "crf"}))
    if "finetune" in members and _cuda():
        ladder.append(LadderMember("finetune", "finetune", {}))
    return ladder


def token_ladder_predictions(
    train: Any,
    data: Any,
    *,
    members: Sequence[str] = TOKEN_KINDS,
    scheme: Any = None,
    tag_column: int = -1,
    options: dict[str, Any] | None = None,
    progress: bool = False,
) -> dict[str, list[list[str]]]:
    """Fit every rung of :func:`token_model_ladder` on ``train`` and tag ``data``.

    Parameters
    ----------
    train, data : TokenDataset or path
        Tagged training sentences, and the sentences to tag (the original copy).
    members : sequence of {"encoder", "finetune"}
        Kinds of rung.
    options : dict, optional
        Extra options of every encoder rung (``encode``, ``cache_dir``...); the encoder rungs
        share one set of word vectors.

    Returns
    -------
    dict of str to list of list of str
        Model name to IOB2 tags per sentence, ready for :func:`measure_impact_tokens`.
    """
    fitted, target = (read_tokens(source, tag_column=tag_column, scheme=scheme)
                      for source in (train, data))
    classes = token_classes(fitted, target)
    labels = encode_tags(fitted, classes)
    spans = fitted.scheme != "plain"
    def make(member: LadderMember) -> Any:
        extra = dict(options or {}) if member.scorer == "encoder" else {}
        return make_token_scorer(member.scorer, **member.options, **extra)

    return {member.name: [decode_tags(np.asarray(p), classes, spans=spans) for p in probs]
            for member, probs in _fit_rungs(token_model_ladder(members), make, fitted, target,
                                            labels, len(classes), progress)}
