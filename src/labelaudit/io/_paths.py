"""The overwrite rule, checked before any work: never write on an input or into an input or
model folder; replace only a file labelaudit wrote, or a folder its manifest lists whole."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from labelaudit._errors import InvalidParameterError
from labelaudit._version import __version__
from labelaudit.io._read import could_be_hub_name
from labelaudit.io._write import figure_path, format_of, output_record

# The files that mark a folder as labelaudit's own: its manifest, a saved model's description.
MANIFEST = "labelaudit-output.json"
FOLDER_MARKERS = (MANIFEST, "labelaudit-model.json")


# Options (``dest``) that hold files a command reads; a list (``--predictions NAME=FILE``)
# holds one per item, the path last. A command writes ``out``, ``*_out`` and ``writes``.
_INPUTS = ("data", "score", "issues", "input", "verdicts", "file", "scan", "sentinels_file",
           "annotations_file", "noise_matrix", "corrected", "train", "val", "predictions",
           "original", "suspect", "eval", "pred_probs", "db")
_POSITIONAL = ("data", "issues", "input", "verdicts", "file", "scan", "corrected", "train")
# Folders a command writes a model to; options that may name a model folder it reads.
_FOLDER_OUTPUTS = {"model_out": "model", "tapt_out": "tapt"}
_MODELS = ("model",)
# Folders a command writes its own scratch files to (kept for a rerun, then removed).
_SCRATCH = ("checkpoint_dir",)
SIDECARS = {"gold_out": ".noise.json"}
# Output options whose name must say what is written, checked first (before "exists").
_NAMES: dict[str, Callable[[str, str], object]] = {
    "plot_out": lambda path, _: figure_path(path),
    "metrics_out": lambda path, spelled: _json_name(path, spelled, "metrics_out", "the metrics"),
    "gold_out": lambda path, _: format_of(path),
    "items_out": lambda path, _: format_of(path),
    "annotators_out": lambda path, _: format_of(path),
}
# Inputs that must exist before any work starts (a hub dataset name passes: see read_data).
_MUST_EXIST = ("score", "verdicts", "sentinels_file", "annotations_file", "noise_matrix", "val",
               "predictions", "original", "suspect", "eval", "pred_probs")


def check_command_paths(options: Mapping[str, object], *, flag: Callable[[str], str],
                        writes: Iterable[str] = (), overwrite: bool = False,
                        remote: Iterable[str] = ()) -> None:
    """The whole rule over a command's ``options`` (``flag`` spells one; ``writes``: inputs it
    writes; ``remote``: outputs their writer checks).

    >>> check_command_paths({"data": "/tmp/a.csv", "out": "/tmp/a.csv"},
    ...                     flag=lambda name: f"--{name}")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: /tmp/a.csv (the output) is an input file; ...
    """
    written = list(writes)
    in_names = [name for name in _INPUTS if name not in written]
    out_names = [name for name in options if name not in _FOLDER_OUTPUTS and
                 (name == "out" or name.endswith("_out"))] + written
    inputs = [("an input file" if name in _POSITIONAL else f"the {flag(name)} file", path)
              for name in in_names for path in _paths(options.get(name))]
    for name, check in _NAMES.items():  # a name that cannot be written, first
        if isinstance(options.get(name), str):
            check(str(options[name]), flag(name))
    check_input_paths([(f"the {flag(name)} file", path) for name in _MUST_EXIST
                       for path in _paths(options.get(name))])
    models = [path for name in _MODELS for path in _paths(options.get(name))
              if isinstance(path, str) and Path(path).is_dir()]
    read_folders = input_folders(path for _, path in inputs)
    for name in _SCRATCH:
        if isinstance(options.get(name), str):
            check_not_in_input_folder(str(options[name]), name=flag(name), folders=read_folders)
    folders = [(name, options.get(name)) for name in _FOLDER_OUTPUTS]
    for name, folder in folders:
        if isinstance(folder, str):
            check_output_folder(folder, kind=_FOLDER_OUTPUTS[name], name=flag(name),
                                inputs=[path for _, path in inputs] + models)
    outputs = []
    for name in out_names:
        value = options.get(name)
        outputs.append((flag(name), value))
        if name in SIDECARS and isinstance(value, str):
            outputs.append((f"the {flag(name)} sidecar", str(sidecar_path(value, SIDECARS[name]))))
    check_output_paths(
        outputs, inputs, overwrite=overwrite,
        model_folders=models + [f for _, f in folders if isinstance(f, str)],
        remote=[flag(name) for name in remote])


def _json_name(path: str, spelled: str, param: str, what: str) -> None:
    """Refuse a name that does not end in .json for an option written as JSON."""
    if not path.lower().endswith(".json"):
        raise InvalidParameterError(f"{spelled} {path}: {what} are written as JSON; give a "
                                    "file name ending in .json", param=param)


def _paths(value: object) -> list[object]:
    """The file paths an option holds: itself, or each item's path for a repeated one."""
    if isinstance(value, list):
        return [item[-1] if isinstance(item, tuple) else item for item in value]
    return [value]


