"""The one summary format of a scan, in memory or streamed: the same lines in the same
order, whichever engine ran it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["ScanFacts", "format_scan_summary"]


@dataclass(frozen=True)
class ScanFacts:
    """What a scan's summary reports.

    Attributes
    ----------
    n_items, n_classes, n_issues_estimate, n_flagged : int
    flag_rule, rank_by : str
    accuracy, majority_rate : float
    how : str
        What produced the probabilities: the members (``"tfidf, embed"``,
        ``"tfidf-hash"``), or the user's ``"given pred_probs"``.
    mode : str
        How they were made out of sample (``"5-fold cross-fit"``, ``"fit-on-train,
        score-on-test"``); "" for given ones.
    given : bool
        The probabilities are the user's own (no models ran).
    engine : str
        ``"local"`` or ``"ray"``; "" where not told.
    weights : mapping of member to (weight, temperature or None, seconds or None)
    screened : mapping of member to its weight on the screening sample
    extra_lines : tuple of str
        Lines of other parts (Datalab's issue types), printed before the time.
    written : str or None
        The output file, where the scan wrote one itself.
    seconds : float
    peak_rss_mb : float or None
    """

    n_items: int
    n_classes: int
    n_issues_estimate: int
    n_flagged: int
    flag_rule: str
    rank_by: str
    accuracy: float
    majority_rate: float
    how: str
    mode: str = ""
    given: bool = False
    engine: str = ""
    weights: Mapping[str, tuple[float, float | None, float | None]] = field(
        default_factory=dict)
    screened: Mapping[str, float] = field(default_factory=dict)
    extra_lines: tuple[str, ...] = ()
    written: str | None = None
    seconds: float = 0.0
    peak_rss_mb: float | None = None


def _member(name: str, weight: float, temperature: float | None,
            seconds: float | None) -> str:
    detail = [f"T={temperature:.2f}"] if temperature is not None else []
    detail += [f"{seconds:.1f}s"] if seconds is not None else []
    return f"{name} {weight:.2f}" + (f" ({', '.join(detail)})" if detail else "")


def format_scan_summary(facts: ScanFacts, chance: str = "") -> str:
    """The summary lines of a scan (``chance``: the near-chance note, or "").

    Examples
    --------
    >>> facts = ScanFacts(n_items=100, n_classes=2, n_issues_estimate=7, n_flagged=7,
    ...                   flag_rule="cleanlab's estimate", rank_by="ensemble",
    ...                   accuracy=0.9, majority_rate=0.5, how="tfidf",
    ...                   mode="5-fold cross-fit", engine="local",
    ...                   weights={"tfidf": (1.0, 1.0, 0.4)}, seconds=1.2)
    >>> print(format_scan_summary(facts))
    items: 100  classes: 2  probabilities: tfidf (5-fold cross-fit)  engine: local
    estimated label errors (cleanlab): 7 (7.0%)
    flagged: 7 (7.0%; cleanlab's estimate)  ranked by: ensemble
    out-of-sample accuracy: 0.900 (most common class: 0.500)
    members (weight): tfidf 1.00 (T=1.00, 0.4s)
    time: 1.2s
    """
    n = max(facts.n_items, 1)
    source = f"probabilities: {facts.how}" + (f" ({facts.mode})" if facts.mode else "") \
        + (f"  engine: {facts.engine}" if facts.engine else "")
    lines = [
        f"items: {facts.n_items}  classes: {facts.n_classes}  {source}",
        f"estimated label errors (cleanlab): {facts.n_issues_estimate} "
        f"({facts.n_issues_estimate / n:.1%})",
        f"flagged: {facts.n_flagged} ({facts.n_flagged / n:.1%}; {facts.flag_rule})  "
        f"ranked by: {facts.rank_by}{chance}",
    ]
    if facts.given:
        lines += [f"accuracy of the given pred_probs: {facts.accuracy:.3f} (most common "
                  f"class: {facts.majority_rate:.3f})",
                  "probabilities: yours (pred_probs), used as given; the ranking means "
                  "something only if they are out-of-sample, each item scored by a model "
                  "that never trained on it"]
    else:
        lines += [f"out-of-sample accuracy: {facts.accuracy:.3f} (most common class: "
                  f"{facts.majority_rate:.3f})"]
        if facts.weights:
            lines.append("members (weight): " + ", ".join(
                _member(k, *v) for k, v in facts.weights.items()))
    lines += [f"skipped {k}: weight {v:.3f} on the screening sample (below 0.05); name it "
              "in --scorers to run it anyway" for k, v in facts.screened.items()]
    lines += list(facts.extra_lines)
    if facts.written:
        lines.append(f"wrote {facts.written}")
    memory = f"  peak memory: {facts.peak_rss_mb:.0f} MiB" if facts.peak_rss_mb else ""
    lines.append(f"time: {facts.seconds:.1f}s{memory}")
    return "\n".join(lines)
