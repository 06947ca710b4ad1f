"""The exit-table survival family's object: its hooks, read by the registry (:mod:`pm_private.families`)."""

from ...released.family import PROPORTIONAL_HAZARDS, Family, Hook

__all__ = ["SURVIVAL"]

#: Noise-aware piecewise-exponential proportional-hazards model of a released exit table.
SURVIVAL = Family(
    name="survival",
    title="survival regression on an exit table",
    link=PROPORTIONAL_HAZARDS,
    builder=Hook("pm_private.survival.exits.model:survival_model"),
    predictor=Hook("pm_private.survival.exits.predict:predict_survival"),
    release=Hook("pm_private.survival.exits.release:release_survival_stats"),
    release_type=Hook("pm_private.survival.exits.release:SurvivalStatsRelease"),
    setter=Hook("pm_private.survival.exits.model:set_survival_stats"),
    noise_plan=Hook("pm_private.survival.exits.release:survival_noise_plan"),
    kind="survival_stats",
    command="survival",
    description="noise-aware piecewise-exponential proportional-hazards model of a released exit table",
    start="laplace",
    report=Hook("pm_private.cli.common:print_survival_report"),
    features=False,
)
