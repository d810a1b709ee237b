"""``labelaudit noise``: inject controlled label noise; ``noise realism``: how real it looks."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from labelaudit.cli._common import at_least, print_table, show_progress, warnings_to_stderr

ORDER = 40

_METHODS = ("uniform", "class-dependent", "dissenting-label", "dissenting-worker",
            "crowd-majority", "minority-split", "instance-dependent")
_ADDED = ("clean_label", "is_noisy", "noise_method")

_EPILOG = """examples:
  labelaudit noise clean.jsonl --label label --method uniform --rate 0.05 --seed 0 --out noisy.jsonl
  labelaudit noise crowd.jsonl --label gold --annotations annotator_labels \\
      --method dissenting-worker --rate 0.04 --out noisy.jsonl
  labelaudit noise crowd.jsonl --label gold --annotations annotator_labels \\
      --recipe "dissenting-worker:0.8,dissenting-label:0.2" --rate 0.05 --out noisy.jsonl
  labelaudit noise clean.csv --text text --label label --method instance-dependent --rate 0.2 \\
      --out noisy.csv
  labelaudit noise realism noisy.jsonl --text text --label label --plot losses.png

The output keeps every input column; LABEL holds the noisy label, and clean_label, is_noisy
and noise_method are added (noise_source with --sources; text_from and clean_<column> with
--swap-input). A summary of the achieved rates goes to stderr (--summary FILE for JSON).

