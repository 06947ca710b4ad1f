"""The logistic family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ..released.family import LOGIT, Family, Hook

__all__ = ["LOGISTIC"]

#: Noise-aware logistic regression on released degree-2 statistics.
LOGISTIC = Family(
    name="logistic",
    title="logistic regression",
    link=LOGIT,
    builder=Hook("pm_private.logistic.model:logistic_model"),
    predictor=Hook("pm_private.logistic.predict:predict_logistic"),
    release=Hook("pm_private.logistic.release:release_logistic_stats"),
    release_type=Hook("pm_private.logistic.release:LogisticStatsRelease"),
    setter=Hook("pm_private.logistic.model:set_logistic_stats"),
    noise_plan=Hook("pm_private.logistic.release:logistic_noise_plan"),
    kind="logistic_stats",
    command="logistic-stats",
    start="laplace",
    description="noise-aware Bayesian logistic regression on released degree-2 statistics "
    "(Kulkarni et al. 2021; Bernstein & Sheldon 2019)",
    constants=("x_center", "x_scale"),
    report=Hook("pm_private.cli.common:print_glm_report"),
)
