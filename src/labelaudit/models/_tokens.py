"""Token scorers: the :class:`Scorer` interface for tagged sentences, cross-fitted by the
shared loop. :class:`EncoderTokenScorer` fits a linear or CRF head on a frozen encoder's
word vectors; :class:`FinetuneTokenScorer` fine-tunes a transformer for token
classification (for GPU users; slow but exact on CPU)."""

from __future__ import annotations

import numbers
import string
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int, check_number
from labelaudit.models._base import Scorer, TrainsOnGpu, progress_bar
from labelaudit.models._encoder import (
    DEFAULT_MODEL,
    TokenVectorCache,
    default_cache_dir,
    load_pretrained,
    resolve_device,
    torch_setup,
)
from labelaudit.models._folds import (
    Engine,
    crossfit_pred_probs,
    fit_score_pred_probs,
    group_folds,
)
from labelaudit.models._loop import TrainingSteps, linear_schedule, transformers_linear_schedule
from labelaudit.tokens import encode_tags  # upward: tokens/ holds tagged data only, no models

if TYPE_CHECKING:
    from labelaudit.tokens import TokenDataset


MAX_SEED = 2**32 - 1  # the largest seed that numpy, torch and scikit-learn all take


def check_seed(random_state: object) -> int | None:
    """``None`` or an integer seed from 0 to ``2**32 - 1``."""
    if random_state is None:
        return None
    return check_int(random_state, "random_state", minimum=0, maximum=MAX_SEED)


class TokenScorer(Scorer):
    """A scorer of tagged sentences: one feature row and one array of tag indices per
    sentence in, one ``(n_tokens, n_classes)`` array per sentence out."""

    def join_predictions(self, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
                         n_classes: int) -> list[np.ndarray]:
        """One ``(n_tokens, n_classes)`` array per sentence, in sentence order."""
        out: list[np.ndarray] = [np.zeros((0, n_classes))] * n_samples
        for positions, probs in parts:
            for i, p in zip(positions, probs, strict=False):
                out[i] = np.asarray(p, dtype=float)
        return out


class _DuckTokenScorer(TokenScorer):
    """Any object with ``prepare``/``fit``/``predict_proba`` as a :class:`TokenScorer`;
    it is refitted in place on every fold."""

    def __init__(self, scorer: Any) -> None:
        self.scorer = scorer
        self.name = str(getattr(scorer, "name", type(scorer).__name__))

    def prepare(self, data: Any, *, progress: bool = False) -> Any:
        return self.scorer.prepare(data)

    def fit(self, features: Any, labels: Any, n_classes: int) -> _DuckTokenScorer:
        self.scorer.fit(features, labels, n_classes)
        return self

    def predict_proba(self, features: Any) -> Any:
        return self.scorer.predict_proba(features)

    def clone(self) -> _DuckTokenScorer:
        return self


def as_token_scorer(scorer: Any) -> Scorer:
    """``scorer`` itself when it is a :class:`Scorer`, else wrapped as one."""
    return scorer if isinstance(scorer, Scorer) else _DuckTokenScorer(scorer)


def make_token_scorer(name: str = "encoder", **options: Any) -> Scorer:
    """A token scorer by its :data:`TOKEN_SCORERS` name: ``"encoder"`` (frozen encoder +
    head) or ``"finetune"``.

    Examples
    --------
    >>> make_token_scorer("encoder", head="crf").head
    'crf'
    """
    if name not in TOKEN_SCORERS:
        raise InvalidParameterError(
            f"unknown token scorer {name!r}; choose from {', '.join(TOKEN_SCORERS)}")
    return TOKEN_SCORERS[name](**options)


