"""``labelaudit evaluate``: measure a scan's rankings against known label errors."""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import dataclass
from typing import Any

from labelaudit.cli._common import at_least, print_table, warnings_to_stderr

ORDER = 30

_EPILOG = """examples:
  labelaudit evaluate issues.csv --truth truth.csv --id id --is-error is_error
  labelaudit evaluate issues.csv --truth truth.csv --true-label gold --unknown exclude
  labelaudit evaluate issues.csv --truth truth.csv --error-rate 0.05 --plot pr.png --format table

Every column named score_<method> (lower = more suspect) is one row of the output; choose
others with --scores. Items the truth leaves blank are unverified: --unknown says whether
to leave them out (exclude) or count them as clean; it is required when there are any.

--n-errors cannot exceed the number of items. An --at-k cut-off beyond the items evaluated
is clipped to them (p@k is then the error rate, r@k the share of errors found by checking
everything) and a warning says so.
"""

_TRUE = {"true", "t", "yes", "y", "1", "1.0"}
_FALSE = {"false", "f", "no", "n", "0", "0.0"}


class CutoffWarning(UserWarning):
    """An --at-k cut-off beyond the items evaluated was clipped to them."""


def _error_rate(text: str) -> float:
    """Argparse type of --error-rate: a share in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value:g}")
    return value


def _cutoffs(text: str) -> list[int]:
    """Argparse type of --at-k: comma-separated positive integers."""
    try:
        ks = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated integers, e.g. 10,50; got {text!r}") from None
    if not ks or any(k < 1 for k in ks):
        raise argparse.ArgumentTypeError(f"cut-offs must be positive integers; got {text!r}")
    return list(dict.fromkeys(ks))


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "evaluate", parents=parents,
        help="measure how well a scan's rankings find known label errors",
        description="Join a scan output with a truth file by id and report, for every score "
        "column, AUPR (trapezoidal), average precision, precision and recall at the number "
        "of errors (P,R@Err%), recall at twice that (R@2*Err%) and ROC AUC.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("issues", help="the scan output (CSV, TSV, JSONL, JSON, Parquet)")
    p.add_argument("--truth", required=True, help="file with the known errors, keyed by id")
    p.add_argument("--id", default="id", help="id column in both files (default: id)")
    truth = p.add_mutually_exclusive_group()
    truth.add_argument("--is-error", metavar="COLUMN",
                       help="truth column that is true for wrong labels, blank for unverified "
                       "(default: is_error, else --true-label true_label)")
    truth.add_argument("--true-label", metavar="COLUMN",
                       help="truth column with the correct label, compared with --label; "
                       "blank for unverified")
    p.add_argument("--label", default="label",
                   help="given-label column of the scan output, for --true-label (default: label)")
    p.add_argument("--scores", metavar="COLUMNS",
                   help="comma-separated score columns, lower = more suspect "
                   "(default: every score_* column)")
    p.add_argument("--unknown", choices=["exclude", "clean"],
                   help="unverified items (blank truth, or scan ids missing from the truth "
                   "file): leave them out, or count them as clean")
    p.add_argument("--partial-ranking", action="store_true",
                   help="the scan output lists only some items (a flagged list): truth items "
                   "missing from it rank after every listed item, tied")
    estimate = p.add_mutually_exclusive_group()
    estimate.add_argument("--error-rate", type=_error_rate, metavar="RATE",
                          help="estimated share of errors in the whole set, when only part "
                          "was verified: sets k of the @Err metrics and the recall denominator")
    estimate.add_argument("--n-errors", type=at_least(1), metavar="N",
                          help="estimated number of errors in the whole set (as --error-rate); "
                          "at most the number of items")
    p.add_argument("--at-k", metavar="K,...", type=_cutoffs, default=[],
                   help="also report precision and recall at these cut-offs, e.g. 10,50 "
                   "(a cut-off beyond the items evaluated is clipped to them, with a warning)")
    p.add_argument("--out", "-o", help="write the metrics: .json (a document with the "
                   "options used) or .csv .tsv .jsonl .parquet (the table)")
    p.add_argument("--plot", metavar="FILE", help="precision-recall curves, .png or .svg")
    p.add_argument("--format", choices=["table", "csv", "jsonl", "json"], default="table",
                   help="stdout format (default: table)")
    p.set_defaults(handler=run)


@dataclass(frozen=True)
class _Joined:
    ids: list[Any]
    is_error: Any  # float ndarray, NaN = unverified
    scores: dict[str, Any]  # method -> float ndarray
    n_missing_truth: int


def _plain(value: object) -> object:
    """A value as the user wrote it: numpy scalars as plain numbers (68, not np.int64(68))."""
    if hasattr(value, "item") and hasattr(value, "dtype"):
        value = value.item()  # type: ignore[union-attr]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _key(value: object) -> object:
    """Normalise an id or a label read from different formats: 7, 7.0 and "7" agree."""
    value = _plain(value)
    if isinstance(value, bool):
        return str(value)
    return str(value).strip()


def _format_ids(keys: list[object], shown: dict[object, object] | None = None) -> str:
    """The first few ids as the files spell them: ``ids 68, 70`` or ``id 'item3'``."""
    from labelaudit._errors import format_rows

    return "id" + format_rows([(shown or {}).get(k, k) for k in keys])[3:]


def _is_missing(value: object) -> bool:
    import pandas as pd

    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def _require(frame, columns: list[str], path: str) -> None:
    from labelaudit._errors import InvalidInputError

    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"{path}: no column {', '.join(map(repr, missing))}; it has "
            f"{', '.join(map(repr, map(str, frame.columns[:15])))}"
        )


def _unique_keys(frame, column: str, path: str, shown: dict[object, object]) -> list[object]:
    """The normalised ids of ``column``; ``shown`` maps each to its value for messages."""
    from labelaudit._errors import InvalidInputError, format_rows

    values = frame[column].tolist()
    blank = [i for i, v in enumerate(values) if _is_missing(v)]
    if blank:
        raise InvalidInputError(f"{path}: column {column!r} is blank in {format_rows(blank)}")
    keys = [_key(v) for v in values]
    for k, v in zip(keys, values, strict=True):
        shown.setdefault(k, _plain(v))
    seen: set[object] = set()
    duplicated = sorted({k for k in keys if k in seen or seen.add(k)}, key=str)  # type: ignore[func-returns-value]
    if duplicated:
        raise InvalidInputError(
            f"{path}: duplicate ids in column {column!r}: {_format_ids(duplicated, shown)}; "
            "each item must appear once"
        )
    return keys


def _parse_is_error(values: list[object], ids: list[object], column: str, path: str,
                    shown: dict[object, object]):
    import numpy as np

    from labelaudit._errors import InvalidInputError

    out = np.full(len(values), np.nan)
    bad = []
    for i, value in enumerate(values):
        if _is_missing(value):
            continue
        text = str(value).strip().lower()
        if isinstance(value, bool) or text in _TRUE | _FALSE:
            out[i] = 1.0 if (value is True or text in _TRUE) else 0.0
        elif text == "":
            continue
        else:
            bad.append(ids[i])
    if bad:
        raise InvalidInputError(
            f"{path}: column {column!r} must be true/false (or 1/0, blank for unverified); "
            f"other values at {_format_ids(bad, shown)}"
        )
    return out


def _kinds(values: list[object]) -> str:
    """The Python types of some labels, e.g. ``int`` or ``str and int``."""
    names = sorted({type(_plain(v)).__name__ for v in values})
    return " and ".join(names)


def _examples(values: list[object], limit: int = 3) -> str:
    distinct = list(dict.fromkeys(_plain(v) for v in values))
    shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in distinct[:limit])
    return shown + (", ..." if len(distinct) > limit else "")


def _check_same_labels(given: list[object], true: list[object], column: str,
                       args: argparse.Namespace) -> None:
    """Refuse given and true labels that share no value: every item would be an error."""
    from labelaudit._errors import InvalidInputError

    if not given or {_key(v) for v in given} & {_key(v) for v in true}:
        return
    raise InvalidInputError(
        f"the given labels (--label {args.label!r} of {args.issues}: {_examples(given)}; "
        f"{_kinds(given)}) and the true labels (--true-label {column!r} of {args.truth}: "
        f"{_examples(true)}; {_kinds(true)}) share no value, so every item would count as an "
        "error; write both columns with the same label values (both class names or both "
        "class numbers)"
    )


def _score_columns(frame, wanted: str | None, path: str) -> dict[str, str]:
    from labelaudit._errors import InvalidInputError

    if wanted:
        columns = [c.strip() for c in wanted.split(",") if c.strip()]
        _require(frame, columns, path)
    else:
        columns = [c for c in frame.columns if str(c).startswith("score_")]
        if not columns and "rank" in frame.columns:
            columns = ["rank"]
        if not columns:
            raise InvalidInputError(
                f"{path}: no score_* or rank column to evaluate; name the columns with --scores "
                "(lower = more suspect)"
            )
    return {(c[len("score_"):] if c.startswith("score_") else c): c for c in columns}


def _join(args: argparse.Namespace) -> tuple[_Joined, str]:
    import numpy as np

    from labelaudit._errors import InvalidInputError
    from labelaudit.io import read_table

    issues = read_table(args.issues)
    truth = read_table(args.truth)
    _require(issues, [args.id], args.issues)
    _require(truth, [args.id], args.truth)
    mode = ""
    column: str = ""
    if args.is_error:
        mode, column = "is_error", args.is_error
    elif args.true_label:
        mode, column = "true_label", args.true_label
    else:
        if "is_error" in truth.columns:
            mode, column = "is_error", "is_error"
        elif "true_label" in truth.columns:
            mode, column = "true_label", "true_label"
        else:
            raise InvalidInputError(
                f"{args.truth}: no is_error or true_label column; name the truth column with "
                "--is-error COLUMN or --true-label COLUMN"
            )
    _require(truth, [column], args.truth)
    if mode == "true_label":
        _require(issues, [args.label], args.issues)
    methods = _score_columns(issues, args.scores, args.issues)

    shown: dict[object, object] = {}  # id key -> the id as the files spell it
    issue_keys = _unique_keys(issues, args.id, args.issues, shown)
    truth_keys = _unique_keys(truth, args.id, args.truth, shown)
    truth_row = {k: i for i, k in enumerate(truth_keys)}
    issue_row = {k: i for i, k in enumerate(issue_keys)}
    common = [k for k in issue_keys if k in truth_row]
    if not common:
        raise InvalidInputError(
            f"no id of {args.issues} is in {args.truth} (column {args.id!r}); "
            "check --id and that both files describe the same items"
        )
    only_issues = [k for k in issue_keys if k not in truth_row]
    only_truth = [k for k in truth_keys if k not in issue_row]
    if only_issues and args.unknown is None:
        raise InvalidInputError(
            f"{len(only_issues)} ids of {args.issues} are not in {args.truth}: "
            f"{_format_ids(only_issues, shown)}; pass --unknown exclude or --unknown clean to "
            "treat them as unverified"
        )
    if only_truth and not args.partial_ranking:
        raise InvalidInputError(
            f"{len(only_truth)} ids of {args.truth} are not in {args.issues}: "
            f"{_format_ids(only_truth, shown)}; pass --partial-ranking if the scan output lists "
            "only its most suspect items"
        )

    ids = issue_keys + only_truth
    truth_values = truth[column].tolist()
    if mode == "is_error":
        raw = [truth_values[truth_row[k]] if k in truth_row else None for k in ids]
        is_error = _parse_is_error(raw, ids, column, args.truth, shown)
    else:
        given = issues[args.label].tolist()
        pairs: list[tuple[int, object, object]] = []  # (position, given label, true label)
        for i, k in enumerate(ids[:len(issue_keys)]):
            if k in truth_row and not _is_missing(truth_values[truth_row[k]]):
                pairs.append((i, given[issue_row[k]], truth_values[truth_row[k]]))
        if only_truth:
            # the given labels of unlisted items are in the truth file or nowhere
            if args.label not in truth.columns:
                raise InvalidInputError(
                    f"--partial-ranking with --true-label needs the given label of unlisted "
                    f"items: add a {args.label!r} column to {args.truth}"
                )
            labels = truth[args.label].tolist()
            for i, k in enumerate(ids[len(issue_keys):], start=len(issue_keys)):
                if not _is_missing(truth_values[truth_row[k]]):
                    pairs.append((i, labels[truth_row[k]], truth_values[truth_row[k]]))
        no_label = [i for i, given_value, _ in pairs if _is_missing(given_value)]
        if no_label:
            listed = no_label[0] < len(issue_keys)  # blank in the scan output, else in the truth
            same = [ids[i] for i in no_label if (i < len(issue_keys)) == listed]
            raise InvalidInputError(
                f"{args.issues if listed else args.truth}: column {args.label!r} is blank at "
                f"{_format_ids(same, shown)}; "
                "every verified item needs its given label")
        _check_same_labels([g for _, g, _ in pairs], [t for _, _, t in pairs], column, args)
        is_error = np.full(len(ids), np.nan)
        for i, given_value, true_value in pairs:
            is_error[i] = float(_key(given_value) != _key(true_value))

    scores: dict[str, Any] = {}
    for method, col in methods.items():
        try:
            values = issues[col].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"{args.issues}: score column {col!r} is not numeric") from None
        blank = np.flatnonzero(~np.isfinite(values))
        if blank.size:
            raise InvalidInputError(
                f"{args.issues}: score column {col!r} is blank or not finite at "
                f"{_format_ids([issue_keys[i] for i in blank], shown)}"
            )
        last = values.max() + 1.0 if values.size else 0.0
        scores[method] = np.r_[values, np.full(len(only_truth), last)]
    return _Joined(ids=ids, is_error=is_error, scores=scores,
                   n_missing_truth=len(only_issues)), mode


def _n_errors(args: argparse.Namespace, n_items: int, observed: int) -> int | None:
    """The estimated number of errors, checked against the items and the truth."""
    from labelaudit._errors import InvalidParameterError

    n_errors = args.n_errors
    if n_errors is not None and n_errors > n_items:
        raise InvalidParameterError(
            f"--n-errors {n_errors} is more than the {n_items} items in {args.issues} and "
            f"{args.truth}: there cannot be more errors than items; give at most {n_items} "
            "(or --error-rate, a share of the items)"
        )
    if args.error_rate is not None:
        n_errors = max(1, round(args.error_rate * n_items))
    if n_errors is not None and n_errors < observed:
        raise InvalidParameterError(
            f"the estimated number of errors ({n_errors}) is smaller than the {observed} "
            "errors the truth marks; raise --error-rate/--n-errors or drop it"
        )
    return n_errors


def _warn_clipped(ks: list[int], n_evaluated: int) -> None:
    """Say which --at-k cut-offs exceed the items evaluated (the metrics clip them)."""
    beyond = [k for k in ks if k > n_evaluated]
    if beyond:
        names = ", ".join(str(k) for k in beyond)
        warnings.warn(CutoffWarning(
            f"--at-k {names}: more than the {n_evaluated} items evaluated, so p@k and r@k "
            f"there are those of all {n_evaluated} items (the cut-off is clipped)"
        ), stacklevel=2)


def run(args: argparse.Namespace) -> int:
    with warnings_to_stderr(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from labelaudit._errors import InvalidInputError
    from labelaudit.io import write_json, write_table
    from labelaudit.metrics import (
        detection_report,
        plot_precision_recall,
        precision_at_k,
        precision_recall_curve,
        recall_at_k,
    )

    ks: list[int] = args.at_k
    joined, mode = _join(args)
    unknown_mask = np.isnan(joined.is_error)
    n_unknown = int(unknown_mask.sum())
    if n_unknown and args.unknown is None:
        raise InvalidInputError(
            f"the truth leaves {n_unknown} of {len(joined.ids)} items unverified (blank); pass "
            "--unknown exclude to leave them out or --unknown clean to count them as clean"
        )
    observed = int(np.nansum(joined.is_error))
    n_errors = _n_errors(args, len(joined.ids), observed)
    unknown = args.unknown
    _warn_clipped(ks, len(joined.ids) - (n_unknown if unknown == "exclude" else 0))

    rows = []
    curves = {}
    for method, scores in joined.scores.items():
        report = detection_report(joined.is_error, scores, unknown=unknown, n_errors=n_errors)
        row: dict[str, Any] = {"method": method, **report.to_dict()}
        for k in ks:
            row[f"precision_at_{k}"] = precision_at_k(joined.is_error, scores, k=k,
                                                      unknown=unknown)
            row[f"recall_at_{k}"] = recall_at_k(joined.is_error, scores, k=k, unknown=unknown,
                                                n_errors=n_errors)
        rows.append(row)
        if args.plot:
            curves[method] = precision_recall_curve(joined.is_error, scores, unknown=unknown,
                                                    n_errors=n_errors)
    table = pd.DataFrame(rows)

    if args.format == "table":
        shown = table.rename(columns={
            "average_precision": "ap", "precision_at_err": "p@err", "recall_at_err": "r@err",
            "recall_at_2err": "r@2err", "n_unknown": "unverified",
            **{f"precision_at_{k}": f"p@{k}" for k in ks},
            **{f"recall_at_{k}": f"r@{k}" for k in ks},
        }).fillna({"unknown": "-"})
        print_table(shown.round(4))
    elif args.format == "csv":
        table.to_csv(sys.stdout, index=False)
    elif args.format == "jsonl":
        table.to_json(sys.stdout, orient="records", lines=True)
    else:
        print(table.to_json(orient="records", indent=1))

    if args.out:
        if args.out.lower().endswith(".json"):
            write_json({
                "issues": str(args.issues), "truth": str(args.truth),
                "truth_from": mode, "unknown": unknown, "n_unverified": n_unknown,
                "n_scan_ids_missing_from_truth": joined.n_missing_truth,
                "n_errors_estimate": n_errors,
                "metrics": [{k: (None if isinstance(v, float) and math.isnan(v) else v)
                             for k, v in row.items()} for row in rows],
            }, args.out)
        else:
            write_table(table, args.out)
    if args.plot:
        plot_precision_recall(curves, args.plot, title=f"{args.issues} vs {args.truth}")
    if not args.quiet:
        note = f", {n_unknown} unverified ({unknown})" if n_unknown else ""
        estimate = f", {n_errors} estimated in all" if n_errors is not None else ""
        print(f"evaluated {len(joined.ids)} items: {observed} known errors{estimate}{note}; "
              f"{len(rows)} method{'s' if len(rows) != 1 else ''}", file=sys.stderr)
        for path in (args.out, args.plot):
            if path:
                print(f"wrote {path}", file=sys.stderr)
    return 0
