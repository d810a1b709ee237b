"""Folders labelaudit writes (a saved model, an adapted encoder): their marker, and the
check that replaces only such a folder, never an arbitrary one."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from labelaudit._errors import InvalidParameterError
from labelaudit.io._paths import (
    MANIFEST,
    check_not_in_input_folder,
    check_not_in_model_folder,
    check_writable,
    input_folders,
)

__all__ = ["check_output_folder", "write_manifest", "written_folder"]

# What a model folder saved before manifests existed holds (labelaudit.train's layout).
_LEGACY_MODEL = ("labelaudit-model.json", "head.pt")


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}


def write_manifest(folder: str | Path, *, kind: str) -> Path:
    """Mark ``folder`` (finished, not yet in place) as labelaudit's output: a manifest
    naming every file in it, so that a later run replaces it only while it holds nothing
    else.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "weights.bin").write_bytes(b"0")
    >>> _ = write_manifest(folder, kind="model")
    >>> written_folder(folder)
    True
    >>> _ = (folder / "notes.txt").write_text("mine")
    >>> written_folder(folder)
    False
    """
    from labelaudit._version import __version__

    target = Path(folder)
    files = sorted(_files(target) - {MANIFEST})
    path = target / MANIFEST
    path.write_text(json.dumps({"written_by": "labelaudit", "labelaudit_version": __version__,
                                "kind": kind, "files": files}, indent=2), encoding="utf-8")
    return path


def written_folder(folder: str | Path) -> bool:
    """Whether ``folder`` is one labelaudit wrote and holds nothing it did not write."""
    return not _foreign_files(Path(folder))


def _foreign_files(target: Path) -> list[str]:
    """The files in ``target`` that labelaudit did not write (all of them when it holds no
    manifest of labelaudit's)."""
    present = _files(target)
    manifest = target / MANIFEST
    if manifest.is_file():
        try:
            listed = json.loads(manifest.read_text(encoding="utf-8"))["files"]
            own = {*map(str, listed), MANIFEST}
        except (OSError, ValueError, KeyError, TypeError):
            own = set()
        return sorted(present - own)
    if (target / _LEGACY_MODEL[0]).is_file():  # a model saved before manifests
        return sorted(n for n in present
                      if n not in _LEGACY_MODEL and not n.startswith("backbone/"))
    return sorted(present) or sorted(p.name for p in target.iterdir())


def _kind(target: Path) -> str | None:
    """The kind of labelaudit folder ``target`` is (``"model"``, ``"tapt"``), if any."""
    try:
        return str(json.loads((target / MANIFEST).read_text(encoding="utf-8"))["kind"])
    except (OSError, ValueError, KeyError, TypeError):
        return "model" if (target / _LEGACY_MODEL[0]).is_file() else None


def check_output_folder(out: str | os.PathLike[str], *, kind: str, name: str = "--out",
                        inputs: Iterable[object] = ()) -> Path:
    """Check, before any work, a folder a command will write (a model): it must be new,
    empty, or a folder labelaudit wrote that holds nothing else; it must hold no input and
    lie inside no model folder and no input folder. A folder labelaudit did not write is
    refused whatever the flags (labelaudit never deletes a file it did not write), and so is
    one of another ``kind`` (a saved model is not replaced by an adapted encoder).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> check_output_folder(pathlib.Path(tempfile.mkdtemp()) / "model", kind="model").name
    'model'
    """
    text = str(out)
    if not text.strip():
        raise InvalidParameterError(f"{name} must name a folder; got an empty path")
    if "://" in text:
        raise InvalidParameterError(f"{name} {text}: give a local folder")
    target = Path(text)
    if target.exists() and not target.is_dir():
        raise InvalidParameterError(f"{name} {text} is a file, not a folder: choose a folder")
    resolved = target.resolve()
    for value in inputs:
        if isinstance(value, (str, Path)) and "://" not in str(value):
            where = Path(value).resolve()
            if where == resolved or resolved in where.parents:
                raise InvalidParameterError(
                    f"{name} {text} holds the input {value}; labelaudit never overwrites an "
                    "input: choose another folder")
    check_not_in_model_folder(target, name=name)
    check_not_in_input_folder(target, name=name, folders=input_folders(inputs))
    foreign = _foreign_files(target)[:3] if target.is_dir() else []
    if foreign:
        raise InvalidParameterError(
            f"{name} {text} exists and is not a folder labelaudit wrote (it holds "
            f"{', '.join(foreign)}); labelaudit replaces only its own folders, even with "
            "--overwrite: choose a new folder")
    found = _kind(target) if target.is_dir() else None
    if found is not None and found != kind:
        raise InvalidParameterError(
            f"{name} {text} holds a labelaudit {found} folder, not a {kind} one; choose a "
            "new folder rather than replace it with another kind of output")
    check_writable(target / MANIFEST, name=name)
    return target
