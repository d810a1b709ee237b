"""Measure a token scan against a corrected copy of the same sentences."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit._validation import check_int
from labelaudit.evaluation._evaluate import no_nan, warn_clipped
from labelaudit.evaluation._metrics import (
    HeadlineMetrics,
    detection_report,
    precision_at_k,
    recall_at_k,
)
from labelaudit.io import ResultFiles, json_lines
from labelaudit.tokens import TokenDataset, TokenIssue, convert_tags

if TYPE_CHECKING:
    import pandas as pd

_REQUIRED = ("id", "tokens", "tags", "score", "token_scores", "issues")


def read_token_issues(path: str | Path) -> list[dict]:
    """Read the JSONL written by ``labelaudit scan-tokens`` (one record per sentence)."""
    path = Path(path)
    records = []
    for number, record in json_lines(path):
        missing = [k for k in _REQUIRED if not isinstance(record, dict) or k not in record]
        if missing:
            raise InvalidInputError(
                f"{path}, line {number}: missing {', '.join(missing)}; expected the JSONL "
                "output of `labelaudit scan-tokens`"
            )
        records.append(record)
    if not records:
        raise InvalidInputError(f"{path}: no records")
    return records


@dataclass(frozen=True, kw_only=True)
class LevelMetrics(HeadlineMetrics):
    """The headline metrics of one ranking (token or sentence ``level``, ``method``) and
    ``precision_at_k[j]``, ``recall_at_k[j]`` at cut-off ``ks[j]``."""

    level: str
    method: str
    ks: tuple[int, ...]
    precision_at_k: tuple[float, ...]
    recall_at_k: tuple[float, ...]

    def to_dict(self) -> dict[str, object]:
        """The fields as a plain dict: ``level, method``, the headline metrics, the cut-offs."""
        return {"level": self.level, "method": self.method, **asdict(self)}


@dataclass(frozen=True)
class SpanPrecision:
    """Precision of the top issues: a *hit* when the correction changes a tag in its region,
    a *fix* when the corrected tags are the suggested ones."""

    source: str
    n_issues: int
    ks: tuple[int, ...]
    hit_precision_at_k: tuple[float, ...]
    fix_precision_at_k: tuple[float, ...]
    kinds: tuple[str, ...]
    kind_counts: tuple[int, ...]
    kind_hits: tuple[int, ...]


@dataclass(frozen=True)
class TokenEvaluation(ResultFiles):
    """Token-, sentence- and span-level quality of a token scan."""

    levels: tuple[LevelMetrics, ...]
    spans: tuple[SpanPrecision, ...]
    n_sentences: int
    n_tokens: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields (NaN, for example the precision of no issues, becomes None)."""
        return no_nan({
            "n_sentences": self.n_sentences,
            "n_tokens": self.n_tokens,
            "levels": [x.to_dict() for x in self.levels],
            "spans": [asdict(x) for x in self.spans],
        })

    def to_frame(self) -> pd.DataFrame:
        """One row per ranking (``level, method, n_items, n_errors, aupr, ap, p@err, r@2err,
        p@k..., r@k...``), then one per issue source with span precision."""
        import pandas as pd
        rows = []
        for x in self.levels:
            row = {"level": x.level, "method": x.method, "n_items": x.n_items,
                   "n_errors": x.n_errors, "aupr": x.aupr, "ap": x.average_precision,
                   "p@err": x.precision_at_err, "r@2err": x.recall_at_2err}
            row.update({f"p@{k}": p for k, p in zip(x.ks, x.precision_at_k, strict=False)})
            row.update({f"r@{k}": r for k, r in zip(x.ks, x.recall_at_k, strict=False)})
            rows.append(row)
        for s in self.spans:
            row = {"level": "span", "method": f"{s.source} issues", "n_items": s.n_issues}
            row.update({f"p@{k}": p for k, p in zip(s.ks, s.hit_precision_at_k, strict=False)})
            row.update({f"fix@{k}": p for k, p in zip(s.ks, s.fix_precision_at_k, strict=False)})
            rows.append(row)
        frame = pd.DataFrame(rows)
        return frame.astype({"n_items": "Int64", "n_errors": "Int64"})


def _iob2(tags: Sequence[str], scheme: str) -> list[str]:
    if scheme in ("iob2", "plain"):
        return list(tags)
    if scheme not in ("iob1", "bioes"):
        raise InvalidInputError(f"unknown scheme {scheme!r} in the scan output")
    return convert_tags(tags, source=scheme, target="iob2")  # type: ignore[arg-type]


def _level(level: str, method: str, is_error: np.ndarray, scores: np.ndarray,
           ks: tuple[int, ...]) -> LevelMetrics:
    if is_error.all() or not is_error.any():
        raise InvalidInputError(
            f"the corrected copy has {'only' if is_error.all() else 'no'} {level}-level "
            "differences; metrics need both errors and clean items"
        )
    return LevelMetrics(
        **detection_report(is_error, scores).headline(), level=level, method=method, ks=ks,
        precision_at_k=tuple(float(precision_at_k(is_error, scores, k=k)) for k in ks),
        recall_at_k=tuple(float(recall_at_k(is_error, scores, k=k)) for k in ks),
    )


