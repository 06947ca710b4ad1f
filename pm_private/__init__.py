"""pm_private: differentially private Bayesian inference for PyMC.

Release functions take ``epsilon=``, an optional ``accountant=`` (a :class:`PrivacyAccountant`
that reserves the budget, or refuses an over-budget release, before any noise is drawn; in
memory, or a persistent ledger file shared by processes with ``PrivacyAccountant.open(path)``) and ``rng=`` (None: secure OS
randomness; a seed: reproducible and *not* private).  Neighbouring data sets differ by
replacing one record (bounded DP) unless a function says otherwise.

Subpackages
-----------
:mod:`~pm_private.privacy`
    General DP building blocks: accounting, secure noise, input validation.
:mod:`~pm_private.linear`
    Private sufficient statistics and Bayesian linear regression on them (Honkela et al. 2018),
    AdaSSP (Wang 2018).
:mod:`~pm_private.survival`
    Person-level private exit tables with noise-aware survival models (curves, hazard ratios,
    medians with intervals); censored Weibull and discrete-time hazard likelihoods and their
    private mechanisms (Nguyên & Hui 2017b: Weibull; Nguyên & Hui 2017a: discrete time).
:mod:`~pm_private.sampling`
    The sanitized-loss exponential mechanism, pSGLD (Li et al. 2016), refittable ADVI.
:mod:`~pm_private.released`
    Machinery shared by the released-statistics families: the degree-2 statistic layout, public
    preprocessing, covariate models, the Gaussian likelihood Op, Laplace-started NUTS.
:mod:`~pm_private.logistic`
    Private logistic regression: released degree-2 statistics with the noise-aware model (Kulkarni
    et al. 2021; Huggins, Adams & Broderick 2017), DP elastic net with private penalty selection
    (Yu et al. 2014), the data-perturbation baseline (Kang et al. 2020).
:mod:`~pm_private.poisson`
    Private Poisson regression: released degree-2 statistics of clipped counts with the
    noise-aware model (Kulkarni et al. 2021).
:mod:`~pm_private.datasets`
    Loaders and generators of example data.

The names below are importable from the top level; they load on first use, so
``import pm_private`` does not import PyMC.
"""

from ._engine.lazy import attach

_NAMES = {
    "REPLACE_ONE": ".privacy.budget",
    "BudgetExceededError": ".privacy.budget",
    "LedgerEntry": ".privacy.budget",
    "PrivacyAccountant": ".privacy.accountant",
    "Release": ".privacy.release",
    "LinearStatsLaplaceRelease": ".linear.release",
    "LinearStats": ".linear.stats",
    "release_linear_stats_laplace": ".linear.release",
    "release_linear_stats": ".linear.release",
    "linear_stats": ".linear.stats",
    "GaussianBounds": ".linear.bounds",
    "TuneResult": ".linear.bounds",
    "gaussian_bounds": ".linear.bounds",
    "tune_bounds": ".linear.bounds",
    "SuffStatRegression": ".linear.model",
    "linear_model": ".linear.model",
    "set_linear_stats": ".linear.model",
    "predict_linear": ".linear.predict",
    "posterior_predictive": ".linear.predict",
    "NoisySuffStatRegression": ".linear.noise_aware",
    "Preprocessing": ".released.preprocessing",
    "reference_law": ".released.copula_law",
    "AdaSSPRelease": ".linear.adaptive_ssp",
    "adassp": ".linear.adaptive_ssp",
    "PSGLD": ".sampling.psgld",
    "RefittableADVI": ".sampling.advi",
    "sanitized_loss": ".sampling.sanitized",
    "publishable": ".sampling.publish",
    "DPElasticNetLogisticRegression": ".logistic.elastic_net",
    "ElasticNetRelease": ".logistic.elastic_net",
    "PenaltySelectionRelease": ".logistic.penalty_selection",
    "select_penalty": ".logistic.penalty_selection",
    "DataPerturbationRelease": ".logistic.data_perturbation",
    "LogisticStatsRelease": ".logistic.release",
    "release_logistic_stats": ".logistic.release",
    "logistic_bounds": ".logistic.release",
    "logistic_model": ".logistic.model",
    "predict_logistic": ".logistic.predict",
    "set_logistic_stats": ".logistic.model",
    "PoissonStatsRelease": ".poisson.release",
    "release_poisson_stats": ".poisson.release",
    "poisson_bounds": ".poisson.release",
    "GLMBounds": ".released.bounds",
    "poisson_model": ".poisson.model",
    "predict_poisson": ".poisson.predict",
    "set_poisson_stats": ".poisson.model",
    "data_perturbation_sgd": ".logistic.data_perturbation",
    "SurvivalStatsRelease": ".survival.exits.release",
    "release_survival_stats": ".survival.exits.release",
    "survival_model": ".survival.exits.model",
    "set_survival_stats": ".survival.exits.model",
    "predict_survival": ".survival.exits.predict",
    "release_survival_regression_stats": ".survival.regression.release",
    "survival_regression_bounds": ".survival.regression.bounds",
    "survival_regression_model": ".survival.regression.model",
    "set_survival_regression_stats": ".survival.regression.model",
    "predict_survival_regression": ".survival.regression.predict",
    "plot_survival_function": ".survival.posterior",
    "release_check": ".released.checking",
    "fit_summary": ".released.summary",
    "laplace_approximation": ".released.sampling",
    "print_summary": ".released.summary",
    "sample": ".sampling.compiled_nuts",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