def check_output_paths(outputs: Iterable[tuple[str, object]],
                       inputs: Iterable[tuple[str, object]], *,
                       remote: Iterable[str] = (), overwrite: bool = False,
                       model_folders: Iterable[object] = ()) -> None:
    """Refuse (name, path) outputs that would destroy an input, write into a model folder
    or replace what :func:`check_replaceable` refuses.

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
    """Replace a file only if labelaudit wrote it, unchanged since or with ``overwrite``.

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


def check_writable(out: str | Path, *, name: str = "out") -> None:
    """Refuse an output whose folder cannot exist or be written (``name``: the option)."""
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


def check_input_paths(inputs: Iterable[tuple[str, object]]) -> None:
    """Refuse a missing input file (a URI, ``folder:split`` or hub name passes).

    >>> check_input_paths([("--eval", "imdb")])
    >>> check_input_paths([("--eval", "/no/such/eval.jsonl")])
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: --eval /no/such/eval.jsonl: no such file
    """
    for name, value in inputs:
        if not isinstance(value, str) or "://" in value or Path(value).exists():
            continue
        base = value.rpartition(":")[0]
        if (base and Path(base).is_dir()) or could_be_hub_name(value):
            continue
        raise InvalidParameterError(f"{name} {value}: no such file")


def same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def sidecar_path(out: str | Path, suffix: str) -> Path:
    """The file beside ``out`` with ``suffix`` (``--gold-out g.jsonl``: ``g.noise.json``)."""
    return Path(out).with_suffix(suffix)


def input_folders(inputs: Iterable[object]) -> list[Path]:
    """The folders among ``inputs`` (resolved), and those of a ``folder:split``.

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
    """Refuse an output inside an input folder: every file there is an input."""
    resolved = Path(out).resolve()
    for folder in folders:
        if folder == resolved or folder in resolved.parents:
            where = "is" if folder == resolved else "is inside"
            raise InvalidParameterError(
                f"{name} {out} {where} the input folder {folder}; labelaudit never writes "
                "into an input: choose a path outside it")


def check_not_in_model_folder(out: str | Path, *, name: str = "out",
                              model_folders: Iterable[Path] = ()) -> None:
    """Refuse an output inside ``model_folders`` or a folder labelaudit marked as its own."""
    resolved = Path(out).resolve()
    folders = set(model_folders)
    for ancestor in resolved.parents:
        if ancestor in folders or is_output_folder(ancestor):
            raise InvalidParameterError(
                f"{name} {out} is inside the model folder {ancestor}; labelaudit never writes "
                "into a model folder: choose a path outside it")


def is_output_folder(path: str | Path) -> bool:
    """Whether ``path`` holds labelaudit's marker file (a model or an adapted encoder)."""
    folder = Path(path)
    return any((folder / name).is_file() for name in FOLDER_MARKERS)


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}


def write_manifest(folder: str | Path, *, kind: str) -> Path:
    """Mark ``folder`` as labelaudit's with a manifest of its files (a rerun replaces it
    only while it holds nothing else).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "weights.bin").write_bytes(b"0")
    >>> _ = write_manifest(folder, kind="model")
    >>> check_output_folder(folder, kind="model") == folder
    True
    >>> _ = (folder / "notes.txt").write_text("mine")
    >>> check_output_folder(folder, kind="model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: --out ... is not a folder labelaudit wrote ...
    """
    target = Path(folder)
    files = sorted(_files(target) - {MANIFEST})
    path = target / MANIFEST
    path.write_text(json.dumps({"written_by": "labelaudit", "labelaudit_version": __version__,
                                "kind": kind, "files": files}, indent=2), encoding="utf-8")
    return path


def _foreign_files(target: Path) -> list[str]:
    """The files in ``target`` that its manifest does not list (all without a manifest)."""
    present = _files(target)
    manifest = target / MANIFEST
    if manifest.is_file():
        try:
            listed = json.loads(manifest.read_text(encoding="utf-8"))["files"]
            own = {*map(str, listed), MANIFEST}
        except (OSError, ValueError, KeyError, TypeError):
            own = set()
        return sorted(present - own)
    return sorted(present) or sorted(p.name for p in target.iterdir())


def _kind(target: Path) -> str | None:
    """The kind of labelaudit folder ``target`` is (``"model"``, ``"tapt"``), if any."""
    try:
        return str(json.loads((target / MANIFEST).read_text(encoding="utf-8"))["kind"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_output_folder(out: str | os.PathLike[str], *, kind: str, name: str = "--out",
                        inputs: Iterable[object] = ()) -> Path:
    """Check a folder a command writes: new, empty or labelaudit's of ``kind`` and nothing
    else, holding no input and in no model or input folder.

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
