"""Where independent fits run: in this process, in worker processes, or on Ray (started
on this machine or joined at an address, ``pip install 'labelaudit[scale]'``); and the
fits of the experiment commands (consistency's curve points, train-bench's runs) with one
progress bar over all of them."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from labelaudit._errors import InvalidParameterError, MissingExtraError
from labelaudit._validation import check_choice, check_int
from labelaudit.models import Engine, WorkerPool, progress_bar, run_tasks, worker_pool

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
    """Start Ray on this machine (every core), or connect to the cluster at ``address``;
    True when this call started the connection (and should shut it down).

    An address that cannot be reached, or a connection that does not complete within
    ``timeout_s``, is an :class:`InvalidParameterError`.
    """
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
        failed = thread.is_alive() or bool(failure)
        if not failed:
            held.replay()
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


class _Held:
    """What was written to file descriptor 2 while it was held."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.text = ""
        self.replayed = False

    def read(self) -> str:
        self.sink.seek(0)
        self.text = self.sink.read().decode("utf-8", "replace")
        return self.text

    def replay(self) -> None:
        """Write what was held to the real stderr once it is restored (on success: Ray's
        own warnings)."""
        self.replayed = True

    def last_line(self) -> str:
        lines = [ln.split("] ", 1)[-1].strip() for ln in self.text.splitlines() if ln.strip()]
        return " ".join(lines[-1].split())[:200] if lines else ""


@contextmanager
def _held_stderr() -> Iterator[_Held]:
    """Hold file descriptor 2 (where Ray's C++ code logs) in a temporary file; on exit
    restore it and, if :meth:`_Held.replay` was called, write the held text out."""
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        held = _Held(sink)
        os.dup2(sink.fileno(), 2)
        try:
            yield held
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            held.read()
            if held.replayed and held.text:
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
    """Ray, for the block, when ``engine`` is ``"ray"``: started with every core, or the
    cluster at ``address``, unless this process is connected already (then left as it
    is); shut down after the block when it started here. Nothing for ``"local"``. The
    work inside is told the engine as a parameter (``run_tasks(engine=...)``)."""
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
    """``workers`` a whole number of at least 1, ``engine`` local or ray, a Ray address
    only with ray: checked before any work."""
    check_int(workers, "workers", minimum=1)
    check_engine(engine, ray_address)


def run_fits(function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]], *, shared: Any,
             workers: int = 1, engine: Engine = "local", ray_address: str | None = None,
             progress: bool = False, what: str = "fits", unit: str = " fits",
             on_result: Callable[[int, Any], None] | None = None,
             pool: WorkerPool | None = None) -> list[Any]:
    """:func:`labelaudit.models.run_tasks` on ``engine`` (``"ray"``: Ray started with every
    core, or the cluster at ``ray_address``; ``"local"``: ``workers`` processes, those of
    ``pool`` from :func:`keep_workers` when given), with a progress bar ``what`` over the
    tasks; the results in task order. ``on_result(index, result)`` runs here as each task
    finishes (a checkpoint).

    Examples
    --------
    >>> run_fits(lambda shared, slot, x: shared + x, [(1,), (2,)], shared=10)
    [11, 12]
    """
    with (ray_session(engine, ray_address),
          progress_bar(len(tasks), what, unit=unit, enabled=progress) as bar):
        def finished(index: int, result: Any) -> None:
            if on_result is not None:
                on_result(index, result)
            bar.update(1)

        return run_tasks(function, tasks, shared=shared, engine=engine, workers=workers,
                         on_result=finished, pool=pool)


def keep_workers(shared: Any, workers: int,
                 engine: str) -> AbstractContextManager[WorkerPool | None]:
    """A pool of ``workers`` local processes for a block, started and sent ``shared`` once,
    for every :func:`run_fits` call given it as ``pool=`` with this very ``shared`` object
    (the consistency test's batches of repeats); None for Ray or one worker."""
    return worker_pool(shared, workers if engine == "local" else 1)
