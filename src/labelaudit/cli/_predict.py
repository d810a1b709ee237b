"""``labelaudit predict``: top-k labels and probabilities from a model `train` saved."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli

ORDER = 72


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "predict", parents, handler=run,
                        help="predict labels with a model that `labelaudit train` saved")
    p.add_argument("model", help="model folder (labelaudit train --out)")
    p.add_argument("data", help="table of items to predict (CSV, TSV, JSONL, JSON, Parquet)")
    cli.add_options(p, "text_pair", text={"default": None, "help": "text column (default: the "
                                          "one the model was trained on)"},
                    id="id column to keep (default: id when the table has one, else the row "
                    "number)")
    p.add_argument("--top-k", type=cli.at_least(1), default=5, help="labels per item (default: 5)")
    cli.add_output_options(p, what="the predictions")


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from labelaudit.io import read_table
    from labelaudit.train import load_model

    model = load_model(args.model)
    frame = read_table(args.data)
    if args.id is not None and args.id not in frame.columns:
        from labelaudit._errors import InvalidInputError

        raise InvalidInputError(
            f"--id {args.id!r}: {args.data} has no such column; its columns are "
            f"{', '.join(map(repr, map(str, frame.columns[:12])))}"
            f"{' ...' if len(frame.columns) > 12 else ''}")
    id_column = args.id or "id"
    probs = model.predict_proba(frame, text=args.text, text_pair=args.text_pair)
    if model.multi_label:  # the predicted set, and every class's own probability
        from labelaudit.io import format_label_set

        sep = cli.set_separator(args)
        out = pd.DataFrame({"id": frame[id_column].to_numpy() if id_column in frame.columns
                            else np.arange(len(frame)),
                            "labels": [format_label_set(row >= 0.5, model.classes, sep)
                                       for row in probs]})
        for j, name in enumerate(model.classes):
            out[f"prob_{name}"] = probs[:, j]
        cli.emit_output(out, args)
        return 0
    k = min(args.top_k, probs.shape[1])
    top = np.argsort(-probs, axis=1, kind="stable")[:, :k]
    out = pd.DataFrame({"id": frame[id_column].to_numpy() if id_column in frame.columns
                        else np.arange(len(frame))})
    for j in range(k):
        out[f"label_{j + 1}"] = model.classes[top[:, j]]
        out[f"prob_{j + 1}"] = probs[np.arange(len(frame)), top[:, j]]
    cli.emit_output(out, args)
    return 0
