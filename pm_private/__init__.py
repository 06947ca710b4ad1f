"""pm_private: differentially private Bayesian inference for PyMC.

Release functions take ``epsilon=``, an optional ``accountant=`` (a :class:`PrivacyAccountant`
that refuses over-budget releases before any noise is drawn) and ``rng=`` (None: secure OS
randomness; a seed: reproducible and *not* private).  Neighbouring data sets differ by
replacing one record (bounded DP) unless a function says otherwise.
"""

from .accounting import REPLACE_ONE, BudgetExceededError, LedgerEntry, PrivacyAccountant
from .suffstats import ReleaseInfo, SuffStats, release_suff_stats, suff_stats
from .tuning import TuneResult, tune_release

__all__ = [
    "REPLACE_ONE",
    "BudgetExceededError",
    "LedgerEntry",
    "PrivacyAccountant",
    "ReleaseInfo",
    "SuffStats",
    "release_suff_stats",
    "suff_stats",
    "TuneResult",
    "tune_release",
]
