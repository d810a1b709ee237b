"""``scan_tokens``: out-of-sample token probabilities to token, span and sentence issues; its
result, and how the result is written (records, the text view, or the table of issues)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._html_table import result_html
from labelaudit._validation import check_fraction, check_int, check_number
from labelaudit.detect import ensemble_pred_probs, sentence_scores, token_scores
from labelaudit.evaluation import evaluate_tokens, read_token_issues
from labelaudit.io import atomic_path, emit
from labelaudit.models import (
    Engine,
    HeadName,
    Scorer,
    as_token_scorer,
    check_engine,
    check_seed,
    cross_val_token_probs,
    fit_score_token_probs,
    make_token_scorer,
    ray_session,
)
from labelaudit.tokens import (
    TokenDataset,
    TokenIssue,
    consistency_issues,
    decode_tags,
    encode_tags,
    format_evidence,
    format_issue_table,
    invalid_sequence_issues,
    issue_evidence,
    issue_forms,
    issues_to_frame,
    read_tokens,
    span_issues,
    surface_index,
    tag_consistency,
    tag_issues,
    token_classes,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.evaluation import TokenEvaluation
    from labelaudit.tokens import Scheme

# Line separators that JSON allows raw inside strings but str.splitlines() breaks at.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


@dataclass(frozen=True)
class TokenScanResult:
    """Result of :func:`scan_tokens` on the audited dataset.

    Attributes
    ----------
    dataset : TokenDataset
        The audited sentences.
    classes : tuple of str
        IOB2 tag classes (columns of ``pred_probs``).
    pred_probs, labels, token_scores : list of ndarray, one per sentence
        Out-of-sample probabilities (n_tokens, n_classes), given tags as indices into
        ``classes``, and ``log p(given tag)`` per token (lower = more suspect).
    sentence_scores, sentence_scores_softmin : ndarray of shape (n_sentences,)
        Worst-token and soft-min sentence scores (lower = more suspect).
    suggested_tags : list of list of str
        Most probable valid IOB2 tags per sentence.
    issues : list of tuple of TokenIssue
        Span, tag and rule issues of each sentence, most suspect first.
    scorer : str
        What produced the probabilities.
    evidence : list of tuple of dict, or None
        Why each issue is flagged, one dict per issue of ``issues`` (see
        :func:`labelaudit.tokens.issue_evidence`); None when the scan ran with
        ``evidence=False``.
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
    evidence: list[tuple[dict, ...]] | None = None

    def ranking(self) -> np.ndarray:
        """Sentence indices, most suspect first (worst token, then soft-min, then order)."""
        n = len(self.sentence_scores)
        return np.lexsort((np.arange(n), self.sentence_scores_softmin, self.sentence_scores))

    def to_records(self) -> list[dict]:
        """One JSON-ready record per sentence, most suspect first: ``id, doc, rank, tokens,
        tags, suggested_tags`` (tags in the input scheme), ``score`` (worst token),
        ``score_softmin``, ``token_scores`` (``log p(given tag)``), ``issues`` (each with its
        ``evidence`` unless the scan ran without), ``scheme``."""
        ds = self.dataset
        evidence = self.evidence
        return [{
            "id": ds.ids[i],
            "doc": int(ds.documents[i]),
            "rank": rank,
            "tokens": ds.tokens[i],
            "tags": ds.tags[i],
            "suggested_tags": ds.to_scheme(self.suggested_tags[i]),
            "score": float(f"{self.sentence_scores[i]:.6g}"),
            "score_softmin": float(f"{self.sentence_scores_softmin[i]:.6g}"),
            "token_scores": [float(f"{s:.5g}") for s in self.token_scores[i]],
            "issues": [issue.to_dict(ds.tokens[i])
                       | ({} if evidence is None else {"evidence": evidence[i][j]})
                       for j, issue in enumerate(self.issues[i])],
            "scheme": ds.scheme,
        } for rank, i in enumerate(self.ranking(), start=1)]

    def to_frame(self) -> pd.DataFrame:
        """One row per sentence, most suspect first: ``id, doc, rank, text, score,
        score_softmin, n_issues, issues`` (the issue kinds, comma-separated)."""
        import pandas as pd
        ds = self.dataset
        return pd.DataFrame([{
            "id": ds.ids[i],
            "doc": int(ds.documents[i]),
            "rank": rank,
            "text": " ".join(ds.tokens[i]),
            "score": float(self.sentence_scores[i]),
            "score_softmin": float(self.sentence_scores_softmin[i]),
            "n_issues": len(self.issues[i]),
            "issues": ",".join(sorted({x.kind for x in self.issues[i]})),
        } for rank, i in enumerate(self.ranking(), start=1)])

    def _repr_html_(self) -> str:
        """The sentences in a notebook, most suspect first."""
        with_issues = sum(1 for found in self.issues if found)
        return result_html(self, header=f"{len(self.sentence_scores):,} sentences, "
                           f"{with_issues:,} with issues; scored by {self.scorer}")

    def write(self, path: str | Path) -> Path:
        """What ``labelaudit scan-tokens --out PATH`` writes, atomically: records (``.jsonl``),
        the text view (``.txt``), else one row per issue."""
        write_token_scan(self, str(path), format=token_output_format(str(path)), show=None)
        return Path(path)

    def issue_frame(self) -> pd.DataFrame:
        """One row per issue, most suspect first: ``id, rank, sentence_score, kind, source,
        start, end, text, given, suggested, score, detail`` (spans as ``TYPE[start:end]``),
        then ``evidence`` (a dict) unless the scan ran without."""
        return issues_to_frame(self.to_records())

    def token_frame(self) -> pd.DataFrame:
        """One row per token: ``id, position, token, tag, suggested_tag, loss, score``."""
        import pandas as pd
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
            f"pred_probs has {len(pred_probs)} sentences but the data has {len(dataset)}")
    out = []
    for i, (p, toks) in enumerate(zip(pred_probs, dataset.tokens, strict=False)):
        p = np.asarray(p, dtype=float)
        if p.shape != (len(toks), len(classes)):
            raise InvalidInputError(
                f"pred_probs of sentence {dataset.ids[i]!r} has shape {p.shape}; expected "
                f"({len(toks)}, {len(classes)}) (n_tokens, n_classes)")
        if not np.all(np.isfinite(p)) or p.min(initial=0) < 0:
            raise InvalidInputError(
                f"pred_probs of sentence {dataset.ids[i]!r} must be finite and >= 0")
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
    """The scored data in the training data's kind of tags (span or plain); an all-``O``
    file, detected as plain but valid in every span scheme, takes the training data's."""
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


