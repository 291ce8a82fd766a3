"""``python -m paysdk.sandbox [options]``: the same as ``paysdk sandbox [options]``."""

from __future__ import annotations

import sys

from paysdk.cli import main

if __name__ == "__main__":
    sys.exit(main(["sandbox", *sys.argv[1:]]))
