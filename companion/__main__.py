"""``python -m companion`` is the ``doomcompanion`` command."""

from __future__ import annotations

import sys

from companion.cli import main

if __name__ == "__main__":
    sys.exit(main())
