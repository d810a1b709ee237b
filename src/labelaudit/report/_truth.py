"""The sections that measure the scan against outside evidence: known errors
(:mod:`labelaudit.evaluation`) and several annotators' labels (:mod:`labelaudit.agreement`:
kappa, alpha, the gold standard's noise bound, and the flags against their disagreements)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.agreement import AgreementReport, agreement_report, read_annotation_file
from labelaudit.evaluation import evaluate, evaluate_tokens
from labelaudit.report._html import (
    cell,
    esc,
    fmt_count,
    fmt_num,
    fmt_share,
    label_text,
    pr_curves,
    share_histogram,
    table,
)
from labelaudit.report._load import TextAudit, TokenAudit
from labelaudit.tokens import read_tokens

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

_METRICS = [("aupr", "AUPR"), ("average_precision", "AP"), ("precision_at_err", "P@Err"),
            ("recall_at_err", "R@Err"), ("recall_at_2err", "R@2·Err"), ("roc_auc", "ROC AUC")]


def _name(truth: object) -> str:
    import pandas as pd
    return "in-memory truth" if isinstance(truth, pd.DataFrame) else Path(str(truth)).name


def text_truth_section(audit: TextAudit, truth: pd.DataFrame | str | Path, *,
                       options: dict[str, Any]) -> tuple[str, dict[str, float]]:
    """Precision-recall curves and metrics of each score column, and each one's AP."""
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
    known = dict(zip((label_text(i) for i in result.ids), result.is_error, strict=True))
    flags = [known.get(label_text(i), np.nan) for i, f in
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


AGREEMENT_BOOTSTRAP = 200
_NAMES = {"observed_agreement": "observed agreement", "chance_agreement": "chance agreement",
          "fleiss_kappa": "Fleiss' kappa", "krippendorff_alpha": "Krippendorff's alpha",
          "cohen_kappa": "Cohen's kappa", "unanimous_share": "unanimous items",
          "aggregate_accuracy": "aggregate accuracy (gold)"}


def agreement_report_of(annotations: Any, *, options: dict[str, Any]) -> tuple[Any, str]:
    """The AgreementReport of ``annotations`` (report, long or nested frame, file), its name."""
    import pandas as pd

    if isinstance(annotations, AgreementReport):
        return annotations, "in-memory annotations"
    item, annotator, label = (options.get(k) for k in ("item", "annotator", "label"))
    if isinstance(annotations, pd.DataFrame):
        report = agreement_report(annotations, item=item, annotator=annotator, label=label,
                                  n_bootstrap=AGREEMENT_BOOTSTRAP, random_state=0,
                                  drop_single=True)
        return report, "in-memory annotations"
    read = read_annotation_file(annotations, annotations=options.get("annotations"), item=item,
                                annotator=annotator, label=label)
    report = read.agreement_report(n_bootstrap=AGREEMENT_BOOTSTRAP, random_state=0,
                                   drop_single=True)
    return report, Path(str(annotations)).name


def _key(value: object) -> str:
    return label_text(value).strip()


def agreement_section(report: Any, name: str, frame: pd.DataFrame | None) -> str:
    """Statistics, gold standard and, for a text scan ``frame``, flags against agreement."""
    per = report.annotations_per_item
    who = (f"{fmt_count(report.n_annotators)} annotators" if report.n_annotators is not None
           else "annotator ids not given")
    rows = []
    for est in report.statistics:
        interval = ("" if math.isnan(est.ci_low) else f"{est.ci_low:.3f} – {est.ci_high:.3f}")
        rows.append((_NAMES.get(est.name, est.name), cell(fmt_num(est.value), cls="num"),
                     cell(interval, cls="num")))
    gold = report.gold.noise_statement()
    gamma = "–" if gold["gamma"] is None else f"{100 * gold['gamma']:.1f}%"
    kind = ("unanimous" if gold["min_share"] >= 1 else f"top label ≥ {gold['min_share']:g}")
    parts = [
        f"<p>{esc(name)}: {fmt_count(report.n_items)} items, "
        f"{fmt_count(report.n_annotations)} annotations ({per[1]:.1f} per item), {who}.</p>",
        table(["statistic", "value", f"{100 * report.confidence:g}% bootstrap interval"],
              rows, numeric=[False, True, True]),
        f'<p id="gold-gamma">Gold standard ({kind} items): '
        f"{fmt_count(gold['n_agreed'])} of {fmt_count(gold['n_items'])} agreed, "
        f"{fmt_count(gold['n_disagreed'])} disagreed. Noise bound <b>γ = {gamma}</b> at "
        f"{100 * gold['confidence']:g}% confidence: up to {fmt_count(gold['hidden_hard'])} "
        "hard items may hide among the agreed ones (Beigman Klebanov &amp; Beigman 2009, "
        f"equation 1; chance agreement on a hard item p = {gold['p_chance']:.3g}).</p>",
        f'<p class="note">Intervals: percentile bootstrap over items, '
        f"{report.n_bootstrap} replicates. Items with a single annotation are left out.</p>"]
    if frame is not None:
        parts.append(_against_scan(report, frame))
    return "\n".join(parts)


def _against_scan(report: Any, frame: pd.DataFrame) -> str:
    agreement = dict(zip((_key(i) for i in report.aggregation.items), report.item_agreement,
                         strict=True))
    aggregated = dict(zip((_key(i) for i in report.aggregation.items),
                          report.aggregation.labels, strict=True))
    keys = [_key(i) for i in frame["id"]]
    matched = np.array([k in agreement for k in keys], dtype=bool)
    if not matched.any():
        return ('<p class="note">No item id of the scan output appears in the annotations, so '
                "the flags cannot be compared with the annotators' agreement (check --id).</p>")
    flagged = frame["flagged"].to_numpy(dtype=bool)
    values = np.array([agreement.get(k, np.nan) for k in keys], dtype=float)
    given = frame["label"].map(_key).to_numpy()
    majority = np.array([None if aggregated.get(k) is None else _key(aggregated[k])
                         for k in keys], dtype=object)
    differs = matched & np.array([m is not None and m != g for m, g in
                                  zip(majority, given, strict=True)], dtype=bool)
    rows = []
    for name, mask in (("flagged", matched & flagged), ("not flagged", matched & ~flagged)):
        n = int(mask.sum())
        rows.append((name, cell(fmt_count(n), cls="num"),
                     cell(fmt_num(np.nanmean(values[mask]) if n else float("nan")), cls="num"),
                     cell(fmt_share(int((values[mask] < 1).sum()), n), cls="num"),
                     cell(fmt_share(int(differs[mask].sum()), n), cls="num")))
    svg = share_histogram({"not flagged": values[matched & ~flagged],
                           "flagged": values[matched & flagged]},
                          xlabel="share of agreeing annotator pairs per item", prefix="agree")
    return (
        f"<h3>Flags against the annotators</h3><p>{fmt_count(int(matched.sum()))} of the "
        f"{fmt_count(len(frame))} scanned items have annotations. On "
        f"{fmt_count(int(differs.sum()))} of them the annotators' aggregated label "
        f"({esc(report.aggregation.method)}) differs from the given label; "
        f"{fmt_count(int((differs & flagged).sum()))} of those are flagged.</p>"
        + table(["items", "n", "mean agreement", "not unanimous", "aggregate ≠ given"], rows,
                numeric=[False, True, True, True, True])
        + f'<div class="plot" id="agreement-plot">{svg}</div>')
