"""What the two noise-aware models of a released exit table share: the exit table of
:func:`pm_private.survival.survival_model` and the table with covariate moments of
:func:`pm_private.survival.survival_regression_model`.

Both model censoring as a random walk per cell over the intervals (or none before the horizon),
record the event's cumulative hazard and survival at the interval ends, and take the release's
noise into account unless asked not to (an exact table has none).
"""

from __future__ import annotations

import pymc as pm
import pytensor.tensor as pt

from ..privacy.validation import check_bool
from ..released.reparametrisation import random_walk

__all__ = ["censoring_terms", "check_censoring", "resolve_noise_aware", "survival_deterministics"]


def check_censoring(censoring: str) -> None:
    """Refuse a censoring model other than a random walk per cell over the intervals
    (``"random_walk"``) or none before the horizon (``"none"``); ValueError naming it."""
    if censoring not in ("random_walk", "none"):
        raise ValueError(f"censoring must be 'random_walk' or 'none', got {censoring!r}")


def resolve_noise_aware(noise_aware: bool | None, exact: bool, refusal: str) -> bool:
    """Whether the model takes the release's noise into account: ``noise_aware`` checked, or by
    default whether the data are a release (not ``exact``); ValueError ``refusal`` where noise is
    asked of exact data, which have none."""
    noise_aware = (not exact) if noise_aware is None else check_bool("noise_aware", noise_aware)
    if exact and noise_aware:
        raise ValueError(refusal)
    return noise_aware


def censoring_terms(censoring: str, centre: float, priors: dict, shape: tuple[int, int], width, discrete: bool):
    """The censoring of each cell and interval, shape (K, J): 0 with ``censoring="none"``, else
    of the random walk ``censoring`` over the intervals (model variables ``censoring`` and
    ``censoring_step``), its interval hazard exp(walk)·Δⱼ in continuous time or its interval
    probability sigmoid(walk) in discrete time (grouped survival data, Kalbfleisch & Prentice
    2002, §4.2)."""
    if censoring == "none":
        return pt.zeros(shape)
    walk = random_walk(
        "censoring", centre, priors["censoring_sigma"], priors["censoring_step_sigma"], ("cell", "interval"), shape
    )
    return pt.sigmoid(walk) if discrete else pt.exp(walk) * width


def survival_deterministics(cumulative) -> None:
    """The deterministics ``cumulative_hazard`` (the event's, at the interval ends) and
    ``survival`` S = exp(−cumulative_hazard), dims (``cell``, ``interval``) (Kalbfleisch &
    Prentice 2002, ch. 1)."""
    cumulative = pm.Deterministic("cumulative_hazard", cumulative, dims=("cell", "interval"))
    pm.Deterministic("survival", pt.exp(-cumulative), dims=("cell", "interval"))
