"""cleanlab Datalab's other issue types: near-duplicates, outliers and a non-IID test.

labelaudit ranks label issues itself; this module runs only the issue types of
``cleanlab.Datalab`` that look at the items' features, and adds one signal of its own: a
near-duplicate pair whose given labels differ (one of the two labels is likely wrong, or
the classes overlap). The result is a :class:`DatalabIssues`;
:func:`labelaudit.models.datalab_features` makes the items' features.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditError,
    format_rows,
)
from labelaudit._html_table import result_html
from labelaudit.detect._cleanlab import import_cleanlab
from labelaudit.detect._scores import check_pred_probs

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class DatalabIssues:
    """What cleanlab's Datalab found besides label issues, one entry per item.

    Issue types not asked for keep neutral values (False, None, NaN) and are left out of
    :meth:`to_frame` and :meth:`summary`.

    Attributes
    ----------
    ids, labels : ndarray of shape (n_samples,)
        Item ids (row positions when none were given); given labels as class indices.
    issue_types : tuple of str
    is_near_duplicate, is_outlier : ndarray of bool, shape (n_samples,)
    near_duplicate_id : ndarray of object, shape (n_samples,)
        Id of the item's closest near-duplicate, None where it has none.
    near_duplicate_sets : list of ndarray of int
        Positions of each item's near-duplicates, as cleanlab's ``near_duplicate_sets``.
    near_duplicate_label_conflict : ndarray of bool, shape (n_samples,)
        Some near-duplicate of the item has a different given label.
    outlier_score : ndarray of float, shape (n_samples,)
        cleanlab's outlier score in [0, 1]; lower = more atypical.
    non_iid_p_value : float or None
        p-value of cleanlab's non-IID permutation test; None when it was not run.
    is_non_iid : bool
        ``non_iid_p_value < 0.05``: the row order carries information (sorted, drifting
        or grouped data), so row-order splits would not be random.
    seconds : float
        Wall time of the Datalab pass (features excluded).
    """

    ids: np.ndarray
    labels: np.ndarray
    issue_types: tuple[str, ...]
    is_near_duplicate: np.ndarray
    near_duplicate_id: np.ndarray
    near_duplicate_sets: list[np.ndarray]
    near_duplicate_label_conflict: np.ndarray
    is_outlier: np.ndarray
    outlier_score: np.ndarray
    non_iid_p_value: float | None
    is_non_iid: bool
    seconds: float

    @property
    def duplicate_groups(self) -> np.ndarray:
        """Each item's near-duplicate group (a connected component of the near-duplicate
        graph, numbered from 0 by first item), -1 for items without one."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = len(self.ids)
        rows = np.concatenate([np.full(len(s), i) for i, s in enumerate(self.near_duplicate_sets)]
                              + [np.zeros(0, int)]).astype(np.int64)
        cols = np.concatenate([np.asarray(s, np.int64) for s in self.near_duplicate_sets]
                              + [np.zeros(0, np.int64)])
        graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
        _, component = connected_components(graph, directed=False)
        groups = np.full(n, -1, dtype=np.int64)
        members = np.flatnonzero(self.is_near_duplicate)
        _, first, inverse = np.unique(component[members], return_index=True, return_inverse=True)
        renumber = np.argsort(np.argsort(first))  # groups numbered by first item
        groups[members] = renumber[inverse]
        return groups

    @property
    def n_duplicate_sets(self) -> int:
        """Number of near-duplicate groups (see :attr:`duplicate_groups`)."""
        return int(self.duplicate_groups.max(initial=-1) + 1)

    @property
    def n_conflicting_sets(self) -> int:
        """Near-duplicate groups holding an item whose near-duplicate has another label."""
        groups = self.duplicate_groups
        return len(np.unique(groups[self.near_duplicate_label_conflict & (groups >= 0)]))

    def to_frame(self) -> pd.DataFrame:
        """One row per item, in item order (a RangeIndex, aligned by position).

        Columns, for the issue types run: ``is_near_duplicate, near_duplicate_id,
        near_duplicate_label_conflict`` (near_duplicate) and ``is_outlier,
        outlier_score`` (outlier), and ``non_iid_p_value`` (non_iid: a dataset-level
        finding, the same in every row, so a written scan output still carries it).
        """
        import pandas as pd
        columns: dict[str, Any] = {}
        if "near_duplicate" in self.issue_types:
            columns["is_near_duplicate"] = self.is_near_duplicate
            columns["near_duplicate_id"] = pd.Series(self.near_duplicate_id, dtype=object)
            columns["near_duplicate_label_conflict"] = self.near_duplicate_label_conflict
        if "outlier" in self.issue_types:
            columns["is_outlier"] = self.is_outlier
            columns["outlier_score"] = self.outlier_score
        if "non_iid" in self.issue_types and self.non_iid_p_value is not None:
            columns["non_iid_p_value"] = np.full(len(self.ids), float(self.non_iid_p_value))
        return pd.DataFrame(columns, index=pd.RangeIndex(len(self.ids)))

    def _repr_html_(self) -> str:
        """The findings in a notebook, one row per item."""
        return result_html(self)

    def summary(self) -> str:
        """A line per issue type run."""
        lines = []
        if "near_duplicate" in self.issue_types:
            n_items = int(self.is_near_duplicate.sum())
            lines.append(
                f"near-duplicates: {n_items} items in {self.n_duplicate_sets} sets, "
                f"{self.n_conflicting_sets} sets with different labels "
                f"({int(self.near_duplicate_label_conflict.sum())} items)")
        if "outlier" in self.issue_types:
            lines.append(f"outliers: {int(self.is_outlier.sum())}")
        if self.non_iid_p_value is not None:
            verdict = ("the row order carries information: neighbouring rows are more alike "
                       "than chance (sorted, drifting or grouped data)" if self.is_non_iid
                       else "no evidence of ordering effects")
            lines.append(f"non-IID: p = {_p_text(self.non_iid_p_value)} ({verdict})")
        return "\n".join(lines)


