"""The audit report: one self-contained HTML page of a scan.

:func:`write_report` turns a scan (a :class:`~labelaudit.scanning.ScanResult`, a
:class:`~labelaudit.scanning.TokenScanResult`, or a scan output table or file) into a page
that opens in any browser without a network: a summary with the estimated number of
errors, per-class counts and the given-versus-suggested confusion heat map, the
distribution of the given label's probability, a sortable and filterable table of the
most suspect items (each flagged one with its evidence beside its text: the words that push
toward the suggested label highlighted, the nearest items with that label, a conflicting
duplicate) and, when given, precision-recall curves against known errors, Datalab issues
and annotator agreement. :func:`render_report` returns the page as an
:class:`AuditReport` without writing it.
"""

from labelaudit.report._build import AuditReport, render_report, write_report

__all__ = ["AuditReport", "render_report", "write_report"]
