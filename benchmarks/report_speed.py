"""Time ``labelaudit.report.write_report`` on a synthetic 100,000-item scan output, and the
time headless Chromium takes to open the page.

The scan output is seeded (``--seed``): 20 classes, texts of 5 to 800 words, probabilities
from a Dirichlet with 8% of the labels moved to another class, the default ranking columns,
a flagged top 2% and Datalab columns (near-duplicates, outliers). Targets (issue 17):
render < 10 s, page < 5 MB, open < 3 s; printed, not asserted.

    python -m benchmarks.report_speed [--items 100000] [--top 500] [--out /tmp/report.html]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

WORDS = ("label", "error", "audit", "noise", "model", "class", "token", "review", "scan",
         "data", "sample", "cross", "fold", "loss", "rank", "score", "text", "given", "true",
         "annotator", "<script>alert(1)</script>", "café", "naïve", "Ω", "日本")


def synthetic_scan(n_items: int, *, n_classes: int = 20, seed: int = 0) -> pd.DataFrame:
    """A scan output as ``labelaudit scan --out`` writes it, most suspect first."""
    rng = np.random.default_rng(seed)
    classes = np.array([f"topic.{i:02d}" for i in range(n_classes)])
    true = rng.integers(n_classes, size=n_items)
    given = true.copy()
    wrong = rng.random(n_items) < 0.08
    given[wrong] = (true[wrong] + rng.integers(1, n_classes, size=int(wrong.sum()))) % n_classes
    alpha = np.full((n_items, n_classes), 0.3)
    alpha[np.arange(n_items), true] += 6.0
    probs = np.vstack([rng.dirichlet(a) for a in alpha])
    given_prob = probs[np.arange(n_items), given]
    others = probs.copy()
    others[np.arange(n_items), given] = -1.0
    suggested = others.argmax(axis=1)
    lengths = rng.integers(5, 800, size=n_items)
    vocab = np.array(WORDS)
    texts = [" ".join(vocab[rng.integers(len(vocab), size=k)]) for k in lengths]
    order = np.argsort(given_prob, kind="stable")
    dup = rng.random(n_items) < 0.01
    partner = np.where(dup, rng.integers(n_items, size=n_items), -1)
    frame = pd.DataFrame({
        "id": np.arange(n_items), "text": texts, "label": classes[given],
        "suggested_label": classes[suggested], "suggested_prob": probs[np.arange(n_items),
                                                                       suggested],
        "given_prob": given_prob, "loss": -np.log(np.clip(given_prob, 1e-12, 1.0)),
        "score_loss_tfidf": given_prob, "score_ensemble": given_prob,
        "score_margin": given_prob - probs[np.arange(n_items), suggested],
        "is_near_duplicate": dup,
        "near_duplicate_id": pd.Series(partner, dtype=object).where(dup, None),
        "is_outlier": rng.random(n_items) < 0.005, "outlier_score": rng.random(n_items)})
    frame = frame.iloc[order].reset_index(drop=True)
    frame.insert(7, "rank", np.arange(1, n_items + 1))
    frame["flagged"] = frame["rank"] <= int(0.02 * n_items)
    return frame


def open_seconds(page: Path) -> float | None:
    """Seconds headless Chromium takes from ``goto`` to the load event; None without it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        return None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium,
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page()
            start = time.perf_counter()
            tab.goto(page.resolve().as_uri(), wait_until="load", timeout=60_000)
            seconds = time.perf_counter() - start
            assert tab.evaluate("document.documentElement.getAttribute('data-ready')") == "1"
        finally:
            browser.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--top", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="keep the page here (default: a temp folder)")
    args = parser.parse_args()

    from labelaudit.report import write_report

    start = time.perf_counter()
    frame = synthetic_scan(args.items, seed=args.seed)
    build_s = time.perf_counter() - start
    folder = Path(tempfile.mkdtemp(prefix="labelaudit-report-"))
    source = folder / "issues.parquet"
    frame.to_parquet(source, index=False)
    out = args.out or folder / "report.html"
    start = time.perf_counter()
    write_report(source, out, top=args.top)
    render_s = time.perf_counter() - start
    size_mb = out.stat().st_size / 1e6
    opened = open_seconds(out)
    print(f"synthetic scan output: {args.items:,} items ({build_s:.1f} s to build)")
    print(f"render (read parquet + write_report): {render_s:6.2f} s   (target < 10 s)")
    print(f"page size:                            {size_mb:6.2f} MB  (target < 5 MB)")
    print("chromium open (goto until load):      "
          + ("  n/a (playwright or chromium missing)" if opened is None else
             f"{opened:6.2f} s   (target < 3 s)"))
    print(f"page: {out}")
    if args.out is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
