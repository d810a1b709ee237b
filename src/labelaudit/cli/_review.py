"""``labelaudit review``: the human verification loop, from flags to a corrected dataset.

Arguments, one :mod:`labelaudit.review` call per step, and output; the work is done there.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from labelaudit.cli import _common as cli
from labelaudit.io import emit_report
from labelaudit.review import (
    apply_verdicts_file,
    export_items,
    import_answers,
    init_review,
    invite_reviewer,
    open_server,
    pull_answers,
    push_items,
    review_results,
    review_status,
)


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    parser = cli.add_command(subparsers, "review", parents, handler=None)
    sub = cli.add_steps(parser, dest="review_command", metavar="STEP", required=True)

    # -- init
    p = _step(sub, parents, "init", run_init)
    p.add_argument("scan", help="scan output: id, text, [text_pair,] label, suggested_label, "
                   "suggested_prob, rank, score_*, flagged")
    p.add_argument("--rank-by", metavar="COLUMN",
                   help="order the items by this numeric column, ascending (the lowest value "
                   "is the most suspect), instead of the scan's rank. Without an id column, ids "
                   "are row numbers (0-based), as scan makes them")
    p.add_argument("--top", type=cli.at_least(0),
                   help="items to review (default: every flagged item)")
    p.add_argument("--select", choices=("top", "random"), default="top",
                   help="review the most suspect items, or a random sample of the flagged ones "
                   "(unbiased error estimate); default top")
    p.add_argument("--reviewers", dest="n_reviewers", metavar="N", type=cli.at_least(0),
                   default=5, help="reviewers per item (5)")
    p.add_argument("--majority", type=cli.at_least(0),
                   help="votes needed for a verdict (default: more than half, 3 of 5)")
    p.add_argument("--sentinels", dest="n_sentinels", metavar="N", type=cli.at_least(0),
                   default=0, help="known-answer items mixed into each reviewer's queue")
    p.add_argument("--sentinels-file", help="known items (id, text, [text_pair,] label); "
                   "the first --qualification rows form the qualification test")
    p.add_argument("--qualification", dest="n_qualification", metavar="N",
                   type=cli.at_least(0),
                   help="qualification questions (default 4 when known items exist, else 0)")
    p.add_argument("--pass-mark", type=cli.fraction, default=0.75,
                   help="share of qualification answers that must be right (0.75)")
    p.add_argument("--sentinel-threshold", type=cli.fraction, default=0.7,
                   help="suspend a reviewer whose sentinel accuracy falls below this (0.7)")
    p.add_argument("--min-sentinels", type=cli.at_least(0), default=3,
                   help="sentinels answered before suspension can apply (3)")
    p.add_argument("--sentinel-every", type=cli.at_least(0),
                   help="a sentinel after every K review answers (default: spread evenly)")
    p.add_argument("--show-label", action="store_true",
                   help="show reviewers the given label (default: blind)")
    p.add_argument("--labels", type=cli.comma_list,
                   help="the label set, comma-separated (default: every label seen)")
    p.add_argument("--n-flagged", type=cli.at_least(0),
                   help="flagged items in the whole dataset (default: the flagged column)")
    p.add_argument("--score-column", help="score column to keep (default: the first score_*)")
    p.add_argument("--title", default="Label review", help="title shown to reviewers")
    p.add_argument("--instructions", default="", help="instructions shown above each item")
    cli.add_seed(p, help="random seed of --select random (default: 0)")

    # -- invite
    p = _step(sub, parents, "invite", run_invite)
    p.add_argument("--name", required=True, help="the reviewer's name")
    p.add_argument("--admin", action="store_true", help="an admin: sees /admin, reviews nothing")
    p.add_argument("--new-token", action="store_true",
                   help="replace an existing reviewer's link (the old one stops working)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--base-url", metavar="URL",
                       help="the address reviewers open, e.g. https://review.example.org behind "
                       "a proxy (default: as described above)")
    where.add_argument("--port", type=cli.at_least(1, 65535),
                       help="the port `review serve --port` runs on: the link is "
                       "http://127.0.0.1:PORT (or the serve host)")

    # -- serve
    p = _step(sub, parents, "serve", run_serve)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=cli.at_least(1, 65535),
                   help="port, 1 to 65535 (default: the port of the project's invite links, "
                   "else 8000)")

    # -- status
    p = _step(sub, parents, "status", run_status)
    cli.add_output_options(p, what="the status (table: the report and the reviewer table; "
                           "the others as for --out)", json="the whole report as one document",
                           table="the reviewer table")

    # -- results
    p = _step(sub, parents, "results", run_results)
    cli.add_output_options(p, what="the verdicts (one row per reviewed item)")
    cli.add_options(p, summary_out="write reviewers, kappa and precision@k as JSON here")
    p.add_argument("--confidence", type=cli.fraction, default=0.95, help="interval level (0.95)")
    p.add_argument("--correctable-only", action="store_true",
                   help="count only Correctable items as confirmed errors in the precision")

    # -- apply
    p = _step(sub, parents, "apply", run_apply, db=False)
    p.add_argument("data", help="the dataset that was scanned")
    p.add_argument("verdicts", help="the output of `review results`")
    p.add_argument("--out", "-o", required=True, help="the corrected copy (a new file)")
    cli.add_options(p, "id", "label")
    p.add_argument("--no-id", action="store_true",
                   help="ids are row numbers (0-based) even if the dataset has an id column")
    p.add_argument("--non-agreement", choices=("flag", "drop", "keep"), default="flag",
                   help="Non-Agreement items: keep and flag (default), drop, or keep")

    # -- export
    p = _step(sub, parents, "export", run_export)
    p.add_argument("--to", choices=("label-studio", "argilla", "csv"), default="label-studio",
                   help="target tool (label-studio): label-studio and argilla write JSON, csv "
                   "writes CSV, whatever the file is called (a .csv, .json... name that says "
                   "another format is refused)")
    p.add_argument("--out", "-o", required=True, metavar="FILE", help="output file")
    p.add_argument("--no-predictions", action="store_true",
                   help="leave out the detector's suggested label (Label Studio predictions, "
                   "Argilla suggestions, the CSV's suggested_label) and the scan's evidence "
                   "for a blind review; a review made without --show-label exports no "
                   "evidence anyway")
    cli.add_options(p, label_config_out="also write the Label Studio labeling config (XML)")
    p.add_argument("--include-qualification", action="store_true",
                   help="export the qualification items too")

    # -- import
    p = _step(sub, parents, "import", run_import)
    p.add_argument("file", help="the export to import")
    p.add_argument("--from", dest="source", choices=("label-studio", "argilla", "csv"),
                   help="the tool (default: guessed from the file)")

    # -- push and pull: a running Label Studio
    for name, handler, way in (("push", run_push, "--to"), ("pull", run_pull, "--from")):
        p = _step(sub, parents, name, handler)
        p.add_argument(way, dest="tool", choices=("label-studio",), required=True,
                       help="the tool (label-studio)")
        p.add_argument("--url", required=True, help="the Label Studio address, such as "
                       "http://localhost:8080 (the API token comes from LABEL_STUDIO_API_KEY)")
        p.add_argument("--project", required=True, metavar="TITLE",
                       help="the Label Studio project's title")


def _step(sub: Any, parents: list[argparse.ArgumentParser], name: str, handler: Any, *,
          db: bool = True) -> argparse.ArgumentParser:
    """One step's parser, with ``--db``."""
    p = cli.add_command(sub, name, parents, handler=handler, raw=False)
    if db:
        p.add_argument("--db", required=True, help="the review project file (SQLite)")
    return p


