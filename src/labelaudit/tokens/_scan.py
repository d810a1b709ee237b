"""``scan_tokens``: out-of-sample token probabilities to token, span and sentence issues."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_fraction, check_int, check_number
from labelaudit.tokens._conll import TokenDataset
from labelaudit.tokens._crossfit import (
    cross_val_token_probs,
    encode_tags,
    fit_score_token_probs,
    token_classes,
)
from labelaudit.tokens._heads import HeadName
from labelaudit.tokens._issues import TokenIssue
from labelaudit.tokens._rules import consistency_issues, invalid_sequence_issues, tag_consistency
from labelaudit.tokens._scorer import ScorerName, check_seed, make_token_scorer
from labelaudit.tokens._spans import decode_tags, span_issues, tag_issues

__all__ = ["TokenScanResult", "scan_tokens", "sentence_scores", "token_scores"]

_EPS = 1e-12


def token_scores(
    labels: Sequence[np.ndarray], pred_probs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Label-quality score of every token: ``log p(given tag)``, the negated loss.

    Lower means more suspect, like :func:`labelaudit.detect.label_quality_scores` with
    ``method="loss"``.

    Examples
    --------
    >>> probs = [np.array([[0.9, 0.1], [0.5, 0.5]])]
    >>> [s.round(3).tolist() for s in token_scores([np.array([0, 1])], probs)]
    [[-0.105, -0.693]]
    """
    out = []
    for y, p in zip(labels, pred_probs, strict=False):
        p = np.asarray(p, dtype=float)
        out.append(np.log(np.clip(p[np.arange(len(y)), y], _EPS, 1.0)))
    return out


def sentence_scores(
    labels: Sequence[np.ndarray],
    pred_probs: Sequence[np.ndarray],
    *,
    method: str = "min",
    temperature: float = 0.05,
) -> np.ndarray:
    """Sentence label-quality scores with cleanlab's token-classification ranking.

    ``min``: the worst token's self-confidence ``min_t p(y_t)``; ``softmin``:
    ``<s, softmax((1 - s) / temperature)>`` over the tokens' self-confidences ``s``, which
    converges to ``min`` as the temperature goes to 0 (Wang & Mueller 2022).

    References
    ----------
    Wang & Mueller (2022), Detecting Label Errors in Token Classification Data
    (``cleanlab.token_classification.rank.get_label_quality_scores``).

    Examples
    --------
    >>> labels = [np.array([0, 0, 1]), np.array([0, 1])]
    >>> probs = [np.array([[0.9, 0.1], [0.7, 0.3], [0.05, 0.95]]),
    ...          np.array([[0.8, 0.2], [0.8, 0.2]])]
    >>> sentence_scores(labels, probs).tolist()
    [0.7, 0.2]
    """
    from labelaudit.detect._cleanlab import import_cleanlab

    get_label_quality_scores = import_cleanlab(
        "cleanlab.token_classification.rank").get_label_quality_scores

    if method not in ("min", "softmin"):
        raise InvalidParameterError(f"unknown sentence score {method!r}; choose 'min' or 'softmin'")
    temperature = check_number(temperature, "temperature", low=0.0, low_open=True)
    scores, _ = get_label_quality_scores(
        [list(map(int, y)) for y in labels],
        [np.asarray(p, dtype=float) for p in pred_probs],
        token_score_method="self_confidence",
        sentence_score_method=method,
        sentence_score_kwargs={"temperature": temperature} if method == "softmin" else {},
    )
    return np.asarray(scores, dtype=float)


