"""Private Bayesian regression on real data sets that ship with installed packages, from the
repository (``python -m models.real_data_regression``).  The study itself lives in
:mod:`pm_private.experiments.real_data_regression`."""

from pm_private.compile_cache import use_compile_cache

use_compile_cache()

from pm_private.experiments.real_data_regression import main  # noqa: E402

if __name__ == "__main__":
    main()
