"""The one executor of independent fits (:func:`run_tasks`: in this process, in worker
processes, or as Ray tasks), the folds, and cross-fitting over them with checkpoints of
finished folds, so that a rerun fits only the folds it had not finished.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import socket
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    MissingExtraError,
    format_values,
)
from labelaudit._validation import check_choice, check_int, shown
from labelaudit.detect import TopKProbs
from labelaudit.io import atomic_path
from labelaudit.models._base import (
    HeldOutWords,
    Scorer,
    WordCollector,
    concat_words,
    progress_bar,
    take,
)

Engine = Literal["local", "ray"]
# A worker process's own state for its life (set by _start_worker in that process only):
# the shared object and its slot.
_WORKER: dict[str, Any] = {}


@dataclass(frozen=True)
class WorkerPool:
    """Worker processes kept across :func:`run_tasks` calls (see :func:`worker_pool`)."""

    shared: Any
    workers: int
    executor: Any


@contextmanager
def worker_pool(shared: Any, workers: int,
                engine: str = "local") -> Iterator[WorkerPool | None]:
    """``workers`` local processes, sent ``shared`` once for the block, reused by every
    :func:`run_tasks` given them as ``pool=``; None for Ray or one worker."""
    if workers < 2 or engine != "local":
        yield None
        return
    with _executor(shared, [None] * workers) as executor:
        yield WorkerPool(shared, workers, executor)


def run_tasks(
    function: Callable[..., Any],
    tasks: Sequence[tuple[Any, ...]],
    *,
    shared: Any = None,
    engine: Engine = "local",
    workers: int = 1,
    slots: Sequence[Any] | None = None,
    ray_resources: dict[str, float] | None = None,
    ray_slot: Any = None,
    on_result: Callable[[int, Any], None] | None = None,
    pool: WorkerPool | None = None,
) -> list[Any]:
    """``function(shared, slot, *task)`` for every task; the results in task order.

    Locally: in this process, or in ``workers`` spawned processes (``pool``'s), or one per
    entry of ``slots`` (a device each), each keeping ``shared`` and its slot for life.
    ``"ray"``: Ray tasks asking for ``ray_resources`` (default one CPU), slot ``ray_slot``.
    ``on_result(index, result)`` runs here as each task finishes. A failing task cancels
    the ones not started and its error is raised."""
    if engine == "ray" and len(tasks) > 1:
        return _on_ray(function, tasks, shared, ray_resources, ray_slot, on_result)
    n_workers = len(slots) if slots else workers
    if n_workers > 1 and len(tasks) > 1:
        return _in_processes(function, tasks, shared, list(slots or [None] * n_workers),
                             on_result, pool)
    slot = slots[0] if slots else None
    results = []
    for i, task in enumerate(tasks):
        results.append(function(shared, slot, *task))
        if on_result is not None:
            on_result(i, results[-1])
    return results


def _start_worker(shared: Any, queue: Any) -> None:
    """A worker's start: keep the shared object, and take one slot for the worker's life."""
    _WORKER["shared"], _WORKER["slot"] = shared, queue.get()


def _call_in_worker(function: Callable[..., Any], task: tuple[Any, ...]) -> Any:
    return function(_WORKER["shared"], _WORKER["slot"], *task)


def _executor(shared: Any, slots: list[Any]) -> Any:
    """One spawned process per slot (spawned, so a worker that takes a GPU owns it from the
    start), each keeping ``shared`` and one slot for its life."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    for slot in slots:
        queue.put(slot)
    return ProcessPoolExecutor(max_workers=len(slots), mp_context=context,
                               initializer=_start_worker, initargs=(shared, queue))


def _in_processes(function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]],
                  shared: Any, slots: list[Any],
                  on_result: Callable[[int, Any], None] | None,
                  pool: WorkerPool | None) -> list[Any]:
    """The tasks over ``pool``'s processes when it fits, else over a pool for this call."""
    if pool is not None and pool.shared is shared and pool.workers == len(slots) \
            and not any(slots):
        return _submit(pool.executor, function, tasks, on_result)
    with _executor(shared, slots) as executor:
        return _submit(executor, function, tasks, on_result)


