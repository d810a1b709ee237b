"""TF-IDF features with a logistic-regression head: the classic text baseline."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidParameterError, LabelAuditWarning
from labelaudit.io import TextDataset
from labelaudit.models._base import HeldOutWords, Scorer, full_proba
from labelaudit.models._encoder import torch_setup, torch_threads

Solver = Literal["auto", "newton-cg", "lbfgs", "adagrad", "sgd", "centroid"]
#: The solvers of :class:`TfidfScorer` (``solver=``).
SOLVERS: tuple[str, ...] = ("auto", "newton-cg", "lbfgs", "adagrad", "sgd", "centroid")
#: ``solver="auto"``: newton-cg up to this many classes, adagrad above (measured in
#: ``benchmarks/many_classes.py``).
MANY_CLASSES = 20
#: The most memory, in bytes, the head's weights may take (float32, one per feature and
#: class): at many classes the vocabulary keeps only its ``WEIGHT_BUDGET // (4 n_classes)``
#: most frequent terms (:meth:`TfidfScorer.feature_cap`). 1 GiB caps nothing up to 1,342
#: classes at the default 200,000 features; at 5,000 classes it keeps 53,687 terms (one
#: fold of the synthetic 200000x5000 set of ``benchmarks/many_classes.py``: AP 0.985
#: against 0.987 uncapped, held-out accuracy 0.609 against 0.601, in a quarter of the
#: memory and 20 % less time).
WEIGHT_BUDGET = 2**30
#: Each solver's ``tol`` when ``tol=None``. adagrad's 5e-2: on one fold of the synthetic
#: 100000x1000 set of ``benchmarks/many_classes.py`` the character member stops after 11
#: epochs instead of 15 at 3e-2 (AP 0.9839 against 0.9835) and the word member after 12
#: instead of 13 (0.9916 against 0.9917); the default scan of NoisywikiHow's 158 real
#: classes ranks the same (AP 0.3642, 0.3931, 0.4388 on three flip seeds, as at 3e-2).
DEFAULT_TOL = {"newton-cg": 1e-6, "lbfgs": 1e-6, "adagrad": 5e-2, "sgd": 1e-4}


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
    ngram_range, min_df, max_features : the vectoriser's; at many classes, ``max_features``
        is lowered so the weights stay within :data:`WEIGHT_BUDGET`
        (:meth:`feature_cap`; ``max_features_``).
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
        about 600 s, adagrad about 45 s, with the same ranking quality.
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

    def feature_cap(self, n_classes: int, *, n_texts: int = 1) -> int:
        """Each vectoriser's ``max_features`` for ``n_classes`` classes: ``max_features``,
        lowered where the weights (``4 n_classes`` bytes a feature, all ``n_texts``
        vectorisers together) would pass :data:`WEIGHT_BUDGET`; the vectoriser then keeps
        its most frequent terms.

        Examples
        --------
        >>> TfidfScorer().feature_cap(1000), TfidfScorer().feature_cap(5000)
        (200000, 53687)
        >>> TfidfScorer(max_features=None).feature_cap(20, n_texts=2)
        6710886
        """
        cap = max(1, WEIGHT_BUDGET // (4 * max(n_classes, 1) * n_texts))
        return cap if self.max_features is None else min(self.max_features, cap)

    def fold_memory(self, n_items: int, n_classes: int) -> int:
        """Bytes one fold's fit holds at most (the Ray memory plan): the weights twice
        (``4 n_classes`` bytes a feature, at the :meth:`feature_cap`: the model and its
        copy while predicting), the items' sparse rows (about 1 KB an item for words,
        8 KB for characters) and 256 MB for the rest (a block of predictions, the
        vocabulary). Measured peaks of one fold (``benchmarks/many_classes.py``): 1.4 GB
        at 100,000 items of 1,000 classes, 2.0 GB at 200,000 of 5,000; this says 1.9 and
        2.6.

        Examples
        --------
        >>> round(TfidfScorer().fold_memory(160_000, 5000) / 1e9, 1)
        2.6
        """
        features = self.feature_cap(n_classes)
        per_item = 8192 if self.analyzer == "char_wb" else 1024
        return int(2 * 4 * features * n_classes + per_item * n_items + (256 << 20))

    def _vectorizer(self):
        from sklearn.feature_extraction.text import TfidfVectorizer

        # token_pattern only for words: sklearn warns when it is given to char_wb
        words = {"token_pattern": r"(?u)\b\w+\b"} if self.analyzer != "char_wb" else {}
        return TfidfVectorizer(analyzer=self.analyzer, ngram_range=self.ngram_range,
                               min_df=self.min_df, sublinear_tf=True,
                               max_features=self.max_features_, dtype=np.float32, **words)

    def _transform(self, features: np.ndarray, *, fit: bool, n_classes: int | None = None):
        """The TF-IDF rows of ``features``; ``fit``: fit the vectorisers first, their
        ``max_features`` capped for ``n_classes`` classes (:meth:`feature_cap`) if given."""
        import scipy.sparse as sp

        if fit:
            self.max_features_ = (self.max_features if n_classes is None else
                                  self.feature_cap(n_classes, n_texts=features.shape[1]))
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
        matrix = self._transform(features, fit=True, n_classes=n_classes)
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
    feature for all classes), in float32, each batch split over :func:`torch_threads`
    threads.

    A batch reads and writes only the weight rows of the features its items use. Each
    row is stored as ``scale_j * V_j``: the penalty's shrinkage is a product on
    ``scale_j``, applied lazily when the row is next used (``(1 - step_j * penalty) **
    batches`` for the batches that skipped it), and it enters the batch's product through
    the batch's sparse values; so a batch costs its two sparse products,
    ``2 nnz(X_batch) n_classes``, and a pass over its rows' gradient, never
    ``n_features n_classes``. The items are cut into batches once; each epoch visits the
    batches in a new random order. It reaches the optimum newton-cg finds; ``tol`` stops
    it earlier, when an epoch lowers the mean loss by less than ``tol`` times it (an
    epoch that raises it halves the steps instead). On one fold of the synthetic
    100000x1000 set of ``benchmarks/many_classes.py``, ``learning_rate=1`` with batches
    of 1,024 reaches the objective of 0.5 with 512 within 0.1 % in 16 epochs instead of
    18, and an epoch costs less with larger batches (their items share features).

    ``coef_`` (n_fitted_classes, n_features) as a linear model's (one row for two classes);
    ``loss_curve_``: each epoch's mean training log loss.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> x = sp.csr_matrix(np.eye(3, dtype=np.float32).repeat(4, axis=0))
    >>> model = MiniBatchSoftmax(C=10.0, tol=1e-4, max_iter=200).fit(x, np.arange(12) // 4)
    >>> model.predict_proba(x[[0, 4, 8]]).argmax(1).tolist()
    [0, 1, 2]
    """

    #: Gradient entries per piece of a batch's feature rows (float32: 1 MiB), so a
    #: piece's gradient is reused from the cache by its step.
    BLOCK = 2**18

    def __init__(self, *, C: float = 10.0, tol: float = 5e-2, max_iter: int = 200,
                 learning_rate: float = 1.0, batch_size: int = 1024,
                 random_state: int | None = 0) -> None:
        self.C, self.tol, self.max_iter = C, tol, max_iter
        self.learning_rate, self.batch_size, self.random_state = (
            learning_rate, batch_size, random_state)

    def _batches(self, x: Any, y: np.ndarray, rng: np.random.Generator,
                 pieces: int, n_classes: int) -> list[tuple]:
        """The items cut once into shuffled batches: each batch's features (the weight rows
        it uses); its items in ``pieces`` (for as many threads), each as
        :meth:`_by_feature` gives them; its features in pieces of at most :attr:`BLOCK`
        gradient entries (at least ``pieces``), each as its rows of the transposed batch
        and its features; and the batch's size."""
        import scipy.sparse as sp
        import torch

        order = rng.permutation(x.shape[0])
        out = []
        for start in range(0, len(order), self.batch_size):
            items = np.sort(order[start:start + self.batch_size])
            part = x[items]
            rows, local = np.unique(part.indices, return_inverse=True)
            back = sp.csr_matrix((part.data, local, part.indptr),
                                 shape=(len(items), len(rows))).T.tocsr()
            cuts = np.linspace(0, len(items), pieces + 1).astype(int)
            forward = [self._by_feature(part[i:j], local[part.indptr[i]:part.indptr[j]],
                                        y[items[i:j]])
                       for i, j in zip(cuts[:-1], cuts[1:], strict=True)]
            # feature pieces whose gradient (len x n_classes) stays in the cache
            count = max(pieces, -(-len(rows) * n_classes // self.BLOCK))
            cuts = np.linspace(0, len(rows), count + 1).astype(int)
            backward = [(slice(i, j), back[i:j], torch.from_numpy(rows[i:j]))
                        for i, j in zip(cuts[:-1], cuts[1:], strict=True)]
            out.append((rows, forward, backward, len(items)))
        return out

    @staticmethod
    def _by_feature(rows: Any, local: np.ndarray, target: np.ndarray) -> tuple:
        """Some of a batch's items for their logits: their rows stored by feature (CSC),
        with each stored value's position among the batch's features and their labels. A
        product by feature reads each weight row once for all the items that use it, where
        one by item reads it once per item (one batch of 1,024 character rows by 1,000
        classes: 17 ms against 26 ms)."""
        import scipy.sparse as sp

        order = sp.csr_matrix((np.arange(1, rows.nnz + 1, dtype=np.int64), rows.indices,
                               rows.indptr), shape=rows.shape).tocsc()
        at = order.data - 1  # each stored value's place in the rows
        return (rows.data[at], order.indices, order.indptr, rows.shape, local[at], target)

    def fit(self, matrix: Any, labels: np.ndarray) -> MiniBatchSoftmax:
        import scipy.sparse as sp
        import torch

        torch_setup()
        threads = torch_threads()
        x = sp.csr_matrix(matrix, dtype=np.float32)
        self.classes_, y = np.unique(labels, return_inverse=True)
        n, n_features = x.shape
        k = len(self.classes_)
        rng = np.random.default_rng(self.random_state)
        batches = self._batches(x, y, rng, threads, k)
        stored = np.zeros((n_features, k), dtype=np.float32)  # V: the weights are scale * V
        into = torch.from_numpy(stored)  # the same memory, for index_add_
        scale = np.ones(n_features)
        # the bias starts at the log class frequencies (the optimum without features)
        bias = np.log(np.bincount(y, minlength=k) / n).astype(np.float32)
        squares = np.full(n_features, 1e-6)  # Adagrad, one per row
        bias_squares = np.full(k, 1e-6, dtype=np.float32)
        last = np.zeros(n_features, dtype=np.int64)  # the batch each row is shrunk to
        penalty, rate = 1.0 / (self.C * n), self.learning_rate

        def pending(rows: Any) -> np.ndarray:
            """The shrinkage the penalty owes ``rows`` for the batches that skipped them
            since each was last used: ``(1 - step_j * penalty) ** batches``."""
            kept = np.maximum(1.0 - rate / np.sqrt(squares[rows]) * penalty, 0.0)
            return np.power(kept, step - last[rows])

        def residual(piece: tuple, row_scale: np.ndarray, m: int) -> tuple[np.ndarray, float]:
            """Some of the batch's items: the batch's mean loss's gradient in their logits
            (their rows times scale * V, plus the bias), and their summed loss."""
            data, indices, indptr, shape, local, target = piece
            logits = sp.csc_matrix((data * row_scale[local], indices, indptr),
                                   shape=shape) @ stored
            logits += bias
            logits -= logits.max(axis=1, keepdims=True)
            at = np.arange(len(target))
            picked = logits[at, target]
            proba = np.exp(logits, out=logits)
            sums = proba.sum(axis=1)
            proba /= (sums * m)[:, None]
            proba[at, target] -= 1.0 / m
            return proba, float(np.sum(np.log(sums) - picked))

        def update(piece: tuple, rows: np.ndarray, proba: np.ndarray) -> None:
            """Some of the batch's feature rows take their Adagrad step, given the batch's
            residual ``proba``: ``W_j <- W_j - step_j (grad_j + penalty W_j)``, the
            penalty's part a product on ``scale_j``, the data part added to ``V_j`` over
            the new scale."""
            at, back, rows_t = piece
            grad = back @ proba  # the data part of these rows' gradient
            mine = rows[at]
            squares[mine] += np.einsum("ij,ij->i", grad, grad) / k
            steps = rate / np.sqrt(squares[mine])
            new_scale = scale[mine] * np.maximum(1.0 - steps * penalty, 0.0)
            small = new_scale < 1e-3
            if small.any():  # fold a vanishing scale back into V
                stored[mine[small]] *= new_scale[small, None].astype(np.float32)
                new_scale[small] = 1.0
            scale[mine] = new_scale
            grad *= (-steps / new_scale).astype(np.float32)[:, None]
            into.index_add_(0, rows_t, torch.from_numpy(grad))

        pool = ThreadPoolExecutor(threads) if threads > 1 else None
        step, before = 0, np.inf
        self.n_iter_, self.loss_curve_ = 0, []
        try:
            for epoch in range(self.max_iter):
                total = 0.0
                for b in rng.permutation(len(batches)):
                    rows, forward, backward, m = batches[b]
                    scale[rows] *= pending(rows)
                    row_scale = scale[rows].astype(np.float32)
                    if pool is None:
                        proba, lost = residual(forward[0], row_scale, m)
                        for piece in backward:
                            update(piece, rows, proba)
                    else:
                        parts = list(pool.map(residual, forward, [row_scale] * len(forward),
                                              [m] * len(forward)))
                        proba = np.vstack([p for p, _ in parts])
                        lost = sum(part_loss for _, part_loss in parts)
                        list(pool.map(update, backward, [rows] * len(backward),
                                      [proba] * len(backward)))
                    total += lost
                    grad_bias = proba.sum(axis=0)
                    bias_squares += grad_bias * grad_bias
                    bias -= rate * grad_bias / np.sqrt(bias_squares)
                    step += 1
                    last[rows] = step
                loss = total / n
                self.loss_curve_.append(loss)
                self.n_iter_ = epoch + 1
                if loss > before:  # the steps overshoot: halve them, and go on
                    rate /= 2
                elif before - loss < self.tol * max(loss, 1e-12):
                    break
                before = loss
        finally:
            if pool is not None:
                pool.shutdown()
        stored *= (scale * pending(slice(None))).astype(np.float32)[:, None]
        self.weights_, self.intercept_ = stored, bias
        return self

    @property
    def coef_(self) -> np.ndarray:
        if len(self.classes_) == 2:
            return (self.weights_[:, 1] - self.weights_[:, 0])[None, :]
        return self.weights_.T

    def predict_proba(self, matrix: Any) -> np.ndarray:
        """Float32 probabilities, (n_samples, n_fitted_classes)."""
        logits = np.asarray(matrix @ self.weights_, dtype=np.float32) + self.intercept_
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        proba /= proba.sum(axis=1, keepdims=True)
        return proba


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