`noise realism FILE` cross-fits the scan's default scorers on the noisy labels and reports,
per noise method, the Wasserstein distance between the losses of noised and clean items
(Chong, Hong & Manning 2022): the lower, the more the noise looks like real errors.
"""


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "noise", parents=parents,
        help="inject realistic, controlled label noise (and measure its realism)",
        description="Noise a clean dataset at an exact rate with synthetic (uniform, "
        "class-dependent), human-originated (dissenting label/worker, crowd majority, "
        "minority split) or instance-dependent noise, or a recipe mixing them.",
        usage="labelaudit noise INPUT --label COL (--method M | --recipe SPEC) [--rate R] ...\n"
        "       labelaudit noise realism INPUT --text COL --label COL [--plot FILE] ...",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT",
                   help="CSV, TSV, JSONL, JSON, Parquet or datasets folder; or the word "
                   "'realism' followed by the noisy file")
    p.add_argument("realism_input", nargs="?", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--label", default="label", help="label column (default: label)")
    p.add_argument("--text", help="text column (instance-dependent noise; realism, "
                   "default: text)")
    p.add_argument("--text-pair", help="second text column for sentence pairs (NLI)")
    p.add_argument("--id", help="id column (default: the row number)")
    p.add_argument("--seed", type=at_least(0), default=0, help="random seed (default: 0)")
    p.add_argument("--out", "-o", help="output file, format by suffix: .csv .tsv .jsonl .json "
                   ".parquet (default: stdout)")
    p.add_argument("--format", choices=["table", "csv", "tsv", "jsonl", "json"],
                   help="stdout format without --out (noise: jsonl, csv or tsv, default jsonl; "
                   "realism: table, csv, jsonl or json, default table)")

    g = p.add_argument_group("noise injection")
    how = g.add_mutually_exclusive_group()
    how.add_argument("--method", choices=_METHODS, help="the noise method")
    how.add_argument("--recipe", metavar="SPEC", help="methods and their shares of the noised "
                     "items, e.g. 'dissenting-worker:0.8,dissenting-label:0.2'")
    g.add_argument("--rate", type=float, help="share of items to noise, in [0, 1): round(rate * "
                   "n) items, halves up (required, except crowd-majority where it is a cap)")
    g.add_argument("--annotations", metavar="COLUMN", help="per-item list column of crowd "
                   "labels, plain or {\"worker\": id, \"label\": value} objects")
    g.add_argument("--annotations-file", metavar="FILE", help="long table of crowd labels "
                   "(item_id, annotator_id, label); item ids match --id (or row numbers)")
    g.add_argument("--noise-matrix", metavar="FILE", help="class-dependent: row-stochastic "
                   "matrix, CSV with clean classes as rows and noisy classes as columns, or "
                   "JSON {clean: {noisy: p}} (default: drawn at random)")
    g.add_argument("--swap-input", action="store_true", help="instance-dependent: keep the "
                   "label and swap in the nearest other-class item's text")
    g.add_argument("--sources", metavar="SPEC", help="noise sources: 'CLASS=SOURCE,...' or a "
                   "JSON file {class: source}; the rate applies per source")
    g.add_argument("--split", metavar="COLUMN", help="split column; the rate applies per split")
    g.add_argument("--summary", metavar="FILE", help="write the achieved rates and noise "
                   "matrix as JSON")

    r = p.add_argument_group("shared by instance-dependent noise and realism")
    r.add_argument("--model", help="sentence encoder (default: the packaged all-MiniLM-L6-v2)")
    r.add_argument("--cache-dir", help="embedding cache (default: ~/.cache/labelaudit)")

    q = p.add_argument_group("noise realism")
    q.add_argument("--noise-column", help="column naming each item's noise method, or a "
                   "boolean column (default: noise_method, else is_noisy)")
    q.add_argument("--scorers", default="tfidf,embed",
                   help="comma-separated scorers to cross-fit (default: tfidf,embed)")
    q.add_argument("--folds", type=at_least(2), default=5,
                   help="cross-fitting folds (default: 5)")
    q.add_argument("--plot", metavar="FILE", help="save loss histograms (.png, .pdf, .svg)")
    p.set_defaults(handler=run, noise_parser=p)


def run(args: argparse.Namespace) -> int:
    if args.input == "realism" and args.realism_input is not None:
        return _run_realism(args)
    if args.realism_input is not None:
        args.noise_parser.error(f"unexpected argument {args.realism_input!r} (did you mean "
                                f"`labelaudit noise realism {args.realism_input}`?)")
    return _run_noise(args)


# --- noise injection ------------------------------------------------------------------------

def _read_matrix(path: str):
    import pandas as pd

    from labelaudit._errors import InvalidInputError

    file = Path(path)
    if not file.is_file():
        raise InvalidInputError(f"{file}: no such noise-matrix file")
    if file.suffix.lower() == ".json":
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"{file}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise InvalidInputError(f"{file}: expected a JSON object {{clean: {{noisy: p}}}}")
        return pd.DataFrame.from_dict(data, orient="index").fillna(0.0)
    sep = "\t" if file.suffix.lower() in (".tsv", ".tab") else ","
    try:
        return pd.read_csv(file, sep=sep, index_col=0)
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{file}: cannot read the noise matrix ({exc})") from None


def _read_sources(spec: str) -> dict:
    from labelaudit._errors import InvalidInputError, InvalidParameterError

    file = Path(spec)
    if file.is_file():
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"{file}: not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise InvalidInputError(f"{file}: expected a JSON object {{class: source}}")
        return {k: str(v) for k, v in data.items()}
    mapping = {}
    for part in spec.split(","):
        name, sep, source = part.strip().partition("=")
        if not sep or not name.strip() or not source.strip():
            raise InvalidParameterError(
                f"--sources part {part.strip()!r} is not CLASS=SOURCE (or {spec!r} is not a file)")
        mapping[name.strip()] = source.strip()
    return mapping


def _run_noise(args: argparse.Namespace) -> int:
    import numpy as np

    from labelaudit._errors import InvalidInputError, InvalidParameterError
    from labelaudit.io import encode_labels, read_table
    from labelaudit.noise import inject_noise
    from labelaudit.noise._common import check_rate

    if args.method is None and args.recipe is None:
        args.noise_parser.error("give --method or --recipe")
    if args.rate is None and args.method != "crowd-majority":
        args.noise_parser.error("--rate is required (except for --method crowd-majority)")
    if args.annotations and args.annotations_file:
        args.noise_parser.error("give --annotations or --annotations-file, not both")
    if args.format not in (None, "jsonl", "csv", "tsv"):
        args.noise_parser.error(f"--format {args.format} is for `noise realism`; "
                                "the noisy data comes out as jsonl, csv or tsv")
    try:  # up front, before reading the data (an out-of-range rate stays a data-style exit 1)
        check_rate(args.rate, allow_none=True)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"--{exc}") from None
    frame = read_table(args.input)
    taken = [c for c in _ADDED if c in frame.columns]
    if taken:
        raise InvalidInputError(
            f"the input already has the column{'s' if len(taken) > 1 else ''} "
            f"{', '.join(map(repr, taken))}: is it noised already? rename or drop them")
    columns = [args.label] + [c for c in (args.id, args.text, args.text_pair, args.annotations,
                                          args.split) if c]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}; "
            f"the table has {', '.join(map(repr, map(str, frame.columns[:12])))}")
    ids = frame[args.id].to_numpy() if args.id else np.arange(len(frame))
    if args.id and frame[args.id].duplicated().any():
        raise InvalidInputError(f"column {args.id!r} has duplicate ids; ids must be unique")
    encode_labels(frame[args.label], ids, column=args.label)  # names the column in errors

    needs_text = args.method == "instance-dependent" or (
        args.recipe is not None and "instance-dependent" in args.recipe)
    if needs_text and not args.text:
        raise InvalidParameterError("instance-dependent noise needs --text")
    texts = None
    if args.text:
        texts = frame[args.text].astype(str).tolist()
        if args.text_pair:
            texts = list(zip(texts, frame[args.text_pair].astype(str).tolist(), strict=True))
    annotations = None
    if args.annotations:
        annotations = frame[args.annotations].tolist()
    elif args.annotations_file:
        annotations = read_table(args.annotations_file)
    with warnings_to_stderr(args):
        result = inject_noise(
            frame[args.label], method=args.method, recipe=args.recipe, rate=args.rate,
            random_state=args.seed, annotations=annotations, ids=ids,
            noise_matrix=_read_matrix(args.noise_matrix) if args.noise_matrix else None,
            texts=texts if needs_text else None, model=args.model, cache_dir=args.cache_dir,
            swap_input=args.swap_input,
            sources=_read_sources(args.sources) if args.sources else None,
            split=frame[args.split].tolist() if args.split else None,
            progress=show_progress(args),
        )
    out = frame.copy()
    out[args.label] = result.labels
    out["clean_label"] = result.clean_labels
    out["is_noisy"] = result.is_noisy
    out["noise_method"] = result.noise_method
    if result.sources is not None:
        out["noise_source"] = result.sources
    swapped = result.text_source >= 0
    if swapped.any():
        source_rows = result.text_source[swapped]
        for column in (args.text, args.text_pair):
            if column:
                out[f"clean_{column}"] = frame[column]
                out.loc[swapped, column] = frame[column].to_numpy()[source_rows]
        out["text_from"] = [ids[j] if j >= 0 else None for j in result.text_source.tolist()]
    _write_data(out, args)
    if args.summary:
        _write_summary(result, args)
    if not args.quiet:
        _print_summary(result)
    return 0


def _jsonable_cells(frame):
    """Lists and dicts as JSON text, so CSV cells can be read back."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object and out[column].map(
                lambda v: isinstance(v, (list, dict, tuple))).any():
            out[column] = out[column].map(
                lambda v: json.dumps(v, default=str) if isinstance(v, (list, dict, tuple)) else v)
    return out


