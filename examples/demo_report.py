"""Print how many of the demo's planted errors landed at the top of a scan's ranking.

    python examples/demo_report.py examples/out/issues.csv examples/news_headlines_truth.csv
"""

from __future__ import annotations

import sys

import pandas as pd


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    issues = pd.read_csv(argv[0])
    truth = pd.read_csv(argv[1])
    joined = issues.merge(truth, on="id", how="left", validate="one_to_one")
    n_errors = int(truth["is_error"].sum())
    print("\nthe ten most suspect headlines:")
    top = joined.head(10)
    for row in top.itertuples():
        mark = "planted error" if row.is_error else "correct label"
        print(f"  {row.rank:>4}  {row.label:>9} -> {row.suggested_label:<9} "
              f"p={row.suggested_prob:.2f}  [{mark}]  {row.text}")
    for k in (n_errors, 2 * n_errors):
        found = int(joined.head(k)["is_error"].sum())
        print(f"planted errors in the top {k}: {found} of {n_errors} "
              f"(precision {found / k:.2f}, recall {found / n_errors:.2f})")
    flagged = joined[joined["flagged"]]
    print(f"flagged: {len(flagged)} items, of which {int(flagged['is_error'].sum())} are "
          "planted errors")
    fixed = joined[joined["is_error"]].head(n_errors)
    right = int((fixed["suggested_label"] == fixed["true_label"]).sum())
    print(f"suggested label equals the true label for {right} of {len(fixed)} planted errors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
