"""``labelaudit review``: the human verification loop, from flags to a corrected dataset."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from labelaudit.cli._common import fraction

ORDER = 60

_DESCRIPTION = """\
Verify flagged items with people, as the papers do: each item goes to N reviewers (5),
who first pass a qualification test and meet sentinel items with known answers; an item
is Correctable (a majority picks another label), Non-Error (a majority confirms the
given label) or Non-Agreement (no majority).

  labelaudit review init issues.csv --top 300 --reviewers 5 --sentinels 20 --db review.sqlite
  labelaudit review init data.csv --rank-by confidence --top 300 --db review.sqlite  # not a scan
  labelaudit review invite --db review.sqlite --name alice
  labelaudit review serve --db review.sqlite --port 8000
  labelaudit review status --db review.sqlite
  labelaudit review results --db review.sqlite --out verdicts.csv
  labelaudit review apply data.csv verdicts.csv --out data.corrected.csv
  labelaudit review export --db review.sqlite --to label-studio tasks.json
  labelaudit review import --db review.sqlite label_studio_export.json
"""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, got {value}")
    return value


def add_parser(subparsers: Any, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "review", parents=parents, help="verify flagged items with people (web app)",
        description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="review_command", metavar="STEP", required=True)

    def db_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", required=True, help="the review project file (SQLite)")

    p = sub.add_parser("init", parents=parents, help="create a review project from a scan output",
                       description="Create a review project from a scan output (ordered by its "
                       "rank column, most suspect first). Known-answer items for the "
                       "qualification test and sentinels come from --sentinels-file, or else "
                       "from the scan's least suspect items, whose given labels are then treated "
                       "as correct (scan the whole dataset, without --top, for that). A table "
                       "that is not a scan output (no rank or score_* column) is refused unless "
                       "--rank-by says which column orders it. The answer options are every "
                       "label of the file (label and suggested_label of all rows).")
    p.add_argument("scan", help="scan output: id, text, [text_pair,] label, suggested_label, "
                   "suggested_prob, rank, score_*, flagged")
    db_arg(p)
    p.add_argument("--rank-by", metavar="COLUMN",
                   help="order the items by this numeric column, ascending (the lowest value "
                   "is the most suspect), instead of the scan's rank; needed for a table that "
                   "is not a scan output. Without an id column, ids are row numbers (0-based), "
                   "as scan makes them")
    p.add_argument("--top", type=_positive, help="items to review (default: every flagged item)")
    p.add_argument("--select", choices=("top", "random"), default="top",
                   help="review the most suspect items, or a random sample of the flagged ones "
                   "(unbiased error estimate); default top")
    p.add_argument("--reviewers", type=_positive, default=5, help="reviewers per item (5)")
    p.add_argument("--majority", type=_positive,
                   help="votes needed for a verdict (default: more than half, 3 of 5)")
    p.add_argument("--sentinels", type=_positive, default=0,
                   help="known-answer items mixed into each reviewer's queue")
    p.add_argument("--sentinels-file", help="known items (id, text, [text_pair,] label); "
                   "the first --qualification rows form the qualification test")
    p.add_argument("--qualification", type=_positive,
                   help="qualification questions (default 4 when known items exist, else 0)")
    p.add_argument("--pass-mark", type=fraction, default=0.75,
                   help="share of qualification answers that must be right (0.75)")
    p.add_argument("--sentinel-threshold", type=fraction, default=0.7,
                   help="suspend a reviewer whose sentinel accuracy falls below this (0.7)")
    p.add_argument("--min-sentinels", type=_positive, default=3,
                   help="sentinels answered before suspension can apply (3)")
    p.add_argument("--sentinel-every", type=_positive,
                   help="a sentinel after every K review answers (default: spread evenly)")
    p.add_argument("--show-label", action="store_true",
                   help="show reviewers the given label (default: blind)")
    p.add_argument("--labels", help="the label set, comma-separated (default: every label seen)")
    p.add_argument("--n-flagged", type=_positive,
                   help="flagged items in the whole dataset (default: the flagged column)")
    p.add_argument("--score-column", help="score column to keep (default: the first score_*)")
    p.add_argument("--title", default="Label review", help="title shown to reviewers")
    p.add_argument("--instructions", default="", help="instructions shown above each item")
    p.add_argument("--random-state", type=int, default=0, help="seed for --select random")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --db")
    p.set_defaults(handler=run_init)

    p = sub.add_parser("invite", parents=parents, help="add a reviewer and print their link",
                       description="Add a reviewer (or an admin) and print their personal link "
                       "with its secret token. The token is stored only as a hash: keep the link. "
                       "The link points to --base-url, else http://127.0.0.1:--port, else where "
                       "`review serve` last ran for this project, else the previous invite's "
                       "address, else http://127.0.0.1:8000 (serve's default). `review serve` "
                       "without --port runs on the links' port, and warns about links that "
                       "cannot reach it.")
    db_arg(p)
    p.add_argument("--name", required=True, help="the reviewer's name")
    p.add_argument("--admin", action="store_true", help="an admin: sees /admin, reviews nothing")
    p.add_argument("--new-token", action="store_true",
                   help="replace an existing reviewer's link (the old one stops working)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--base-url", metavar="URL",
                       help="the address reviewers open, e.g. https://review.example.org behind "
                       "a proxy (default: where `review serve` last ran for this project, else "
                       "the previous invite's address, else http://127.0.0.1:8000)")
    where.add_argument("--port", type=_port,
                       help="the port `review serve --port` runs on: the link is "
                       "http://127.0.0.1:PORT (or the serve host)")
    p.set_defaults(handler=run_invite)

    p = sub.add_parser("serve", parents=parents, help="run the review web app",
                       description="Serve the review web app. Binds 127.0.0.1 by default; "
                       "put it behind HTTPS before exposing it to a network. The address is "
                       "kept in the project, so invites made from now on link to it; serve "
                       "warns when earlier invite links point elsewhere.")
    db_arg(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    p.add_argument("--port", type=_port,
                   help="port, 1 to 65535 (default: the port of the project's invite links, "
                   "else 8000)")
    p.set_defaults(handler=run_serve)

    p = sub.add_parser("status", parents=parents, help="progress and agreement so far",
                       description="Progress, verdicts so far, Fleiss' kappa and reviewers.")
    db_arg(p)
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format")
    p.set_defaults(handler=run_status)

    p = sub.add_parser("results", parents=parents, help="verdict per item and statistics",
                       description="Correctable / Non-Agreement / Non-Error per item, reviewer "
                       "statistics, Fleiss' kappa, the detector's verified precision at each k "
                       "and the estimated number of errors.")
    db_arg(p)
    p.add_argument("--out", help="write the verdicts here (.csv .tsv .jsonl .json .parquet)")
    p.add_argument("--format", choices=("table", "csv", "jsonl"), default="table",
                   help="format on stdout without --out")
    p.add_argument("--summary", help="write reviewers, kappa and precision@k as JSON here")
    p.add_argument("--confidence", type=fraction, default=0.95, help="interval level (0.95)")
    p.add_argument("--correctable-only", action="store_true",
                   help="count only Correctable items as confirmed errors in the precision")
    p.set_defaults(handler=run_results)

    p = sub.add_parser("apply", parents=parents, help="write a corrected copy of the dataset",
                       description="Relabel Correctable items, flag or drop Non-Agreement ones, "
                       "and add provenance columns. The input is never changed.")
    p.add_argument("data", help="the dataset that was scanned")
    p.add_argument("verdicts", help="the output of `review results`")
    p.add_argument("--out", required=True, help="the corrected copy (a new file)")
    p.add_argument("--id", help="id column of the dataset (default, as scan does: the column "
                   "named id when there is one, else the row number, 0-based)")
    p.add_argument("--no-id", action="store_true",
                   help="ids are row numbers (0-based) even if the dataset has an id column")
    p.add_argument("--label", default="label", help="label column of the dataset (label)")
    p.add_argument("--non-agreement", choices=("flag", "drop", "keep"), default="flag",
                   help="Non-Agreement items: keep and flag (default), drop, or keep")
    p.set_defaults(handler=run_apply)

    p = sub.add_parser("export", parents=parents, help="items for Label Studio, Argilla or CSV",
                       description="Export the review and sentinel items for another tool.")
    db_arg(p)
    p.add_argument("--to", choices=("label-studio", "argilla", "csv"), default="label-studio",
                   help="target tool (label-studio): label-studio and argilla write JSON, csv "
                   "writes CSV, whatever the file is called (a .csv, .json... name that says "
                   "another format is refused)")
    p.add_argument("out", help="output file")
    p.add_argument("--no-predictions", action="store_true",
                   help="leave out the detector's suggested label (Label Studio predictions, "
                   "Argilla suggestions, the CSV's suggested_label) for a blind review")
    p.add_argument("--label-config", help="also write the Label Studio labeling config (XML)")
    p.add_argument("--include-qualification", action="store_true",
                   help="export the qualification items too")
    p.set_defaults(handler=run_export)

    p = sub.add_parser("import", parents=parents, help="import answers from another tool",
                       description="Import answers from a Label Studio JSON export, Argilla "
                       "records or a long CSV (item_id, reviewer, answer).")
    db_arg(p)
    p.add_argument("file", help="the export to import")
    p.add_argument("--from", dest="source", choices=("label-studio", "argilla", "csv"),
                   help="the tool (default: guessed from the file)")
    p.set_defaults(handler=run_import)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the step's handler (the parser sets it)."""
    return int(args.handler(args))


