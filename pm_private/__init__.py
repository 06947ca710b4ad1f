"""pm_private: differentially private Bayesian inference for PyMC.

Release functions take ``epsilon=``, an optional ``accountant=`` (a :class:`PrivacyAccountant`
that refuses over-budget releases before any noise is drawn) and ``rng=`` (None: secure OS
randomness; a seed: reproducible and *not* private).  Neighbouring data sets differ by
replacing one record (bounded DP) unless a function says otherwise.

Modules: :mod:`~pm_private.suffstats` and :mod:`~pm_private.regression` (paper 004),
:mod:`~pm_private.survival` (papers 003 and 000), :mod:`~pm_private.sanitized` and
:mod:`~pm_private.psgld` (paper 000's exponential mechanism and its sampler),
:mod:`~pm_private.elastic_net` and :mod:`~pm_private.penalty_selection` (paper 001),
:mod:`~pm_private.data_perturbation` (paper 002's baseline).
"""

from .accounting import REPLACE_ONE, BudgetExceededError, LedgerEntry, PrivacyAccountant
from .data_perturbation import DataPerturbationResult, data_perturbation_sgd
from .elastic_net import DPElasticNetLogisticRegression
from .penalty_selection import PenaltySelection, select_penalty
from .psgld import PSGLD
from .sanitized import sanitized_loss
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
    "PSGLD",
    "sanitized_loss",
    "DPElasticNetLogisticRegression",
    "PenaltySelection",
    "select_penalty",
    "DataPerturbationResult",
    "data_perturbation_sgd",
]
