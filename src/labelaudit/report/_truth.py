"""The section that measures the scan against known errors: :func:`labelaudit.evaluation.evaluate`
for text scans (precision-recall curves per method), :func:`labelaudit.evaluation.evaluate_tokens`
for token scans."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.report._html import cell, esc, fmt_count, fmt_num, fmt_share, table
from labelaudit.report._load import TextAudit, TokenAudit
from labelaudit.report._plots import pr_curves

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TruthOptions", "text_truth_section", "token_truth_section"]

TruthOptions = dict[str, Any]
_METRICS = [("aupr", "AUPR"), ("average_precision", "AP"), ("precision_at_err", "P@Err"),
            ("recall_at_err", "R@Err"), ("recall_at_2err", "R@2·Err"), ("roc_auc", "ROC AUC")]


def _name(truth: object) -> str:
    import pandas as pd
    return "in-memory truth" if isinstance(truth, pd.DataFrame) else Path(str(truth)).name


def text_truth_section(audit: TextAudit, truth: pd.DataFrame | str | Path, *,
                       options: TruthOptions) -> tuple[str, dict[str, float]]:
    """The precision-recall curves and metrics of every score column against ``truth``;
    also returns each method's average precision."""
    from labelaudit.evaluation import evaluate, plain

    issues = audit.frame.drop(columns=["model_agrees"], errors="ignore")
    result = evaluate(issues, truth, **options)
    curves = result.curves()
    ap = {m: float(r.average_precision) for m, r in result.reports.items()}
    order = sorted(result.reports, key=lambda m: -np.nan_to_num(ap[m], nan=-1.0))
    rows = []
    for method in order:
        report = result.reports[method].to_dict()
        rows.append([method, *(cell(fmt_num(report.get(k)), cls="num") for k, _ in _METRICS)])
    parts = [
        f'<p>{esc(result.summary())} (truth: {esc(_name(truth))}).</p>',
        f'<div class="plot" id="pr-curves">{pr_curves(curves, ap, prefix="pr")}</div>',
        table(["method", *(name for _, name in _METRICS)], rows, cls="grid sortable",
              sortable=["text"] + ["num"] * len(_METRICS),
              numeric=[False] + [True] * len(_METRICS)),
        '<p class="note">Each score column is one ranking (lower = more suspect). AP is '
        "average precision; P@Err and R@Err are precision and recall in the top k items, "
        "k the number of known errors; the dotted line is the error rate, what a random "
        "ranking reaches. Curves from <code>labelaudit.evaluation.evaluate</code>.</p>"]
    known = dict(zip((str(plain(i)) for i in result.ids), result.is_error, strict=True))
    flags = [known.get(str(plain(i)), np.nan) for i, f in
             zip(audit.frame["id"], audit.frame["flagged"], strict=True) if f]
    verified = np.asarray([x for x in flags if not np.isnan(x)], dtype=float)
    if len(flags):
        hits = int(verified.sum())
        parts.insert(1, f'<p id="flagged-precision">Of the {fmt_count(len(flags))} flagged '
                     f"items, {fmt_count(hits)} are known errors (precision "
                     f"{fmt_share(hits, len(verified))} of those the truth decides; recall "
                     f"{fmt_share(hits, result.n_errors)} of the {fmt_count(result.n_errors)} "
                     "known errors).</p>")
    return "\n".join(parts), ap


def token_truth_section(audit: TokenAudit, truth: str | Path) -> str:
    """Token, sentence and span metrics of a token scan against a corrected copy."""
    from labelaudit.evaluation import evaluate_tokens
    from labelaudit.tokens import read_tokens

    if audit.records is None:
        raise InvalidInputError(
            f"{audit.source}: a token report with a truth file needs the sentence records "
            "(write the scan with `labelaudit scan-tokens --out FILE.jsonl`), not the issue "
            "table")
    result = evaluate_tokens(audit.records, read_tokens(truth))
    frame = result.to_frame()
    headers = [str(c) for c in frame.columns]
    numeric = [c not in ("level", "method") for c in frame.columns]
    rows = [[v if not isinstance(v, float) else cell(fmt_num(v), cls="num")
             for v in row] for row in frame.astype(object).where(frame.notna(), None)
            .itertuples(index=False)]
    rows = [[("–" if v is None else v) for v in row] for row in rows]
    return (f"<p>{fmt_count(result.n_sentences)} sentences, {fmt_count(result.n_tokens)} "
            f"tokens compared with {esc(_name(truth))}.</p>"
            + table(headers, rows, numeric=numeric)
            + '<p class="note">From <code>labelaudit.evaluation.evaluate_tokens</code>: AUPR and '
            "average precision of the token and sentence rankings, and the precision of the "
            "top issues (p@k: the correction changes a tag in the issue's region; fix@k: the "
            "correction equals the suggestion).</p>")