def _write_data(frame, args: argparse.Namespace) -> None:
    from labelaudit.io import write_table

    if args.out:
        suffix = Path(args.out).suffix.lower()
        write_table(_jsonable_cells(frame) if suffix in (".csv", ".tsv") else frame, args.out)
        return
    fmt = args.format or "jsonl"
    if fmt == "jsonl":
        frame.to_json(sys.stdout, orient="records", lines=True, force_ascii=False)
    else:
        _jsonable_cells(frame).to_csv(sys.stdout, index=False, sep="\t" if fmt == "tsv" else ",")


def _summary_record(result) -> dict:
    return {
        "method": result.recipe[0][0] if len(result.recipe) == 1 else None,
        "recipe": [{"method": m, "share": s} for m, s in result.recipe],
        "requested_rate": result.rate,
        "n_requested": result.n_requested,
        "seed": result.random_state,
        "n_items": len(result.labels),
        "n_noisy": result.n_noisy,
        "achieved_rate": result.achieved_rate,
        "rates": result.summary().to_dict(orient="records"),
        "classes": result.classes.tolist(),
        "noise_matrix": result.noise_matrix.tolist(),
        "transition_counts": result.transition_counts.tolist(),
        "target_matrix": None if result.target_matrix is None else result.target_matrix.tolist(),
    }


def _write_summary(result, args: argparse.Namespace) -> None:
    from labelaudit.io import write_json

    write_json(_summary_record(result), args.summary)


