"""The logistic family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ..released.family import LOGIT, Family, Hook

__all__ = ["LOGISTIC"]

#: Noise-aware logistic regression on released degree-2 statistics.
LOGISTIC = Family.released(
    "logistic",
    "pm_private.logistic",
    title="logistic regression",
    link=LOGIT,
    start="laplace",
    description="noise-aware Bayesian logistic regression on released degree-2 statistics "
    "(Kulkarni et al. 2021; Bernstein & Sheldon 2019)",
    constants=("x_center", "x_scale"),
    report=Hook("pm_private.cli.common:print_glm_report"),
)
