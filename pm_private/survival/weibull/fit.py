"""Maximum likelihood of the censored Weibull model (Nguyên & Hui 2017b, §III).

With shape p and scale λ the log-likelihood is
ℓ(p, λ) = Σ dᵢ (ln p + (p−1) ln tᵢ − p ln λ) − (tᵢ/λ)^p.
Setting ∂ℓ/∂λ = ∂ℓ/∂p = 0 gives the MLE equations

    Σ tᵢ^p ln tᵢ / Σ tᵢ^p = 1/p + Σ dᵢ ln tᵢ / Σ dᵢ        (4)
    λ^p = Σ tᵢ^p / Σ dᵢ                                  (5)

The left side of (4) is the tilted mean of ln t, non-decreasing in p (its derivative is the
tilted variance); the right side decreases, so (4) has at most one root, found by
:func:`weibull_mle` with safeguarded Newton steps inside a bracket.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..data import check_survival

__all__ = ["WeibullMLE", "weibull_mle"]


class WeibullMLE(NamedTuple):
    """Maximum-likelihood shape p and scale λ (λ in the units of the times).

    Parameters
    ----------
    shape : float
        The shape p.
    scale : float
        The scale λ.
    """

    shape: float
    scale: float


def _shape_root(z, d, *, p_max: float = 1e4, rtol: float = 1e-13, max_iter: int = 200):
    """Root p of (4) for each row of z = ln t − max ln t ≤ 0 (shape (m, n)), events d (m, n).

    Safeguarded Newton: F(p) = f(p) − 1/p − z̄_d, F′(p) = tilted variance + 1/p² > 0.  The bracket
    starts at lo = 1/(1 + |z̄_d|), where F(lo) ≤ −1 because f ≤ 0, and hi is doubled until
    F(hi) > 0.  Rows with no event, or F ≤ 0 up to ``p_max`` (no finite root, e.g. every event at
    the largest time), get +inf: the likelihood then increases without bound in p.
    """
    z = np.atleast_2d(z)
    d = np.atleast_2d(d).astype(np.float64)
    events = d.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar = (d * z).sum(axis=1) / events

    def F(p):
        w = np.exp(p[:, None] * z)
        s0, s1, s2 = w.sum(axis=1), (w * z).sum(axis=1), (w * z * z).sum(axis=1)
        f = s1 / s0
        return f - 1.0 / p - zbar, s2 / s0 - f * f + 1.0 / p**2

    ok = events > 0
    lo = np.where(ok, 1.0 / (1.0 + np.abs(np.nan_to_num(zbar))), 1.0)
    hi = 2.0 * lo
    while True:
        grow = ok & (F(hi)[0] <= 0) & (hi < p_max)
        if not grow.any():
            break
        hi = np.where(grow, 2.0 * hi, hi)
    ok &= F(hi)[0] > 0
    p = np.sqrt(lo * hi)
    for _ in range(max_iter):
        value, slope = F(p)
        lo = np.where(value < 0, p, lo)
        hi = np.where(value < 0, hi, p)
        step = p - value / slope
        p_new = np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi))
        done = (np.abs(p_new - p) <= rtol * p) | ~ok
        p = np.where(ok, p_new, p)
        if done.all():
            break
    return np.where(ok, p, np.inf)


def _scale_from_shape(z, d, p, z_max):
    """λ from (5): λ = t_max·(Σ e^{p z} / Σ d)^{1/p} with z = ln t − ln t_max."""
    z, d = np.atleast_2d(z), np.atleast_2d(d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_mean = np.log(np.exp(p[:, None] * z).sum(axis=1) / d.sum(axis=1))
        return np.exp(z_max + log_mean / p)


def mle_rows(log_t, d):
    """(p, λ) per row of log times (m, n); +inf where no finite MLE exists."""
    log_t = np.atleast_2d(log_t)
    z_max = log_t.max(axis=1)
    z = log_t - z_max[:, None]
    p = _shape_root(z, d)
    lam = np.where(np.isfinite(p), _scale_from_shape(z, d, np.where(np.isfinite(p), p, 1.0), z_max), np.inf)
    return p, lam


def weibull_mle(time, event) -> WeibullMLE:
    """Maximum-likelihood (p, λ) of censored Weibull data: the root of (4), then (5).

    Times must be > 0; the result does not depend on the time unit except λ, which is in the
    units of ``time``.

    Parameters
    ----------
    time : array_like, shape (n,)
        Follow-up times, > 0.
    event : array_like, shape (n,)
        1 for an observed event, 0 for right-censoring.

    Returns
    -------
    WeibullMLE
        The shape p and the scale λ.

    Raises
    ------
    ValueError
        For invalid times or events (a time of 0 included), or when the MLE does not exist (no
        event, or no finite root of (4), which happens when every event is at the longest time).
    """
    t, d = check_survival(time, event)
    if (t <= 0).any():
        raise ValueError(f"times must be > 0 for the Weibull MLE (first zero at index {np.flatnonzero(t <= 0)[0]})")
    if d.sum() == 0:
        raise ValueError("no events (all records censored): the Weibull MLE does not exist")
    p, lam = mle_rows(np.log(t), d)
    if not np.isfinite(p[0]):
        raise ValueError("equation (4) has no finite root: every event is at the longest time")
    return WeibullMLE(float(p[0]), float(lam[0]))
