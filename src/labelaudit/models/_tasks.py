"""One executor for independent fits: in this process, in a pool of worker processes, or
as Ray tasks. Cross-fitting's folds, consistency's curve points, train-bench's runs and
select's sweep all go through :func:`run_tasks`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

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
def worker_pool(shared: Any, workers: int) -> Iterator[WorkerPool | None]:
    """A pool of ``workers`` local processes, started (and sent ``shared``) once, for the
    block: every :func:`run_tasks` call given it as ``pool=`` with this very ``shared``
    object and ``workers`` reuses it instead of starting a pool per call. None (nothing
    kept) for one worker."""
    if workers < 2:
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

    ``engine="local"`` runs the tasks in this process, one after another, unless there are
    several workers: ``workers`` spawned processes (those of ``pool`` when it was made for
    this ``shared`` and ``workers``), or one per entry of ``slots`` (a device each, say),
    which each receive ``shared`` once and keep their slot for their life. ``"ray"`` makes
    every task a Ray task (on the Ray this process is connected to) asking for
    ``ray_resources`` (default one CPU) with ``ray_slot`` as its slot, and ``shared`` goes
    to the object store once. ``on_result(index, result)`` runs here as each task finishes
    (a progress bar, a checkpoint). A failing task cancels the ones not started and its
    error is raised.

    Examples
    --------
    >>> run_tasks(lambda shared, slot, x: shared * x, [(1,), (2,), (3,)], shared=10)
    [10, 20, 30]
    """
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
    """A pool of one spawned process per slot (spawned, so a worker that takes a GPU owns
    it from the start), each keeping ``shared`` and one slot for its life."""
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
    """The tasks over the worker processes: those of ``pool`` when it was made for
    ``shared`` and as many workers, else a pool of one per slot for this call; each worker
    takes tasks in turn."""
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
