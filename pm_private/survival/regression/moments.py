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

as in the exit-table model (:mod:`pm_private.survival.exits.model`); the grouped (discrete-time)
proportional-hazards model changes only how censoring competes (:func:`exit_probabilities`).  A
person's contribution is
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

from typing import NamedTuple

import numpy as np
import pytensor.tensor as pt

from ...released.moments import square_covariance, sym3, sym_vector_matrix
from ..exits.model import competing_exits, discrete_exits

__all__ = [
    "FRAILTY_SD",
    "HERMITE_NODES",
    "StatBlocks",
    "block_order",
    "dense_moments",
    "exit_probabilities",
    "regression_stat_blocks",
    "regression_stat_moments",
    "statistic_size",
]

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


def exit_probabilities(a, log_event_increment, censoring, discrete: bool = False):
    """gₖ(a) of the module notes for every a: shape (..., 2J + 1), in the release's exit order.

    Parameters
    ----------
    a : tensor (...)
        Linear predictors.
    log_event_increment : tensor (J,)
        log(λⱼΔⱼ): the baseline's log cumulative hazard over each interval.
    censoring : tensor (J,)
        Continuous time: κⱼΔⱼ, censoring's cumulative hazard over each interval (≥ 0), competing
        with the event inside it.  Discrete time: the probability cⱼ of being censored at the end
        of interval j having survived it.
    discrete : bool, default False
        The grouped (discrete-time) proportional-hazards model of Kalbfleisch & Prentice (2002,
        §4.8): hⱼ(a) = 1 − exp(−λⱼΔⱼeᵃ), the complementary log-log link, with censoring after the
        interval's event risk: g(event, j) = Rⱼhⱼ, g(censored, j) = Rⱼ(1 − hⱼ)cⱼ,
        Rⱼ = Π_{i<j}(1 − hᵢ)(1 − cᵢ).

    Returns
    -------
    tensor (..., 2J + 1)
        The probabilities of the J event exits, the J censoring exits and survival to the horizon.
    """
    event = pt.exp(a[..., None] + log_event_increment)
    if discrete:
        events, censored, survivors = discrete_exits(-event, -pt.expm1(-event), censoring)
    else:
        events, censored, survivors = competing_exits(event, censoring)
    return pt.concatenate([events, censored, survivors[..., None]], axis=-1)


