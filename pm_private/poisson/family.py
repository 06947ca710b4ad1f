"""The Poisson family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ..released.family import LOG, Family, Hook

__all__ = ["POISSON"]

#: Noise-aware Poisson regression on released degree-2 statistics (counts clipped to a public bound).
POISSON = Family(
    name="poisson",
    title="Poisson regression",
    link=LOG,
    builder=Hook("pm_private.poisson.model:poisson_model"),
    predictor=Hook("pm_private.poisson.predict:predict_poisson"),
    release=Hook("pm_private.poisson.release:release_poisson_stats"),
    release_type=Hook("pm_private.poisson.release:PoissonStatsRelease"),
    setter=Hook("pm_private.poisson.model:set_poisson_stats"),
    noise_plan=Hook("pm_private.poisson.release:poisson_noise_plan"),
    kind="poisson_stats",
    command="poisson-stats",
    start="laplace",
    description="noise-aware Bayesian Poisson regression on released degree-2 statistics "
    "(Kulkarni et al. 2021; Bernstein & Sheldon 2019)",
    constants=("x_center", "x_scale"),
    report=Hook("pm_private.cli.common:print_glm_report"),
)
