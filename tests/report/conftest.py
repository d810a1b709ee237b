"""Fixtures for the report tests: small scan outputs built with ``default_rng(0)``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

PWNED = "<script>window.__pwned=1</script>"


def make_scan(n: int = 60, *, classes: tuple = ("food", "sport", "tech"), n_flagged: int = 6,
              strength: float = 6.0, seed: int = 0) -> pd.DataFrame:
    """A scan output as ``labelaudit scan --out`` writes it, most suspect first: the
    model's probabilities from a Dirichlet peaked on the given label (``strength``), the
    most suspect text holding a script tag."""
    rng = np.random.default_rng(seed)
    k = len(classes)
    given = rng.integers(k, size=n)
    alpha = np.ones((n, k))
    alpha[np.arange(n), given] += strength
    probs = np.vstack([rng.dirichlet(a) for a in alpha])
    given_prob = probs[np.arange(n), given]
    others = probs.copy()
    others[np.arange(n), given] = -1.0
    suggested = others.argmax(axis=1)
    names = np.array(classes, dtype=object)
    frame = pd.DataFrame({
        "id": [f"d{i}" for i in range(n)],
        "text": [f"item {i} about {names[given[i]]} & more" for i in range(n)],
        "label": names[given], "suggested_label": names[suggested],
        "suggested_prob": probs[np.arange(n), suggested], "given_prob": given_prob,
        "loss": -np.log(given_prob), "score_loss_tfidf": given_prob,
        "score_ensemble": given_prob})
    frame = frame.sort_values("given_prob", kind="stable", ignore_index=True)
    frame.insert(7, "rank", np.arange(1, n + 1))
    frame["flagged"] = frame["rank"] <= n_flagged
    frame.loc[0, "text"] = f"first {PWNED} <b>bold</b>"
    return frame


def token_records() -> list[dict]:
    """Three sentence records as ``labelaudit scan-tokens --out x.jsonl`` writes them."""
    def span(start, end, kind):
        return {"start": start, "end": end, "type": kind}

    return [
        {"id": "s0", "doc": 0, "rank": 1, "tokens": ["Rome", "beats", "<script>x</script>"],
         "tags": ["B-ORG", "O", "O"], "suggested_tags": ["B-LOC", "O", "O"], "score": 0.01,
         "score_softmin": 0.02, "token_scores": [-4.6, -0.1, -0.2], "scheme": "iob2",
         "issues": [{"kind": "wrong-type", "start": 0, "end": 1, "score": 0.01,
                     "source": "model", "given": [span(0, 1, "ORG")],
                     "suggested": [span(0, 1, "LOC")], "detail": "ORG -> LOC"}]},
        {"id": "s1", "doc": 0, "rank": 2, "tokens": ["John", "Smith", "left"],
         "tags": ["B-PER", "O", "O"], "suggested_tags": ["B-PER", "I-PER", "O"],
         "score": 0.05, "score_softmin": 0.06, "token_scores": [-0.1, -3.0, -0.1],
         "scheme": "iob2",
         "issues": [{"kind": "wrong-boundary", "start": 0, "end": 2, "score": 0.05,
                     "source": "model", "given": [span(0, 1, "PER")],
                     "suggested": [span(0, 2, "PER")], "detail": "PER[0:1] -> PER[0:2]"}]},
        {"id": "s2", "doc": 1, "rank": 3, "tokens": ["All", "quiet"], "tags": ["O", "O"],
         "suggested_tags": ["O", "O"], "score": 0.9, "score_softmin": 0.95,
         "token_scores": [-0.01, -0.02], "scheme": "iob2", "issues": []},
    ]


def reviews() -> pd.DataFrame:
    """Forty short reviews; item 1, a negative text, is labelled pos, and item 3 is the same
    text labelled neg: the scan flags item 1 and names item 3 as its conflicting duplicate."""
    good = ["a great film, loved it", "wonderful acting and a great story",
            "brilliant and moving", "i loved every minute", "great fun, superb cast"]
    bad = ["a waste of time, awful", "boring and awful plot", "terrible acting, a waste",
           "dull, boring, awful", "the worst film, a waste of money"]
    rng = np.random.default_rng(0)
    texts = [f"{(good if i % 2 == 0 else bad)[rng.integers(5)]} {i}" for i in range(40)]
    labels = ["pos" if i % 2 == 0 else "neg" for i in range(40)]
    texts[1] = texts[3] = "boring and awful, <b>a waste</b> of time"
    labels[1] = "pos"
    return pd.DataFrame({"text": texts, "label": labels})


@pytest.fixture
def make_reviews():
    """:func:`reviews`: a tiny text set to scan for real, with a planted error."""
    return reviews


@pytest.fixture
def scan_csv(tmp_path: Path) -> Path:
    path = tmp_path / "issues.csv"
    make_scan().to_csv(path, index=False)
    return path


@pytest.fixture
def tokens_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in token_records()), encoding="utf-8")
    return path


@pytest.fixture
def make_scan_frame():
    """:func:`make_scan`, for tests that need other sizes or classes."""
    return make_scan


@pytest.fixture
def records() -> list[dict]:
    return token_records()
