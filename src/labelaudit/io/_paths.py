"""Checks of the files a run will write, made before any work is done."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from labelaudit._errors import InvalidParameterError

__all__ = ["check_output_paths", "check_writable", "same_file"]


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name the same file (after resolving links and ``..``)."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def check_writable(out: str | Path, *, name: str = "out") -> None:
    """Refuse an output whose folder cannot exist or be written; ``name`` says which
    option gave the path in the message.

    Examples
    --------
    >>> check_writable("/tmp/result.csv")
    """
    if "://" in str(out):
        raise InvalidParameterError(
            f"{name} {out}: this command writes local files only; give a local path")
    target = Path(out)
    if target.is_dir():
        raise InvalidParameterError(f"{name} {out} is a folder; give a file name")
    ancestor = target.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InvalidParameterError(
            f"{name} {out}: {ancestor} is a file, not a folder, so {out} cannot be written")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise InvalidParameterError(
            f"{name} {out}: the folder {ancestor} is not writable; choose another location")


def check_output_paths(outputs: Iterable[tuple[str, object]],
                       inputs: Iterable[tuple[str, object]], *,
                       remote: Iterable[str] = ()) -> None:
    """Refuse outputs that are unwritable, that two options both write, or that name an
    input file: labelaudit never overwrites an input.

    Parameters
    ----------
    outputs, inputs : iterable of (name, path)
        The paths a run writes and reads, each with the name that says where it came from
        in a message (an option such as ``--out``, or ``an input file``). Paths that are
        not strings (None when an option is not given) are skipped.
    remote : iterable of str
        Names of outputs that may be URIs (``s3://...``) or folders: the writer checks
        those itself.

    Examples
    --------
    >>> check_output_paths([("--out", "/tmp/a.csv")], [("an input file", "/tmp/b.csv")])
    >>> check_output_paths([("--out", "/tmp/a.csv")], [("an input file", "/tmp/a.csv")])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: /tmp/a.csv (the output) is an input file; ...
    """
    read = [(name, path) for name, path in inputs if isinstance(path, str)]
    written: list[tuple[str, str]] = []
    for out_name, out in outputs:
        if not isinstance(out, str):
            continue
        for other_name, other in written:
            if same_file(out, other):
                raise InvalidParameterError(
                    f"{other_name} and {out_name} both write {out}; give them different files")
        written.append((out_name, out))
        if out_name in remote and ("://" in out or out.endswith("/")):
            continue
        check_writable(out, name=out_name)
        for in_name, value in read:
            if same_file(out, value):
                raise InvalidParameterError(
                    f"{out} (the output) is {in_name}; labelaudit never overwrites an input: "
                    "choose another output file")
