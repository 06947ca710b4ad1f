"""The survival-regression family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ...released.family import PROPORTIONAL_HAZARDS, Family, Hook

__all__ = ["SURVIVAL_REGRESSION"]

#: Noise-aware piecewise-exponential proportional-hazards regression on an exit table with covariate moments.
SURVIVAL_REGRESSION = Family(
    name="survival_regression",
    title="proportional-hazards regression",
    link=PROPORTIONAL_HAZARDS,
    builder=Hook("pm_private.survival.regression.model:survival_regression_model"),
    predictor=Hook("pm_private.survival.regression.predict:predict_survival_regression"),
    release=Hook("pm_private.survival.regression.release:release_survival_regression_stats"),
    release_type=Hook("pm_private.survival.regression.release:SurvivalRegressionStatsRelease"),
    setter=Hook("pm_private.survival.regression.model:set_survival_regression_stats"),
    noise_plan=Hook("pm_private.survival.regression.release:survival_regression_noise_plan"),
    kind="survival_regression_stats",
    command="survival-regression",
    # A diagonal mass matrix in PyMC's NUTS, nutpie's low-rank one: on a large release the Laplace start
    # collapsed and PyMC's dense adaptation mixed worst (Samplers page)
    start="adapt_diag",
    nutpie_adaptation="low_rank",
    description="noise-aware piecewise-exponential proportional-hazards regression on a released exit table "
    "with covariate moments",
    constants=("x_center", "x_scale"),
)