def cross_val_token_probs(
    dataset: TokenDataset,
    scorer: Any,
    *,
    classes: Sequence[str],
    n_folds: int = 5,
    random_state: int | None = 0,
    progress: bool = False,
    engine: Engine = "local",
) -> list[np.ndarray]:
    """Out-of-sample probabilities for every token, each fold fitted on the other folds.

    Whole documents (``-DOCSTART-``; else each sentence) go to folds balanced by tokens
    (:func:`group_folds`), cross-fitted as text is (:func:`crossfit_pred_probs`).

    Returns
    -------
    list of ndarray, one ``(n_tokens, n_classes)`` array per sentence.
    """
    scorer = as_token_scorer(scorer)
    labels = encode_tags(dataset, classes)
    sizes = np.array([len(t) for t in dataset.tokens])
    # Folds first: a fold count the documents cannot fill fails before any encoding.
    folds = group_folds(dataset.documents, n_folds=n_folds, sizes=sizes,
                        random_state=random_state)
    features = scorer.prepare(dataset, progress=progress)
    return crossfit_pred_probs(scorer, features, labels, folds, n_classes=len(classes),
                               engine=engine, progress=progress)


def fit_score_token_probs(
    train: TokenDataset,
    test: TokenDataset,
    scorer: Any,
    *,
    classes: Sequence[str],
) -> list[np.ndarray]:
    """Fit ``scorer`` on ``train`` and predict every token of ``test``."""
    scorer = as_token_scorer(scorer)
    labels = encode_tags(train, classes)
    return fit_score_pred_probs(scorer, scorer.prepare(train), labels, scorer.prepare(test),
                                n_classes=len(classes))


def word_chunks(word_lengths: Sequence[int], max_subwords: int) -> list[tuple[int, int]]:
    """Split a sentence into runs of words whose sub-word counts fit in ``max_subwords``.

    Examples
    --------
    >>> word_chunks([3, 3, 3, 1], 6)
    [(0, 2), (2, 4)]
    """
    chunks: list[tuple[int, int]] = []
    start, used = 0, 0
    for i, n in enumerate(word_lengths):
        n = max(1, min(n, max_subwords))
        if used + n > max_subwords and i > start:
            chunks.append((start, i))
            start, used = i, 0
        used += n
    chunks.append((start, len(word_lengths)))
    return chunks


def sentence_pieces(
    tokenizer, sentences: Sequence[Sequence[str]], limit: int
) -> list[tuple[int, int, int]]:
    """``(sentence, start word, end word)`` pieces of at most ``limit`` sub-words each
    (special tokens not counted); a sentence that fits is one piece."""
    pieces: list[tuple[int, int, int]] = []
    plain = tokenizer([list(w) for w in sentences], is_split_into_words=True,
                      add_special_tokens=False)
    for s, words in enumerate(sentences):
        word_ids = plain.word_ids(s)
        if len(word_ids) <= limit:
            pieces.append((s, 0, len(words)))
            continue
        counts = np.bincount([w for w in word_ids if w is not None], minlength=len(words))
        pieces.extend((s, a, b) for a, b in word_chunks(counts.tolist(), limit))
    return pieces


def encode_word_vectors(
    sentences: Sequence[Sequence[str]],
    *,
    model: str | None = None,
    layers: Sequence[int] = (-1,),
    batch_size: int = 32,
    max_length: int = 256,
    progress: bool = False,
) -> list[np.ndarray]:
    """Contextual vectors of every word, ``(n_words, n_layers * hidden_size)`` per sentence:
    the mean of its sub-word vectors over the hidden ``layers`` (concatenated); long
    sentences in chunks of words; a word the tokenizer drops gets zeros."""
    check_int(batch_size, "batch_size", minimum=1)
    check_int(max_length, "max_length", minimum=3)  # room for a word
    if isinstance(layers, (str, bytes)) or not len(layers):
        raise InvalidParameterError(f"layers must be a non-empty list of layer numbers; "
                                    f"got {layers!r}")
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch_setup()
    tokenizer = load_pretrained(AutoTokenizer, model)
    encoder = load_pretrained(AutoModel, model)
    encoder.eval()
    limit = min(max_length, getattr(tokenizer, "model_max_length", max_length) or max_length) - 2
    # Split sentences into chunks of words that fit; encode chunks sorted by length.
    pieces = sentence_pieces(tokenizer, sentences, limit)
    pieces.sort(key=lambda p: p[2] - p[1])
    hidden = encoder.config.hidden_size * len(layers)
    out = [np.zeros((len(words), hidden), dtype=np.float32) for words in sentences]
    with torch.inference_mode(), progress_bar(
            len(sentences), f"encoding {len(sentences):,} sentences", unit=" sentences",
            enabled=progress) as bar:
        for b in range(0, len(pieces), batch_size):
            batch = pieces[b : b + batch_size]
            chunk_words: list[list[str]] = [list(sentences[s][a:e]) for s, a, e in batch]
            enc = tokenizer(
                chunk_words,
                is_split_into_words=True,
                truncation=True,
                max_length=limit + 2,
                padding=True,
                return_tensors="pt",
            )
            states = encoder(**enc, output_hidden_states=True).hidden_states
            stacked = torch.cat([states[layer] for layer in layers], dim=-1).float().numpy()
            for row, (s, a, _) in enumerate(batch):
                word_ids = enc.word_ids(row)
                index = np.array([-1 if w is None else w for w in word_ids])
                valid = index >= 0
                n_words = len(chunk_words[row])
                sums = np.zeros((n_words, stacked.shape[-1]), dtype=np.float32)
                np.add.at(sums, index[valid], stacked[row][valid])
                counts = np.bincount(index[valid], minlength=n_words)[:, None]
                out[s][a : a + n_words] = sums / np.maximum(counts, 1)
            # A sentence is done with its last piece.
            bar.update(sum(e == len(sentences[s]) for s, _, e in batch))
    return out


