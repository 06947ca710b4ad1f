"""Noise-aware private Poisson regression: released degree-2 statistics of clipped counts (Kulkarni
et al. 2021; Huggins, Adams & Broderick 2017), the PyMC model of them with the release noise
marginalised, and its predictions."""

from .._engine.lazy import attach

_NAMES = {
    "count_bound": ".release",
    "poisson_bounds": ".release",
    "poisson_noise_plan": ".release",
    "PoissonStats": ".release",
    "PoissonStatsRelease": ".release",
    "poisson_sensitivity": ".release",
    "poisson_stats": ".release",
    "release_poisson_stats": ".release",
    "poisson_model": ".model",
    "set_poisson_stats": ".model",
    "predict_poisson": ".predict",
    "poisson_stat_moments": ".moments",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