def _log(args: argparse.Namespace, text: str) -> None:
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr)


def run_init(args: argparse.Namespace) -> int:
    from labelaudit.io import read_table
    from labelaudit.review import init_review

    scan = read_table(args.scan)
    sentinels = read_table(args.sentinels_file) if args.sentinels_file else None
    labels = None
    if args.labels:
        labels = [v.strip() for v in args.labels.split(",") if v.strip()]
        if _numeric(scan, "label"):
            labels = [int(v) if v.lstrip("-").isdigit() else v for v in labels]
    store = init_review(
        scan, args.db, top=args.top, select=args.select, n_reviewers=args.reviewers,
        majority=args.majority, n_sentinels=args.sentinels, n_qualification=args.qualification,
        sentinels=sentinels, show_label=args.show_label, pass_mark=args.pass_mark,
        sentinel_threshold=args.sentinel_threshold, min_sentinels=args.min_sentinels,
        sentinel_every=args.sentinel_every, labels=labels, n_flagged=args.n_flagged,
        score_column=args.score_column, title=args.title, instructions=args.instructions,
        source=str(args.scan), random_state=args.random_state, overwrite=args.overwrite,
        rank_by=args.rank_by,
    )
    kinds = store.items_frame()["kind"].value_counts()
    config = store.config
    _log(args, f"created {args.db}: {kinds.get('review', 0)} items to review by "
         f"{config.n_reviewers} reviewers each (majority {config.majority}), "
         f"{kinds.get('qualification', 0)} qualification and {kinds.get('sentinel', 0)} "
         f"sentinel items, labels {config.classes}, "
         f"{'labels shown' if config.show_label else 'blind'}. Next: labelaudit review invite "
         f"--db {args.db} --name NAME")
    return 0


