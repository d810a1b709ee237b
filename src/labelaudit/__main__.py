"""``python -m labelaudit`` runs the command line."""

import sys

from labelaudit.cli import main

if __name__ == "__main__":
    sys.exit(main())
