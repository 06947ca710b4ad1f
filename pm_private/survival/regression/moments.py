"""Mean and covariance of one person's contribution to the exit table with covariate moments,
under a Gaussian covariate law and a proportional-hazards model.

Model of one person: x ~ N(μ, Σ); exit k ∈ {event in interval j, censoring in interval j,
event-free at the horizon} with probability gₖ(a), a = xᵀβ + εw, w ~ N(0, 1) independent (a
frailty of s.d. ε = ``FRAILTY_SD``, negligible; it keeps every formula smooth at β = 0).  With
piecewise-constant hazards — event λⱼ·eᵃ, censoring κⱼ (not depending on x: non-informative,
covariate-free censoring), interval widths Δⱼ, uⱼ = λⱼΔⱼeᵃ, cⱼ = κⱼΔⱼ, rⱼ = uⱼ + cⱼ and
Rⱼ = exp(−Σ_{i<j} rᵢ) —

    g(event, j) = Rⱼ(1 − e^{−rⱼ})·uⱼ/rⱼ,   g(censored, j) = Rⱼ(1 − e^{−rⱼ})·cⱼ/rⱼ,
    g(event-free) = exp(−Σⱼ rⱼ),

as in the exit-table model (:mod:`pm_private.survival.exits.model`).  A person's contribution is
t = (yₖ, yₖ·x, upper(xxᵀ)), yₖ = 1{exit = k}, with yₖyₗ = δₖₗyₖ.  Its moments depend on x only
through the one-dimensional a: with m = βᵀμ, s² = βᵀΣβ + ε², z = (a − m)/s ~ N(0, 1),
ṽ = Σβ/s, and x = μ + ṽz + e, e ~ N(0, Σ − ṽṽᵀ) independent of z (the regression of x on a),

    Bᵣ,ₖ = E[gₖ(a)·Heᵣ(z)]       (r = 0…3; Heᵣ the probabilists' Hermite polynomials),
    E[yₖ] = B₀,ₖ,   E[yₖx] = B₀,ₖμ + B₁,ₖṽ,
    E[yₖxxᵀ] = B₀,ₖM₂ + B₁,ₖ(μṽᵀ + ṽμᵀ) + B₂,ₖṽṽᵀ,   M₂ = Σ + μμᵀ,

and E[yₖ·x⊗x⊗x] likewise (the Stein forms of ``pm_private.released.moments`` with Aᵣsʳ = Bᵣ
and v/s = ṽ).  Every Bᵣ,ₖ is a one-dimensional Gauss–Hermite sum over a = m + s·z at
``HERMITE_NODES`` nodes: cost O(J·Q), independent of n.  The covariance of t follows from
yₖyₗ = δₖₗyₖ and the Gaussian fourth moments of x (Isserlis).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ...released.moments import square_covariance, sym3, sym_vector_matrix

__all__ = ["FRAILTY_SD", "HERMITE_NODES", "exit_probabilities", "regression_stat_moments", "statistic_size"]

#: The s.d. ε of the frailty that keeps the moments smooth at β = 0 (module notes).
FRAILTY_SD = 1e-3

#: Gauss–Hermite nodes of the one-dimensional integrals over the linear predictor.
HERMITE_NODES = 48

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(HERMITE_NODES)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()  # expectations over z ~ N(0, 1)
_HERMITE = np.stack([np.ones_like(_NODES), _NODES, _NODES**2 - 1.0, _NODES**3 - 3.0 * _NODES])  # He₀…He₃


def statistic_size(J: int, d: int) -> int:
    """The number of statistics of one cell: (2J + 1)(1 + d) + d(d + 1)/2."""
    return (2 * J + 1) * (1 + d) + d * (d + 1) // 2


def exit_probabilities(a, log_event_increment, censor_increment):
    """gₖ(a) of the module notes for every a: shape (..., 2J + 1), in the release's exit order.

    Parameters
    ----------
    a : tensor (...)
        Linear predictors.
    log_event_increment : tensor (J,)
        log(λⱼΔⱼ): the baseline's log cumulative hazard over each interval.
    censor_increment : tensor (J,)
        κⱼΔⱼ: censoring's cumulative hazard over each interval (≥ 0).

    Returns
    -------
    tensor (..., 2J + 1)
        The probabilities of the J event exits, the J censoring exits and survival to the horizon.
    """
    event = pt.exp(a[..., None] + log_event_increment)
    total = event + censor_increment
    leave = -pt.expm1(-total)
    at_risk = pt.exp(-(pt.cumsum(total, axis=-1) - total))
    share = at_risk * leave / total
    return pt.concatenate(
        [share * event, share * censor_increment, pt.exp(-pt.sum(total, axis=-1))[..., None]], axis=-1
    )


def regression_stat_moments(beta, mu, cov, log_event_increment, censor_increment, d: int):
    """Mean and covariance of one person's t = (yₖ, yₖ·x, upper(xxᵀ)) (module notes).

    Parameters
    ----------
    beta : tensor (d,)
        Log hazard ratios per unit of each covariate.
    mu : tensor (d,)
        Covariate mean μ.
    cov : tensor (d, d)
        Covariate covariance Σ.
    log_event_increment : tensor (J,)
        log(λⱼΔⱼ).
    censor_increment : tensor (J,)
        κⱼΔⱼ.
    d : int
        The number of covariates.

    Returns
    -------
    mean : tensor (k,)
        E[t], k = :func:`statistic_size`, in the release's order: the 2J + 1 counts, the
        (2J + 1)·d covariate sums (exit-major), the upper triangle of xxᵀ (row-major).
    covariance : tensor (k, k)
        Cov[t].
    """
    beta, mu, cov = pt.as_tensor(beta), pt.as_tensor(mu), pt.as_tensor(cov)
    v = cov @ beta
    s = pt.sqrt(beta @ v + FRAILTY_SD**2)
    m = beta @ mu
    g = exit_probabilities(m + s * _NODES, log_event_increment, censor_increment)  # (Q, E)
    b = pt.as_tensor(_HERMITE * _WEIGHTS) @ g  # (4, E): B_r,k
    b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
    u = v / s  # ṽ
    m2 = cov + pt.outer(mu, mu)
    ex = b0[:, None] * mu[None, :] + b1[:, None] * u[None, :]  # E[y_k x], (E, d)
    sym = pt.outer(mu, u) + pt.outer(u, mu)
    egxx = b0[:, None, None] * m2 + b1[:, None, None] * sym + b2[:, None, None] * pt.outer(u, u)  # (E, d, d)
    m3 = mu[:, None, None] * mu[None, :, None] * mu[None, None, :] + sym_vector_matrix(mu, cov)
    t1 = sym3(u, mu, mu) + sym_vector_matrix(u, cov)
    t2 = sym3(mu, u, u)
    t3 = u[:, None, None] * u[None, :, None] * u[None, None, :]
    i, j = np.triu_indices(d)
    upper = i * d + j
    # E[y_k x_a x_i x_j] over the upper pairs (i, j): (E, d, P)
    egxxx = (
        b0[:, None, None] * m3.reshape((d, d * d))[:, upper][None]
        + b1[:, None, None] * t1.reshape((d, d * d))[:, upper][None]
        + b2[:, None, None] * t2.reshape((d, d * d))[:, upper][None]
        + b3[:, None, None] * t3.reshape((d, d * d))[:, upper][None]
    )
    exits = g.shape[-1]
    m2_upper = m2.reshape((d * d,))[upper]
    c33 = square_covariance(mu, cov, d)
    eye = pt.eye(exits)
    flat_ex = ex.reshape((exits * d,))
    c_yy = pt.diag(b0) - pt.outer(b0, b0)
    # Cov(y_k, y_l x) = δ_kl E[y_l x] − E[y_k] E[y_l x]
    c_y_yx = (eye[:, :, None] * ex[None, :, :]).reshape((exits, exits * d)) - pt.outer(b0, flat_ex)
    # Cov(y_k x, y_l x) = δ_kl E[y_k xxᵀ] − E[y_k x] E[y_l x]ᵀ
    block = (eye[:, None, :, None] * egxx[:, :, None, :]).reshape((exits * d, exits * d))
    c_yx_yx = block - pt.outer(flat_ex, flat_ex)
    c_y_xx = egxx.reshape((exits, d * d))[:, upper] - pt.outer(b0, m2_upper)
    c_yx_xx = egxxx.reshape((exits * d, upper.size)) - pt.outer(flat_ex, m2_upper)
    rows = [
        pt.concatenate([c_yy, c_y_yx, c_y_xx], axis=1),
        pt.concatenate([c_y_yx.T, c_yx_yx, c_yx_xx], axis=1),
        pt.concatenate([c_y_xx.T, c_yx_xx.T, c33], axis=1),
    ]
    mean = pt.concatenate([b0, flat_ex, m2_upper])
    return mean, pt.concatenate(rows, axis=0)
