"""Scan quality on the text datasets: every ranking method's AUPR next to cleanlab's.

This was the first scan benchmark; it is now the text part of the harness
(``python -m benchmarks``), kept under its old name:

    python benchmarks/scan_quality.py [--datasets chaosnli_snli,snow2008_rte] [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.__main__ import main

    sys.exit(main(["--no-tokens", *sys.argv[1:]]))