def _numeric(frame: Any, column: str) -> bool:
    import pandas as pd

    return column in frame.columns and pd.api.types.is_numeric_dtype(frame[column])


def run_invite(args: argparse.Namespace) -> int:
    from labelaudit.review import ReviewStore
    from labelaudit.review._links import invite_base, record_invite

    store = ReviewStore.open(args.db)
    base = invite_base(store, base_url=args.base_url, port=args.port)
    reviewer, token = store.add_reviewer(args.name, role="admin" if args.admin else "reviewer",
                                         new_token=args.new_token)
    record_invite(store, reviewer.name, base)
    print(f"{base}/login?token={token}")
    _log(args, f"{'admin' if args.admin else 'reviewer'} {reviewer.name!r}: send them this link "
         f"privately; it is shown only once. It opens the app served at {base} (another "
         "address: --port or --base-url)")
    return 0


def _bind(host: str, port: int) -> Any:
    """A socket bound to ``host:port``, or a one-line error saying what to do."""
    import errno
    import socket

    from labelaudit._errors import InvalidParameterError

    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError) as exc:
        raise InvalidParameterError(
            f"cannot serve on {host}:{port}: the host {host!r} is unknown "
            f"({getattr(exc, 'strerror', None) or exc}); use --host 127.0.0.1 (this machine) "
            "or 0.0.0.0 (every address)") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        reasons: dict[int | None, str] = {
            errno.EADDRINUSE: f"port {port} is already in use (another server, or this "
                              "project served already?); stop that one or choose another "
                              "--port",
            errno.EACCES: f"no permission to use port {port} (ports below 1024 need root); "
                          "choose another --port, e.g. 8000",
            errno.EADDRNOTAVAIL: f"{host} is not an address of this machine; use --host "
                                 "127.0.0.1 (this machine) or 0.0.0.0 (every address)",
        }
        raise InvalidParameterError(
            f"cannot serve on {host}:{port}: {reasons.get(exc.errno, exc.strerror or str(exc))}"
        ) from None
    return sock