def _p_text(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


DatalabIssueType = Literal["near_duplicate", "outlier", "non_iid"]
DATALAB_ISSUE_TYPES: tuple[str, ...] = ("near_duplicate", "outlier", "non_iid")
MIN_CLEANLAB = (2, 6)
NON_IID_ALPHA = 0.05  # cleanlab's significance_threshold for the non-IID test


def _check_cleanlab() -> Any:
    """The ``Datalab`` class, or a clear error when cleanlab is missing or too old."""
    need = ".".join(map(str, MIN_CLEANLAB))
    try:
        cleanlab = import_cleanlab("cleanlab")
    except ImportError:
        raise LabelAuditError(
            f"the Datalab issue types need cleanlab >= {need}; install it with "
            f"`pip install 'cleanlab>={need}'`") from None
    version = str(getattr(cleanlab, "__version__", "0"))
    parts = tuple(int(p) if p.isdigit() else 0 for p in version.split(".")[:2])
    if parts < MIN_CLEANLAB:
        raise LabelAuditError(
            f"the Datalab issue types need cleanlab >= {need} (installed: {version}); "
            f"upgrade with `pip install -U 'cleanlab>={need}'`")
    try:
        return import_cleanlab("cleanlab.datalab.datalab").Datalab
    except ImportError as error:  # Datalab's own dependencies (datasets)
        raise LabelAuditError(
            f"cleanlab's Datalab could not be imported ({error}); install its dependencies "
            f"with `pip install 'cleanlab[datalab]>={need}'`") from None


def _check_inputs(
    labels: np.ndarray, pred_probs: np.ndarray, features: np.ndarray,
    ids: Sequence[Any] | np.ndarray | None, classes: Sequence[Any] | np.ndarray | None,
    issue_types: Sequence[str], k: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    if isinstance(issue_types, str):
        issue_types = (issue_types,)
    asked = tuple(dict.fromkeys(issue_types))
    unknown = [t for t in asked if t not in DATALAB_ISSUE_TYPES]
    if not asked or unknown:
        extra = (" (label issues come from labelaudit's own ranking)" if "label" in unknown
                 else "")
        raise InvalidParameterError(
            f"issue_types must be a non-empty subset of {list(DATALAB_ISSUE_TYPES)}; "
            f"got {list(issue_types)}{extra}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameterError(f"k must be a positive integer; got {k!r}")
    features = np.asarray(features)
    pred_probs = np.asarray(pred_probs)
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise InvalidInputError(f"labels must have shape (n_samples,); got {labels.shape}")
    n = len(labels)
    if pred_probs.ndim != 2 or len(pred_probs) != n:
        raise InvalidInputError(
            f"pred_probs must have shape (n_samples, n_classes) = ({n}, n_classes) to match "
            f"labels; got {pred_probs.shape}")
    if features.ndim != 2 or len(features) != n:
        raise InvalidInputError(
            f"features must have shape (n_samples, n_features) = ({n}, d) to match labels, "
            f"one row per item; got {features.shape}")
    if not np.issubdtype(features.dtype, np.number) or features.shape[1] == 0:
        raise InvalidInputError(
            f"features must be a non-empty numeric array; got dtype {features.dtype} "
            f"and shape {features.shape}")
    for name, array in (("pred_probs", pred_probs), ("features", features)):
        if np.issubdtype(array.dtype, np.number):
            bad = ~np.isfinite(array.astype(float)).all(axis=1)
            if bad.any():
                raise InvalidInputError(
                    f"{name} has NaN or infinite values in {format_rows(np.flatnonzero(bad))}; "
                    "recompute them or drop those items")
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    if classes is not None and len(classes) != pred_probs.shape[1]:
        raise InvalidInputError(
            f"classes has {len(classes)} names but pred_probs has {pred_probs.shape[1]} "
            "columns; pass one name per column")
    ids_array = np.asarray(np.arange(n) if ids is None else ids, dtype=object)
    if ids_array.shape != (n,):
        raise InvalidInputError(
            f"ids must have shape (n_samples,) = ({n},) to match labels; got {ids_array.shape}")
    if n < k + 1:
        raise InvalidInputError(
            f"Datalab compares each item with its k = {k} nearest neighbours, so it needs "
            f"at least {k + 1} items; got {n} (lower k or add items)")
    return labels, pred_probs, features.astype(np.float64), ids_array, asked


def _run_datalab(Datalab: Any, labels: np.ndarray, pred_probs: np.ndarray,
                 features: np.ndarray, issue_types: dict[str, dict[str, Any]]) -> Any:
    """Datalab's ``find_issues``, quietly; a failed issue type is an error, not a print."""
    lab = Datalab(data={"label": labels}, label_name="label", verbosity=0)
    # cleanlab's non-IID test calls np.random.seed: put the user's global RNG back after
    state = np.random.get_state()  # noqa: NPY002
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            lab.find_issues(pred_probs=pred_probs, features=features, issue_types=issue_types)
    finally:
        np.random.set_state(state)  # noqa: NPY002
    found = set(lab.get_issue_summary()["issue_type"])
    missing = [t for t in issue_types if t not in found]
    if missing:
        said = " ".join(line.strip() for line in printed.getvalue().splitlines()
                        if line.startswith("Error in"))
        raise InvalidInputError(
            f"cleanlab's Datalab could not check {', '.join(missing)}: "
            f"{said or 'no reason given'}")
    return lab


def _closest_in_set(graph: Any, i: int, members: np.ndarray) -> int:
    """The member of ``members`` nearest to item ``i`` (by the kNN graph's order)."""
    if graph is not None:
        row = graph.indices[graph.indptr[i]:graph.indptr[i + 1]]
        order = np.argsort(graph.data[graph.indptr[i]:graph.indptr[i + 1]], kind="stable")
        for j in row[order]:
            if j in members:
                return int(j)
    return int(members[0])


def datalab_issues(
    labels: np.ndarray,
    pred_probs: np.ndarray,
    features: np.ndarray,
    *,
    ids: Sequence[Any] | np.ndarray | None = None,
    classes: Sequence[Any] | np.ndarray | None = None,
    issue_types: Sequence[DatalabIssueType] = ("near_duplicate", "outlier", "non_iid"),
    k: int = 10,
    random_state: int | None = 0,
) -> DatalabIssues:
    """Near-duplicates, outliers and a non-IID test with cleanlab's Datalab.

    Runs ``Datalab.find_issues`` for the asked issue types only (never ``label``), with
    cleanlab's defaults on a shared kNN graph (cosine distance for more than 3 features):

    - ``near_duplicate``: ``d(i, j) < 0.13 * median_i d(i, nn(i))``; exact duplicates always.
    - ``outlier``: score ``exp(-mean_knn_dist / median(mean_knn_dist))`` (lower = more
      atypical); flagged when the mean kNN distance exceeds ``Q3 + (1 / 0.37037 - 1) * IQR``.
    - ``non_iid``: a permutation test (Kolmogorov-Smirnov) of whether feature-space
      neighbours are nearer in row order than chance; p < 0.05: the order carries information.

    On top, ``near_duplicate_label_conflict`` marks items with a near-duplicate under another
    given label (one label is likely wrong, or the classes overlap).

    Parameters
    ----------
    labels : ndarray of int, shape (n_samples,)
        Given labels as class indices.
    pred_probs : ndarray of shape (n_samples, n_classes)
        Out-of-sample predicted probabilities (passed to Datalab).
    features : ndarray of shape (n_samples, n_features)
        Item features (see :func:`labelaudit.models.datalab_features`).
    ids, classes : sequence, optional
        Item ids for ``near_duplicate_id`` (default row positions); class names (checked).
    issue_types : sequence of {"near_duplicate", "outlier", "non_iid"}
    k : int
        Neighbours per item in the kNN graph; needs at least ``k + 1`` items.
    random_state : int or None
        Seed of the non-IID permutation test (numpy's global RNG is left as it was).

    Returns
    -------
    DatalabIssues

    Raises
    ------
    InvalidInputError
        Shapes that do not match, NaN in the inputs, fewer than ``k + 1`` items.
    InvalidParameterError
        An unknown issue type or a bad ``k``.
    LabelAuditError
        cleanlab older than 2.6 (no usable Datalab).

    References
    ----------
    cleanlab documentation, "Datalab issue types" (near_duplicate, outlier, non_iid).
    Kuan & Mueller (2022), Back to the Basics: Revisiting Out-of-Distribution Detection
    Baselines (the kNN outlier score).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> features = rng.normal(size=(40, 5))
    >>> features[1] = features[0]              # item 1 copies item 0 ...
    >>> labels = np.array([0, 1] * 20)         # ... under another label
    >>> pred_probs = np.full((40, 2), 0.5)
    >>> found = datalab_issues(labels, pred_probs, features, issue_types=["near_duplicate"])
    >>> found.near_duplicate_id[:2].tolist(), found.near_duplicate_label_conflict[:2].tolist()
    ([1, 0], [True, True])
    >>> print(found.summary())
    near-duplicates: 2 items in 1 sets, 1 sets with different labels (2 items)
    """
    labels, pred_probs, features, ids_array, asked = _check_inputs(
        labels, pred_probs, features, ids, classes, issue_types, k)
    Datalab = _check_cleanlab()
    k = int(k)
    options: dict[str, dict[str, Any]] = {
        "near_duplicate": {"k": k},
        "outlier": {"k": k},
        "non_iid": {"k": k, "seed": random_state},
    }
    start = time.perf_counter()
    lab = _run_datalab(Datalab, labels, pred_probs, features,
                       {t: options[t] for t in asked})
    n = len(labels)
    is_dup = np.zeros(n, dtype=bool)
    dup_id = np.full(n, None, dtype=object)
    conflict = np.zeros(n, dtype=bool)
    sets: list[np.ndarray] = [np.zeros(0, np.int64) for _ in range(n)]
    if "near_duplicate" in asked:
        info = lab.get_info("near_duplicate")
        graph = lab.get_info("statistics").get("weighted_knn_graph")
        sets = [np.asarray(s, dtype=np.int64) for s in info["near_duplicate_sets"]]
        is_dup = lab.get_issues("near_duplicate")["is_near_duplicate_issue"].to_numpy(bool)
        for i, members in enumerate(sets):
            if len(members):
                dup_id[i] = ids_array[_closest_in_set(graph, i, members)]
                conflict[i] = bool((labels[members] != labels[i]).any())
    is_outlier = np.zeros(n, dtype=bool)
    outlier_score = np.full(n, np.nan)
    if "outlier" in asked:
        frame = lab.get_issues("outlier")
        is_outlier = frame["is_outlier_issue"].to_numpy(bool)
        outlier_score = frame["outlier_score"].to_numpy(float)
    p_value = float(lab.get_info("non_iid")["p-value"]) if "non_iid" in asked else None
    return DatalabIssues(
        ids=ids_array, labels=labels, issue_types=asked, is_near_duplicate=is_dup,
        near_duplicate_id=dup_id, near_duplicate_sets=sets,
        near_duplicate_label_conflict=conflict, is_outlier=is_outlier,
        outlier_score=outlier_score, non_iid_p_value=p_value,
        is_non_iid=p_value is not None and p_value < NON_IID_ALPHA,
        seconds=time.perf_counter() - start)
