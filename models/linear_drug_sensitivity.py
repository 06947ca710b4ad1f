"""Private drug-sensitivity prediction (Honkela et al. 2018) on GDSC-shaped built-in data: the
experiment that ``pm-private demo`` runs, from the repository (``python -m models.linear_drug_sensitivity``).
The experiment itself lives in :mod:`pm_private.demo`."""

from pm_private.compile_cache import use_compile_cache

use_compile_cache()

from pm_private.demo import main  # noqa: E402

if __name__ == "__main__":
    main()