def _submit(pool: Any, function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]],
            on_result: Callable[[int, Any], None] | None) -> list[Any]:
    from concurrent.futures import as_completed

    results: list[Any] = [None] * len(tasks)
    jobs = {pool.submit(_call_in_worker, function, task): i for i, task in enumerate(tasks)}
    try:
        for job in as_completed(jobs):
            i = jobs[job]
            results[i] = job.result()
            if on_result is not None:
                on_result(i, results[i])
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # the tasks not started never run
        raise
    return results


def _on_ray(function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], shared: Any,
            resources: dict[str, float] | None, slot: Any,
            on_result: Callable[[int, Any], None] | None) -> list[Any]:
    """Every task a Ray task on the Ray this process is connected to."""
    import ray

    remote = ray.remote(**(resources or {"num_cpus": 1}))(function)  # type: ignore[call-overload]
    shared_ref = ray.put(shared)
    pending = {remote.remote(shared_ref, slot, *task): i for i, task in enumerate(tasks)}
    results: list[Any] = [None] * len(tasks)
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(ready[0])
            results[i] = ray.get(ready[0])
            if on_result is not None:
                on_result(i, results[i])
    except BaseException:
        for ref in pending:
            ray.cancel(ref)
        raise
    return results


CONNECT_TIMEOUT_S = 30.0


def import_ray() -> Any:
    """The ``ray`` module, or :class:`MissingExtraError` naming the ``scale`` extra."""
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "scale") from None
    return ray


def _reachable(address: str, timeout_s: float) -> None:
    """Fail fast when ``host:port`` (or ``ray://host:port``) does not accept connections."""
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        return  # "auto" or a form Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=min(timeout_s, 10.0)).close()
    except OSError as exc:
        raise InvalidParameterError(
            f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}); check the "
            "address (`ray status` on the head node prints it), or leave --ray-address out to "
            "start Ray on this machine") from None


