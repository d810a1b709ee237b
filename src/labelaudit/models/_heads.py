"""Tagging heads on word vectors: a linear (softmax) head and a linear-chain CRF.

Both take per-sentence feature arrays ``(n_tokens, n_features)`` and integer tags and
return per-sentence probabilities ``(n_tokens, n_classes)``: softmax outputs for the linear
head, posterior marginals ``p(y_t = k | x)`` from forward-backward for the CRF.
"""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.models._loop_steps import TrainingSteps, linear_schedule

__all__ = ["CRFHead", "HeadName", "LinearHead", "make_head", "shape_features", "window_features"]

HeadName = Literal["linear", "crf"]
_PUNCT = set(string.punctuation)


def shape_features(tokens: Sequence[str]) -> np.ndarray:
    """Orthographic features of each token, shape (n_tokens, 9).

    Uncased encoders lose capitalisation, the strongest single cue for names; these put it
    back: title case, all capitals, lower case, any digit, all digits, punctuation only,
    inner hyphen, first position, ``log(1 + length)``.

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
    """Each token's vector and shape, next to those of ``window`` neighbours on each side.

    Positions outside the sentence are zero. Shape (n_tokens, (2 * window + 1) * (dim + 9)).

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
    """Run torch on one thread: the CRF's matrices are small, and extra threads only wait
    for each other on a busy machine (nine times slower on a shared 2-core box)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class LinearHead:
    """Multinomial logistic regression on standardised token features (scikit-learn).

    Parameters
    ----------
    C : float
        Inverse L2 regularisation strength.
    max_iter : int
        L-BFGS iterations.
    """

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

    Trained with AdamW at a constant learning rate (the steps of labelaudit's one training
    loop, :class:`~labelaudit.models.TrainingSteps`, without clipping) for
    ``epochs`` passes over the data, and at least ``min_steps`` updates (more passes on
    small data). Fitted with ``init``, a head fitted before on part of the same items (the
    previous point of a learning curve), it starts from that head's weights, carried over to
    the new feature scaling exactly, and makes ``warm_epochs`` passes (and at least
    ``min_steps`` updates: with fewer, the CoNLL-2003 verdicts changed). Scores of a tag
    sequence ``y`` for features ``x``:
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
        """The updates a fit on ``n_items`` sentences makes: ``epochs`` passes (a warm
        start's ``warm_epochs``), more on small data, at least ``min_steps`` in all.

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
