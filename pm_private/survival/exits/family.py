"""The exit-table survival family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ...released.family import PROPORTIONAL_HAZARDS, Family, Hook

__all__ = ["SURVIVAL"]

#: Noise-aware piecewise-exponential proportional-hazards model of a released exit table.
SURVIVAL = Family.released(
    "survival",
    "pm_private.survival.exits",
    title="survival regression on an exit table",
    link=PROPORTIONAL_HAZARDS,
    command="survival",
    description="noise-aware piecewise-exponential proportional-hazards model of a released exit table",
    start="laplace",
    report=Hook("pm_private.cli.common:print_survival_report"),
    features=False,
)