@dataclass(frozen=True)
class TokenScanOptions:
    """Every option of :func:`scan_tokens` (its keywords), documented there; checked once by
    :meth:`checked`."""

    score: TokenDataset | None = None
    scorer: str | Scorer | Sequence[str | Scorer] | Any = "encoder"
    model: str | None = None
    head: HeadName = "crf"
    n_folds: int = 5
    random_state: int | None = 0
    pred_probs: Sequence[np.ndarray] | None = None
    classes: Sequence[str] | None = None
    rules: bool = True
    consistency_min_count: int = 3
    consistency_max_share: float = 0.34
    softmin_temperature: float = 0.05
    cache: bool = True
    cache_dir: str | None = None
    epochs: int = 3
    batch_size: int = 16
    progress: bool = False
    engine: Engine = "local"
    ray_address: str | None = None
    evidence: bool = True

    def checked(self) -> TokenScanOptions:
        """The options, each rule checked once (each error names its options)."""
        check_engine(self.engine, self.ray_address)
        if self.pred_probs is not None and self.classes is None:
            raise InvalidParameterError("pred_probs needs classes: the tag of each column",
                                        param=("classes", "pred_probs"))
        if isinstance(self.scorer, (list, tuple)) and not self.scorer:
            raise InvalidParameterError("give at least one token scorer", param="scorer")
        check_fraction(self.consistency_max_share, "consistency_max_share", low_open=True,
                       high_open=True)
        check_number(self.softmin_temperature, "softmin_temperature", low=0.0, low_open=True)
        return replace(self, n_folds=check_int(self.n_folds, "n_folds", minimum=2),
                       random_state=check_seed(self.random_state), consistency_min_count=check_int(
                           self.consistency_min_count, "consistency_min_count", minimum=1))


