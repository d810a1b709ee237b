"""The files a command names, checked before any work: which of its options are inputs,
outputs and model folders, and what each must be (:func:`check_command_paths`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from labelaudit._errors import InvalidParameterError
from labelaudit.io._folders import check_output_folder
from labelaudit.io._paths import (
    check_input_paths,
    check_not_in_input_folder,
    check_output_paths,
    input_folders,
    sidecar_path,
)
from labelaudit.io._write import figure_path, format_of

__all__ = ["SIDECARS", "check_command_paths"]

# Options (``dest``) that hold files a command reads. A list value (``--predictions
# NAME=FILE``, repeated) names one file per item, the path last. The files a command writes
# are ``out`` and every ``*_out`` (one rule for every command), and those it is told it
# writes (review init's ``db``).
_INPUTS = ("data", "score", "issues", "input", "verdicts", "file", "scan", "sentinels_file",
           "annotations_file", "noise_matrix", "corrected", "train", "val", "predictions",
           "original", "suspect", "eval", "pred_probs", "db")
_POSITIONAL = ("data", "issues", "input", "verdicts", "file", "scan", "corrected", "train")
# Folders a command writes a model to, and options that may name a model folder it reads.
_FOLDER_OUTPUTS = {"model_out": "model", "tapt_out": "tapt"}
_MODELS = ("model",)
# Folders a command writes its own scratch files to (kept for a rerun, then removed).
_SCRATCH = ("checkpoint_dir",)
# Files an output option writes beside its own, by the suffix that replaces the option's
# (see labelaudit.io.sidecar_path): ``--gold-out g.jsonl`` writes ``g.noise.json`` too. Each
# is checked as an output of its own.
SIDECARS = {"gold_out": ".noise.json"}
# Output options whose name must say what is written: checked before anything else, so that
# a name that cannot be written is refused before "exists" comes up.
# Each check is given the path and the option's flag.
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
    """Before any work: refuse an output that names an input, lies inside a model folder,
    replaces a file or folder labelaudit did not write, or cannot be written (a sidecar of
    an output, :data:`SIDECARS`, is checked as an output); refuse a missing input file; and
    first of all, a name whose suffix cannot be written (a plot's, a table's, a JSON file's).

    Parameters
    ----------
    options : mapping of str to object
        A command's options by name: ``out`` and every ``*_out`` are the files it writes
        (``model_out`` and ``tapt_out`` the folders), ``data``, ``eval``, ``db``... the
        files it reads; a list value (``predictions``) holds a path per item, the last
        element of a tuple. Values that are not strings (None: not given) are skipped.
    flag : callable
        How messages name an option (``"eval"`` as ``"--eval"``).
    writes : iterable of str
        Options among the inputs that this command writes instead (``"db"``).
    overwrite : bool
        Replace an earlier output of labelaudit's that was changed since (never a file
        labelaudit did not write: see :func:`labelaudit.io.check_replaceable`).
    remote : iterable of str
        Outputs that may be URIs or folders of parts (the writer checks those itself).

    Raises
    ------
    InvalidParameterError
        An output that would destroy something or cannot be written, a missing input.

    Examples
    --------
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
            outputs.append((f"the {flag(name)} sidecar",
                            str(sidecar_path(value, SIDECARS[name]))))
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
