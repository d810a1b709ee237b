"""The options of an impact run, checked before any work: predictions given or fitted, and
the options of tables apart from those of token data.

Messages name an option as ``name=value`` or, alone, as ``name=`` (the command line spells
them as its flags).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from labelaudit._errors import InvalidParameterError
from labelaudit.impact._impact_models import KINDS, TOKEN_KINDS

__all__ = ["check_impact_options"]

_TOKEN_SUFFIXES = (".conll", ".conllu", ".iob", ".iob1", ".iob2", ".bio", ".bioes")


def check_impact_options(corrected: str | Path, *,
                         predictions: Sequence[tuple[str, str]] = (),
                         train: str | Path | None = None, original: str | Path | None = None,
                         members: Sequence[str] | None = None, text: str | None = None,
                         text_pair: str | None = None, label: str | None = None,
                         corrected_label: str | None = None, flagged: str | None = None,
                         verdict: str | None = None, scheme: str | None = None,
                         tag_column: int = -1) -> list[str] | None:
    """Check, before any work, the options of measuring the impact of the corrections in
    ``corrected``: the models' ``predictions`` (name and file) or a ``train`` file to fit
    the model ladder on (kinds of rung ``members``, default all), and the options of a
    table (``text``... ``verdict``) or of token data (``original``, ``scheme``,
    ``tag_column``), not both.

    Returns
    -------
    list of str or None
        The kinds of rung to fit on ``train`` (:func:`ladder_predictions`, or
        :func:`token_ladder_predictions` with ``original``); None when the predictions are
        given.

    Raises
    ------
    InvalidParameterError
        Both or neither of ``predictions`` and ``train``, a model named twice, a rung of
        the other kind of data, an option of the other kind of data.

    Examples
    --------
    >>> check_impact_options("corrected.csv", train="train.csv", text="text")
    ['tfidf', 'embed', 'finetune']
    >>> check_impact_options("corrected.csv", predictions=[("a", "a.csv"), ("a", "b.csv")])
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: model names given twice in predictions=: ['a']
    """
    if original:
        table_only = [f"{name}=" for name, value in (
            ("label", label), ("corrected_label", corrected_label), ("flagged", flagged),
            ("verdict", verdict), ("text", text), ("text_pair", text_pair)) if value]
        if table_only:
            raise InvalidParameterError(f"{', '.join(table_only)} go with tables, not with "
                                        "token data (original=)",
                                        param=(*(n.rstrip("=") for n in table_only),
                                               "original"))
    elif Path(corrected).suffix.lower() in _TOKEN_SUFFIXES:
        raise InvalidParameterError(
            f"{corrected} looks like a tagged (CoNLL) file: give its original copy with "
            "original=FILE to measure token data", param="original")
    elif scheme is not None or tag_column != -1:
        raise InvalidParameterError("scheme= and tag_column= go with token data (original=)",
                                    param=("scheme", "tag_column", "original"))
    if train and predictions:
        raise InvalidParameterError("give predictions= or train=, not both",
                                    param=("predictions", "train"))
    if predictions:
        if members is not None:
            raise InvalidParameterError("members= goes with train=",
                                        param=("members", "train"))
        names = [name for name, _ in predictions]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InvalidParameterError(f"model names given twice in predictions=: {twice}",
                                        param="predictions")
        return None
    if not train:
        raise InvalidParameterError("give predictions=NAME=FILE or train=FILE"
                                    + ("" if original else " text=COL"),
                                    param=("predictions", "train"))
    if not original and not text:
        raise InvalidParameterError("train= needs text=, the text column",
                                    param=("text", "train"))
    kinds = TOKEN_KINDS if original else KINDS
    if members is None:
        return list(kinds)
    wrong = ",".join(m for m in members if m not in kinds)
    if wrong:
        raise InvalidParameterError(
            f"members={wrong} does not go with "
            f"{'token data' if original else 'tables'}; choose ladder or some of "
            f"{','.join(kinds)}", param="members")
    return list(members)
