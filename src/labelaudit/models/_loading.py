"""Load pre-trained models quietly from a checked name, and save them with the user's
file modes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit.models._hub import local_files_only, resolve_model_path
from labelaudit.models._runtime import torch_setup

__all__ = ["keep_umask", "load_pretrained", "load_sentence_encoder", "quiet_loading"]


def _load_error(model: object, path: str, error: Exception) -> InvalidParameterError:
    """One line for a model that does not load: a damaged folder, a hub model not found."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if Path(path).exists():
        return InvalidParameterError(f"cannot load the model folder {path!r}: {first}")
    return InvalidParameterError(
        f"cannot load model {str(model)!r}: it is not a local folder and could not be loaded "
        f"from the Hugging Face hub or its cache ({first}); without network, --model takes a "
        "local folder (a save_pretrained or `labelaudit tapt` output) or a model already in "
        "the Hugging Face cache")


def _load_errors() -> tuple[type[Exception], ...]:
    """What loading a missing or damaged model raises (a truncated weights file: a
    safetensors or torch error)."""
    errors: list[type[Exception]] = [OSError, ValueError, RuntimeError, EOFError]
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - transformers needs safetensors
        return tuple(errors)
    return (*errors, SafetensorError)


def load_pretrained(loader: Any, model: str | os.PathLike[str] | None, *, bars: bool = False,
                    **options: Any) -> Any:
    """``loader.from_pretrained`` (AutoTokenizer, AutoModel, ...) on
    :func:`resolve_model_path` of ``model``, quietly, and from the local cache alone when
    the hub is offline or unreachable; a model that cannot be loaded is one
    :class:`InvalidParameterError` line."""
    path = resolve_model_path(model)
    if local_files_only(path):
        options.setdefault("local_files_only", True)
    try:
        with quiet_loading(bars=bars):
            return loader.from_pretrained(path, **options)
    except _load_errors() as error:
        if isinstance(error, InvalidParameterError):
            raise
        raise _load_error(model or path, path, error) from None


def load_sentence_encoder(model: str | None = None, *, device: str | None = None,
                          progress: bool = False):
    """Load a sentence-transformers model (default: packaged all-MiniLM-L6-v2).

    Hugging Face's weight-loading bar shows only with ``progress``.
    """
    from sentence_transformers import SentenceTransformer

    from labelaudit.models._runtime import resolve_device

    torch_setup()
    path = resolve_model_path(model)
    where = None if device is None else str(resolve_device(device))
    try:
        with quiet_loading(bars=progress, reports=True):
            return SentenceTransformer(path, device=where,
                                       local_files_only=local_files_only(path))
    except _load_errors() as error:
        if isinstance(error, InvalidParameterError):
            raise
        raise _load_error(model or path, path, error) from None


@contextmanager
def quiet_loading(*, bars: bool = False, reports: bool = False) -> Iterator[None]:
    """Hide transformers' "Loading weights" bars (unless ``bars``) and load reports
    (unless ``reports``) while a model loads.

    The scan's own bars say what is happening; the load report (a classifier newly
    initialised for fine-tuning, an unused pooler) is expected and would land between those
    bars, once per fold.
    """
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    if not bars:
        hf_logging.disable_progress_bar()
    if not reports:
        hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if was_enabled:
            hf_logging.enable_progress_bar()


def keep_umask(folder: str | os.PathLike[str]) -> None:
    """Give every file and folder under ``folder`` the mode a new one gets from the
    user's umask (safetensors and ``tempfile`` make them private, 0600 and 0700)."""
    from labelaudit.io import current_umask

    mask = current_umask()
    root = Path(folder)
    for parent, folders, files in os.walk(root):
        for name in folders:
            os.chmod(Path(parent) / name, 0o777 & ~mask)
        for name in files:
            os.chmod(Path(parent) / name, 0o666 & ~mask)
    os.chmod(root, 0o777 & ~mask)