def block_order(J: int, d: int) -> np.ndarray:
    """Positions, in the release's order, of the statistics in exit-block order: for each exit k,
    (count k, its d covariate sums), then the upper triangle of Σxxᵀ."""
    exits = 2 * J + 1
    per_exit = [np.concatenate([[k], exits + k * d + np.arange(d)]) for k in range(exits)]
    return np.concatenate([*per_exit, exits * (1 + d) + np.arange(d * (d + 1) // 2)])


class StatBlocks(NamedTuple):
    """The first two raw moments of one person's contribution t, in exit-block order.

    Since yₖyₗ = δₖₗyₖ, E[ttᵀ] is block-arrowhead: one (d + 1) × (d + 1) block per exit,
    E[yₖ(1, x)(1, x)ᵀ], a border E[yₖ(1, x)·upper(xxᵀ)ᵀ] = Σᵣ Bᵣ,ₖ·Hᵣ and a corner
    E[upper(xxᵀ)upper(xxᵀ)ᵀ].  The border's four (d + 1) × P bases Hᵣ do not depend on the exit
    (module notes: only the Bᵣ,ₖ do), which the likelihood uses.
    """

    #: E[yₖ(1, x)], shape (2J + 1, d + 1).
    exit_mean: object
    #: E[yₖ(1, x)(1, x)ᵀ], shape (2J + 1, d + 1, d + 1).
    exit_second: object
    #: Bᵣ,ₖ = E[gₖ(a)·Heᵣ(z)], shape (2J + 1, 4).
    border_weight: object
    #: Hᵣ, shape (4, d + 1, P), P = d(d + 1)/2: E[yₖ(1, x)·upper(xxᵀ)ᵀ] = Σᵣ Bᵣ,ₖHᵣ.
    border_basis: object
    #: E[upper(xxᵀ)], shape (P,).
    square_mean: object
    #: E[upper(xxᵀ)upper(xxᵀ)ᵀ], shape (P, P).
    square_second: object


def regression_stat_blocks(beta, mu, cov, log_event_increment, censoring, d: int, discrete: bool = False) -> StatBlocks:
    """The raw moments E[t] and E[ttᵀ] of one person's t = (yₖ, yₖ·x, upper(xxᵀ)) by blocks
    (module notes; :class:`StatBlocks`).

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
    censoring : tensor (J,)
        κⱼΔⱼ, or the censoring probabilities of the discrete-time model (:func:`exit_probabilities`).
    d : int
        The number of covariates.
    discrete : bool, default False
        The grouped (discrete-time) model of :func:`exit_probabilities`.

    Returns
    -------
    StatBlocks
    """
    beta, mu, cov = pt.as_tensor(beta), pt.as_tensor(mu), pt.as_tensor(cov)
    v = cov @ beta
    s = pt.sqrt(beta @ v + FRAILTY_SD**2)
    m = beta @ mu
    g = exit_probabilities(m + s * _NODES, log_event_increment, censoring, discrete)  # (Q, E)
    b = pt.as_tensor(_HERMITE * _WEIGHTS) @ g  # (4, E): B_r,k
    b0, b1 = b[0], b[1]
    u = v / s  # ṽ
    m2 = cov + pt.outer(mu, mu)
    sym = pt.outer(mu, u) + pt.outer(u, mu)
    i, j = np.triu_indices(d)
    upper = i * d + j
    # E[y_k xxᵀ] = Σ_r B_r,k·(M₂, μṽᵀ + ṽμᵀ, ṽṽᵀ, 0)_r and E[y_k x_a·x_i x_j] = Σ_r B_r,k·(the third-moment
    # Stein forms)_r: the basis of the border, row 0 for y_k and rows 1…d for y_k·x.
    square_basis = pt.stack([m2, sym, pt.outer(u, u), pt.zeros((d, d))])  # (4, d, d)
    third_basis = pt.stack(
        [
            mu[:, None, None] * mu[None, :, None] * mu[None, None, :] + sym_vector_matrix(mu, cov),
            sym3(u, mu, mu) + sym_vector_matrix(u, cov),
            sym3(mu, u, u),
            u[:, None, None] * u[None, :, None] * u[None, None, :],
        ]
    )  # (4, d, d, d)
    border_basis = pt.concatenate(
        [square_basis.reshape((4, 1, d * d))[:, :, upper], third_basis.reshape((4, d, d * d))[:, :, upper]], axis=1
    )
    ex = b0[:, None] * mu[None, :] + b1[:, None] * u[None, :]  # E[y_k x], (E, d)
    egxx = pt.tensordot(b.T, square_basis, axes=1)  # E[y_k xxᵀ], (E, d, d)
    exit_mean = pt.concatenate([b0[:, None], ex], axis=1)
    exit_second = pt.concatenate([exit_mean[:, None, :], pt.concatenate([ex[:, :, None], egxx], axis=2)], axis=1)
    square_mean = m2.reshape((d * d,))[upper]
    square_second = square_covariance(mu, cov, d) + pt.outer(square_mean, square_mean)
    return StatBlocks(exit_mean, exit_second, b.T, border_basis, square_mean, square_second)


def dense_moments(blocks: StatBlocks, J: int, d: int):
    """E[t] and Cov[t] as a vector and a dense matrix in the release's order (for draws of
    replicated releases and for checks; the likelihood uses the blocks)."""
    exits = 2 * J + 1
    p = d + 1
    eye = pt.eye(exits)
    diagonal = (eye[:, None, :, None] * blocks.exit_second[:, :, None, :]).reshape((exits * p, exits * p))
    border = pt.tensordot(blocks.border_weight, blocks.border_basis, axes=1).reshape((exits * p, -1))
    second = pt.concatenate(
        [pt.concatenate([diagonal, border], axis=1), pt.concatenate([border.T, blocks.square_second], axis=1)], axis=0
    )
    mean = pt.concatenate([blocks.exit_mean.reshape((exits * p,)), blocks.square_mean])
    back = np.argsort(block_order(J, d))
    return mean[back], (second - pt.outer(mean, mean))[back][:, back]


def regression_stat_moments(beta, mu, cov, log_event_increment, censoring, d: int, J: int, discrete: bool = False):
    """Mean and covariance of one person's t = (yₖ, yₖ·x, upper(xxᵀ)) (module notes), dense.

    Parameters
    ----------
    beta, mu, cov, log_event_increment, censoring, d, discrete
        As for :func:`regression_stat_blocks`.
    J : int
        The number of intervals.

    Returns
    -------
    mean : tensor (k,)
        E[t], k = :func:`statistic_size`, in the release's order: the 2J + 1 counts, the
        (2J + 1)·d covariate sums (exit-major), the upper triangle of xxᵀ (row-major).
    covariance : tensor (k, k)
        Cov[t].
    """
    blocks = regression_stat_blocks(beta, mu, cov, log_event_increment, censoring, d, discrete)
    return dense_moments(blocks, J, d)