def run_serve(args: argparse.Namespace) -> int:
    from urllib.parse import urlsplit

    from labelaudit._errors import LabelAuditError, MissingExtraError
    from labelaudit.review import ReviewStore, create_app
    from labelaudit.review._links import http_url, record_serve, serve_port, unreachable_links

    try:
        import uvicorn
    except ImportError:  # pragma: no cover - depends on the environment
        raise MissingExtraError("uvicorn", "review") from None
    store = ReviewStore.open(args.db)
    port = args.port if args.port is not None else serve_port(store)
    app = create_app(store)
    sock = _bind(args.host, port)
    record_serve(store, args.host, port)
    url = http_url(args.host, port)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"labelaudit review serve: warning: binding {args.host} exposes the app beyond "
              "this machine; use HTTPS in front of it", file=sys.stderr)
    for base, names in unreachable_links(store, args.host, port).items():
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        there = urlsplit(base)
        print(f"labelaudit review serve: warning: the invite links of {shown} point to {base}, "
              f"which does not reach this server ({url}); serve with --host {there.hostname} "
              f"--port {there.port or 80} instead, or give them new links: labelaudit review "
              f"invite --db {args.db} --name NAME --new-token --port {port}", file=sys.stderr)
    _log(args, f"serving {args.db} on {url} (Ctrl-C to stop); reviewers open their invite links")
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=port, log_level="warning",
                                           access_log=False))
    try:
        server.run(sockets=[sock])
    except SystemExit:  # uvicorn exits on a failed startup; say it in one line below
        pass
    finally:
        sock.close()
    if not server.started:
        raise LabelAuditError(f"the review server did not start on {url} (see the messages "
                              "above)")
    return 0


def _table(frame: Any) -> str:
    return frame.to_string(index=False, na_rep="", float_format=lambda v: f"{v:.3g}")


def run_status(args: argparse.Namespace) -> int:
    import json

    from labelaudit.review import ReviewStore, progress, review_results

    store = ReviewStore.open(args.db)
    results = review_results(store)
    done = progress(store)
    if args.format == "json":
        summary = results.summary()
        summary.pop("precision_at_k")
        summary["progress"] = {"n_items": done.n_items, "n_complete": done.n_complete,
                               "n_answers": done.n_answers, "n_needed": done.n_needed}
        print(json.dumps(summary, indent=2))
        return 0
    counts = results.verdict_counts()
    kappa = results.fleiss_kappa
    lines = [
        f"items complete: {done.n_complete} of {done.n_items} "
        f"({done.n_answers} of {done.n_needed} answers, {done.share_complete:.0%})",
        "verdicts so far: " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        f"Fleiss' kappa: {'n/a' if kappa != kappa else f'{kappa:.3f}'} "
        f"over {results.n_kappa_items} items",
    ]
    if results.verified is not None:
        v = results.verified
        lines.append(f"detector precision: {v.precision:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}] "
                     f"over {v.n_verified} decided items")
    print("\n".join(lines))
    if len(results.reviewers):
        print()
        print(_table(results.reviewers.drop(columns=["status_reason", "source"])))
    return 0


