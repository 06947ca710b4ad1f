"""Noise-aware private logistic and Poisson regression: released degree-2 statistics (Kulkarni et
al. 2021; Huggins, Adams & Broderick 2017) and PyMC models of them with the release noise
marginalised."""

from .._engine.lazy import attach

_NAMES = {
    "LogisticStats": ".stats",
    "LogisticStatsRelease": ".stats",
    "logistic_sensitivity": ".stats",
    "logistic_stats": ".stats",
    "release_logistic_stats": ".stats",
    "logistic_model": ".model",
    "set_logistic_stats": ".model",
    "predict_logistic": ".model",
    "PoissonStats": ".poisson",
    "PoissonStatsRelease": ".poisson",
    "poisson_sensitivity": ".poisson",
    "poisson_stats": ".poisson",
    "release_poisson_stats": ".poisson",
    "poisson_model": ".model",
    "set_poisson_stats": ".model",
    "predict_poisson": ".model",
    "stat_moments": ".moments",
    "poisson_stat_moments": ".moments",
    "probit_mixture": ".moments",
    "laplace_nuts": ".sampling",
    "laplace_covariance": ".sampling",
    "laplace_restart": ".sampling",
    "laplace_start": ".sampling",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
