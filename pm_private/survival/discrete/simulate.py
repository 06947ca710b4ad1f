"""Synthetic discrete-time survival records, and the explicit person-period table for checks."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special

from ...privacy.validation import as_float_array, check_count
from .data import DiscreteTimeData, check_link
from .spline import interval_basis

__all__ = ["SimulatedDiscreteTime", "expand_person_period", "simulate_discrete_time"]


def expand_person_period(data: DiscreteTimeData) -> tuple[np.ndarray, np.ndarray]:
    """The explicit person-period table: one row (A_s, xᵢ) per record i and interval s ≤ kᵢ, with
    response 1 only at s = kᵢ when δᵢ = 1.  Σᵢ(kᵢ + 1) rows: use only to check or benchmark.

    Parameters
    ----------
    data : DiscreteTimeData
        The records and the basis.

    Returns
    -------
    design : numpy.ndarray
        The rows (A_s, xᵢ), shape (Σᵢ(kᵢ + 1), e + d).
    response : numpy.ndarray
        The binary responses.
    """
    counts = data.interval + 1
    record = np.repeat(np.arange(data.n), counts)
    start = np.cumsum(counts) - counts
    period = np.arange(counts.sum()) - np.repeat(start, counts)
    design = np.hstack([data.basis[period], data.X[record]])
    response = ((period == data.interval[record]) & (data.event[record] == 1)).astype(np.float64)
    return design, response


def _inverse_link(z: np.ndarray, link: str) -> np.ndarray:
    if link == "logit":
        return special.expit(z)
    if link == "cloglog":
        return -np.expm1(-np.exp(z))
    return special.ndtr(z)


class SimulatedDiscreteTime(NamedTuple):
    """Synthetic records with the true parameters that generated them.

    Parameters
    ----------
    data : DiscreteTimeData
        The records and the basis.
    time : numpy.ndarray
        Scaled times (kᵢ + ½)/q.
    alpha : numpy.ndarray
        The true spline coefficients.
    beta : numpy.ndarray
        The true covariate effects.
    link : str
        The link of the hazard.
    """

    data: DiscreteTimeData
    time: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    link: str


def simulate_discrete_time(
    n: int, *, alpha, beta, q: int = 200, link: str = "logit", censoring: float = 0.3, rng=None
) -> SimulatedDiscreteTime:
    """Draw n records from the discrete-time hazard model with known (α, β) and the spline basis
    A = interval_basis(q, len(α)).

    xᵢ uniform in the unit ball of ℝᵈ; event interval Tᵢ = first s with Uᵢₛ < h_is (none: alive
    after q intervals); censoring interval uniform on 0 … q−1 with probability ``censoring``,
    else administrative at q − 1.  ``time`` = (kᵢ + ½)/q lies in interval kᵢ.

    Parameters
    ----------
    n : int
        The number of records, ≥ 1.
    alpha : array_like, shape (e,)
        The spline coefficients, e ≥ 2.
    beta : array_like, shape (d,)
        The covariate effects, d ≥ 1.
    q : int, default 200
        The number of intervals.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of the hazard.
    censoring : float, default 0.3
        The probability of random censoring, in [0, 1].
    rng : None, int or numpy.random.Generator
        Seed or generator of the simulation.

    Returns
    -------
    SimulatedDiscreteTime
        The records and the true parameters.

    Raises
    ------
    ValueError
        For invalid sizes, parameters, link or censoring probability.
    """
    check_link(link)
    n, q = check_count("n", n), check_count("q", q)
    alpha, beta = as_float_array(alpha, "alpha"), as_float_array(beta, "beta")
    if alpha.ndim != 1 or alpha.size < 2 or not np.isfinite(alpha).all():
        raise ValueError(f"alpha must be a finite vector of e ≥ 2 spline coefficients, got shape {alpha.shape}")
    if beta.ndim != 1 or beta.size < 1 or not np.isfinite(beta).all():
        raise ValueError(f"beta must be a finite vector of d ≥ 1 effects, got shape {beta.shape}")
    try:
        censoring = float(censoring)
    except (TypeError, ValueError):
        raise ValueError(f"censoring must be a probability in [0, 1], got {censoring!r}") from None
    if not 0.0 <= censoring <= 1.0:
        raise ValueError(f"censoring must be a probability in [0, 1], got {censoring!r}")
    rng = np.random.default_rng(rng)
    d = beta.size
    basis = interval_basis(q, alpha.size)
    direction = rng.standard_normal((n, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    X = direction * rng.uniform(size=(n, 1)) ** (1.0 / d)
    hazard = _inverse_link((basis @ alpha)[None, :] + (X @ beta)[:, None], link)
    fails = rng.uniform(size=(n, q)) < hazard
    event_at = np.where(fails.any(axis=1), fails.argmax(axis=1), q)
    censor_at = np.where(rng.uniform(size=n) < censoring, rng.integers(0, q, size=n), q - 1)
    interval = np.minimum(event_at, censor_at)
    event = (event_at <= censor_at).astype(np.int8)
    data = DiscreteTimeData(X, interval, event, basis)
    return SimulatedDiscreteTime(data, (interval + 0.5) / q, alpha, beta, link)
