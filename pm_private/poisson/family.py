"""The Poisson family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ..released.family import LOG, Family, Hook

__all__ = ["POISSON"]

#: Noise-aware Poisson regression on released degree-2 statistics (counts clipped to a public bound).
POISSON = Family.released(
    "poisson",
    "pm_private.poisson",
    title="Poisson regression",
    link=LOG,
    start="laplace",
    description="noise-aware Bayesian Poisson regression on released degree-2 statistics "
    "(Kulkarni et al. 2021; Bernstein & Sheldon 2019)",
    constants=("x_center", "x_scale"),
    report=Hook("pm_private.cli.common:print_glm_report"),
)