def connect(address: str | None, *, timeout_s: float = CONNECT_TIMEOUT_S,
            num_cpus: int | None = None) -> bool:
    """Start Ray here (every core), or connect to ``address`` within ``timeout_s`` (else
    :class:`InvalidParameterError`); True when this call started it (and shuts it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR",
             "configure_logging": True}
    if address is None:
        ray.init(num_cpus=num_cpus or os.cpu_count(), **quiet)
        return True
    _reachable(address, timeout_s)
    failure: list[BaseException] = []

    def start() -> None:
        try:
            ray.init(address=address, **({} if address.startswith("ray://") else quiet))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failure.append(exc)

    with _held_stderr() as held:  # Ray's C++ client logs a line per retry meanwhile
        thread = threading.Thread(target=start, daemon=True)
        thread.start()
        thread.join(timeout_s)
        held.replay = not thread.is_alive() and not failure  # on success: Ray's own warnings
    last = held.last_line()
    why = f" (Ray: {last})" if last else ""
    if thread.is_alive():
        raise InvalidParameterError(
            f"could not connect to the Ray cluster at {address} within {timeout_s:.0f} s{why}; "
            "check the address and that the cluster is up (`ray status`)")
    if failure:
        raise InvalidParameterError(
            f"could not connect to the Ray cluster at {address}: "
            f"{' '.join(str(failure[0]).split())[:300]}{why}") from None
    return True


@dataclass
class _Held:
    """What was written to file descriptor 2 while held; ``replay``: write it out after."""

    text: str = ""
    replay: bool = False

    def last_line(self) -> str:
        lines = [ln.split("] ", 1)[-1].strip() for ln in self.text.splitlines() if ln.strip()]
        return " ".join(lines[-1].split())[:200] if lines else ""


@contextmanager
def _held_stderr() -> Iterator[_Held]:
    """Hold file descriptor 2 (where Ray's C++ code logs) in a temporary file."""
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        held = _Held()
        os.dup2(sink.fileno(), 2)
        try:
            yield held
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            held.text = sink.read().decode("utf-8", "replace")
            if held.replay and held.text:
                sys.stderr.write(held.text)


def check_engine(engine: str, address: str | None) -> None:
    """``engine`` is ``"local"`` or ``"ray"``, and a Ray address comes with ``"ray"``.

    Examples
    --------
    >>> check_engine("ray", "auto")
    """
    check_choice(engine, "engine", ("local", "ray"))
    if address is not None and engine != "ray":
        raise InvalidParameterError(
            "ray_address= connects to a Ray cluster: give engine='ray' too",
            param=("ray_address", "engine"))


@contextmanager
def ray_session(engine: str, address: str | None = None) -> Iterator[None]:
    """Ray for the block when ``engine`` is ``"ray"`` (:func:`connect`, unless connected
    already); shut down after it when it started here. Nothing for ``"local"``."""
    check_engine(engine, address)
    if engine != "ray":
        yield
        return
    owned = connect(address)
    try:
        yield
    finally:
        if owned:
            import_ray().shutdown()


def check_fits(workers: int, engine: str, ray_address: str | None) -> None:
    """``workers`` >= 1, ``engine`` local or ray, a Ray address only with ray."""
    check_int(workers, "workers", minimum=1)
    check_engine(engine, ray_address)


def run_fits(function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *, shared: Any,
             workers: int = 1, engine: Engine = "local", ray_address: str | None = None,
             progress: bool = False, what: str = "fits", unit: str = " fits",
             on_result: Callable[[int, Any], None] | None = None,
             pool: WorkerPool | None = None) -> list[Any]:
    """:func:`run_tasks` inside :func:`ray_session`, with a progress bar ``what`` over the
    tasks; the results in task order."""
    with (ray_session(engine, ray_address),
          progress_bar(len(tasks), what, unit=unit, enabled=progress) as bar):
        def finished(index: int, result: Any) -> None:
            if on_result is not None:
                on_result(index, result)
            bar.update(1)

        return run_tasks(function, tasks, shared=shared, engine=engine, workers=workers,
                         on_result=finished, pool=pool)


_MARK = "labelaudit fold checkpoints"
_MANIFEST = "checkpoints.json"
_LOCK = threading.Lock()  # one update of a manifest's list of files at a time


class CheckpointWarning(LabelAuditWarning):
    """A checkpoint folder labelaudit made is kept: something it did not write is in it."""


def _digest_into(h: Any, value: Any) -> None:
    """Feed ``value`` (arrays, sparse matrices, texts, lists of them, options) to ``h``."""
    if isinstance(value, np.ndarray):
        h.update(str((value.dtype.str, value.shape)).encode())
        h.update(np.ascontiguousarray(value).tobytes() if value.dtype != object
                 else repr(value.tolist()).encode())
    elif hasattr(value, "tocsr") and hasattr(value, "data"):  # a scipy sparse matrix
        matrix = value.tocsr()
        for part in (matrix.data, matrix.indices, matrix.indptr):
            _digest_into(h, part)
    elif isinstance(value, (list, tuple)):
        h.update(f"[{len(value)}".encode())
        for item in value:
            _digest_into(h, item)
    elif isinstance(value, (str, int, float, bool, type(None))):
        h.update(repr(value).encode())
    else:  # an object option (a tokenizer, a device...): its type stands for it
        h.update(type(value).__qualname__.encode())


def fold_key(scorer: Any, features: Any, labels: Any, fold_ids: np.ndarray,
             n_classes: int, top_k: int | None = None) -> str:
    """What identifies one cross-fit: scorer kind and options, features, labels, folds,
    and the classes kept per item (``top_k``; None: all)."""
    h = hashlib.sha256()
    options = sorted((k, v) for k, v in vars(scorer).items()
                     if not k.startswith("_") and not k.endswith("_"))
    kind: list[Any] = [type(scorer).__qualname__, scorer.name, n_classes,
                       [[k, v] for k, v in options]]
    _digest_into(h, kind if top_k is None else [*kind, ["top_k", top_k]])
    for part in (features, labels, fold_ids):
        _digest_into(h, part)
    return h.hexdigest()[:24]


class FoldStore:
    """A folder of fold checkpoints (see :func:`fold_checkpoints`)."""

    def __init__(self, folder: str | Path, *, resume: bool = True) -> None:
        self.loaded = 0
        self.folder = claim_checkpoint_folder(folder)
        if not resume:
            drop_checkpoint_files(self.folder)

    def _path(self, key: str, fold: int) -> Path:
        return self.folder / f"{key}_fold_{int(fold)}.npz"

    def load(self, key: str, fold: int, *, words: bool = False,
             ) -> tuple[np.ndarray, Any, HeldOutWords | None] | None:
        """A finished fold's held-out rows, probabilities and (``words``) the words that
        explain them, or None (also when ``words`` were asked for and not saved)."""
        path = self._path(key, fold)
        try:
            with np.load(path) as saved:
                said = None
                if words:
                    terms = saved["terms"].astype(object)
                    terms[terms == ""] = None
                    said = HeldOutWords(classes=saved["classes"], terms=terms,
                                        weights=saved["weights"], pair=saved["pair"])
                probs: Any = saved["probs"] if "probs" in saved else TopKProbs(
                    labels=saved["top_labels"], given=saved["top_given"],
                    classes=saved["top_classes"], probs=saved["top_probs"],
                    n_classes=int(saved["top_n_classes"]))
                found = saved["rows"], probs, said
        except (OSError, ValueError, KeyError):
            return None  # not there, or damaged: fitted again
        try:
            own_checkpoint_file(self.folder, path.name)  # one an older labelaudit did not list
        except InvalidParameterError:
            return None  # not labelaudit's: never read (and saving over it is refused)
        self.loaded += 1
        return found

    def save(self, key: str, fold: int, rows: np.ndarray, probs: Any,
             words: HeldOutWords | None = None) -> None:
        """Keep one fold's held-out predictions (arrays, or a
        :class:`~labelaudit.detect.TopKProbs`; nothing else) and the words that explain
        them, atomically."""
        if isinstance(probs, TopKProbs):
            kept: dict[str, Any] = {
                "top_labels": probs.labels, "top_given": probs.given,
                "top_classes": probs.classes, "top_probs": probs.probs,
                "top_n_classes": np.asarray(probs.n_classes)}
        elif isinstance(probs, np.ndarray):
            kept = {"probs": probs}
        else:
            return
        said: dict[str, Any] = {} if words is None else {
            "classes": words.classes, "weights": words.weights, "pair": words.pair,
            "terms": np.where(words.terms == None, "", words.terms).astype(str)}  # noqa: E711
        path = own_checkpoint_file(self.folder, self._path(key, fold).name)
        with atomic_path(path, record=False) as tmp, open(tmp, "wb") as f:
            np.savez(f, **{"rows": np.asarray(rows), **kept, **said})

    def remove(self) -> None:
        """Delete the checkpoints (see :func:`release_checkpoint_folder`)."""
        release_checkpoint_folder(self.folder)


def claim_checkpoint_folder(folder: str | Path) -> Path:
    """A folder for labelaudit's checkpoints, with its manifest; a file, or a non-empty
    folder without labelaudit's manifest, is an :class:`InvalidParameterError`. The manifest
    says whether labelaudit made the folder (and how many parents), and lists the files
    labelaudit writes there (:func:`own_checkpoint_file`): the only ones ever removed."""
    path = Path(folder)
    manifest = path / _MANIFEST
    if path.exists():
        if not path.is_dir():
            raise InvalidParameterError(f"checkpoint folder {folder} is a file")
        if any(path.iterdir()) and not _is_ours(manifest):
            raise InvalidParameterError(
                f"checkpoint folder {folder} exists and is not one of labelaudit's (no "
                f"{_MANIFEST} of its own): choose a new or empty folder")
    made = not path.exists()
    parents = 0
    if made:
        while not path.absolute().parents[parents].exists():
            parents += 1
    path.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        _write_note(path, {"labelaudit": _MARK, "made_folder": made, "made_parents": parents,
                           "files": []})
    return path


def own_checkpoint_file(folder: str | Path, name: str) -> Path:
    """``folder / name``, listed in the manifest as labelaudit's before it is written; an
    :class:`InvalidParameterError` when something labelaudit did not write is there."""
    path = Path(folder)
    with _LOCK:
        note = _read_note(path)
        listed = "files" in note  # an older manifest lists nothing: its files are adopted
        files = note.setdefault("files", [])
        if name not in files:
            taken = path / name
            if listed and (taken.exists() or taken.is_symlink()):
                raise InvalidParameterError(
                    f"checkpoint folder {path} holds {name!r}, which labelaudit did not "
                    "write: move it out, or choose a new or empty folder")
            files.append(name)
            _write_note(path, note)
    return path / name


def checkpoint_files(folder: str | Path) -> list[str]:
    """The names labelaudit listed as its own in ``folder`` (:func:`own_checkpoint_file`)."""
    return [n for n in _read_note(Path(folder)).get("files", []) if _plain_name(n)]


def drop_checkpoint_files(folder: str | Path, names: Iterable[str] | None = None) -> None:
    """Delete the files (and scratch folders) labelaudit listed as its own in ``folder``:
    those of ``names`` among them, or all; anything else there stays."""
    path = Path(folder)
    with _LOCK:
        note = _read_note(path)
        files = note.get("files", [])
        gone = {n for n in (files if names is None else names) if n in files and _plain_name(n)}
        for name in gone:
            _delete(path / name)
        if gone:
            note["files"] = [n for n in files if n not in gone]
            _write_note(path, note)


def release_checkpoint_folder(folder: str | Path) -> None:
    """Delete labelaudit's files in ``folder`` and the manifest, then the folder and the
    parents labelaudit made, each when empty. A user's folder stays; one holding what
    labelaudit did not write stays with a :class:`CheckpointWarning`."""
    path = Path(folder)
    drop_checkpoint_files(path)
    note = _read_note(path)
    _delete(path / _MANIFEST)
    if note.get("made_folder") is not True:  # the user's (or an older manifest's): it stays
        return
    kept = sorted(p.name for p in path.iterdir()) if path.is_dir() else []
    if kept:
        warnings.warn(f"checkpoint folder {path} is kept: it holds what labelaudit did not "
                      f"write there ({format_values(kept)}); labelaudit's checkpoints in it "
                      "are removed", CheckpointWarning, stacklevel=3)
        return
    made = int(note.get("made_parents", 0) or 0)
    for level in [path, *list(path.absolute().parents)[:made]]:
        try:
            level.rmdir()
        except OSError:
            return  # not empty (or gone): it and those above it stay


def _read_note(folder: Path) -> dict[str, Any]:
    """The manifest of ``folder`` (empty when there is none of labelaudit's)."""
    try:
        note = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return note if isinstance(note, dict) and note.get("labelaudit") == _MARK else {}


def _write_note(folder: Path, note: dict[str, Any]) -> None:
    with atomic_path(folder / _MANIFEST, record=False) as tmp:
        tmp.write_text(json.dumps(note), encoding="utf-8")


def _delete(path: Path) -> None:
    """Delete labelaudit's ``path`` and what an interrupted atomic write of it left."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
    for left in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        left.unlink(missing_ok=True)


def _plain_name(name: object) -> bool:
    """Whether ``name`` (from a manifest) names an entry of its folder, nothing outside."""
    return (isinstance(name, str) and name not in ("", ".", "..", _MANIFEST)
            and Path(name).name == name and "\\" not in name)


def _is_ours(manifest: Path) -> bool:
    return bool(_read_note(manifest.parent))


@contextmanager
def fold_checkpoints(folder: str | Path | None, *,
                     resume: bool = True) -> Iterator[FoldStore | None]:
    """The :class:`FoldStore` of ``folder`` for the block (``None`` for no folder), removed
    when the block ends without an error; ``resume=False`` discards earlier checkpoints."""
    if folder is None:
        yield None
        return
    store = FoldStore(folder, resume=resume)
    yield store
    store.remove()


DEFAULT_FOLDS = 5  # lowered to the smallest class's size when the caller gave no number


class FoldWarning(LabelAuditWarning):
    """Fewer folds were used than the default, because a class is too small."""


def check_fold_count(counts: np.ndarray, n_folds: int, names: Sequence[object]) -> None:
    """Refuse ``n_folds`` above the size of the smallest class (``counts`` per class).

    Examples
    --------
    >>> check_fold_count(np.array([8, 3]), 5, ["a", "b"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: asked for 5 folds, but the smallest class, ...
    """
    counts = np.asarray(counts)
    if not len(counts) or n_folds <= counts.min():
        return
    smallest = int(np.argmin(counts))
    raise InvalidParameterError(
        f"asked for {n_folds} folds, but the smallest class, {shown(list(names)[smallest])}, "
        f"has {int(counts[smallest])} items (of {int(counts.sum())}): every fold holds out "
        f"items of each class; use at most {int(counts.min())} folds")


def make_folds(labels: np.ndarray, *, n_folds: int | None = None,
               random_state: int | None = 0,
               classes: np.ndarray | Sequence[object] | None = None) -> np.ndarray:
    """Fold ids (n_samples,), stratified by label. ``None`` is :data:`DEFAULT_FOLDS`, lowered
    to the smallest class's size with a :class:`FoldWarning`; a given ``n_folds`` above it,
    or a one-item class, is an error."""
    from sklearn.model_selection import StratifiedKFold

    exact = n_folds is not None
    n_folds = DEFAULT_FOLDS if n_folds is None else n_folds
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InvalidParameterError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    labels = np.asarray(labels)
    values, counts = np.unique(labels, return_counts=True)
    names = np.asarray(classes)[values] if classes is not None else values
    if counts.min() < 2:
        lonely = names[counts < 2].tolist()
        raise InvalidInputError(
            f"class{'es' if len(lonely) > 1 else ''} {format_values(lonely)} "
            f"ha{'ve' if len(lonely) > 1 else 's'} "
            "a single item: it cannot be held out and learned at once; "
            "drop or merge it, or score it against a separate training file with --score"
        )
    if exact:
        check_fold_count(counts, int(n_folds), names.tolist())
    folds_used = int(min(n_folds, counts.min()))
    if folds_used < n_folds:
        small = names[counts < n_folds].tolist()
        warnings.warn(
            f"class{'es' if len(small) > 1 else ''} {format_values(small)} "
            f"ha{'ve' if len(small) > 1 else 's'} "
            f"fewer than {n_folds} items; using {folds_used} folds",
            FoldWarning, stacklevel=2,
        )
    splitter = StratifiedKFold(n_splits=folds_used, shuffle=True, random_state=random_state)
    fold_ids = np.empty(len(labels), dtype=np.int64)
    for fold, (_, test) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
        fold_ids[test] = fold
    return fold_ids


def group_folds(
    groups: np.ndarray, *, n_folds: int = 5, sizes: np.ndarray | None = None,
    random_state: int | None = 0,
) -> np.ndarray:
    """The fold of each item (n_samples,), whole ``groups`` (documents) per fold: groups in
    a random order, largest first, each to the least loaded fold, by ``sizes`` (per item,
    default 1)."""
    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InvalidParameterError(f"n_folds must be an integer of at least 2; got {n_folds!r}")
    groups = np.asarray(groups)
    names, inverse = np.unique(groups, return_inverse=True)
    if len(names) < n_folds:
        raise InvalidInputError(
            f"{len(names)} documents cannot fill {n_folds} folds without splitting one; "
            "use fewer folds or more data"
        )
    weight = np.bincount(inverse, weights=np.ones(len(groups)) if sizes is None else sizes)
    order = np.random.default_rng(random_state).permutation(len(names))
    # Largest groups first (stable within the random order) keeps folds even.
    order = order[np.argsort(-weight[order], kind="stable")]
    load = np.zeros(n_folds)
    fold_of_group = np.empty(len(names), dtype=np.int64)
    for g in order:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += weight[g]
    return fold_of_group[inverse]


def crossfit_pred_probs(
    scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray, *,
    n_classes: int, engine: Engine = "local", store: FoldStore | None = None,
    progress: bool = False, words: WordCollector | None = None, top_k: int | None = None,
) -> Any:
    """Out-of-sample probabilities, each fold scored by a model fitted on the others,
    joined by :meth:`~Scorer.join_predictions`. Folds run as Ray tasks, at once on the
    scorer's :meth:`~Scorer.fold_devices`, or in turn, saved to and resumed from ``store``.
    ``words`` collects each fold model's :meth:`~Scorer.predict_explained` words of the
    items it held out
    (a fold resumed from ``store`` is fitted again when its words were not saved).
    ``top_k``: keep each item's ``top_k`` likeliest classes
    (:class:`~labelaudit.detect.TopKProbs`) instead of every class's probability."""
    folds = np.unique(fold_ids)
    parts = []
    on_ray = engine == "ray" and len(folds) > 1
    devices = [] if on_ray else scorer.fold_devices()
    where = (" as Ray tasks" if on_ray else
             f" on {len(devices)} devices" if len(devices) > 1 else "")
    with progress_bar(len(folds), f"cross-fitting {len(folds)} folds ({scorer.name}){where}",
                      unit=" folds", enabled=progress) as bar:
        if on_ray:
            parts = _ray_folds(scorer, features, labels, fold_ids, n_classes=n_classes,
                               bar=bar, words=words, top_k=top_k)
            return _joined(scorer, parts, len(labels), n_classes=n_classes, top_k=top_k)
        if len(devices) > 1 and len(folds) > 1:
            # one worker process per device, taking folds in turn: a device never holds two
            parts = _task_folds(scorer, features, labels, fold_ids, n_classes=n_classes,
                                bar=bar, words=words, top_k=top_k, engine="local",
                                slots=list(devices))
            return _joined(scorer, parts, len(labels), n_classes=n_classes, top_k=top_k)
        key = fold_key(scorer, features, labels, fold_ids, n_classes, top_k) if store else ""
        for fold in folds:
            held_out = np.flatnonzero(fold_ids == fold)
            saved = store.load(key, fold, words=words is not None) if store else None
            if saved is not None and np.array_equal(saved[0], held_out):
                parts.append(saved[:2])  # finished by an earlier, interrupted run
                if words is not None:
                    words.add(held_out, saved[2])
                bar.update(1)
                continue
            train = np.flatnonzero(fold_ids != fold)
            model = scorer.clone().fit(take(features, train), take(labels, train),
                                       n_classes=n_classes)
            probs, said = _predicted(model, take(features, held_out), take(labels, held_out),
                                     explain=words is not None, top_k=top_k,
                                     n_classes=n_classes)
            parts.append((held_out, probs))
            if words is not None:
                words.add(held_out, said)
            if store:
                store.save(key, fold, held_out, probs, said)
            bar.update(1)
    return _joined(scorer, parts, len(labels), n_classes=n_classes, top_k=top_k)


def _joined(scorer: Scorer, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
            n_classes: int, top_k: int | None) -> Any:
    """The folds' predictions in item order: :meth:`Scorer.join_predictions`, or with
    ``top_k`` :meth:`TopKProbs.join <labelaudit.detect.TopKProbs.join>`."""
    if top_k is None:
        return scorer.join_predictions(parts, n_samples, n_classes=n_classes)
    return TopKProbs.join(parts, n_samples)


def _fit_fold(shared: tuple[Scorer, Any, Any, int, bool, int | None], device: str | None,
              train: np.ndarray, held_out: np.ndarray) -> tuple[Any, Any]:
    """One fold task: fit on ``train`` on ``device`` (a Ray task's GPU is ``cuda:0``, by
    ``CUDA_VISIBLE_DEVICES``), predict ``held_out`` and, if asked, explain it."""
    scorer, features, labels, n_classes, explain, top_k = shared
    model = scorer.on_device(device) if device is not None else scorer.clone()
    model.fit(take(features, train), take(labels, train), n_classes=n_classes)
    return _predicted(model, take(features, held_out), take(labels, held_out),
                      explain=explain, top_k=top_k, n_classes=n_classes)


def _predicted(model: Scorer, features: Any, labels: Any, *, explain: bool,
               top_k: int | None = None, n_classes: int = 0,
               ) -> tuple[Any, HeldOutWords | None]:
    """A fitted model's probabilities of ``features`` and, if ``explain``, its words; with
    ``top_k``, each item's ``top_k`` likeliest of the ``n_classes`` classes
    (:class:`~labelaudit.detect.TopKProbs`), predicted a block of rows at a time so no
    dense (items x classes) array is ever whole."""
    if top_k is None:
        return model.predict_explained(features, labels) if explain \
            else (model.predict_proba(features), None)
    labels = np.asarray(labels)
    n = len(labels)
    parts, said = [], []
    for rows in TopKProbs.blocks(n, n_classes) or [np.arange(0)]:  # none: one empty block
        probs, words = _predicted(model, take(features, rows), labels[rows], explain=explain)
        parts.append((rows, TopKProbs.from_dense(probs, labels[rows], k=top_k)))
        said.append(words)
    return TopKProbs.join(parts, n), (concat_words(said) if explain else None)


def _task_folds(scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray, *,
                n_classes: int, bar: Any, words: WordCollector | None, top_k: int | None,
                **where: Any) -> list[tuple[np.ndarray, Any]]:
    """Every fold a task of :func:`run_tasks` (``where``: engine, slots, Ray resources)."""
    tasks = [(np.flatnonzero(fold_ids != fold), np.flatnonzero(fold_ids == fold))
             for fold in np.unique(fold_ids)]
    shared = (scorer.clone(), features, labels, n_classes, words is not None, top_k)
    done = run_tasks(_fit_fold, tasks, shared=shared, on_result=lambda *_: bar.update(1),
                     **where)
    for (_, held_out), (_, said) in zip(tasks, done, strict=True):
        if words is not None:
            words.add(held_out, said)
    return [(held_out, p) for (_, held_out), (p, _) in zip(tasks, done, strict=True)]


def ray_fold_resources(scorer: Scorer, cluster: dict[str, float], *, n_items: int = 0,
                       n_classes: int = 0, node_memory: float | None = None,
                       ) -> dict[str, float]:
    """One fold's Ray resources: one CPU, a GPU for :meth:`Scorer.fold_gpus` if any, and
    the memory :meth:`Scorer.fold_memory` says a fit of ``n_items`` training items of
    ``n_classes`` classes holds (Ray's ``memory``: a node then runs only the folds its
    memory takes at once). A fold larger than the largest node (``node_memory`` bytes)
    is refused before any task starts.

    Examples
    --------
    >>> from labelaudit.models import TfidfScorer
    >>> ray_fold_resources(TfidfScorer(), {"CPU": 8.0, "GPU": 2.0})
    {'num_cpus': 1, 'num_gpus': 0}
    """
    gpus = 1 if scorer.fold_gpus() and cluster.get("GPU", 0) >= 1 else 0
    resources: dict[str, float] = {"num_cpus": 1, "num_gpus": gpus}
    needs = scorer.fold_memory(n_items, n_classes) if n_items else 0
    if needs:
        if node_memory is not None and needs > node_memory:
            raise InvalidInputError(
                f"one fold of the {scorer.name} member ({n_items:,} items, {n_classes:,} "
                f"classes) needs about {needs / 1e9:.1f} GB, more than the largest Ray "
                f"node's {node_memory / 1e9:.1f} GB: add a larger node, or keep fewer "
                "features (max_features)")
        resources["memory"] = float(needs)
    return resources


def _ray_folds(scorer: Scorer, features: Any, labels: Any, fold_ids: np.ndarray, *,
               n_classes: int, bar: Any, words: WordCollector | None,
               top_k: int | None) -> list[tuple[np.ndarray, Any]]:
    """Every fold a Ray task over the cluster's CPUs and GPUs."""
    import ray

    nodes = [n.get("Resources", {}).get("memory") for n in ray.nodes() if n.get("Alive")]
    largest = max((float(m) for m in nodes if m), default=None)
    n_train = len(fold_ids) - int(np.bincount(fold_ids).min())  # the largest training part
    resources = ray_fold_resources(scorer, ray.cluster_resources(), n_items=n_train,
                                   n_classes=n_classes, node_memory=largest)
    return _task_folds(scorer, features, labels, fold_ids, n_classes=n_classes, bar=bar,
                       words=words, top_k=top_k, engine="ray", ray_resources=resources,
                       ray_slot="cuda:0" if resources["num_gpus"] else None)


def fit_score_pred_probs(
    scorer: Scorer, train_features: Any, train_labels: Any, score_features: Any, *,
    n_classes: int, score_labels: np.ndarray | None = None,
    words: WordCollector | None = None, top_k: int | None = None,
) -> Any:
    """Fit on one split and predict another (the test-set audit); ``words`` collects the
    model's :meth:`~Scorer.predict_explained` words of the scored items (``score_labels``);
    ``top_k`` (with ``score_labels``) as in :func:`crossfit_pred_probs`."""
    model = scorer.clone().fit(train_features, train_labels, n_classes=n_classes)
    rows = np.arange(len(score_features))
    top_k = top_k if score_labels is not None else None
    probs, said = _predicted(model, score_features, score_labels,
                             explain=words is not None and score_labels is not None,
                             top_k=top_k, n_classes=n_classes)
    if words is not None:
        words.add(rows, said)  # None (no labels to explain against) adds nothing
    return _joined(scorer, [(rows, probs)], len(score_features), n_classes=n_classes,
                   top_k=top_k)
