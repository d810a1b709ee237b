"""Where torch runs: the device a ``--device`` names, and how many CPU threads it uses.

Every command that trains or encodes goes through :func:`resolve_device` and
:func:`torch_setup`, so a missing GPU and a busy machine are handled the same way
everywhere.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from labelaudit._errors import InvalidParameterError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["MAX_THREADS", "available_devices", "default_threads", "resolve_device",
           "torch_setup", "torch_threads"]

MAX_THREADS = 8  # more threads than this rarely speed up the small batches used here
_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"
_CFS = Path("/sys/fs/cgroup/cpu")  # cgroup v1: cpu.cfs_quota_us and cpu.cfs_period_us
_DEFAULT: list[int] = []  # the default of this process, chosen once (see torch_threads)


def _cgroup_cores() -> float | None:
    """The CPU limit of this container in cores, or None when there is none."""
    try:
        quota, period = _CPU_MAX.read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((_CFS / "cpu.cfs_quota_us").read_text())
        period_us = int((_CFS / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


def default_threads() -> int:
    """Torch threads for the cores actually free: the cores this process may use (its CPU
    affinity, capped by the cgroup CPU limit) less the 1-minute load average, at least 1
    and at most :data:`MAX_THREADS`.

    On a shared machine every extra thread waits for a busy core, so a run that takes
    seconds alone can take minutes; one thread per free core avoids that.

    Examples
    --------
    >>> 1 <= default_threads() <= MAX_THREADS
    True
    """
    try:
        usable: float = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        usable = os.cpu_count() or 1
    limit = _cgroup_cores()
    if limit is not None:
        usable = min(usable, max(1, math.ceil(limit)))
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available here
        load = 0.0
    free = int(math.floor(usable - load + 0.5))
    return max(1, min(free, MAX_THREADS))


def torch_threads() -> int:
    """``LABELAUDIT_THREADS`` when set, else :func:`default_threads` as it was at this
    process's first call (the load average then counts this process's own work).

    Raises
    ------
    InvalidParameterError
        ``LABELAUDIT_THREADS`` is not a whole number of at least 1.
    """
    given = os.environ.get("LABELAUDIT_THREADS", "").strip()
    if given:
        try:
            threads = int(given)
        except ValueError:
            threads = 0
        if threads < 1:
            raise InvalidParameterError(
                f"LABELAUDIT_THREADS must be a whole number of at least 1; got {given!r}")
        return threads
    if not _DEFAULT:
        _DEFAULT.append(default_threads())
    return _DEFAULT[0]


def torch_setup() -> None:
    """Run torch on :func:`torch_threads` threads; keep tokenizers from adding their own."""
    import torch

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    threads = torch_threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


def _mps_available() -> bool:
    import torch

    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[str]:
    """The torch devices of this machine: ``cpu``, each ``cuda:i``, and ``mps`` (Apple).

    Examples
    --------
    >>> available_devices()[0]
    'cpu'
    """
    import torch

    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if _mps_available():
        devices.append("mps")
    return devices


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a ``torch.device`` that exists here; None means CUDA when available,
    else the CPU.

    Raises
    ------
    InvalidParameterError
        Not a device name, or a device this machine does not have (a GPU without CUDA,
        ``cuda:3`` on a machine with two GPUs): the message lists the ones it has.

    Examples
    --------
    >>> str(resolve_device("cpu"))
    'cpu'
    """
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    here = ", ".join(available_devices())
    try:
        where = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InvalidParameterError(
            f"device {str(device)!r} is not a torch device ({first}); this machine has: "
            f"{here}") from None
    if where.type == "cuda":
        if not torch.cuda.is_available():
            build = ("this torch is built without CUDA" if torch.version.cuda is None
                     else "no NVIDIA GPU or driver is visible")
            raise InvalidParameterError(
                f"device {str(device)!r}: there is no GPU here (CUDA not available: {build}); "
                f"this machine has: {here}")
        count = torch.cuda.device_count()
        if where.index is not None and where.index >= count:
            raise InvalidParameterError(
                f"device {str(device)!r}: this machine has {count} GPU"
                f"{'s' if count != 1 else ''}; its devices are: {here}")
    elif where.type == "mps" and not _mps_available():
        raise InvalidParameterError(
            f"device {str(device)!r}: there is no Apple GPU here (MPS not available); this "
            f"machine has: {here}")
    return where  # another backend (xpu...): torch says whether it works
