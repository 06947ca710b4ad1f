"""``python -m pm_private.demo``: the same as ``pm-private demo``."""

import sys

from ..cli import main

sys.exit(main(["demo", *sys.argv[1:]]))