def scan_tokens(
    dataset: TokenDataset, *, score: TokenDataset | None = None,
    scorer: str | Scorer | Sequence[str | Scorer] | Any = "encoder", model: str | None = None,
    head: HeadName = "crf", n_folds: int = 5, random_state: int | None = 0,
    pred_probs: Sequence[np.ndarray] | None = None, classes: Sequence[str] | None = None,
    rules: bool = True, consistency_min_count: int = 3, consistency_max_share: float = 0.34,
    softmin_temperature: float = 0.05, cache: bool = True, cache_dir: str | None = None,
    epochs: int = 3, batch_size: int = 16, progress: bool = False, engine: Engine = "local",
    ray_address: str | None = None, evidence: bool = True,
) -> TokenScanResult:
    """Find label errors in token-tagged data at the token, span and sentence level.

    Options (:class:`TokenScanOptions`) out of range are refused before any model loads;
    data a model cannot learn from (every tag ``O``, or one tag only) and training and scored
    data with different kinds of tags: InvalidInputError.

    Parameters
    ----------
    dataset
        Data to audit by cross-fitting, or training data when ``score`` is given.
    score
        Fit on ``dataset`` and audit this one instead; an all-``O`` file takes the scheme
        of ``dataset`` (an untagged file audited for entities).
    scorer : {"encoder", "finetune"}, a scorer object, a list of them (each name once), or None
        ``encoder``: frozen word vectors (default all-MiniLM-L6-v2) with a ``head``
        (:class:`EncoderTokenScorer`); ``finetune``: fine-tune ``model`` (``epochs``, default
        3; ``batch_size``, 16); or an object with ``prepare``/``fit``/``predict_proba``; None:
        ``finetune`` with a ``model``, else ``encoder``. Several are averaged as in :func:`scan`.
    model
        Encoder or model to fine-tune (name or folder).
    n_folds
        Cross-fitting folds (at least 2); documents (``-DOCSTART-``) are never split.
    pred_probs, classes
        Out-of-sample probabilities (n_tokens, n_classes) per sentence, computed elsewhere
        (skips the model), and the IOB2 tag of each column.
    rules
        Add rule-based issues (invalid tag sequences, inconsistent tags).
    consistency_min_count, consistency_max_share : see :func:`consistency_issues`.
    softmin_temperature
        Temperature of the soft-min sentence score (above 0).
    engine, ray_address
        ``"ray"``: every fold a Ray task, as in :func:`labelaudit.scan`.
    evidence
        Say why each issue is flagged (:func:`labelaudit.tokens.issue_evidence`): the tokens
        around it, how often its surface form carries each tag across the data (the training
        data too with ``score``) and up to 3 other sentences where it carries the suggested
        tag; from one index of surface forms built once per scan. False leaves it out.

    Returns
    -------
    TokenScanResult

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
    options = {name: value for name, value in locals().items() if name != "dataset"}
    return run_scan_tokens(dataset, TokenScanOptions(**options))


def run_scan_tokens(dataset: TokenDataset, options: TokenScanOptions) -> TokenScanResult:
    """:func:`scan_tokens` with its options as one object (what ``labelaudit scan-tokens``
    builds from its flags): checked, then run."""
    o = options.checked()
    if o.pred_probs is None:
        _check_learnable(dataset, training=o.score is not None)
    score = _match_kinds(dataset, o.score)
    audited = score if score is not None else dataset
    classes = tuple(o.classes) if o.classes is not None else token_classes(
        *((dataset,) if score is None else (dataset, score)))
    if o.pred_probs is not None:
        probs, name = _check_probs(o.pred_probs, audited, classes), "given pred_probs"
    else:
        members = make_token_scorers(o.scorer, o)
        name = "+".join(m.name for m in members)
        with ray_session(o.engine, o.ray_address):
            runs = [cross_val_token_probs(dataset, m, classes=classes, n_folds=o.n_folds,
                                          random_state=o.random_state, progress=o.progress,
                                          engine=o.engine)
                    if score is None
                    else fit_score_token_probs(dataset, score, m, classes=classes)
                    for m in members]
        probs = runs[0] if len(runs) == 1 else _ensemble(runs, encode_tags(audited, classes))
    labels = encode_tags(audited, classes)
    suggested = [decode_tags(p, classes, spans=audited.scheme != "plain") for p in probs]
    find = span_issues if audited.scheme != "plain" else tag_issues
    issues = [find(audited.iob2_tags[i], suggested[i], p, classes) for i, p in enumerate(probs)]
    if o.rules:  # the rules' issues, after the model's
        for i, tags in enumerate(audited.tags):
            issues[i].extend(invalid_sequence_issues(tags, scheme=audited.scheme))
        counts = tag_consistency([audited] if score is None else [dataset, audited])
        for i, found in enumerate(consistency_issues(
                audited, counts, min_count=o.consistency_min_count,
                max_share=o.consistency_max_share)):
            issues[i].extend(found)
    ranked = [tuple(sorted(x, key=lambda issue: (issue.score, issue.start))) for x in issues]
    evidence = None
    if o.evidence:
        indexed = [audited] if score is None else [dataset, audited]
        index = surface_index(indexed, forms=sorted(issue_forms(indexed, ranked)))
        evidence = [tuple(issue_evidence(index, i, x) for x in found)
                    for i, found in enumerate(ranked)]
    return TokenScanResult(
        dataset=audited, classes=classes, pred_probs=probs, labels=labels,
        token_scores=token_scores(labels, probs),
        sentence_scores=sentence_scores(labels, probs, method="min"),
        sentence_scores_softmin=sentence_scores(labels, probs, method="softmin",
                                                temperature=o.softmin_temperature),
        suggested_tags=suggested, scorer=name, issues=ranked, evidence=evidence)


def _ensemble(runs: list[list[np.ndarray]], labels: list[np.ndarray]) -> list[np.ndarray]:
    """Several scorers' token probabilities ensembled over all tokens, one array per sentence."""
    lengths = np.cumsum([len(y) for y in labels])[:-1]
    flat = ensemble_pred_probs([np.vstack(r) for r in runs], np.concatenate(labels)).pred_probs
    assert isinstance(flat, np.ndarray)  # noqa: S101 - dense members give dense rows
    return np.split(flat, lengths)


