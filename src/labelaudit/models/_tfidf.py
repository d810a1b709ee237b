"""TF-IDF features with a logistic-regression head: the classic text baseline."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditWarning
from labelaudit.io import TextDataset
from labelaudit.models._base import HeldOutWords, Scorer, full_proba
from labelaudit.models._encoder import torch_threads

Solver = Literal["auto", "newton-cg", "lbfgs", "adagrad", "sgd", "centroid"]
#: The solvers of :class:`TfidfScorer` (``solver=``).
SOLVERS: tuple[str, ...] = ("auto", "newton-cg", "lbfgs", "adagrad", "sgd", "centroid")
#: ``solver="auto"``: newton-cg up to this many classes, adagrad above (measured in
#: ``benchmarks/many_classes.py``).
MANY_CLASSES = 20
#: Each solver's ``tol`` when ``tol=None``.
DEFAULT_TOL = {"newton-cg": 1e-6, "lbfgs": 1e-6, "adagrad": 1e-2, "sgd": 1e-4}


class ConvergenceWarning(LabelAuditWarning):
    """A member's model stopped before its solver converged."""


def fit_converged(model: Any, features: Any, labels: np.ndarray, *, member: str) -> Any:
    """``model.fit(features, labels)`` (a scikit-learn estimator, or a pipeline ending in
    one, with ``max_iter``), saying in a :class:`ConvergenceWarning` when its solver ran
    out of steps: every member's fit converges, or the scan says it did not."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=SklearnConvergenceWarning)
        model.fit(features, labels)
    final = model[-1] if hasattr(model, "steps") else model
    if int(np.max(final.n_iter_)) >= final.max_iter:
        warnings.warn(
            f"the {member} member's logistic regression stopped after {final.max_iter} "
            f"steps without converging (tol={final.tol:g}); its probabilities, and so the "
            "ranking, may be off", ConvergenceWarning, stacklevel=3)
    return model


@dataclass(eq=False, kw_only=True)
class TfidfScorer(Scorer):
    """TF-IDF (word 1-2 grams, sublinear tf) + multinomial logistic regression.

    For sentence pairs, each side gets its own vectoriser and the two are stacked.
    The vectoriser is fitted inside each fold, so no statistic of a scored item leaks in.

    Parameters
    ----------
    C : inverse regularisation strength of the logistic regression.
    ngram_range, min_df, max_features : the vectoriser's.
    analyzer : {"word", "char_wb"}
        Word n-grams, or character n-grams within word boundaries (``ngram_range`` then
        counts characters), which see spelling and morphology that words miss.
    solver : {"auto", "newton-cg", "lbfgs", "adagrad", "sgd", "centroid"}
        How the head learns. ``newton-cg`` and ``lbfgs``: multinomial logistic regression
        by scikit-learn. ``adagrad``: the same model and penalty, learned by minibatch
        gradient descent with a step per feature (:class:`MiniBatchSoftmax`): its cost
        grows with the classes far more slowly than newton-cg's. ``sgd``: one-vs-rest
        logistic regression by scikit-learn's ``SGDClassifier`` (log loss,
        ``alpha = 1 / (C n_samples)``), its classes on ``LABELAUDIT_THREADS`` threads.
        ``centroid``: each class's mean TF-IDF vector, normalised; an item's probabilities
        are a softmax of its cosine to each at temperature 0.02 (the scan's temperature
        scaling fits the rest). ``auto``: newton-cg up to :data:`MANY_CLASSES` classes
        (so the detection benchmark's sets, at most 20 classes, are unchanged), adagrad
        above; chosen in :meth:`fit` (``solver_``). Measured in
        ``benchmarks/many_classes.py``: 100,000 short texts of 158 classes take newton-cg
        about 600 s, adagrad about a minute, with the same ranking quality.
    tol : stopping tolerance; None: the solver's default (:data:`DEFAULT_TOL`).
        newton-cg's is on the largest gradient entry of the mean loss: 1e-6 converges:
        within 1e-3 of a fit run to 1e-10 on IMDB and about 3e-3 on 20 Newsgroups, where
        1e-3 stopped with probabilities up to 0.7 away. adagrad stops when an epoch lowers
        the mean training loss by less than ``tol`` times it; sgd by less than ``tol``.
    max_iter : Newton or L-BFGS steps, or SGD epochs, at most; a fit that ends there warns
        (:class:`ConvergenceWarning`).
    random_state : the order adagrad and sgd visit the items in.

    Examples
    --------
    >>> from labelaudit.io import TextDataset
    >>> texts = ["good film", "great film", "bad film", "awful film"] * 3
    >>> labels = np.array([1, 1, 0, 0] * 3)
    >>> data = TextDataset(np.arange(12), texts, None, labels, np.array([0, 1]))
    >>> scorer = TfidfScorer()
    >>> features = scorer.prepare(data)
    >>> scorer.fit(features, labels, n_classes=2).predict_proba(features[:2]).argmax(1).tolist()
    [1, 1]
    """

    name = "tfidf"
    explains = True

    C: float = 10.0
    ngram_range: tuple[int, int] = (1, 2)
    min_df: int = 1
    max_features: int | None = 200_000
    analyzer: str = "word"
    solver: Solver = "auto"
    tol: float | None = None
    max_iter: int = 200
    random_state: int | None = 0

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        if data.text_pairs is None:
            return np.array(data.texts, dtype=object)[:, None]
        return np.stack([np.array(data.texts, dtype=object),
                         np.array(data.text_pairs, dtype=object)], axis=1)

    def _vectorizer(self):
        from sklearn.feature_extraction.text import TfidfVectorizer

        # token_pattern only for words: sklearn warns when it is given to char_wb
        words = {"token_pattern": r"(?u)\b\w+\b"} if self.analyzer != "char_wb" else {}
        return TfidfVectorizer(analyzer=self.analyzer, ngram_range=self.ngram_range,
                               min_df=self.min_df, sublinear_tf=True,
                               max_features=self.max_features, dtype=np.float32, **words)

    def _transform(self, features: np.ndarray, *, fit: bool):
        import scipy.sparse as sp

        if fit:
            self.vectorizers_ = [self._vectorizer() for _ in range(features.shape[1])]
            blocks = [v.fit_transform(features[:, j]) for j, v in enumerate(self.vectorizers_)]
        else:
            blocks = [v.transform(features[:, j]) for j, v in enumerate(self.vectorizers_)]
        return blocks[0] if len(blocks) == 1 else sp.hstack(blocks).tocsr()

    def resolve_solver(self, n_classes: int) -> str:
        """The solver that learns ``n_classes`` classes: ``solver``, or for ``"auto"``
        newton-cg up to :data:`MANY_CLASSES` classes and ``adagrad`` above.

        Examples
        --------
        >>> TfidfScorer().resolve_solver(20), TfidfScorer().resolve_solver(158)
        ('newton-cg', 'adagrad')
        >>> TfidfScorer(solver="lbfgs").resolve_solver(158)
        'lbfgs'
        """
        if self.solver not in SOLVERS:
            raise InvalidParameterError(
                f"solver must be one of {', '.join(SOLVERS)}; got {self.solver!r}",
                param="solver")
        if self.solver != "auto":
            return self.solver
        return "newton-cg" if n_classes <= MANY_CLASSES else "adagrad"

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> TfidfScorer:
        solver = self.resolve_solver(n_classes)
        matrix = self._transform(features, fit=True)
        self.n_classes_ = n_classes
        self.solver_ = solver
        if solver == "centroid":
            self.model_ = _Centroids().fit(matrix, labels)
            return self
        tol = DEFAULT_TOL[solver] if self.tol is None else self.tol
        if solver == "adagrad":
            model = MiniBatchSoftmax(C=self.C, tol=tol, max_iter=self.max_iter,
                                     random_state=self.random_state)
        elif solver == "sgd":
            from sklearn.linear_model import SGDClassifier

            model = SGDClassifier(loss="log_loss", alpha=1.0 / (self.C * matrix.shape[0]),
                                  tol=tol, max_iter=self.max_iter, n_jobs=torch_threads(),
                                  random_state=self.random_state)
        else:
            from sklearn.linear_model import LogisticRegression

            model = LogisticRegression(C=self.C, solver=solver, tol=tol,
                                       max_iter=self.max_iter)
        self.model_ = fit_converged(model, matrix, labels, member=self.name)
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        return self._proba(self._transform(features, fit=False))

    def _proba(self, matrix: Any) -> np.ndarray:
        proba = self.model_.predict_proba(matrix)
        return full_proba(proba, self.model_.classes_, self.n_classes_)

    def predict_explained(self, features: Any, labels: np.ndarray, *, n_terms: int = 5,
                          n_tried: int = 3) -> tuple[np.ndarray, HeldOutWords]:
        """The probabilities, and for each item its ``n_tried`` likeliest classes other
        than the given one and the ``n_terms`` n-grams whose coefficient difference times
        TF-IDF value pushes most toward each: ``x_j * (w_class,j - w_given,j)`` is the
        term's part of the log-odds of the class against the given label. The items'
        features are transformed once for both."""
        matrix = self._transform(features, fit=False).tocsr()
        probs = self._proba(matrix)
        n, n_classes = len(labels), probs.shape[1]
        fitted = np.asarray(self.model_.classes_, dtype=int)
        coef = np.asarray(self.model_.coef_)
        row_of = np.full(n_classes, -1)  # each class's row of coef (-1: a zero row)
        if len(fitted) == 2:  # one row: the log-odds of fitted[1] against fitted[0]
            row_of[fitted[1]] = 0
        else:
            row_of[fitted] = np.arange(len(fitted))
        # the likeliest other classes the fold learned, best first (-1 past the last)
        open_ = np.asarray(probs, dtype=float).copy()
        open_[np.arange(n), labels] = -1.0
        open_[:, np.setdiff1d(np.arange(n_classes), fitted)] = -1.0
        m = max(1, min(n_tried, n_classes - 1))
        tried = np.argsort(-open_, axis=1, kind="stable")[:, :m]
        tried[np.take_along_axis(open_, tried, axis=1) < 0] = -1
        row = np.repeat(np.arange(n), np.diff(matrix.indptr))
        col, value = matrix.indices, matrix.data

        def weights(classes: np.ndarray) -> np.ndarray:
            rows = np.where(classes >= 0, row_of[np.maximum(classes, 0)], -1)[row]
            out = np.zeros(len(col), dtype=np.float64)
            ok = rows >= 0
            out[ok] = coef[rows[ok], col[ok]]
            return out

        names = np.concatenate([v.get_feature_names_out() for v in self.vectorizers_])
        first = len(self.vectorizers_[0].vocabulary_)
        terms = np.full((n, m, n_terms), None, dtype=object)
        pushes = np.zeros((n, m, n_terms), dtype=np.float32)
        pair = np.zeros((n, m, n_terms), dtype=bool)
        against = weights(np.asarray(labels))
        for slot in range(m):
            push = value * (weights(tried[:, slot]) - against)
            order = np.lexsort((-push, row))  # by item, then strongest push first
            place = np.arange(len(order)) - matrix.indptr[row[order]]
            keep = order[(place < n_terms) & (push[order] > 0)]
            at = place[(place < n_terms) & (push[order] > 0)]
            terms[row[keep], slot, at] = names[col[keep]]
            pushes[row[keep], slot, at] = push[keep]
            pair[row[keep], slot, at] = col[keep] >= first
        return probs, HeldOutWords(classes=tried, terms=terms, weights=pushes, pair=pair)


class MiniBatchSoftmax:
    """Multinomial logistic regression, ``C`` as scikit-learn's (mean log loss plus
    ``|W|^2 / (2 C n_samples)``), learned by minibatch gradient descent with a step per
    feature row (row-wise Adagrad: Duchi, Hazan & Singer 2011, with one accumulator per
    feature for all classes). A batch reads and writes only the weight rows of the
    features its items use, and the penalty's shrinkage of the rows it skips is applied
    when a row is next used (exactly: ``(1 - step * penalty) ** batches``), so one epoch
    costs about the batch products, ``2 nnz(X) n_classes``, not ``n_features n_classes``
    per batch. It reaches the optimum newton-cg finds; ``tol`` stops it earlier, when an
    epoch lowers the mean loss by less than ``tol`` times it.

    ``coef_`` (n_fitted_classes, n_features) as a linear model's (one row for two classes).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> x = sp.csr_matrix(np.eye(3, dtype=np.float32).repeat(4, axis=0))
    >>> model = MiniBatchSoftmax(C=10.0, tol=1e-4, max_iter=200).fit(x, np.arange(12) // 4)
    >>> model.predict_proba(x[[0, 4, 8]]).argmax(1).tolist()
    [0, 1, 2]
    """

    def __init__(self, *, C: float = 10.0, tol: float = 1e-2, max_iter: int = 200,
                 learning_rate: float = 0.5, batch_size: int = 512,
                 random_state: int | None = 0) -> None:
        self.C, self.tol, self.max_iter = C, tol, max_iter
        self.learning_rate, self.batch_size, self.random_state = (
            learning_rate, batch_size, random_state)

    def fit(self, matrix: Any, labels: np.ndarray) -> MiniBatchSoftmax:
        import scipy.sparse as sp

        x = sp.csr_matrix(matrix, dtype=np.float32)
        self.classes_, y = np.unique(labels, return_inverse=True)
        n, n_features = x.shape
        k = len(self.classes_)
        weights = np.zeros((n_features, k), dtype=np.float32)
        bias = np.zeros(k, dtype=np.float32)
        squares = np.full(n_features, 1e-6, dtype=np.float32)  # Adagrad, one per row
        bias_squares = np.full(k, 1e-6, dtype=np.float32)
        last = np.zeros(n_features, dtype=np.int64)  # the batch each row is shrunk to
        penalty, rate = 1.0 / (self.C * n), self.learning_rate
        rng = np.random.default_rng(self.random_state)

        def shrink(rows: np.ndarray, now: int) -> np.ndarray:
            kept = np.maximum(1.0 - rate / np.sqrt(squares[rows]) * penalty, 0.0)
            return np.power(kept, now - last[rows]).astype(np.float32)[:, None]

        step, before = 0, np.inf
        self.n_iter_ = 0
        for epoch in range(self.max_iter):
            order, total = rng.permutation(n), 0.0
            for start in range(0, n, self.batch_size):
                batch = order[start:start + self.batch_size]
                part = x[batch]
                rows = np.unique(part.indices)
                local = sp.csr_matrix((part.data, np.searchsorted(rows, part.indices),
                                       part.indptr), shape=(len(batch), len(rows)))
                w = weights[rows] * shrink(rows, step)
                logits = local @ w + bias
                logits -= logits.max(axis=1, keepdims=True)
                proba = np.exp(logits)
                proba /= proba.sum(axis=1, keepdims=True)
                at = np.arange(len(batch))
                total -= float(np.log(np.maximum(proba[at, y[batch]], 1e-12)).sum())
                proba[at, y[batch]] -= 1.0
                proba /= len(batch)
                grad = local.T @ proba + penalty * w
                grad_bias = proba.sum(axis=0)
                squares[rows] += (grad * grad).mean(axis=1)
                weights[rows] = w - rate * grad / np.sqrt(squares[rows])[:, None]
                bias_squares += grad_bias * grad_bias
                bias -= rate * grad_bias / np.sqrt(bias_squares)
                step += 1
                last[rows] = step
            loss = total / n
            self.n_iter_ = epoch + 1
            if before - loss < self.tol * max(loss, 1e-12):
                break
            before = loss
        weights *= shrink(np.arange(n_features), step)
        self.weights_, self.intercept_ = weights, bias
        return self

    @property
    def coef_(self) -> np.ndarray:
        if len(self.classes_) == 2:
            return (self.weights_[:, 1] - self.weights_[:, 0])[None, :]
        return self.weights_.T

    def predict_proba(self, matrix: Any) -> np.ndarray:
        logits = np.asarray(matrix @ self.weights_, dtype=np.float64) + self.intercept_
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)


class _Centroids:
    """Nearest centroid on TF-IDF rows: each class's mean row, L2-normalised (``coef_``,
    a dense (n_fitted_classes, n_features) array, as a linear model's), and probabilities
    ``softmax(cos(x, centroid) / TEMPERATURE)``."""

    TEMPERATURE = 0.02

    def fit(self, matrix: Any, labels: np.ndarray) -> _Centroids:
        import scipy.sparse as sp

        self.classes_, index = np.unique(labels, return_inverse=True)
        members = sp.csr_matrix((np.ones(len(index), dtype=np.float32),
                                 (index, np.arange(len(index)))),
                                shape=(len(self.classes_), matrix.shape[0]))
        sums = (members @ matrix).toarray()
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        self.coef_ = sums / np.where(norms > 0, norms, 1.0)
        return self

    def predict_proba(self, matrix: Any) -> np.ndarray:
        logits = np.asarray(matrix @ self.coef_.T, dtype=np.float64) / self.TEMPERATURE
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        return proba / proba.sum(axis=1, keepdims=True)


@dataclass(eq=False, kw_only=True)
class CharTfidfScorer(TfidfScorer):
    """TF-IDF of character 2-5-grams within word boundaries + logistic regression: a
    cheap member that differs from the word model (spelling, morphology, rare words).

    Examples
    --------
    >>> CharTfidfScorer().analyzer, CharTfidfScorer().ngram_range
    ('char_wb', (2, 5))
    """

    name = "tfidf-char"
    ngram_range: tuple[int, int] = (2, 5)
    analyzer: str = "char_wb"
