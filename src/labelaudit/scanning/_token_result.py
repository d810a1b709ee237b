"""The result of a token scan: token, span and sentence scores and issues."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit.tokens import TokenDataset, TokenIssue

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TokenScanResult"]


@dataclass(frozen=True)
class TokenScanResult:
    """Result of :func:`scan_tokens` on the audited dataset.

    Attributes
    ----------
    dataset : TokenDataset
        The audited sentences.
    classes : tuple of str
        IOB2 tag classes (columns of ``pred_probs``).
    pred_probs : list of ndarray (n_tokens, n_classes)
        Out-of-sample token probabilities, one array per sentence.
    labels : list of ndarray of int
        Given IOB2 tags as indices into ``classes``.
    token_scores : list of ndarray
        ``log p(given tag)`` per token (lower = more suspect).
    sentence_scores, sentence_scores_softmin : ndarray of shape (n_sentences,)
        Worst-token and soft-min sentence scores (lower = more suspect).
    suggested_tags : list of list of str
        Most probable valid IOB2 tags per sentence.
    issues : list of tuple of TokenIssue
        Span, tag and rule issues of each sentence, most suspect first.
    scorer : str
        What produced the probabilities.
    """

    dataset: TokenDataset
    classes: tuple[str, ...]
    pred_probs: list[np.ndarray]
    labels: list[np.ndarray]
    token_scores: list[np.ndarray]
    sentence_scores: np.ndarray
    sentence_scores_softmin: np.ndarray
    suggested_tags: list[list[str]]
    issues: list[tuple[TokenIssue, ...]]
    scorer: str

    def ranking(self) -> np.ndarray:
        """Sentence indices, most suspect first (worst token, then soft-min, then order)."""
        n = len(self.sentence_scores)
        return np.lexsort((np.arange(n), self.sentence_scores_softmin, self.sentence_scores))

    def to_records(self) -> list[dict]:
        """One JSON-ready record per sentence, most suspect first.

        Fields: ``id, doc, rank, tokens, tags`` (given, in the input scheme),
        ``suggested_tags`` (input scheme), ``score`` (worst token), ``score_softmin``,
        ``token_scores`` (``log p(given tag)``), ``issues`` (list of issue objects) and
        ``scheme``.
        """
        ds = self.dataset
        return [{
            "id": ds.ids[i],
            "doc": int(ds.documents[i]),
            "rank": rank,
            "tokens": ds.tokens[i],
            "tags": ds.tags[i],
            "suggested_tags": ds.to_scheme(self.suggested_tags[i]),
            "score": float(f"{self.sentence_scores[i]:.6g}"),
            "score_softmin": float(f"{self.sentence_scores_softmin[i]:.6g}"),
            "token_scores": [float(f"{s:.5g}") for s in self.token_scores[i]],
            "issues": [issue.to_dict(ds.tokens[i]) for issue in self.issues[i]],
            "scheme": ds.scheme,
        } for rank, i in enumerate(self.ranking(), start=1)]

    def to_frame(self) -> pd.DataFrame:
        """One row per sentence, most suspect first: ``id, doc, rank, text, score,
        score_softmin, n_issues, issues`` (the issue kinds, comma-separated)."""
        import pandas as pd
        ds = self.dataset
        return pd.DataFrame([{
            "id": ds.ids[i],
            "doc": int(ds.documents[i]),
            "rank": rank,
            "text": " ".join(ds.tokens[i]),
            "score": float(self.sentence_scores[i]),
            "score_softmin": float(self.sentence_scores_softmin[i]),
            "n_issues": len(self.issues[i]),
            "issues": ",".join(sorted({x.kind for x in self.issues[i]})),
        } for rank, i in enumerate(self.ranking(), start=1)])

    def write(self, path: str | Path) -> Path:
        """What ``labelaudit scan-tokens --out PATH`` writes, atomically: records in a
        ``.jsonl`` file, one row per issue in ``.csv .tsv .json .parquet``, the text view of
        every sentence in ``.txt``."""
        from labelaudit.scanning._token_output import token_output_format, write_token_scan

        write_token_scan(self, str(path), format=token_output_format(str(path)), show=None)
        return Path(path)

    def issue_frame(self) -> pd.DataFrame:
        """One row per issue, most suspect first: ``id, rank, sentence_score, kind, source,
        start, end, text, given, suggested, score, detail`` (spans as ``TYPE[start:end]``)."""
        from labelaudit.tokens import issues_to_frame

        return issues_to_frame(self.to_records())

    def token_frame(self) -> pd.DataFrame:
        """One row per token: ``id, position, token, tag, suggested_tag, loss, score``."""
        import pandas as pd
        ds = self.dataset
        rows = []
        for i in range(len(ds)):
            for t, token in enumerate(ds.tokens[i]):
                score = float(self.token_scores[i][t])
                rows.append((ds.ids[i], t, token, ds.iob2_tags[i][t], self.suggested_tags[i][t],
                             -score, score))
        return pd.DataFrame(rows, columns=["id", "position", "token", "tag", "suggested_tag",
                                           "loss", "score"])
