"""The survival-regression family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ...released.family import PROPORTIONAL_HAZARDS, Family

__all__ = ["SURVIVAL_REGRESSION"]

#: Noise-aware piecewise-exponential proportional-hazards regression on an exit table with covariate moments.
SURVIVAL_REGRESSION = Family.released(
    "survival_regression",
    "pm_private.survival.regression",
    title="proportional-hazards regression",
    link=PROPORTIONAL_HAZARDS,
    command="survival-regression",
    # A diagonal mass matrix in PyMC's NUTS, nutpie's low-rank one: on a large release the Laplace start
    # collapsed and PyMC's dense adaptation mixed worst (Samplers page)
    start="adapt_diag",
    nutpie_adaptation="low_rank",
    # At 0.8 both samplers diverged in a few transitions of 2,000 on a d = 10, J = 20 release; at 0.9
    # nutpie hardly ever, at the same leapfrog steps per draw (Samplers page)
    target_accept=0.9,
    description="noise-aware piecewise-exponential proportional-hazards regression on a released exit table "
    "with covariate moments",
    constants=("x_center", "x_scale"),
)
