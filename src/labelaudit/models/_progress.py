"""Progress bars on stderr: whether to show them, and one bar shaped the same everywhere."""

from __future__ import annotations

from typing import Any

__all__ = ["default_progress", "progress_bar"]


def default_progress() -> bool:
    """Progress bars by default: on a terminal, or in a Jupyter kernel."""
    import sys

    if sys.stderr is not None and hasattr(sys.stderr, "isatty") and sys.stderr.isatty():
        return True
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - an odd IPython
        return False
    return ip is not None and "IPKernelApp" in getattr(ip, "config", {})


def progress_bar(total: int, desc: str, *, unit: str, enabled: bool) -> Any:
    """A transient tqdm bar on stderr; a silent one (``update`` does nothing) when not
    ``enabled``. Use it as a context manager.

    Examples
    --------
    >>> with progress_bar(3, "folds", unit=" folds", enabled=False) as bar:
    ...     bar.update(1)
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=False)
