"""``python -m rubriclab`` is the ``rubriclab`` command."""

import sys

from .cli import main

sys.exit(main())
