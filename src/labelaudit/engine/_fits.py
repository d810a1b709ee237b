"""Independent fits of the experiment commands (consistency's curve points, train-bench's
runs) on the engine the user chose, with one progress bar over all of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from labelaudit.engine._ray_connect import check_engine, folds_on

__all__ = ["check_fits", "keep_workers", "run_fits"]


def check_fits(workers: int, engine: str, ray_address: str | None) -> None:
    """``workers`` a whole number of at least 1, ``engine`` local or ray, a Ray address
    only with ray: checked before any work."""
    from labelaudit._validation import check_int

    check_int(workers, "workers", minimum=1)
    check_engine(engine, ray_address)


def run_fits(function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *, shared: Any,
             workers: int = 1, engine: str = "local", ray_address: str | None = None,
             progress: bool = False, what: str = "fits", unit: str = " fits",
             on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
    """:func:`labelaudit.models.run_tasks` on ``engine`` (``"ray"``: Ray started with every
    core, or the cluster at ``ray_address``; ``"local"``: ``workers`` processes), with a
    progress bar ``what`` over the tasks; the results in task order. ``on_result(index,
    result)`` runs here as each task finishes (a checkpoint).

    Examples
    --------
    >>> run_fits(lambda shared, slot, x: shared + x, [(1,), (2,)], shared=10)
    [11, 12]
    """
    from labelaudit.models._progress import progress_bar
    from labelaudit.models._tasks import run_tasks

    with (folds_on(engine, ray_address),
          progress_bar(len(tasks), what, unit=unit, enabled=progress) as bar):
        def finished(index: int, result: Any) -> None:
            if on_result is not None:
                on_result(index, result)
            bar.update(1)

        return run_tasks(function, tasks, shared=shared, workers=workers, on_result=finished)


def keep_workers(shared: Any, workers: int, engine: str) -> Any:
    """A block within which every :func:`run_fits` call with this very ``shared`` object
    reuses one pool of ``workers`` local processes, started and sent ``shared`` once (the
    consistency test's batches of repeats); nothing for Ray or one worker."""
    from labelaudit.models._tasks import worker_pool

    return worker_pool(shared, workers if engine == "local" else 1)
