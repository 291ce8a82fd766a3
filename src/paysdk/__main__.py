"""``python -m paysdk``: the ``paysdk`` command line."""

from __future__ import annotations

import sys

from paysdk.cli import main

if __name__ == "__main__":
    sys.exit(main())
