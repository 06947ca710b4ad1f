"""The linear family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ..released.family import IDENTITY, Family, Hook

__all__ = ["LINEAR"]

#: Noise-aware Bayesian linear regression on released sufficient statistics.
LINEAR = Family.released(
    "linear",
    "pm_private.linear",
    title="linear regression",
    link=IDENTITY,
    release_type=Hook("pm_private.linear.stats:LinearStats"),
    description="noise-aware Bayesian linear regression on released sufficient statistics "
    "(Bernstein & Sheldon 2019; Honkela et al. 2018)",
    report=Hook("pm_private.cli.common:print_linear_report"),
)
