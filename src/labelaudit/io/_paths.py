"""Checks of the files a run will write, made before any work is done."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from labelaudit._errors import InvalidParameterError
from labelaudit.io._ledger import output_record

__all__ = ["FOLDER_MARKERS", "check_input_paths", "check_not_in_input_folder",
           "check_not_in_model_folder", "check_output_paths", "check_replaceable",
           "check_writable", "input_folders", "is_output_folder", "same_file", "sidecar_path"]

# The files that mark a folder as labelaudit's own output: the manifest every folder it
# writes gets (see labelaudit.io.write_manifest), and a saved model's description.
MANIFEST = "labelaudit-output.json"
FOLDER_MARKERS = (MANIFEST, "labelaudit-model.json")


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
                       remote: Iterable[str] = (), overwrite: bool = False,
                       model_folders: Iterable[object] = ()) -> None:
    """Refuse, before any work, outputs that would destroy something: labelaudit never
    overwrites an input, never writes into a model folder, and replaces an existing file only
    when it wrote that file itself: unchanged since, or changed and ``overwrite`` is given
    (see :func:`check_replaceable`).

    Parameters
    ----------
    outputs, inputs : iterable of (name, path)
        The paths a run writes and reads, each with the name that says where it came from
        in a message (an option such as ``--out``, or ``an input file``). Paths that are
        not strings (None when an option is not given) are skipped.
    remote : iterable of str
        Names of outputs that may be URIs (``s3://...``) or folders: the writer checks
        those itself.
    overwrite : bool
        Replace an earlier output of labelaudit's that was changed since it was written
        (``--overwrite``). A file labelaudit did not write, an input or a file inside a
        model folder is refused all the same.
    model_folders : iterable of path
        Folders the run reads a model from or writes one to: nothing is written inside
        them. Folders marked as labelaudit's own outputs are refused without being named.

    Examples
    --------
    >>> check_output_paths([("--out", "/tmp/a.csv")], [("an input file", "/tmp/b.csv")])
    >>> check_output_paths([("--out", "/tmp/a.csv")], [("an input file", "/tmp/a.csv")])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: /tmp/a.csv (the output) is an input file; ...
    """
    read = [(name, path) for name, path in inputs if isinstance(path, str)]
    folders = [Path(f).resolve() for f in model_folders if isinstance(f, (str, Path))]
    read_folders = input_folders(path for _, path in read)
    written: list[tuple[str, str]] = []
    for out_name, out in outputs:
        if not isinstance(out, str):
            continue
        for other_name, other in written:
            if same_file(out, other):
                raise InvalidParameterError(
                    f"{other_name} and {out_name} both write {out}; give them different files")
        written.append((out_name, out))
        if "://" not in out:  # a folder of parts too
            check_not_in_input_folder(out, name=out_name, folders=read_folders)
        if out_name in remote and ("://" in out or out.endswith("/")):
            continue
        check_writable(out, name=out_name)
        for in_name, value in read:
            if same_file(out, value):
                raise InvalidParameterError(
                    f"{out} (the output) is {in_name}; labelaudit never overwrites an input: "
                    "choose another output file")
        check_not_in_model_folder(out, name=out_name, model_folders=folders)
        check_replaceable(out, name=out_name, overwrite=overwrite)


def check_replaceable(out: str | Path, *, name: str = "out", overwrite: bool = False,
                      what: str = "choose another name") -> None:
    """The one rule for every existing file a run replaces (a single output, a sidecar, a
    part of a folder output, a review database), by the record of what labelaudit wrote
    (see :mod:`labelaudit.io._ledger`): a file labelaudit wrote and nobody changed since is
    replaced; one it wrote that was changed since, only with ``overwrite``; a file it did
    not write, never (``overwrite`` replaces only labelaudit's own earlier outputs).

    Examples
    --------
    >>> check_replaceable("/no/such/file.csv")
    >>> import tempfile, pathlib
    >>> mine = pathlib.Path(tempfile.mkdtemp()) / "mine.csv"
    >>> _ = mine.write_text("a\\n1\\n")
    >>> check_replaceable(mine, name="--out", overwrite=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: --out ... exists and labelaudit did not write it: ...
    """
    target = Path(out)
    if not target.is_file():
        return
    found = output_record(target)
    if found is None:
        raise InvalidParameterError(
            f"{name} {out} exists and labelaudit did not write it: {what}, or move or delete "
            "the file yourself")
    if found == "changed" and not overwrite:
        raise InvalidParameterError(
            f"{name} {out} exists and was changed since labelaudit wrote it: {what}, or pass "
            "--overwrite to replace it")


def sidecar_path(out: str | Path, suffix: str) -> Path:
    """The file written beside an output ``out`` with ``suffix`` for its own (``gold.jsonl``
    and ``".noise.json"`` give ``gold.noise.json``): checked like the output itself (see
    :func:`labelaudit.io.check_command_paths`).

    Examples
    --------
    >>> sidecar_path("out/gold.jsonl", ".noise.json").as_posix()
    'out/gold.noise.json'
    """
    return Path(out).with_suffix(suffix)


def input_folders(inputs: Iterable[object]) -> list[Path]:
    """The folders among ``inputs`` (resolved): a folder given as an input (a
    ``save_to_disk`` dataset, a folder of parts), or the folder of a ``folder:split``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = tempfile.mkdtemp()
    >>> input_folders([folder, f"{folder}:train", "/no/such.csv"]) == [pathlib.Path(folder)] * 2
    True
    """
    found = []
    for value in inputs:
        if not isinstance(value, (str, Path)) or "://" in str(value):
            continue
        path = Path(value)
        if not path.is_dir():
            base = str(value).rpartition(":")[0]
            if not base or not Path(base).is_dir():
                continue
            path = Path(base)
        found.append(path.resolve())
    return found


def check_not_in_input_folder(out: str | Path, *, name: str = "out",
                              folders: Iterable[Path] = ()) -> None:
    """Refuse an output inside one of the input ``folders`` (resolved, see
    :func:`input_folders`): every file in an input folder is an input, replaced or added
    to never, whatever the flags.

    Examples
    --------
    >>> import pathlib
    >>> check_not_in_input_folder("/tmp/out.csv", folders=[pathlib.Path("/data/ds")])
    """
    resolved = Path(out).resolve()
    for folder in folders:
        if folder == resolved or folder in resolved.parents:
            where = "is" if folder == resolved else "is inside"
            raise InvalidParameterError(
                f"{name} {out} {where} the input folder {folder}; labelaudit never writes "
                "into an input: choose a path outside it")


def check_not_in_model_folder(out: str | Path, *, name: str = "out",
                              model_folders: Iterable[Path] = ()) -> None:
    """Refuse an output inside a model folder: one of ``model_folders`` (resolved paths),
    or any folder labelaudit marked as its own output (a saved model, an adapted encoder).

    Examples
    --------
    >>> check_not_in_model_folder("/tmp/elsewhere/out.csv")
    """
    resolved = Path(out).resolve()
    folders = set(model_folders)
    for ancestor in resolved.parents:
        if ancestor in folders or is_output_folder(ancestor):
            raise InvalidParameterError(
                f"{name} {out} is inside the model folder {ancestor}; labelaudit never writes "
                "into a model folder: choose a path outside it")


def is_output_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder labelaudit wrote (a model or an adapted encoder): it
    holds labelaudit's marker file."""
    folder = Path(path)
    return any((folder / name).is_file() for name in FOLDER_MARKERS)


def check_input_paths(inputs: Iterable[tuple[str, object]]) -> None:
    """Refuse, before any work, an input file that does not exist. A URI, a
    ``folder:split`` and a name that could be a Hugging Face hub dataset pass: their
    readers check them.

    Examples
    --------
    >>> check_input_paths([("--eval", "imdb")])
    >>> check_input_paths([("--eval", "/no/such/eval.jsonl")])
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: --eval /no/such/eval.jsonl: no such file
    """
    from labelaudit.io._read import could_be_hub_name

    for name, value in inputs:
        if not isinstance(value, str) or "://" in value or Path(value).exists():
            continue
        base = value.rpartition(":")[0]
        if (base and Path(base).is_dir()) or could_be_hub_name(value):
            continue
        raise InvalidParameterError(f"{name} {value}: no such file")
