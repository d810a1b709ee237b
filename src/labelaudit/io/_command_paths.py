"""The files a command names, checked before any work: which of its options are inputs,
outputs and model folders, and what each must be (:func:`check_command_paths`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

__all__ = ["check_command_paths"]

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
# Inputs that must exist before any work starts (a hub dataset name passes: see read_data).
_MUST_EXIST = ("score", "verdicts", "sentinels_file", "annotations_file", "noise_matrix", "val",
               "predictions", "original", "suspect", "eval", "pred_probs")


def check_command_paths(options: Mapping[str, object], *, flag: Callable[[str], str],
                        writes: Iterable[str] = (), overwrite: bool = False,
                        remote: Iterable[str] = ()) -> None:
    """Before any work: refuse an output that names an input, lies inside a model folder,
    replaces a file or folder labelaudit did not write, or cannot be written; refuse a
    missing input file and a plot suffix that cannot be drawn.

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
        Replace an existing output file that labelaudit did not write (see
        :func:`check_output_paths`).
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
    from labelaudit.io._folders import check_output_folder
    from labelaudit.io._paths import check_input_paths, check_output_paths
    from labelaudit.io._write import figure_path

    written = list(writes)
    in_names = [name for name in _INPUTS if name not in written]
    out_names = [name for name in options if name not in _FOLDER_OUTPUTS and
                 (name == "out" or name.endswith("_out"))] + written
    inputs = [("an input file" if name in _POSITIONAL else f"the {flag(name)} file", path)
              for name in in_names for path in _paths(options.get(name))]
    check_input_paths([(f"the {flag(name)} file", path) for name in _MUST_EXIST
                       for path in _paths(options.get(name))])
    models = [path for name in _MODELS for path in _paths(options.get(name))
              if isinstance(path, str) and Path(path).is_dir()]
    folders = [(name, options.get(name)) for name in _FOLDER_OUTPUTS]
    for name, folder in folders:
        if isinstance(folder, str):
            check_output_folder(folder, kind=_FOLDER_OUTPUTS[name], name=flag(name),
                                inputs=[path for _, path in inputs] + models)
    check_output_paths(
        [(flag(name), options.get(name)) for name in out_names], inputs, overwrite=overwrite,
        model_folders=models + [f for _, f in folders if isinstance(f, str)],
        remote=[flag(name) for name in remote])
    if isinstance(options.get("plot_out"), str):
        figure_path(str(options["plot_out"]))


def _paths(value: object) -> list[object]:
    """The file paths an option holds: itself, or each item's path for a repeated one."""
    if isinstance(value, list):
        return [item[-1] if isinstance(item, tuple) else item for item in value]
    return [value]