HeadName = Literal["linear", "crf"]
_PUNCT = set(string.punctuation)


def shape_features(tokens: Sequence[str]) -> np.ndarray:
    """Orthographic features of each token, (n_tokens, 9): they put back capitalisation,
    the strongest cue for names, which uncased encoders lose.

    Examples
    --------
    >>> shape_features(["Paris", "USA", "in", "1996"])[:, :5].astype(int).tolist()
    [[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 1]]
    """
    rows = []
    for i, tok in enumerate(tokens):
        rows.append([
            float(tok[:1].isupper() and not tok.isupper()),
            float(tok.isupper() and any(c.isalpha() for c in tok)),
            float(tok.islower()),
            float(any(c.isdigit() for c in tok)),
            float(tok.isdigit()),
            float(bool(tok) and all(c in _PUNCT for c in tok)),
            float("-" in tok.strip("-")),
            float(i == 0),
            float(np.log1p(len(tok))),
        ])
    return np.asarray(rows, dtype=np.float32).reshape(len(tokens), 9)


def window_features(vectors: np.ndarray, tokens: Sequence[str], *, window: int = 1) -> np.ndarray:
    """Each token's vector and shape next to those of ``window`` neighbours on each side
    (zeros outside the sentence), shape (n_tokens, (2 * window + 1) * (dim + 9)).

    Examples
    --------
    >>> window_features(np.eye(2, dtype=np.float32), ["a", "b"], window=1).shape
    (2, 33)
    """
    base = np.hstack([np.asarray(vectors, dtype=np.float32), shape_features(tokens)])
    if window <= 0:
        return base
    n, d = base.shape
    padded = np.vstack([np.zeros((window, d), np.float32), base, np.zeros((window, d), np.float32)])
    parts = [padded[window + k : window + k + n] for k in range(-window, window + 1)]
    return np.hstack(parts)


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run torch on one thread: the CRF's matrices are small (extra threads were nine times
    slower on a shared 2-core box)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class LinearHead:
    """Multinomial logistic regression on standardised token features (scikit-learn)."""

    def __init__(self, *, C: float = 0.1, max_iter: int = 300, random_state: int | None = 0):
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, features: Sequence[np.ndarray], labels: Sequence[np.ndarray], n_classes: int):
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        X = np.vstack(features)
        y = np.concatenate(labels)
        self.n_classes_ = n_classes
        self.scaler_ = StandardScaler().fit(X)
        self.seen_ = np.unique(y)
        if len(self.seen_) < 2:
            self.model_ = None
        else:
            self.model_ = LogisticRegression(
                C=self.C, max_iter=self.max_iter, random_state=self.random_state
            ).fit(self.scaler_.transform(X), y)
        return self

    def predict_proba(self, features: Sequence[np.ndarray]) -> list[np.ndarray]:
        lengths = [len(f) for f in features]
        if not lengths or sum(lengths) == 0:
            return [np.zeros((0, self.n_classes_)) for _ in lengths]
        out = np.zeros((sum(lengths), self.n_classes_))
        if self.model_ is None:
            out[:, self.seen_[0]] = 1.0
        else:
            X = self.scaler_.transform(np.vstack(features))
            out[:, self.model_.classes_] = self.model_.predict_proba(X)
        return np.split(out, np.cumsum(lengths)[:-1])