def run_results(args: argparse.Namespace) -> int:
    from labelaudit.io import write_json, write_table
    from labelaudit.review import ReviewStore, review_results

    store = ReviewStore.open(args.db)
    results = review_results(store, confidence=args.confidence,
                             count_non_agreement=not args.correctable_only)
    frame = results.to_frame()
    if args.out:
        write_table(frame, args.out)
    elif args.format == "csv":
        frame.to_csv(sys.stdout, index=False)
    elif args.format == "jsonl":
        frame.to_json(sys.stdout, orient="records", lines=True, force_ascii=False)
        sys.stdout.write("\n")
    else:
        shown = frame.drop(columns=[c for c in ("text", "text_pair") if c in frame.columns])
        print(_table(shown))
    if args.summary:
        write_json(results.summary(), args.summary)
    counts = results.verdict_counts()
    text = ", ".join(f"{k} {v}" for k, v in counts.items())
    if results.verified is not None:
        v = results.verified
        text += (f"; detector precision {v.precision:.3f} [{v.ci_low:.3f}, {v.ci_high:.3f}]")
        if v.estimated_errors is not None:
            text += (f"; estimated errors among {results.n_flagged} flagged: "
                     f"{v.estimated_errors:.0f} [{v.estimated_errors_low:.0f}, "
                     f"{v.estimated_errors_high:.0f}]")
    kappa = results.fleiss_kappa
    text += f"; Fleiss' kappa {'n/a' if kappa != kappa else f'{kappa:.3f}'}"
    _log(args, text)
    return 0


def run_apply(args: argparse.Namespace) -> int:
    from labelaudit._errors import InvalidParameterError
    from labelaudit.io import read_table, write_table
    from labelaudit.review import apply_verdicts

    out = Path(args.out)
    for source in (args.data, args.verdicts):
        if out.exists() and Path(source).exists() and out.resolve() == Path(source).resolve():
            raise InvalidParameterError(
                f"--out {out} is an input file; apply never writes in place, choose a new file"
            )
    data = read_table(args.data)
    verdicts = read_table(args.verdicts)
    if args.no_id and args.id is not None:
        raise InvalidParameterError("give --id COLUMN or --no-id, not both")
    corrected = apply_verdicts(data, verdicts, label=args.label, id=args.id,
                               row_numbers=args.no_id, non_agreement=args.non_agreement)
    write_table(corrected, out)
    actions = corrected["review_action"].value_counts()
    dropped = len(data) - len(corrected)
    _log(args, f"wrote {out}: {actions.get('relabelled', 0)} relabelled, "
         f"{actions.get('flagged', 0)} flagged, {dropped} dropped, "
         f"{actions.get('confirmed', 0)} confirmed, {len(corrected)} rows")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from labelaudit.io import atomic_path
    from labelaudit.review import ReviewStore, export_items, label_studio_config

    store = ReviewStore.open(args.db)
    kinds = ["review", "sentinel"] + (["qualification"] if args.include_qualification else [])
    export_items(store, args.out, to=args.to, kinds=kinds,
                 predictions=not args.no_predictions)
    if args.label_config:
        with atomic_path(args.label_config) as tmp:
            tmp.write_text(label_studio_config(store) + "\n", encoding="utf-8")
    _log(args, f"wrote {args.out} ({args.to})")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from labelaudit.review import ReviewStore, import_answers

    store = ReviewStore.open(args.db)
    report = import_answers(store, args.file, source=args.source)
    _log(args, f"imported {args.file}: {report}")
    return 0
