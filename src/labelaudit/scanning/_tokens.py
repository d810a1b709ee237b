"""``scan_tokens``: out-of-sample token probabilities to token, span and sentence issues."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_fraction, check_int, check_number
from labelaudit.models import Scorer
from labelaudit.models._heads import HeadName
from labelaudit.models._token_scorer import (
    as_token_scorer,
    check_seed,
    cross_val_token_probs,
    fit_score_token_probs,
    make_token_scorer,
)
from labelaudit.scanning._token_result import TokenScanResult
from labelaudit.tokens import TokenDataset, TokenIssue
from labelaudit.tokens._rules import consistency_issues, invalid_sequence_issues, tag_consistency
from labelaudit.tokens._spans import (
    decode_tags,
    encode_tags,
    span_issues,
    tag_issues,
    token_classes,
)

__all__ = ["TokenScanResult", "scan_tokens"]


def _check_probs(pred_probs, dataset: TokenDataset, classes: Sequence[str]) -> list[np.ndarray]:
    if len(pred_probs) != len(dataset):
        raise InvalidInputError(
            f"pred_probs has {len(pred_probs)} sentences but the data has {len(dataset)}"
        )
    out = []
    for i, (p, toks) in enumerate(zip(pred_probs, dataset.tokens, strict=False)):
        p = np.asarray(p, dtype=float)
        if p.shape != (len(toks), len(classes)):
            raise InvalidInputError(
                f"pred_probs of sentence {dataset.ids[i]!r} has shape {p.shape}; expected "
                f"({len(toks)}, {len(classes)}) (n_tokens, n_classes)"
            )
        if not np.all(np.isfinite(p)) or p.min(initial=0) < 0:
            raise InvalidInputError(
                f"pred_probs of sentence {dataset.ids[i]!r} must be finite and >= 0"
            )
        out.append(p)
    return out


def _check_learnable(dataset: TokenDataset, *, training: bool) -> None:
    """Refuse data with a single tag: no model can learn to tell tags apart from it."""
    tags = {t for sentence in dataset.tags for t in sentence}
    if len(tags) > 1:
        return
    what = "the training data" if training else "the data"
    fix = ("fit on a file with entity tags (B-/I-/E-/S- prefixes) instead" if training else
           "tag some entities first, or audit it with a model fitted on tagged data "
           "(`labelaudit scan-tokens TAGGED --score FILE`; score= in Python)")
    tag = tags.pop()
    if tag == "O":
        raise InvalidInputError(
            f"every tag of {what} is O: there are no entities to learn from; {fix}")
    raise InvalidInputError(
        f"every tag of {what} is {tag!r}: a model needs at least two different tags to learn "
        "from; check the tag column (--tag-column)")


def _match_kinds(dataset: TokenDataset, score: TokenDataset | None) -> TokenDataset | None:
    """The scored data in the training data's kind of tags (span or plain).

    A file whose every tag is ``O`` is detected as plain tags, but it is valid in every span
    scheme: it takes the training data's scheme (an untagged file to audit for entities).
    """
    if score is None or (score.scheme == "plain") == (dataset.scheme == "plain"):
        return score
    if all(t == "O" for sentence in score.tags for t in sentence):
        return replace(score, scheme=dataset.scheme)

    def example(ds: TokenDataset) -> str:
        return next((repr(t) for sentence in ds.tags for t in sentence if t != "O"), "'O'")

    def kind(ds: TokenDataset) -> str:
        return "plain tags" if ds.scheme == "plain" else f"{ds.scheme.upper()} span tags"

    raise InvalidInputError(
        f"the training data has {kind(dataset)} (such as {example(dataset)}) but the scored data "
        f"has {kind(score)} (such as {example(score)}); both files must tag the same thing")


def scan_tokens(
    dataset: TokenDataset, *, score: TokenDataset | None = None,
    scorer: str | Scorer | Sequence[str | Scorer] | Any = "encoder", model: str | None = None,
    head: HeadName = "crf", n_folds: int = 5, random_state: int | None = 0,
    pred_probs: Sequence[np.ndarray] | None = None, classes: Sequence[str] | None = None,
    rules: bool = True, consistency_min_count: int = 3, consistency_max_share: float = 0.34,
    softmin_temperature: float = 0.05, cache: bool = True, cache_dir: str | None = None,
    progress: bool = False, engine: str = "local", ray_address: str | None = None,
) -> TokenScanResult:
    """Find label errors in token-tagged data at the token, span and sentence level.

    Parameters
    ----------
    dataset : TokenDataset
        Data to audit by cross-fitting, or training data when ``score`` is given.
    score : TokenDataset, optional
        Fit on ``dataset`` and audit this one instead. A file whose every tag is ``O``
        takes the scheme of ``dataset`` (an untagged file audited for entities).
    scorer : {"encoder", "finetune"}, a scorer object, or a list of them
        ``encoder``: frozen contextual word vectors (default encoder all-MiniLM-L6-v2) with
        a ``head``; ``finetune``: fine-tune ``model`` for token classification (names from
        :data:`labelaudit.registry.TOKEN_SCORERS`). A :class:`labelaudit.models.TokenScorer`,
        or any object with ``prepare``/``fit``/``predict_proba``, works too. Several
        members are averaged per token with weights fitted to their out-of-sample log loss
        (:func:`labelaudit.detect.ensemble_pred_probs`), as :func:`labelaudit.scan` does.
    model : str, optional
        Encoder or model to fine-tune (name or folder).
    head : {"crf", "linear"}
        Head on the frozen word vectors (see :class:`EncoderTokenScorer`).
    n_folds : int
        Cross-fitting folds (at least 2); documents (``-DOCSTART-``) are never split.
    pred_probs : list of ndarray (n_tokens, n_classes), optional
        Out-of-sample probabilities computed elsewhere (skips the model); needs ``classes``.
    classes : list of str, optional
        IOB2 tags of the ``pred_probs`` columns.
    rules : bool
        Add rule-based issues (invalid tag sequences, inconsistent tags).
    consistency_min_count, consistency_max_share : see :func:`consistency_issues`.
    softmin_temperature : float
        Temperature of the soft-min sentence score (above 0).
    engine, ray_address
        ``"ray"``: every fold a Ray task (a fine-tuning fold on a GPU of its own when the
        cluster has GPUs), as in :func:`labelaudit.scan`; needs the ``scale`` extra.

    Returns
    -------
    TokenScanResult

    Raises
    ------
    InvalidParameterError
        An option out of range (checked before any model is loaded).
    InvalidInputError
        Data a model cannot learn from (every tag ``O``, or one tag only), or training and
        scored data with different kinds of tags.

    References
    ----------
    Wang & Mueller (2022), Detecting Label Errors in Token Classification Data (sentence
    scores). Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained
    Language Models (out-of-sample loss of the given label).

    Examples
    --------
    >>> from labelaudit.tokens import make_token_dataset
    >>> ds = make_token_dataset([["Rome", "wins"], ["Paris", "loses"]],
    ...                         [["B-LOC", "O"], ["B-ORG", "O"]])
    >>> probs = [np.array([[.1, .8, .1], [.9, .05, .05]])] * 2
    >>> classes = ("O", "B-LOC", "B-ORG")
    >>> result = scan_tokens(ds, pred_probs=probs, classes=classes)
    >>> result.to_records()[0]["issues"][0]["kind"], result.to_records()[0]["id"]
    ('wrong-type', 1)
    """
    from labelaudit.detect import sentence_scores, token_scores

    n_folds = check_int(n_folds, "n_folds", minimum=2)
    random_state = check_seed(random_state)
    from labelaudit.engine import check_engine, folds_on

    check_engine(engine, ray_address)
    min_count = check_int(consistency_min_count, "consistency_min_count", minimum=1)
    max_share = check_fraction(consistency_max_share, "consistency_max_share", low_open=True,
                               high_open=True)
    temperature = check_number(softmin_temperature, "softmin_temperature", low=0.0,
                               low_open=True)
    if pred_probs is None:
        _check_learnable(dataset, training=score is not None)
    score = _match_kinds(dataset, score)
    audited = score if score is not None else dataset
    if pred_probs is not None:
        if classes is None:
            raise InvalidParameterError("pred_probs needs classes: the tag of each column",
                                        param=("classes", "pred_probs"))
        classes = tuple(classes)
        probs = _check_probs(pred_probs, audited, classes)
        name = "given pred_probs"
    else:
        classes = tuple(classes) if classes is not None else token_classes(
            *((dataset,) if score is None else (dataset, score)))
        members = [_make_scorer(one, model=model, head=head, cache=cache, cache_dir=cache_dir,
                                progress=progress, random_state=random_state)
                   for one in _members(scorer)]
        name = "+".join(m.name for m in members)
        with folds_on(engine, ray_address):
            runs = [cross_val_token_probs(dataset, m, classes=classes, n_folds=n_folds,
                                          random_state=random_state, progress=progress)
                    if score is None
                    else fit_score_token_probs(dataset, score, m, classes=classes)
                    for m in members]
        probs = runs[0] if len(runs) == 1 else _ensemble(runs, encode_tags(audited, classes))
    labels = encode_tags(audited, classes)
    suggested = [decode_tags(p, classes, spans=audited.scheme != "plain") for p in probs]
    issues = _find_issues(audited, dataset if score is not None else None, probs, suggested,
                          classes, rules=rules, min_count=min_count, max_share=max_share)
    return TokenScanResult(
        dataset=audited, classes=classes, pred_probs=probs, labels=labels,
        token_scores=token_scores(labels, probs),
        sentence_scores=sentence_scores(labels, probs, method="min"),
        sentence_scores_softmin=sentence_scores(labels, probs, method="softmin",
                                                temperature=temperature),
        suggested_tags=suggested, issues=issues, scorer=name,
    )


def _members(scorer: Any) -> list[Any]:
    """The ensemble's members: one name or scorer, or a list of them."""
    if isinstance(scorer, str) or not isinstance(scorer, (list, tuple)):
        return [scorer]
    if not scorer:
        raise InvalidParameterError("give at least one token scorer")
    return list(scorer)


