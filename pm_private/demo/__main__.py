"""``python -m pm_private.demo``: the same as ``pm-private demo``."""

import sys

from ..cli import main

if __name__ == "__main__":  # not when a worker process of the demo imports this module
    sys.exit(main(["demo", *sys.argv[1:]]))
