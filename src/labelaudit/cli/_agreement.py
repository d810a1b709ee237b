"""``labelaudit agreement``: annotator agreement, aggregation and the gold standard's noise."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from labelaudit.cli._common import at_least, fraction, warnings_to_stderr

ORDER = 40

_EPILOG = """examples:
  labelaudit agreement crowd.jsonl --item id --annotations annotator_labels
  labelaudit agreement votes.csv --item item_id --annotator worker_id --label label --format table
  labelaudit agreement votes.csv --gold-out gold.jsonl --confidence 0.95
  labelaudit agreement compare --n 900 --noise 0.139 --delta 35
  labelaudit agreement noise --n 1000 --disagreements 100 --p-chance 0.5
  labelaudit agreement tolerate --n 1000 --p-chance 0.5 --gamma 0.05

Input is long (one row per item, annotator, label) or nested (one row per item with a list of
labels, or of {"worker": id, "label": value} objects, in --annotations). The gold standard is
the items whose top label has at least --min-share of the votes (default: unanimous); its
noise bound gamma follows Beigman Klebanov & Beigman (2009), equation 1.
"""

_SUBCOMMANDS = ("measure", "compare", "noise", "tolerate")
_METHODS = {
    "majority": "majority_vote",
    "dawid-skene": "dawid_skene",
    "glad": "glad",
    "mace": "mace",
}
_NESTED_GUESSES = ("annotator_labels", "annotations", "labels", "votes")  # agreement._read


def _share(text: str) -> float:
    """Argparse type of --min-share: a strict majority, in (0.5, 1]."""
    value = fraction(text)
    if value <= 0.5:
        raise argparse.ArgumentTypeError(f"must be in (0.5, 1] (a strict majority), got {value:g}")
    return value


def _confidence(text: str) -> float:
    """Argparse type of --confidence: in (0, 1)."""
    value = fraction(text)
    if value in (0.0, 1.0):
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {value:g}")
    return value


class _DefaultMeasureParser(argparse.ArgumentParser):
    """Treat ``agreement FILE ...`` as ``agreement measure FILE ...``."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        args = list(sys.argv[1:] if args is None else args)
        if not args:
            self.print_help(sys.stderr)
            self.exit(2)
        if args[0] not in _SUBCOMMANDS and args[0] not in ("-h", "--help"):
            args = ["measure", *args]
        return super().parse_known_args(args, namespace)


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "agreement", parents=parents,
        help="annotator agreement, label aggregation and the noise level of a gold standard",
        description="Measure agreement between annotators (observed agreement, Fleiss' kappa, "
        "Krippendorff's alpha, Cohen's kappa for two annotators, with bootstrap intervals), "
        "aggregate their labels (majority vote, Dawid-Skene, GLAD, MACE), and bound the noise "
        "of the agreed subset. `agreement FILE` is short for `agreement measure FILE`.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.__class__ = _DefaultMeasureParser
    sub = p.add_subparsers(dest="agreement_command", metavar="{measure,compare,noise,tolerate}",
                           parser_class=argparse.ArgumentParser)

    m = sub.add_parser(
        "measure", parents=parents, help="agreement report of an annotation file (the default)",
        description="Agreement, aggregation and gold-standard noise of an annotation file.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    m.add_argument("input", help="annotations: CSV, TSV, JSONL, JSON or Parquet")
    cols = m.add_argument_group("columns")
    cols.add_argument("--item", help="item-id column (default: item/item_id/task, or id when "
                      "nested)")
    cols.add_argument("--annotations", metavar="COLUMN",
                      help="nested input: the per-item list column (default: found among "
                      + ", ".join(_NESTED_GUESSES) + " when it holds lists)")
    cols.add_argument("--annotator", help="long input: annotator column (default: "
                      "annotator/annotator_id/worker; optional)")
    cols.add_argument("--label", help="long input: label column (default: label)")
    cols.add_argument("--gold", metavar="COLUMN",
                      help="column with reference labels (e.g. expert gold) for some or all items")
    m.add_argument("--method", choices=list(_METHODS), default="majority",
                   help="label aggregation (default: majority)")
    m.add_argument("--ties", choices=["random", "first", "abstain", "error"], default="random",
                   help="majority-vote ties: seeded random pick, first category, no label, or "
                   "fail (default: random)")
    m.add_argument("--min-share", type=_share, default=1.0,
                   help="share of votes the top label needs for the gold standard, in (0.5, 1] "
                   "(default: 1, unanimous)")
    m.add_argument("--confidence", type=_confidence, default=0.95,
                   help="confidence of the intervals and of the noise bound (default: 0.95)")
    m.add_argument("--p-chance", type=fraction,
                   help="chance agreement on a hard item (default: estimated from the labels on "
                   "disagreed items, the paper's footnote 3)")
    m.add_argument("--p-method", choices=["annotators", "pooled"], default="annotators",
                   help="estimate p with one coin per annotator or one pooled coin "
                   "(default: annotators)")
    m.add_argument("--level", choices=["nominal", "ordinal", "interval", "ratio"],
                   default="nominal", help="Krippendorff's alpha level (default: nominal)")
    m.add_argument("--bootstrap", type=at_least(0), default=1000, metavar="N",
                   help="bootstrap replicates for the intervals, 0 for none (default: 1000)")
    m.add_argument("--random-state", type=at_least(0), default=0, help="seed (default: 0)")
    m.add_argument("--drop-single", action="store_true",
                   help="drop items with fewer than 2 annotations instead of failing")
    m.add_argument("--format", choices=["table", "json", "csv", "jsonl"],
                   help="report format on stdout or --out (default: table on a terminal, "
                   "else json); csv/jsonl give the statistics table")
    m.add_argument("--out", help="write the report here instead of stdout (atomic)")
    m.add_argument("--gold-out", metavar="FILE",
                   help="write the agreed items with their label (format by suffix) and a "
                   "FILE-stem.noise.json sidecar with gamma")
    m.add_argument("--items-out", metavar="FILE",
                   help="write one row per item: aggregated label, support, agreement, tied")
    m.add_argument("--annotators-out", metavar="FILE",
                   help="write one row per annotator: labels, agreement with the majority, "
                   "quality, gold accuracy")
    m.set_defaults(handler=run_measure)

    c = sub.add_parser(
        "compare", parents=parents,
        help="can a difference between two systems on a noisy gold standard be chance?",
        description="Section 4.1 of Beigman Klebanov & Beigman (2009): on L items of which R "
        "are noise, two systems equal on the easy items differ by chance by S with sigma = "
        "sqrt(R/2); Chebyshev and normal bounds at the chosen confidence.",
    )
    c.add_argument("--n", type=at_least(1), required=True, help="L, items in the gold standard")
    noise = c.add_mutually_exclusive_group(required=True)
    noise.add_argument("--noise", type=fraction, help="gamma, the noise rate (R = round(gamma*L))")
    noise.add_argument("--noise-items", type=at_least(0),
                       help="R, the number of noise items (at most --n)")
    c.add_argument("--delta", type=int, help="observed difference in correct answers (its size "
                   "at most --n)")
    c.add_argument("--confidence", type=_confidence, default=0.95, help="(default: 0.95)")
    c.add_argument("--format", choices=["table", "json"], help="default: table on a terminal")
    c.add_argument("--out", help="write here instead of stdout (atomic)")
    c.set_defaults(handler=run_compare, usage_error=c.error)

    nz = sub.add_parser(
        "noise", parents=parents,
        help="noise bound gamma of the agreed subset from n, d and p (equation 1)",
        description="Upper bound gamma on the share of hard items among the n - d agreed "
        "ones, at the given confidence (Beigman Klebanov & Beigman 2009, equation 1).",
    )
    nz.add_argument("--n", type=at_least(1), required=True, help="items annotated")
    nz.add_argument("--disagreements", "-d", type=at_least(0), required=True,
                    help="items disagreed on (at most --n)")
    nz.add_argument("--p-chance", type=fraction, required=True,
                    help="chance agreement on a hard item (0.5 for 2 annotators, 2 classes)")
    nz.add_argument("--confidence", type=_confidence, default=0.95, help="(default: 0.95)")
    nz.add_argument("--format", choices=["table", "json"], help="default: table on a terminal")
    nz.add_argument("--out", help="write here instead of stdout (atomic)")
    nz.set_defaults(handler=run_noise, usage_error=nz.error)

    t = sub.add_parser(
        "tolerate", parents=parents,
        help="how many disagreements keep the agreed subset's noise at most gamma",
        description="The largest number of disagreements d with a noise bound of at most "
        "--gamma at --confidence (the inverse of `agreement noise`).",
    )
    t.add_argument("--n", type=at_least(1), required=True, help="items annotated")
    t.add_argument("--p-chance", type=fraction, required=True,
                   help="chance agreement on a hard item")
    t.add_argument("--gamma", type=fraction, default=0.05, help="target noise (default: 0.05)")
    t.add_argument("--confidence", type=_confidence, default=0.95, help="(default: 0.95)")
    t.add_argument("--format", choices=["table", "json"], help="default: table on a terminal")
    t.add_argument("--out", help="write here instead of stdout (atomic)")
    t.set_defaults(handler=run_tolerate)
    p.set_defaults(handler=None)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen sub-subcommand."""
    return int(args.handler(args) or 0)


# ---------------------------------------------------------------------------- helpers


def _emit(text: str, out: str | None) -> None:
    if out:
        from labelaudit.io import atomic_path

        with atomic_path(out) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _log(args: argparse.Namespace, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"labelaudit agreement: {message}", file=sys.stderr)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    return "table" if (args.out is None and sys.stdout.isatty()) else "json"


def _json(obj: object, *, indent: int | None = 2) -> str:
    def default(value: object) -> object:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
        raise TypeError(f"not JSON serialisable: {type(value).__name__}")

    def clean(value: object) -> object:
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, dict):
            return {str(k): clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    return json.dumps(clean(obj), indent=indent, default=default, ensure_ascii=False) + "\n"


def _pct(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _num(x: float) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _render_table(report, *, source: str, method_flag: str, ties: str) -> str:
    import pandas as pd

    lines = []
    per = report.annotations_per_item
    who = (f"{report.n_annotators} annotators" if report.n_annotators is not None
           else "annotators unknown")
    lines.append(f"{source}: {report.n_items} items, {report.n_annotations} annotations "
                 f"({per[1]:.1f} per item, min {per[0]}, max {per[2]}), {who}, "
                 f"classes {', '.join(map(str, report.classes))}")
    lines.append("")
    ci = f"{100 * report.confidence:g}% CI" if report.n_bootstrap else "CI"
    stats = pd.DataFrame(
        [(e.name, _num(e.value),
          "" if math.isnan(e.ci_low) else f"[{e.ci_low:.3f}, {e.ci_high:.3f}]")
         for e in report.statistics],
        columns=["statistic", "value", ci],
    )
    lines.append(stats.to_string(index=False))
    lines.append("")
    agg = report.aggregation
    tie_note = f", {int(agg.tied.sum())} tied items" + (
        f" (ties: {ties})" if agg.method == "majority_vote" else "")
    lines.append(f"aggregation: {method_flag}{tie_note}")
    gold = report.gold.summary()
    kind = "unanimous" if gold["min_share"] >= 1 else f"top label >= {gold['min_share']:g}"
    lines.append(f"gold standard ({kind}): {gold['n_agreed']} of {gold['n_items']} items "
                 f"agreed, {gold['n_disagreed']} disagreed")
    lines.append(f"  p, chance agreement on a hard item = {gold['p_chance']:.4g} "
                 f"({gold['p_method']})")
    lines.append(f"  noise bound gamma = {_pct(gold['gamma'])} at {100 * gold['confidence']:g}% "
                 f"confidence (up to {gold['hidden_hard']} hard items among the "
                 f"{gold['n_agreed']} agreed)")
    if report.gold_labels is not None and gold["n_agreed"]:
        in_gold = pd.Index(report.gold.items)
        sel = pd.Index(agg.items).isin(in_gold)
        ref = report.gold_labels[sel]
        agreed_labels = pd.Series(report.gold.labels, index=report.gold.items)
        lab = agreed_labels.reindex(agg.items[sel]).to_numpy(dtype=object)
        has = [r is not None for r in ref]
        if any(has):
            wrong = sum(1 for a, r, h in zip(lab, ref, has, strict=True) if h and a != r)
            lines.append(f"  against the reference labels: {wrong} of {sum(has)} agreed items "
                         f"disagree ({_pct(wrong / sum(has))})")
    table = report.annotator_table
    if len(table):
        lines.append("")
        shown = table.sort_values(["n_labels", "annotator"], ascending=[False, True]).head(10)
        title = "annotators" + (f" (10 of {len(table)}, most labels first)"
                                if len(table) > 10 else "")
        lines.append(title)
        fmt = shown.copy()
        for col in ("agreement_with_majority", "quality", "gold_accuracy"):
            if col in fmt:
                fmt[col] = fmt[col].map(_num)
        lines.append(fmt.to_string(index=False))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- commands


def run_measure(args: argparse.Namespace) -> int:
    with warnings_to_stderr(args):  # what was dropped: empty labels, empty lists, --drop-single
        return _measure(args)


def _measure(args: argparse.Namespace) -> int:
    import pandas as pd

    from labelaudit.agreement import agreement_report
    from labelaudit.agreement._read import read_annotation_file
    from labelaudit.io import write_json, write_table

    data = read_annotation_file(args.input, item=args.item, annotations=args.annotations,
                                annotator=args.annotator, label=args.label, gold=args.gold)
    long, item_col, gold = data.long, data.item_column, data.gold
    method = _METHODS[args.method]
    if method in ("glad", "mace"):
        _log(args, f"fitting {args.method} (can take a minute on large files)")
    report = agreement_report(
        long,
        item="item",
        annotator="annotator" if "annotator" in long.columns else None,
        label="label",
        gold=gold,
        method=method,  # type: ignore[arg-type]
        ties=args.ties,
        min_share=args.min_share,
        confidence=args.confidence,
        p_chance=args.p_chance,
        p_method=args.p_method,
        level=args.level,
        n_bootstrap=args.bootstrap,
        drop_single=args.drop_single,
        random_state=args.random_state,
    )
    fmt = _format(args)
    if fmt == "table":
        text = _render_table(report, source=Path(args.input).name, method_flag=args.method,
                             ties=args.ties)
    elif fmt == "json":
        text = _json(report.to_dict())
    elif fmt == "csv":
        text = report.to_frame().to_csv(index=False)
    else:
        text = "".join(_json(row, indent=None) for row in report.to_frame().to_dict("records"))
    _emit(text, args.out)

    if args.items_out:
        items = report.items_frame().rename(columns={"item": item_col})
        write_table(items, args.items_out)
        _log(args, f"wrote {len(items)} items to {args.items_out}")
    if args.annotators_out:
        write_table(report.annotator_table, args.annotators_out)
        _log(args, f"wrote {len(report.annotator_table)} annotators to {args.annotators_out}")
    if args.gold_out:
        gold_frame = report.gold.to_frame().rename(
            columns={"item": item_col, "label": "gold_label"})
        if data.nested_column is not None:
            frame, nested_col = data.frame, data.nested_column
            extra = frame.drop(columns=[c for c in frame.columns
                                        if c == nested_col or c in gold_frame.columns])
            extra[item_col] = frame[item_col]
            gold_frame = gold_frame.merge(extra, on=item_col, how="left")
        target = Path(args.gold_out)
        sidecar = target.with_suffix(".noise.json")
        meta = {"source": str(args.input), "gold_file": target.name,
                **report.gold.summary()}
        write_table(pd.DataFrame(gold_frame), target)
        write_json(meta, sidecar)
        _log(args, f"wrote {len(gold_frame)} agreed items to {target} (gamma "
             f"{_pct(meta['gamma'])} at {100 * args.confidence:g}% confidence; see {sidecar})")
    return 0


def _kv_table(rows: list[tuple[str, object]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k:<{width}}  {v}\n" for k, v in rows)


def run_compare(args: argparse.Namespace) -> int:
    from labelaudit.agreement import chance_difference

    if args.noise_items is not None and args.noise_items > args.n:
        args.usage_error(f"--noise-items {args.noise_items} is more than --n {args.n}: at most "
                         "every item of the gold standard is noise")
    if args.delta is not None and abs(args.delta) > args.n:
        args.usage_error(f"--delta {args.delta} is larger in size than --n {args.n}: two systems' "
                         f"correct answers on {args.n} items differ by at most {args.n}")

    res = chance_difference(args.n, n_noise=args.noise_items, noise_rate=args.noise,
                            delta=args.delta, confidence=args.confidence)
    if _format(args) == "json":
        _emit(_json(res.to_dict()), args.out)
        return 0
    conf = f"{100 * res.confidence:g}%"
    rows: list[tuple[str, object]] = [
        ("items (L)", res.n_items),
        ("noise items (R)", f"{res.n_noise} ({_pct(res.noise_rate)})"),
        ("sigma = sqrt(R/2)", f"{res.sigma:.2f}"),
        (f"chance difference, Chebyshev {conf}",
         f"{res.chebyshev_bound:.1f} ({_pct(res.chebyshev_bound / res.n_items)} of L)"),
        (f"chance difference, normal {conf}",
         f"{res.normal_bound:.1f} ({_pct(res.normal_bound / res.n_items)} of L)"),
    ]
    if res.delta is not None:
        rows.append(("observed difference", res.delta))
        rows.append(("P(|S| >= delta), exact", f"{res.p_exact:.3g}"))
        rows.append(("verdict, Chebyshev (the paper)",
                     "can be chance" if res.can_be_chance else "larger than chance"))
        rows.append((f"verdict, exact tail at {conf}",
                     "can be chance" if res.can_be_chance_exact else "larger than chance"))
    _emit(_kv_table(rows), args.out)
    return 0


def run_noise(args: argparse.Namespace) -> int:
    from labelaudit.agreement import noise_bound

    if args.disagreements > args.n:
        args.usage_error(f"--disagreements {args.disagreements} is more than --n {args.n} items")

    res = noise_bound(args.n, args.disagreements, args.p_chance, confidence=args.confidence)
    if _format(args) == "json":
        _emit(_json(res.to_dict()), args.out)
        return 0
    rows: list[tuple[str, object]] = [
        ("items (n)", res.n_items),
        ("disagreed (d)", res.n_disagreed),
        ("agreed", res.n_agreed),
        ("p, chance agreement on a hard item", res.p_chance),
        ("confidence", res.confidence),
        ("hard items at most (t0)", res.max_hard),
        ("hard items hidden among the agreed", res.hidden_hard),
        ("gamma, noise of the agreed subset", _pct(res.gamma)),
    ]
    _emit(_kv_table(rows), args.out)
    return 0


def run_tolerate(args: argparse.Namespace) -> int:
    from labelaudit.agreement import tolerable_disagreements

    d = tolerable_disagreements(args.n, args.p_chance, gamma=args.gamma,
                                confidence=args.confidence)
    result = {"n_items": args.n, "p_chance": args.p_chance, "gamma": args.gamma,
              "confidence": args.confidence, "max_disagreements": d}
    if _format(args) == "json":
        _emit(_json(result), args.out)
        return 0
    rows: list[tuple[str, object]] = [
        ("items (n)", args.n),
        ("p, chance agreement on a hard item", args.p_chance),
        ("target gamma", _pct(args.gamma)),
        ("confidence", args.confidence),
        ("most disagreements tolerated", d if d >= 0 else "none (even 0 exceeds gamma)"),
    ]
    _emit(_kv_table(rows), args.out)
    return 0