def run_init(args: argparse.Namespace) -> int:
    store = init_review(
        args.scan, args.db, top=args.top, select=args.select, n_reviewers=args.n_reviewers,
        majority=args.majority, n_sentinels=args.n_sentinels,
        n_qualification=args.n_qualification, sentinels=args.sentinels_file,
        show_label=args.show_label, pass_mark=args.pass_mark,
        sentinel_threshold=args.sentinel_threshold, min_sentinels=args.min_sentinels,
        sentinel_every=args.sentinel_every, labels=args.labels, n_flagged=args.n_flagged,
        score_column=args.score_column, rank_by=args.rank_by, title=args.title,
        instructions=args.instructions, random_state=args.seed, overwrite=args.overwrite)
    cli.log(args, f"created {args.db}: {store.describe()}. Next: labelaudit review invite "
            f"--db {args.db} --name NAME")
    return 0


def run_invite(args: argparse.Namespace) -> int:
    invitation = invite_reviewer(args.db, args.name, admin=args.admin,
                                 new_token=args.new_token, base_url=args.base_url,
                                 port=args.port)
    print(invitation.url)
    cli.log(args, f"{'admin' if args.admin else 'reviewer'} {invitation.reviewer.name!r}: "
            "send them this link privately; it is shown only once. It opens the app served at "
            f"{invitation.base} (another address: --port or --base-url)")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    server = open_server(args.db, host=args.host, port=args.port)
    for notice in server.notices:
        print(f"labelaudit review serve: warning: {notice}", file=sys.stderr)
    cli.log(args, f"serving {args.db} on {server.url} (Ctrl-C to stop); reviewers open "
            "their invite links")
    server.run()
    return 0


def run_status(args: argparse.Namespace) -> int:
    status = review_status(args.db)
    fmt = emit_report(status.to_frame(), status.to_dict(), status.to_text(), args.out,
                      format=None if args.out else args.format)
    if args.out:
        what = "the status" if fmt == "json" else f"{len(status.to_frame())} rows"
        cli.log(args, f"wrote {what} to {args.out}")
    return 0


def run_results(args: argparse.Namespace) -> int:
    results = review_results(args.db, confidence=args.confidence,
                             count_non_agreement=not args.correctable_only)
    frame = results.to_frame()
    if not args.out and args.format == "table":
        frame = frame.drop(columns=[c for c in ("text", "text_pair") if c in frame.columns])
    cli.emit_output(frame, args, summary=results)
    return 0


def run_apply(args: argparse.Namespace) -> int:
    applied = apply_verdicts_file(args.data, args.verdicts, args.out, label=args.label,
                                  id=args.id, row_numbers=args.no_id,
                                  non_agreement=args.non_agreement)
    cli.log(args, str(applied))
    return 0


def run_export(args: argparse.Namespace) -> int:
    kinds = ["review", "sentinel"] + (["qualification"] if args.include_qualification else [])
    export_items(args.db, args.out, to=args.to, kinds=kinds, predictions=not args.no_predictions,
                 label_config=args.label_config_out)
    cli.log(args, f"wrote {args.out} ({args.to})")
    return 0


def run_push(args: argparse.Namespace) -> int:
    cli.log(args, str(push_items(args.db, url=args.url, project=args.project)))
    return 0


def run_pull(args: argparse.Namespace) -> int:
    report = pull_answers(args.db, url=args.url, project=args.project)
    cli.log(args, f"pulled from {args.url} ({args.project!r}): {report}")
    return 0


def run_import(args: argparse.Namespace) -> int:
    report = import_answers(args.db, args.file, source=args.source)
    cli.log(args, f"imported {args.file}: {report}")
    return 0
