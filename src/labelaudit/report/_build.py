"""Build the audit report from a scan and write it as one self-contained HTML file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int
from labelaudit._version import __version__
from labelaudit.io import atomic_path
from labelaudit.report._html import esc, fmt_count, page
from labelaudit.report._label_sets import label_set_frame, label_set_sections
from labelaudit.report._load import TextAudit, TokenAudit, load_source
from labelaudit.report._text import (
    TASKS,
    cartography_section,
    classes_section,
    datalab_section,
    has_datalab,
    has_dynamics,
    issues_section,
    probability_section,
    summary_section,
)
from labelaudit.report._tokens import (
    token_issue_section,
    token_sentences_section,
    token_summary_section,
)
from labelaudit.report._truth import (
    agreement_report_of,
    agreement_section,
    text_truth_section,
    token_truth_section,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.agreement import AgreementReport
    from labelaudit.scanning import ScanResult, TokenScanResult

@dataclass(frozen=True)
class AuditReport:
    """A rendered report.

    Attributes
    ----------
    html, title : str
        The whole page (one self-contained HTML document) and its title.
    kind : {"text", "pairs", "tokens"}
        The task of the scan.
    n_items, n_flagged : int
        Items and flagged items (sentences, and sentences with issues, for a token scan).
    sections : tuple of str
        The ids of the page's sections, in order.
    """

    html: str
    title: str
    kind: str
    n_items: int
    n_flagged: int
    sections: tuple[str, ...]

    @property
    def n_bytes(self) -> int:
        """Size of the page in UTF-8 bytes."""
        return len(self.html.encode("utf-8"))

    def write(self, path: str | Path) -> Path:
        """Write the page to ``path`` (``.html``) atomically; returns the path."""
        target = _html_path(path)
        with atomic_path(target) as tmp:
            tmp.write_text(self.html, encoding="utf-8")
        return target

    def summary(self, path: str | Path | None = None) -> str:
        """One line for a person: ``wrote report.html (123 KB): 3,999 items, 40 flagged``."""
        what = "sentences" if self.kind == "tokens" else "items"
        flagged = "with issues" if self.kind == "tokens" else "flagged"
        head = f"wrote {path} ({self.n_bytes / 1024:,.0f} KB)" if path else self.title
        return f"{head}: {fmt_count(self.n_items)} {what}, {fmt_count(self.n_flagged)} {flagged}"

    def _repr_html_(self) -> str:
        """The page in a notebook, in a sandboxed ``<iframe srcdoc>``: its styles and script
        stay inside the frame."""
        return (f'<iframe srcdoc="{esc(self.html)}" sandbox="allow-scripts" '
                f'title="{esc(self.title)}" style="width:100%;height:640px;'
                'border:1px solid rgba(128,128,128,0.4)"></iframe>')


def _html_path(path: str | Path) -> Path:
    target = Path(path)
    if target.suffix.lower() not in (".html", ".htm"):
        raise InvalidParameterError(
            f"{target}: the report is an HTML page; give a path ending in .html")
    return target


def render_report(
    source: ScanResult | TokenScanResult | pd.DataFrame | str | Path,
    *,
    truth: pd.DataFrame | str | Path | None = None,
    annotations: AgreementReport | pd.DataFrame | str | Path | None = None,
    top: int = 500,
    title: str | None = None,
    data_name: str | None = None,
    id: str = "id",  # noqa: A002 - mirrors labelaudit.evaluation.evaluate
    is_error: str | None = None,
    true_label: str | None = None,
    unknown: Literal["exclude", "clean"] | None = None,
    item: str | None = None,
    annotator: str | None = None,
    annotation_label: str | None = None,
    annotation_list: str | None = None,
) -> AuditReport:
    """Render the audit report of a scan as one self-contained HTML page.

    See :func:`write_report` for the parameters.

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": [1, 2], "text": ["good film", "<b>bad</b>"], "rank": [2, 1],
    ...     "label": ["pos", "pos"], "suggested_label": ["neg", "neg"], "flagged": [False, True],
    ...     "suggested_prob": [0.1, 0.8], "given_prob": [0.9, 0.2]})
    >>> report = render_report(frame)
    >>> report.n_items, report.n_flagged, "&lt;b&gt;bad" in report.html
    (2, 1, True)
    """
    top = check_int(top, "top", minimum=1)
    truth_options = {"id": id, "is_error": is_error, "true_label": true_label, "unknown": unknown}
    annotation_options = {"item": item, "annotator": annotator, "label": annotation_label,
                          "annotations": annotation_list}
    sets = label_set_frame(source)
    if sets is not None:
        sections, meta = label_set_sections(sets, truth=truth, truth_options=truth_options,
                                            top=top)
        kind, n_items, n_flagged = "label sets", len(sets), int(sets["flagged"].astype(bool).sum())
        name = data_name or (Path(source).name if isinstance(source, (str, Path))
                             else "scan result")
    elif isinstance(audit := load_source(source, name=data_name), TextAudit):
        sections, meta = _text_sections(audit, truth=truth, annotations=annotations, top=top,
                                        truth_options=truth_options,
                                        annotation_options=annotation_options)
        kind, n_items, n_flagged = audit.task, len(audit.frame), int(audit.frame["flagged"].sum())
        name = audit.source
    else:
        sections, meta = _token_sections(audit, truth=truth, annotations=annotations, top=top)
        kind, n_items, name = "tokens", audit.n_sentences, audit.source
        n_flagged = int(audit.issues["id"].nunique()) if len(audit.issues) else 0
    return _assemble(sections, meta, kind=kind, n_items=n_items, n_flagged=n_flagged,
                     top=top, source=name, title=title)


def _assemble(sections: list[tuple[str, str, str]], meta: dict[str, Any], *, kind: str,
              n_items: int, n_flagged: int, top: int, source: str,
              title: str | None) -> AuditReport:
    """The page around the sections: title, subtitle, metadata and footer."""
    title = title or f"Label audit: {source}"
    subtitle = (f"data: <b>{esc(source)}</b> · task: {esc(TASKS[kind])} · "
                f"{fmt_count(n_items)} {'sentences' if kind == 'tokens' else 'items'}")
    meta.update(kind=kind, n_items=n_items, n_flagged=n_flagged, top=top, source=source)
    footer = (f"Made by labelaudit {esc(__version__)}. This page is self-contained: it loads "
              "nothing from the network.")
    html = page(title=title, subtitle=subtitle, sections=sections, meta=meta, footer=footer)
    return AuditReport(html=html, title=title, kind=kind, n_items=n_items, n_flagged=n_flagged,
                       sections=tuple(anchor for anchor, _, _ in sections))


def _text_sections(audit: TextAudit, *, truth: Any, annotations: Any, top: int,
                   truth_options: dict[str, Any], annotation_options: dict[str, Any]
                   ) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    meta: dict[str, Any] = {"near_chance": bool(audit.near_chance),
                            "accuracy": round(float(audit.accuracy), 6),
                            "classes": [str(c) for c in audit.classes[:1000]]}
    truth_part = None
    if truth is not None:
        truth_part, ap = text_truth_section(audit, truth, options=truth_options)
        meta["average_precision"] = {k: (None if v != v else round(v, 6)) for k, v in ap.items()}
    agreement_part = None
    if annotations is not None:
        report, name = agreement_report_of(annotations, options=annotation_options)
        agreement_part = agreement_section(report, name, audit.frame)
    sections = [("summary", "Summary", summary_section(audit)),
                ("classes", "Classes", classes_section(audit)),
                ("probabilities", "Probability of the given label", probability_section(audit))]
    if has_dynamics(audit.frame):
        sections.append(("cartography", "Data map (training dynamics)",
                         cartography_section(audit.frame)))
    if truth_part is not None:
        sections.append(("truth", "Against known errors", truth_part))
    if has_datalab(audit.frame):
        sections.append(("datalab", "Datalab issues", datalab_section(audit.frame)))
    if agreement_part is not None:
        sections.append(("agreement", "Annotator agreement", agreement_part))
    sections.append(("issues", "Top issues", issues_section(audit, top=top)))
    return sections, meta


def _token_sections(audit: TokenAudit, *, truth: Any, annotations: Any, top: int
                     ) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    import pandas as pd

    if annotations is not None:
        raise InvalidParameterError(
            "annotations go with text scans; a token scan's report has no agreement section",
            param="annotations")
    if truth is not None and isinstance(truth, pd.DataFrame):
        raise InvalidParameterError(
            "the truth of a token scan is a corrected CoNLL or JSONL file: give its path")
    sections = [("summary", "Summary", token_summary_section(audit)),
                ("issue-types", "Issue types", token_issue_section(audit))]
    if truth is not None:
        sections.append(("truth", "Against the corrected data", token_truth_section(audit, truth)))
    sections.append(("issues", "Top sentences" if audit.records is not None else "Top issues",
                     token_sentences_section(audit, top=top)))
    counts = audit.issues["kind"].value_counts() if len(audit.issues) else pd.Series(dtype=int)
    return sections, {"issue_kinds": {str(k): int(v) for k, v in counts.items()}}


def write_report(
    source: ScanResult | TokenScanResult | pd.DataFrame | str | Path,
    path: str | Path,
    **options: Any,
) -> Path:
    """Write the audit report of a scan: one self-contained HTML file.

    The sections are those of :mod:`labelaudit.report`; the error estimate is confident
    learning's count (:func:`labelaudit.detect.count_label_issues`); a ``dynamics`` scan gets
    its data map (Swayamdipta et al. 2020).

    Parameters
    ----------
    source : ScanResult, TokenScanResult, DataFrame or path
        A scan result, or a scan output (``scan --out`` / ``scan-tokens --out``) as a table or
        a file, as the scan wrote it: unique ids, probabilities in [0, 1], ranks 1..n in the
        order of a ``score_*`` column, and ``evidence`` (if any) empty, the scan's object or
        its readable text; otherwise :class:`~labelaudit._errors.InvalidInputError`.
    path : str or Path
        The page to write (``.html``), atomically.
    **options
        The keyword options of :func:`render_report`, which are:
    truth : DataFrame or path, optional
        Known errors, joined by ``id`` as :func:`labelaudit.evaluation.evaluate` does (a
        corrected CoNLL or JSONL file for a token scan): adds precision-recall curves.
    annotations : AgreementReport, DataFrame or path, optional
        Several annotators' labels, as :func:`labelaudit.agreement.read_annotation_file` reads
        them: adds kappa, alpha and the gold standard's noise bound gamma.
    top : int, default 500
        Items (sentences) in the table of top issues.
    title, data_name : str, optional
        Default ``Label audit: <data>``, and the file name or ``in-memory``.
    id, is_error, true_label, unknown
        How ``truth`` is joined and read (see :func:`labelaudit.evaluation.evaluate`).
    item, annotator, annotation_label, annotation_list : str, optional
        Columns of ``annotations`` (item id, annotator, label, per-item list); default: found.

    Returns
    -------
    Path
        The page written, ``path`` itself.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": [1, 2], "text": ["good film", "awful"], "label": ["pos", "pos"],
    ...                       "suggested_label": ["neg", "neg"], "suggested_prob": [0.1, 0.8],
    ...                       "given_prob": [0.9, 0.2], "flagged": [False, True]})
    >>> out = write_report(frame, Path(tempfile.mkdtemp()) / "report.html")
    >>> out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    True
    """
    target = _html_path(path)
    return render_report(source, **options).write(target)