class CRFHead:
    """Linear-chain CRF on token features, trained by maximum likelihood (torch, CPU).

    AdamW at a constant rate for ``epochs`` passes, at least ``min_steps`` updates; from
    ``init`` (fitted on part of the same items) ``warm_epochs`` passes, and at least
    ``min_steps`` (with fewer, the CoNLL-2003 verdicts changed). Scores of tags ``y``:
    ``s(x, y) = sum_t (W x_t + b)[y_t] + sum_t A[y_{t-1}, y_t] + start[y_1] + end[y_T]``,
    ``p(y | x) = exp s(x, y) / Z(x)``. Token probabilities are the posterior marginals from
    the forward-backward algorithm.

    References
    ----------
    Lafferty, McCallum & Pereira (2001), Conditional Random Fields: Probabilistic Models for
    Segmenting and Labeling Sequence Data.
    """

    def __init__(
        self,
        *,
        epochs: int = 8,
        batch_size: int = 32,
        learning_rate: float = 3e-3,
        weight_decay: float = 1e-4,
        min_steps: int = 300,
        warm_epochs: int = 2,
        random_state: int | None = 0,
    ):
        self.epochs = epochs
        self.warm_epochs = warm_epochs
        self.min_steps = min_steps
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.random_state = random_state

    def _pad(self, features, labels=None):
        import torch

        n = len(features)
        T = max(len(f) for f in features)
        d = features[0].shape[1]
        X = np.zeros((n, T, d), np.float32)
        mask = np.zeros((n, T), bool)
        Y = np.zeros((n, T), np.int64)
        for i, f in enumerate(features):
            X[i, : len(f)] = (f - self.mean_) / self.scale_
            mask[i, : len(f)] = True
            if labels is not None:
                Y[i, : len(f)] = labels[i]
        return torch.from_numpy(X), torch.from_numpy(mask), torch.from_numpy(Y)

    def _emissions(self, X):
        return X @ self.weight_ + self.bias_

    def _log_partition_and_alpha(self, emissions, mask):
        import torch

        alpha = self.start_ + emissions[:, 0]
        alphas = [alpha]
        for t in range(1, emissions.shape[1]):
            step = torch.logsumexp(alpha[:, :, None] + self.trans_[None], dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t, None], step, alpha)
            alphas.append(alpha)
        return torch.logsumexp(alpha + self.end_, dim=1), torch.stack(alphas, 1)

    def _gold_score(self, emissions, mask, Y):
        import torch

        n, T, _ = emissions.shape
        rows = torch.arange(n)
        score = self.start_[Y[:, 0]] + emissions[rows, 0, Y[:, 0]]
        for t in range(1, T):
            step = self.trans_[Y[:, t - 1], Y[:, t]] + emissions[rows, t, Y[:, t]]
            score = score + step * mask[:, t]
        last = Y[rows, mask.sum(1) - 1]
        return score + self.end_[last]

    def fit(self, features: Sequence[np.ndarray], labels: Sequence[np.ndarray], n_classes: int,
            *, init: CRFHead | None = None):
        import torch

        with _one_thread():
            return self._fit(torch, features, labels, n_classes, init)

    def steps(self, n_items: int, *, warm: bool = False) -> int:
        """The updates a fit on ``n_items`` sentences makes (at least ``min_steps``).

        Examples
        --------
        >>> CRFHead().steps(6400), CRFHead().steps(6400, warm=True), CRFHead().steps(64)
        (1600, 400, 300)
        >>> CRFHead().steps(1280, warm=True)
        320
        """
        batches = max(1, -(-n_items // self.batch_size))
        epochs = max(self.warm_epochs if warm else self.epochs,
                     -(-self.min_steps // batches))
        return epochs * batches

    def _start_from(self, torch, init: CRFHead, n_classes: int) -> None:
        """``init``'s weights for this head's feature scaling: ``(x - m') / s' @ W' + b'``
        equals ``(x - m) / s @ W + b`` with ``W' = diag(s' / s) W`` and
        ``b' = b + ((m' - m) / s) @ W``."""
        if init.n_classes_ != n_classes or init.mean_.shape != self.mean_.shape:
            raise InvalidParameterError("init was fitted on other classes or features")
        ratio = torch.from_numpy(self.scale_ / init.scale_)
        shift = torch.from_numpy((self.mean_ - init.mean_) / init.scale_)
        weight: Any = getattr(init, "weight_")  # noqa: B009 - fitted in _fit
        bias: Any = getattr(init, "bias_")  # noqa: B009
        self.weight_ = (weight * ratio[:, None]).requires_grad_()
        self.bias_ = (bias + shift @ weight).requires_grad_()
        for name in ("trans_", "start_", "end_"):
            setattr(self, name, getattr(init, name).clone().requires_grad_())

    def _fit(self, torch, features, labels, n_classes: int, init: CRFHead | None = None):
        rng = np.random.default_rng(self.random_state)
        gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
        # Feature means and standard deviations without stacking every token in memory.
        d = features[0].shape[1]
        total, sq, n = np.zeros(d), np.zeros(d), 0
        for f in features:
            total += f.sum(0, dtype=np.float64)
            sq += np.square(f, dtype=np.float64).sum(0)
            n += len(f)
        self.mean_ = (total / n).astype(np.float32)
        self.scale_ = (np.sqrt(np.maximum(sq / n - (total / n) ** 2, 0.0)) + 1e-6).astype(
            np.float32)
        self.n_classes_ = n_classes
        if init is None:
            self.weight_ = (torch.randn(d, n_classes, generator=gen) * 0.01).requires_grad_()
            self.bias_ = torch.zeros(n_classes, requires_grad=True)
            self.trans_ = torch.zeros(n_classes, n_classes, requires_grad=True)
            self.start_ = torch.zeros(n_classes, requires_grad=True)
            self.end_ = torch.zeros(n_classes, requires_grad=True)
        else:
            self._start_from(torch, init, n_classes)
        params = [self.weight_, self.bias_, self.trans_, self.start_, self.end_]
        order = np.argsort([len(f) for f in features], kind="stable")
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        epochs = self.steps(len(features), warm=init is not None) // len(batches)
        steps = TrainingSteps.adamw(params, learning_rate=self.learning_rate,
                                    weight_decay=self.weight_decay,
                                    lr_factor=linear_schedule(epochs * len(batches), 0.0))
        for _ in range(epochs):
            for b in rng.permutation(len(batches)):
                idx = batches[b]
                X, mask, Y = self._pad([features[i] for i in idx], [labels[i] for i in idx])
                emissions = self._emissions(X)
                log_z, _ = self._log_partition_and_alpha(emissions, mask)
                loss = (log_z - self._gold_score(emissions, mask, Y)).mean()
                steps.backward(loss)
                steps.step()
        for p in params:
            p.requires_grad_(False)
        return self

    def predict_proba(self, features: Sequence[np.ndarray]) -> list[np.ndarray]:
        with _one_thread():
            return self._predict_proba(features)

    def _predict_proba(self, features: Sequence[np.ndarray]) -> list[np.ndarray]:
        import torch

        out: list[np.ndarray] = [np.zeros((0, self.n_classes_))] * len(features)
        order = np.argsort([len(f) for f in features], kind="stable")
        with torch.no_grad():
            for start in range(0, len(order), 256):
                idx = [i for i in order[start : start + 256] if len(features[i])]
                if not idx:
                    continue
                X, mask, _ = self._pad([features[i] for i in idx])
                emissions = self._emissions(X)
                log_z, alphas = self._log_partition_and_alpha(emissions, mask)
                # Backward pass: beta_t(k) = logsumexp_j A[k, j] + e_{t+1}(j) + beta_{t+1}(j).
                T = emissions.shape[1]
                lengths = mask.sum(1)
                beta = torch.where(
                    (lengths - 1 == T - 1)[:, None], self.end_.expand(len(idx), -1), 0.0
                )
                betas = [beta]
                for t in range(T - 2, -1, -1):
                    step = torch.logsumexp(
                        self.trans_[None] + (emissions[:, t + 1] + beta)[:, None, :], dim=2
                    )
                    is_last = (lengths - 1 == t)[:, None]
                    inside = mask[:, t + 1, None]
                    beta = torch.where(inside, step, torch.where(is_last, self.end_, 0.0))
                    betas.append(beta)
                beta_all = torch.stack(betas[::-1], 1)
                marginals = torch.exp(alphas + beta_all - log_z[:, None, None]).numpy()
                for row, i in enumerate(idx):
                    p = marginals[row, : len(features[i])]
                    out[i] = p / p.sum(1, keepdims=True)
        return out


def make_head(name: HeadName, *, random_state: int | None = 0, **options) -> LinearHead | CRFHead:
    """Build a head by name: ``"linear"`` (logistic regression) or ``"crf"``."""
    if name == "linear":
        return LinearHead(random_state=random_state, **options)
    if name == "crf":
        return CRFHead(random_state=random_state, **options)
    raise InvalidParameterError(f"unknown head {name!r}; choose 'linear' or 'crf'")


Encode = Callable[[list[list[str]]], list[np.ndarray]]


def _default_layer(model: str | None) -> int:
    """Two thirds of the encoder's depth: word identity and context are both still there."""
    from transformers import AutoConfig

    config = load_pretrained(AutoConfig, model)
    n_layers = int(getattr(config, "num_hidden_layers", 6))
    return max(1, round(2 * n_layers / 3))


@dataclass(eq=False, kw_only=True)
class EncoderTokenScorer(TokenScorer):
    """Contextual word vectors from a frozen encoder, fed to a linear or CRF head.

    Parameters
    ----------
    model : encoder name or folder; default the packaged all-MiniLM-L6-v2.
    head : {"crf", "linear"}
        ``crf``: a linear-chain CRF, probabilities from its marginals (on CoNLL-03 as
        accurate as ``linear`` and ten times faster); ``linear``: logistic regression.
    layers : hidden layers to concatenate (``0`` = embeddings); default two thirds of the
        depth (layer 4 of 6 for MiniLM tagged CoNLL-03 better than the last).
    window : neighbouring words on each side whose features are appended.
    cache : keep word vectors on disk under ``cache_dir`` (default ``default_cache_dir()``).
    encode : ``encode(sentences) -> list of (n_words, dim) arrays`` replacing the encoder.

    Examples
    --------
    >>> EncoderTokenScorer(head="linear").name
    'encoder+linear'
    """

    model: str | None = None
    head: HeadName = "crf"
    layers: Sequence[int] | None = None
    window: int = 1
    batch_size: int = 32
    cache: bool = True
    cache_dir: str | Path | None = None
    progress: bool = False
    random_state: int | None = 0
    encode: Encode | None = None
    head_options: dict | None = None

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        """Short description for reports, e.g. ``encoder+crf``."""
        return f"encoder+{self.head}" + (f"({self.model})" if self.model else "")

    def _vectors(self, sentences: list[list[str]], progress: bool) -> list[np.ndarray]:
        if self.encode is not None:
            return [np.asarray(v, dtype=np.float32) for v in self.encode(sentences)]
        layers = tuple(self.layers) if self.layers is not None else (_default_layer(self.model),)

        def compute(todo: list[list[str]]) -> list[np.ndarray]:
            return encode_word_vectors(todo, model=self.model, layers=layers,
                                       batch_size=self.batch_size, progress=progress)

        if not self.cache:
            return compute(sentences)
        root = Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()
        key = f"words|{self.model or DEFAULT_MODEL}|layers={','.join(map(str, layers))}|v1"
        return TokenVectorCache(root, key).get_or_compute(sentences, compute)

    def _check_params(self) -> None:
        """Refuse bad options before the encoder loads."""
        if self.head not in ("linear", "crf"):
            raise InvalidParameterError(f"unknown head {self.head!r}; choose 'linear' or 'crf'")
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.window, "window", minimum=0)
        check_seed(self.random_state)
        if self.layers is not None:
            layers = self.layers
            if (isinstance(layers, (str, bytes)) or not len(layers)
                    or not all(isinstance(x, numbers.Integral) and not isinstance(x, bool)
                               for x in layers)):
                raise InvalidParameterError(
                    f"layers must be a non-empty list of layer numbers; got {layers!r}")

    def prepare(self, data: TokenDataset, *, progress: bool = False) -> list[np.ndarray]:
        """Per-sentence features ``(n_tokens, n_features)`` for every sentence of ``data``."""
        self._check_params()
        vectors = self._vectors(data.tokens, progress or self.progress)
        return [window_features(v, toks, window=self.window)
                for v, toks in zip(vectors, data.tokens, strict=False)]

    @property
    def warm_starts(self) -> bool:
        """Whether :meth:`fit` can start from an earlier fit (``init``): the CRF head can."""
        return self.head == "crf"

    def fit_cost(self, n_items: int, *, warm: bool = False) -> float:
        """A fit's cost in the head's units (CRF updates, linear items), to plan many fits."""
        if self.head != "crf":
            return float(n_items)
        return float(CRFHead(**(self.head_options or {})).steps(n_items, warm=warm))

    def fit(self, features: Sequence[np.ndarray], labels: Sequence[np.ndarray],
            n_classes: int, *, init: EncoderTokenScorer | None = None) -> EncoderTokenScorer:
        """Fit the head; with ``init`` (a CRF scorer fitted before on part of these items),
        start from its head and make the head's ``warm_epochs`` passes."""
        self._check_params()
        head = make_head(self.head, random_state=self.random_state, **(self.head_options or {}))
        if init is not None:
            if not self.warm_starts:
                raise InvalidParameterError(f"the {self.head} head cannot start from an "
                                            "earlier fit; the crf head can")
            self.head_: Any = head.fit(features, labels, n_classes,  # type: ignore[call-arg]
                                       init=init.head_)
        else:
            self.head_ = head.fit(features, labels, n_classes)
        return self

    def predict_proba(self, features: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self.head_.predict_proba(features)


@dataclass(eq=False, kw_only=True)
class FinetuneTokenScorer(TrainsOnGpu, TokenScorer):
    """``AutoModelForTokenClassification`` fine-tuned from ``model`` on each training fold
    (re-loaded per fit), each word's tag predicted at its first sub-word.

    Parameters
    ----------
    model : a local folder or hub name with a fast tokenizer; default all-MiniLM-L6-v2.
    epochs, batch_size, learning_rate, weight_decay : AdamW's settings (transformers'
        linear schedule, 10 % warm-up, gradients clipped at 1.0, float32).
    device : default ``"cuda"`` when available, else ``"cpu"``.
    """

    model: str | None = None
    epochs: int = 3
    batch_size: int = 16
    learning_rate: float = 5e-5
    weight_decay: float = 0.01
    max_length: int = 256
    device: str | None = None
    progress: bool = False
    random_state: int | None = 0

    @property  # type: ignore[override]
    def name(self) -> str:  # type: ignore[override]
        """Short description for reports."""
        return f"finetune({self.model or 'all-MiniLM-L6-v2'})"

    def on_device(self, device: str) -> FinetuneTokenScorer:
        """An unfitted copy that trains and predicts on ``device``."""
        import dataclasses

        return dataclasses.replace(self, device=device)

    def _check_params(self) -> None:
        """Refuse bad training settings before the model loads."""
        check_int(self.epochs, "epochs", minimum=1)
        check_int(self.batch_size, "batch_size", minimum=1)
        check_int(self.max_length, "max_length", minimum=3)  # room for a word
        check_number(self.learning_rate, "learning_rate", low=0.0, low_open=True)
        check_number(self.weight_decay, "weight_decay", low=0.0)
        check_seed(self.random_state)

    def prepare(self, data: TokenDataset, *, progress: bool = False) -> list[list[str]]:
        """The features of a sentence are its tokens; encoding happens in ``fit``."""
        self._check_params()
        return [list(t) for t in data.tokens]

    def _chunks(self, tokenizer, sentences: Sequence[Sequence[str]]):
        """``(sentence, start word, end word)`` pieces that fit in ``max_length``."""
        return sentence_pieces(tokenizer, sentences, self.max_length - 2)

    def _encode(self, tokenizer, words: list[list[str]]):
        return tokenizer(words, is_split_into_words=True, truncation=True,
                         max_length=self.max_length, padding=True, return_tensors="pt")

    @staticmethod
    def _first_subwords(enc, row: int) -> dict[int, int]:
        first: dict[int, int] = {}
        for position, word in enumerate(enc.word_ids(row)):
            if word is not None and word not in first:
                first[word] = position
        return first

    def _start(self, n_classes: int) -> tuple[Any, Any, str, np.random.Generator]:
        """A fresh network with ``n_classes`` outputs, its tokenizer, device and rng."""
        import torch
        from transformers import AutoModelForTokenClassification

        self._check_params()
        torch_setup()
        rng = np.random.default_rng(self.random_state)
        torch.manual_seed(int(rng.integers(2**31)))
        device = str(resolve_device(self.device))
        net = load_pretrained(AutoModelForTokenClassification, self.model,
                              num_labels=n_classes, ignore_mismatched_sizes=True).to(device)
        from transformers import AutoTokenizer

        return net, load_pretrained(AutoTokenizer, self.model), device, rng

    def fit(self, features: Sequence[Sequence[str]], labels: Sequence[np.ndarray],
            n_classes: int) -> FinetuneTokenScorer:
        import torch

        net, tokenizer, device, rng = self._start(n_classes)
        pieces = self._chunks(tokenizer, features)
        n_batches = -(-len(pieces) // self.batch_size)
        steps = TrainingSteps.adamw(
            net.parameters(), learning_rate=self.learning_rate, weight_decay=self.weight_decay,
            lr_factor=transformers_linear_schedule(n_batches * self.epochs,
                                                   int(0.1 * n_batches * self.epochs)),
            max_grad_norm=1.0)
        epochs = f"{self.epochs} epoch" + ("s" if self.epochs > 1 else "")
        net.train()
        with progress_bar(n_batches * self.epochs, unit=" batches", enabled=self.progress,
                          desc=f"fine-tuning on {len(features):,} sentences ({epochs})") as bar:
            for _ in range(self.epochs):
                order = rng.permutation(len(pieces))
                for start in range(0, n_batches * self.batch_size, self.batch_size):
                    batch = [pieces[i] for i in order[start:start + self.batch_size]]
                    words = [list(features[s][a:e]) for s, a, e in batch]
                    enc = self._encode(tokenizer, words)
                    target = torch.full(enc["input_ids"].shape, -100, dtype=torch.long)
                    for row, (s, a, _) in enumerate(batch):
                        for word, position in self._first_subwords(enc, row).items():
                            target[row, position] = int(labels[s][a + word])
                    out = net(**{k: v.to(device) for k, v in enc.items()},
                              labels=target.to(device))
                    steps.backward(out.loss)
                    steps.step()
                    bar.update(1)
        net.eval()
        self.net_, self.tokenizer_ = net, tokenizer
        self.device_, self.n_classes_ = device, n_classes
        return self

    def predict_proba(self, features: Sequence[Sequence[str]]) -> list[np.ndarray]:
        import torch

        out = [np.full((len(s), self.n_classes_), 1.0 / self.n_classes_) for s in features]
        pieces = sorted(self._chunks(self.tokenizer_, features), key=lambda p: p[2] - p[1])
        with torch.inference_mode():
            for b in range(0, len(pieces), self.batch_size * 2):
                batch = pieces[b : b + self.batch_size * 2]
                words = [list(features[s][a:e]) for s, a, e in batch]
                enc = self._encode(self.tokenizer_, words)
                logits = self.net_(**{k: v.to(self.device_) for k, v in enc.items()}).logits
                probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
                for row, (s, a, _) in enumerate(batch):
                    for word, position in self._first_subwords(enc, row).items():
                        out[s][a + word] = probs[row, position]
        return out


#: The token scorers by name (``scan-tokens --scorers``), each one's class.
TOKEN_SCORERS: dict[str, type[TokenScorer]] = {
    "encoder": EncoderTokenScorer, "finetune": FinetuneTokenScorer}