def _ensemble(runs: list[list[np.ndarray]], labels: list[np.ndarray]) -> list[np.ndarray]:
    """Several scorers' token probabilities averaged with
    :func:`labelaudit.detect.ensemble_pred_probs` (over all tokens), one array per sentence."""
    from labelaudit.detect import ensemble_pred_probs

    lengths = np.cumsum([len(y) for y in labels])[:-1]
    flat = ensemble_pred_probs([np.vstack(r) for r in runs], np.concatenate(labels)).pred_probs
    return np.split(flat, lengths)


def _make_scorer(scorer: Any, *, model: str | None, head: str, cache: bool,
                 cache_dir: str | None, progress: bool, random_state: int | None) -> Any:
    """The scorer object: built from its name (with the options it takes), or as given."""
    if not isinstance(scorer, str):
        return as_token_scorer(scorer)
    if scorer == "encoder":
        return make_token_scorer("encoder", model=model, head=head, cache=cache,
                                 cache_dir=cache_dir, progress=progress,
                                 random_state=random_state)
    return make_token_scorer(scorer, model=model, progress=progress, random_state=random_state)


def _find_issues(
    audited: TokenDataset, train: TokenDataset | None, probs: Sequence[np.ndarray],
    suggested: list[list[str]], classes: Sequence[str], *, rules: bool, min_count: int,
    max_share: float,
) -> list[tuple[TokenIssue, ...]]:
    """Span (or tag) issues of each sentence, plus rule issues, most suspect first."""
    find = span_issues if audited.scheme != "plain" else tag_issues
    per_sentence = [find(audited.iob2_tags[i], suggested[i], p, classes)
                    for i, p in enumerate(probs)]
    if rules:
        for i, tags in enumerate(audited.tags):
            per_sentence[i].extend(invalid_sequence_issues(tags, scheme=audited.scheme))
        counts = tag_consistency([audited] if train is None else [train, audited])
        extra = consistency_issues(audited, counts, min_count=min_count, max_share=max_share)
        for i, found in enumerate(extra):
            per_sentence[i].extend(found)
    return [tuple(sorted(x, key=lambda issue: (issue.score, issue.start))) for x in per_sentence]
