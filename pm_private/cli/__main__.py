"""``python -m pm_private.cli``: the ``pm-private`` command."""

import sys

from . import main

sys.exit(main())
