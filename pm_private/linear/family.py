"""The linear family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ..released.family import IDENTITY, Family, Hook

__all__ = ["LINEAR"]

#: Noise-aware Bayesian linear regression on released sufficient statistics.
LINEAR = Family(
    name="linear",
    title="linear regression",
    link=IDENTITY,
    builder=Hook("pm_private.linear.model:linear_model"),
    predictor=Hook("pm_private.linear.predict:predict_linear"),
    release=Hook("pm_private.linear.release:release_linear_stats"),
    release_type=Hook("pm_private.linear.stats:LinearStats"),
    setter=Hook("pm_private.linear.model:set_linear_stats"),
    noise_plan=Hook("pm_private.linear.release:linear_noise_plan"),
    kind="linear_stats",
    command="linear-stats",
    description="noise-aware Bayesian linear regression on released sufficient statistics "
    "(Bernstein & Sheldon 2019; Honkela et al. 2018)",
    report=Hook("pm_private.cli.common:print_linear_report"),
)
