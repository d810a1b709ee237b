"""help.toml: the description and the examples of every command and step, read once."""

from __future__ import annotations

from typing import Any

__all__ = ["command_help"]

_HELP: dict[str, dict[str, Any]] = {}


def command_help() -> dict[str, dict[str, Any]]:
    """Every command's and step's description and examples, by its path (``"scan"``,
    ``"review init"``): ``description``, ``epilog`` and ``torch_note`` (the epilog ends
    with the threads note)."""
    import tomllib
    from importlib.resources import files

    if not _HELP:
        _HELP.update(tomllib.loads(files("labelaudit.cli").joinpath("help.toml").read_text(
            encoding="utf-8")))
    return _HELP