def _region_tags(issue: TokenIssue) -> list[str]:
    tags = ["O"] * (issue.end - issue.start)
    for s in issue.suggested:
        a, b = max(s.start, issue.start) - issue.start, min(s.end, issue.end) - issue.start
        if a < b:
            tags[a] = f"B-{s.type}" if s.type else "O"
            for t in range(a + 1, b):
                tags[t] = f"I-{s.type}"
    return tags


def _spans(source: str, found: list[tuple[float, int, TokenIssue, list[str], list[str], bool]],
           ks: tuple[int, ...]) -> SpanPrecision:
    found = sorted(found, key=lambda x: (x[0], x[1]))
    hits = np.array([given[x.start:x.end] != truth[x.start:x.end]
                     for _, _, x, given, truth, _ in found], dtype=bool)
    fixes = []
    for _, _, x, _, truth, plain in found:
        expected = [s.type for s in x.suggested] if plain else _region_tags(x)
        fixes.append(truth[x.start:x.end] == expected)
    fixes_arr = np.array(fixes, dtype=bool)
    kinds = tuple(sorted({x.kind for _, _, x, *_ in found}))
    return SpanPrecision(
        source=source, n_issues=len(found), ks=ks,
        hit_precision_at_k=tuple(float(hits[:k].mean()) if len(hits) else float("nan")
                                 for k in ks),
        fix_precision_at_k=tuple(float(fixes_arr[:k].mean()) if len(hits) else float("nan")
                                 for k in ks),
        kinds=kinds,
        kind_counts=tuple(sum(x.kind == k for _, _, x, *_ in found) for k in kinds),
        kind_hits=tuple(int(sum(h for (_, _, x, *_), h in zip(found, hits, strict=True)
                                if x.kind == k))
                        for k in kinds),
    )


def evaluate_tokens(records: Sequence[dict], truth: TokenDataset, *,
                    ks: Sequence[int] = (10, 50, 100)) -> TokenEvaluation:
    """Compare a token scan with a corrected copy of the same sentences.

    Parameters
    ----------
    records
        Sentence records of a scan (``TokenScanResult.to_records()`` or the JSONL of
        ``labelaudit scan-tokens``), matched to ``truth`` by sentence id.
    truth
        The corrected data: same sentences, same tokens, corrected tags.
    ks
        Cut-offs for precision and recall at k; one beyond the sentences is clipped, with
        a :class:`CutoffWarning`.

    Returns
    -------
    TokenEvaluation
        Token level (``log p(given tag)``) and sentence level (worst token, soft-min) metrics
        as :func:`detection_report` and P/R@k; the precision of the top issues by source
        (model, rule): a hit when the correction changes a tag in the region, a fix when it
        equals the suggestion.
    """
    if isinstance(ks, (str, bytes)) or not len(ks):
        raise InvalidParameterError(f"ks must be a non-empty list of cut-offs; got {ks!r}")
    ks = tuple(check_int(k, "ks", minimum=1) for k in ks)
    index = {repr(i): n for n, i in enumerate(truth.ids)}
    missing = [r["id"] for r in records if repr(r["id"]) not in index]
    if missing:
        raise InvalidInputError(
            f"{len(missing)} sentence ids of the scan are not in the corrected copy "
            f"(first: {missing[:5]}); both must come from the same file"
        )
    mismatched = [r["id"] for r in records
                  if list(r["tokens"]) != truth.tokens[index[repr(r["id"])]]]
    if mismatched:
        raise InvalidInputError(
            f"tokens differ between the scan and the corrected copy in sentences "
            f"{mismatched[:5]}{' and more' if len(mismatched) > 5 else ''}; the corrected copy "
            "must keep the tokens and change tags only"
        )
    tok_err, tok_score, sent_err, sent_min, sent_soft = [], [], [], [], []
    found: dict[str, list] = {"model": [], "rule": []}
    for r in records:
        scheme = r.get("scheme", "iob2")
        given = _iob2(r["tags"], scheme)
        true = truth.iob2_tags[index[repr(r["id"])]]
        errors = [g != t for g, t in zip(given, true, strict=False)]
        if len(r["token_scores"]) != len(given):
            raise InvalidInputError(f"sentence {r['id']!r}: token_scores and tags differ in length")
        tok_err.extend(errors)
        tok_score.extend(r["token_scores"])
        sent_err.append(any(errors))
        sent_min.append(r["score"])
        sent_soft.append(r.get("score_softmin", r["score"]))
        for issue in r["issues"]:
            x = TokenIssue.from_dict(issue)
            found.setdefault(x.source, []).append(
                (x.score, int(r.get("rank", 0)), x, given, true, scheme == "plain"))
    warn_clipped(ks, len(records), name="ks", items="sentences", stacklevel=2)
    levels = (
        _level("token", "loss", np.array(tok_err), np.array(tok_score, dtype=float), ks),
        _level("sentence", "min", np.array(sent_err), np.array(sent_min, dtype=float), ks),
        _level("sentence", "softmin", np.array(sent_err), np.array(sent_soft, dtype=float), ks),
    )
    everything = found["model"] + found["rule"]
    spans = tuple(_spans(s, items, ks) for s, items in
                  (("model", found["model"]), ("rule", found["rule"]), ("all", everything)))
    return TokenEvaluation(levels=levels, spans=spans, n_sentences=len(records),
                           n_tokens=len(tok_err))
