"""``python -m rubriclab.testing --port 0 --latency 0.2``: serve the fake judge, print its URL."""

from __future__ import annotations

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