def make_token_scorers(names: Any = None, options: TokenScanOptions | None = None) -> list[Any]:
    """The token scorers of ``scorer=`` (``names``), each name once and with the ``options``
    that apply to it; without ``names``, ``finetune`` when a ``model`` is given, else encoder."""
    o = options or TokenScanOptions()
    kinds = names if isinstance(names, (list, tuple)) else [
        names if names is not None else "finetune" if o.model else "encoder"]
    shared = {"model": o.model, "progress": o.progress, "random_state": o.random_state}
    tuning = {"epochs": o.epochs, "batch_size": o.batch_size}
    frozen = {"head": o.head, "cache": o.cache, "cache_dir": o.cache_dir}
    return [make_token_scorer(kind, **shared, **(tuning if kind == "finetune" else frozen))
            if isinstance(kind, str) else as_token_scorer(kind)
            for i, kind in enumerate(kinds) if not isinstance(kind, str) or kind not in kinds[:i]]


def token_output_format(out: str | None, format: str | None = None) -> str:
    """The format of a token scan's output: ``format``, else the one ``out``'s suffix picks
    (``.txt``: the text view, ``.jsonl``: records, others: the table of issues)."""
    if not out:
        return format or "table"
    suffix = Path(out).suffix.lower()
    formats = {".txt": ("table", "csv"), ".jsonl": ("jsonl",), ".csv": ("csv",)}.get(
        suffix, (suffix[1:], "csv"))
    if format and format not in formats:
        raise InvalidParameterError(
            f"--format {format} does not match --out {out}: a {suffix} file gets "
            f"--format {' or '.join(formats)}; change the suffix or leave out --format",
            param=("format", "out"))
    return format or formats[0]


def _json_line(record: dict) -> str:
    """One JSON line, with U+0085, U+2028 and U+2029 escaped so any line reader keeps it whole."""
    text = json.dumps(record, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text + "\n"


def write_token_scan(result: TokenScanResult, out: str | None = None, *, format: str = "table",
                     show: int | None = 20) -> None:
    """Write ``result`` to ``out`` (atomically) or stdout: records (``jsonl``), the text view
    of the ``show`` most suspect sentences (``table``; all with 0 or None), or the table of
    issues (:func:`labelaudit.io.emit`; CSV in a ``.txt`` file), its ``evidence`` a dict in
    JSON and Parquet and one line (:func:`labelaudit.tokens.format_evidence`) in the others."""
    records = result.to_records()
    if format == "jsonl":
        text = "".join(_json_line(r) for r in records)
    elif format == "table":
        text = format_issue_table(records, top=show or None) + "\n"
    else:
        frame = issues_to_frame(records)
        if "evidence" in frame and format not in ("json", "jsonl", "parquet"):
            frame["evidence"] = frame["evidence"].map(format_evidence)
        if not (out and Path(out).suffix.lower() == ".txt"):
            emit(frame, out, format=None if out else format)
            return
        text = frame.to_csv(index=False)
    if not out:
        sys.stdout.write(text)
        return
    with atomic_path(out) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def describe_token_scan(result: TokenScanResult, seconds: float) -> str:
    """One line: sentences and tokens audited, the scorer, the time, and the issues found
    by kind, most frequent first."""
    audited = result.dataset
    kinds = Counter(x.kind for issues in result.issues for x in issues)
    flagged = sum(1 for issues in result.issues if issues)
    summary = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
    return (f"{len(audited)} sentences ({audited.n_tokens} tokens, "
            f"{audited.scheme.upper()}) scored by {result.scorer} in {seconds:.1f}s; "
            f"{flagged} sentences with issues" + (f": {summary}" if summary else ""))


def evaluate_token_scan(issues: str | Path, truth: str | Path, *, tag_column: int = -1,
                        scheme: Scheme | None = None,
                        ks: Sequence[int] = (10, 50, 100)) -> TokenEvaluation:
    """:func:`labelaudit.evaluation.evaluate_tokens` of a ``scan-tokens`` JSONL file against a
    corrected copy of the sentences (read by :func:`labelaudit.tokens.read_tokens`)."""
    records = read_token_issues(issues)
    return evaluate_tokens(records, read_tokens(truth, tag_column=tag_column, scheme=scheme), ks=ks)