def _summary_line(result) -> str:
    """What was noised: the count, the rate asked for and what it rounds to, the rate achieved."""
    what = (result.recipe[0][0] if len(result.recipe) == 1
            else ", ".join(f"{m} {s:g}" for m, s in result.recipe))
    items = f"{result.n_requested} item{'' if result.n_requested == 1 else 's'}"
    if result.rate is None:
        asked = "every disagreement"
    elif result.recipe == (("crowd-majority", 1.0),):
        asked = f"requested rate {result.rate:g} as a cap -> at most {items}"
    else:
        asked = f"requested rate {result.rate:g} -> {items}"
    swapped = int((result.text_source >= 0).sum())
    kept = f"; {swapped} by a text swap, label kept" if swapped else ""
    return (f"noised {result.n_noisy} of {len(result.labels)} items with {what} ({asked}; "
            f"achieved rate {result.achieved_rate:.4f}{kept})")


def _print_summary(result) -> None:
    import pandas as pd

    print(_summary_line(result), file=sys.stderr)
    table = result.summary()
    table["rate"] = table["rate"].map(lambda v: f"{v:.4f}")
    print_table(table, file=sys.stderr)
    names = [str(c) for c in result.classes.tolist()]
    matrix = pd.DataFrame(result.noise_matrix, index=names, columns=names).round(4)
    print("achieved noise matrix (row = clean label, column = noisy label):", file=sys.stderr)
    print(matrix.to_string(), file=sys.stderr)


# --- noise realism --------------------------------------------------------------------------

def _run_realism(args: argparse.Namespace) -> int:
    import numpy as np

    from labelaudit._errors import InvalidInputError
    from labelaudit.io import prepare_text_dataset, read_table
    from labelaudit.models import cross_val_pred_probs
    from labelaudit.noise import noise_realism, plot_loss_histograms

    injection = [flag for flag, value in (
        ("--method", args.method), ("--recipe", args.recipe), ("--rate", args.rate),
        ("--annotations", args.annotations), ("--annotations-file", args.annotations_file),
        ("--noise-matrix", args.noise_matrix), ("--swap-input", args.swap_input),
        ("--sources", args.sources), ("--split", args.split), ("--summary", args.summary))
        if value not in (None, False)]
    if injection:
        args.noise_parser.error(f"{', '.join(injection)}: not used by `noise realism`")
    if args.format not in (None, "table", "csv", "jsonl", "json"):
        args.noise_parser.error(f"--format {args.format}: realism writes table, csv, jsonl or json")
    frame = read_table(args.realism_input)
    column = args.noise_column or next(
        (c for c in ("noise_method", "is_noisy") if c in frame.columns), None)
    if column is None or column not in frame.columns:
        raise InvalidInputError(
            f"no noise column {column or 'noise_method or is_noisy'!r} in the table; name the "
            "column that marks noised items with --noise-column")
    data = prepare_text_dataset(frame, text=args.text or "text", label=args.label,
                                text_pair=args.text_pair, id=args.id)
    marks = frame[column]
    if marks.dtype == bool or set(marks.dropna().unique().tolist()) <= {True, False}:
        flags = marks.fillna(False).astype(bool).tolist()
        methods = np.array([column if flag else None for flag in flags], dtype=object)
    else:
        methods = marks.to_numpy(dtype=object)
    scorers = [s.strip() for s in args.scorers.split(",") if s.strip()]
    with warnings_to_stderr(args):
        pred_probs = cross_val_pred_probs(
            data, scorers=scorers, n_folds=args.folds, random_state=args.seed,
            progress=show_progress(args), model=args.model, cache_dir=args.cache_dir)
    if data.labels is None:  # pragma: no cover - prepare_text_dataset was given a label
        raise InvalidInputError(f"no labels in column {args.label!r}")
    result = noise_realism(data.labels, pred_probs, noise_method=methods)
    table = result.to_frame()
    if args.plot:
        plot_loss_histograms(result, args.plot, title=Path(args.realism_input).name)
    if args.out:
        from labelaudit.io import write_table

        write_table(table, args.out)
    else:
        fmt = args.format or "table"
        if fmt == "table":
            print_table(table.round(4))
        elif fmt == "csv":
            table.to_csv(sys.stdout, index=False)
        elif fmt == "jsonl":
            table.to_json(sys.stdout, orient="records", lines=True)
        else:
            table.to_json(sys.stdout, orient="records", indent=1)
            sys.stdout.write("\n")
    return 0