@dataclass(frozen=True)
class TokenScanResult:
    """Result of :func:`scan_tokens` on the audited dataset.

    Attributes
    ----------
    dataset : TokenDataset
        The audited sentences.
    classes : tuple of str
        IOB2 tag classes (columns of ``pred_probs``).
    pred_probs : list of ndarray (n_tokens, n_classes)
        Out-of-sample token probabilities, one array per sentence.
    labels : list of ndarray of int
        Given IOB2 tags as indices into ``classes``.
    token_scores : list of ndarray
        ``log p(given tag)`` per token (lower = more suspect).
    sentence_scores, sentence_scores_softmin : ndarray of shape (n_sentences,)
        Worst-token and soft-min sentence scores (lower = more suspect).
    suggested_tags : list of list of str
        Most probable valid IOB2 tags per sentence.
    issues : list of tuple of TokenIssue
        Span, tag and rule issues of each sentence, most suspect first.
    scorer : str
        What produced the probabilities.
    """

    dataset: TokenDataset
    classes: tuple[str, ...]
    pred_probs: list[np.ndarray]
    labels: list[np.ndarray]
    token_scores: list[np.ndarray]
    sentence_scores: np.ndarray
    sentence_scores_softmin: np.ndarray
    suggested_tags: list[list[str]]
    issues: list[tuple[TokenIssue, ...]]
    scorer: str

    def ranking(self) -> np.ndarray:
        """Sentence indices, most suspect first (worst token, then soft-min, then order)."""
        n = len(self.sentence_scores)
        return np.lexsort((np.arange(n), self.sentence_scores_softmin, self.sentence_scores))

    def to_records(self) -> list[dict]:
        """One JSON-ready record per sentence, most suspect first.

        Fields: ``id, doc, rank, tokens, tags`` (given, in the input scheme),
        ``suggested_tags`` (input scheme), ``score`` (worst token), ``score_softmin``,
        ``token_scores`` (``log p(given tag)``), ``issues`` (list of issue objects) and
        ``scheme``.
        """
        ds = self.dataset
        records = []
        for rank, i in enumerate(self.ranking(), start=1):
            records.append({
                "id": ds.ids[i],
                "doc": int(ds.documents[i]),
                "rank": rank,
                "tokens": ds.tokens[i],
                "tags": ds.tags[i],
                "suggested_tags": ds.to_scheme(self.suggested_tags[i]),
                "score": float(f"{self.sentence_scores[i]:.6g}"),
                "score_softmin": float(f"{self.sentence_scores_softmin[i]:.6g}"),
                "token_scores": [float(f"{s:.5g}") for s in self.token_scores[i]],
                "issues": [issue.to_dict(ds.tokens[i]) for issue in self.issues[i]],
                "scheme": ds.scheme,
            })
        return records

    def to_frame(self) -> pd.DataFrame:
        """One row per sentence, most suspect first: ``id, doc, rank, text, score,
        score_softmin, n_issues, issues`` (the issue kinds, comma-separated)."""
        ds = self.dataset
        rows = []
        for rank, i in enumerate(self.ranking(), start=1):
            rows.append({
                "id": ds.ids[i],
                "doc": int(ds.documents[i]),
                "rank": rank,
                "text": " ".join(ds.tokens[i]),
                "score": float(self.sentence_scores[i]),
                "score_softmin": float(self.sentence_scores_softmin[i]),
                "n_issues": len(self.issues[i]),
                "issues": ",".join(sorted({x.kind for x in self.issues[i]})),
            })
        return pd.DataFrame(rows)

    def issue_frame(self) -> pd.DataFrame:
        """One row per issue, most suspect first: ``id, rank, sentence_score, kind, source,
        start, end, text, given, suggested, score, detail`` (spans as ``TYPE[start:end]``)."""
        from labelaudit.tokens._display import issues_to_frame

        return issues_to_frame(self.to_records())

    def token_frame(self) -> pd.DataFrame:
        """One row per token: ``id, position, token, tag, suggested_tag, loss, score``."""
        ds = self.dataset
        rows = []
        for i in range(len(ds)):
            for t, token in enumerate(ds.tokens[i]):
                score = float(self.token_scores[i][t])
                rows.append((ds.ids[i], t, token, ds.iob2_tags[i][t], self.suggested_tags[i][t],
                             -score, score))
        return pd.DataFrame(rows, columns=["id", "position", "token", "tag", "suggested_tag",
                                           "loss", "score"])


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
    dataset: TokenDataset,
    *,
    score: TokenDataset | None = None,
    scorer: ScorerName | object = "encoder",
    model: str | None = None,
    head: HeadName = "crf",
    n_folds: int = 5,
    random_state: int | None = 0,
    pred_probs: Sequence[np.ndarray] | None = None,
    classes: Sequence[str] | None = None,
    rules: bool = True,
    consistency_min_count: int = 3,
    consistency_max_share: float = 0.34,
    softmin_temperature: float = 0.05,
    cache: bool = True,
    cache_dir: str | None = None,
    progress: bool = False,
) -> TokenScanResult:
    """Find label errors in token-tagged data at the token, span and sentence level.

    Parameters
    ----------
    dataset : TokenDataset
        Data to audit by cross-fitting, or training data when ``score`` is given.
    score : TokenDataset, optional
        Fit on ``dataset`` and audit this one instead. A file whose every tag is ``O``
        takes the scheme of ``dataset`` (an untagged file audited for entities).
    scorer : {"encoder", "finetune"} or scorer object
        ``encoder``: frozen contextual word vectors (default encoder all-MiniLM-L6-v2) with
        a ``head``; ``finetune``: fine-tune ``model`` for token classification. Any object
        with ``prepare``/``fit``/``predict_proba`` works too.
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
    n_folds = check_int(n_folds, "n_folds", minimum=2)
    random_state = check_seed(random_state)
    consistency_min_count = check_int(consistency_min_count, "consistency_min_count",
                                      minimum=1)
    consistency_max_share = check_fraction(consistency_max_share, "consistency_max_share",
                                           low_open=True, high_open=True)
    softmin_temperature = check_number(softmin_temperature, "softmin_temperature", low=0.0,
                                       low_open=True)
    if pred_probs is None:
        _check_learnable(dataset, training=score is not None)
    score = _match_kinds(dataset, score)
    audited = score if score is not None else dataset
    if pred_probs is not None:
        if classes is None:
            raise InvalidParameterError("pred_probs needs classes: the tag of each column")
        classes = tuple(classes)
        probs = _check_probs(pred_probs, audited, classes)
        name = "given pred_probs"
    else:
        refs = (dataset,) if score is None else (dataset, score)
        classes = tuple(classes) if classes is not None else token_classes(*refs)
        if isinstance(scorer, str):
            if scorer == "encoder":
                obj = make_token_scorer("encoder", model=model, head=head, cache=cache,
                                        cache_dir=cache_dir, progress=progress,
                                        random_state=random_state)
            elif scorer == "finetune":
                obj = make_token_scorer("finetune", model=model, progress=progress,
                                        random_state=random_state)
            else:
                raise InvalidParameterError(
                    f"unknown token scorer {scorer!r}; choose 'encoder' or 'finetune'")
            name = obj.name
        else:
            obj = scorer
            name = str(getattr(scorer, "name", type(scorer).__name__))
        if score is None:
            probs = cross_val_token_probs(dataset, obj, classes=classes, n_folds=n_folds,
                                          random_state=random_state, progress=progress)
        else:
            probs = fit_score_token_probs(dataset, score, obj, classes=classes)
    labels = encode_tags(audited, classes)
    spans = audited.scheme != "plain"
    suggested = [decode_tags(p, classes, spans=spans) for p in probs]
    per_sentence: list[list[TokenIssue]] = []
    for i, p in enumerate(probs):
        given = audited.iob2_tags[i]
        find = span_issues if spans else tag_issues
        per_sentence.append(find(given, suggested[i], p, classes))
    if rules:
        for i, tags in enumerate(audited.tags):
            per_sentence[i].extend(invalid_sequence_issues(tags, scheme=audited.scheme))
        counts = tag_consistency([audited] if score is None else [dataset, audited])
        extra = consistency_issues(audited, counts, min_count=consistency_min_count,
                                   max_share=consistency_max_share)
        for i, found in enumerate(extra):
            per_sentence[i].extend(found)
    issues = [tuple(sorted(x, key=lambda issue: (issue.score, issue.start))) for x in per_sentence]
    return TokenScanResult(
        dataset=audited,
        classes=classes,
        pred_probs=probs,
        labels=labels,
        token_scores=token_scores(labels, probs),
        sentence_scores=sentence_scores(labels, probs, method="min"),
        sentence_scores_softmin=sentence_scores(labels, probs, method="softmin",
                                                temperature=softmin_temperature),
        suggested_tags=suggested,
        issues=issues,
        scorer=name,
    )
