"""Compiled (Numba) moments of one person's contribution to the exit table with covariate moments,
and their reverse-mode derivative.

The same quantities as :func:`pm_private.survival.regression.moments.regression_stat_blocks` (its
module notes give the model), computed by loops over the Gauss–Hermite nodes, exits and covariate
indices, so that the log-density of a release and its gradient are one compiled function of the
parameters rather than a PyTensor graph of some thousand nodes.  :func:`cell_moments_adjoint`
takes the adjoints of the blocks (as :func:`cell_moments` returns them) to those of β, μ, Σ and the
hazards by the chain rule, written out step by step in the reverse order of :func:`cell_moments`
(Griewank & Walther 2008, ch. 3).  Every kernel is compiled once per machine (``cache=True``).

References
----------
Griewank, A. & Walther, A. (2008). Evaluating Derivatives, 2nd ed. SIAM.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..._engine.numba_arrays import outer
from ...released.moment_ops import square_covariance, square_covariance_adjoint, upper_pairs
from ..exit_kernels import exits_adjoint_into, exits_into
from .moments import _HERMITE, _NODES, _WEIGHTS, FRAILTY_SD

__all__ = ["cell_moments", "cell_moments_adjoint"]

#: Gauss–Hermite weights times the Hermite polynomials He₀…He₃ at the nodes, (4, Q).
_HW = np.ascontiguousarray(_HERMITE * _WEIGHTS)
_Z = np.ascontiguousarray(_NODES)


@numba.njit(cache=True)
def _third_basis(mu, u, cov, first, second):
    """The rows 1…d of the border's bases: E[yₖ xₐ·xᵢxⱼ] = Σᵣ Bᵣ,ₖ·T[r, a, (i, j)], (4, d, P)."""
    d, size = mu.shape[0], first.shape[0]
    out = np.empty((4, d, size))
    for x in range(d):
        for q in range(size):
            y, z = first[q], second[q]
            out[0, x, q] = mu[x] * mu[y] * mu[z] + mu[x] * cov[y, z] + mu[y] * cov[x, z] + mu[z] * cov[x, y]
            out[1, x, q] = (
                u[x] * mu[y] * mu[z] + mu[x] * u[y] * mu[z] + mu[x] * mu[y] * u[z]
                + u[x] * cov[y, z] + u[y] * cov[x, z] + u[z] * cov[x, y]
            )  # fmt: skip
            out[2, x, q] = mu[x] * u[y] * u[z] + u[x] * mu[y] * u[z] + u[x] * u[y] * mu[z]
            out[3, x, q] = u[x] * u[y] * u[z]
    return out


@numba.njit(cache=True)
def _linear_predictor(beta, mu, cov):
    """(v = Σβ, s = (βᵀΣβ + ε²)^½, m = βᵀμ) of the moments' module notes."""
    v = cov @ beta
    return v, math.sqrt(beta @ v + FRAILTY_SD**2), beta @ mu


@numba.njit(cache=True)
def _hermite_weights(m, s, lei, cens, discrete):
    """Bᵣ,ₖ = E[gₖ(a)·Heᵣ(z)] by Gauss–Hermite quadrature, (4, 2J + 1)."""
    g = np.empty((_Z.shape[0], 2 * lei.shape[0] + 1))
    increments = np.exp(lei)
    for q in range(_Z.shape[0]):
        exits_into(math.exp(m + s * _Z[q]), increments, cens, discrete, g[q])
    return _HW @ g


@numba.njit(cache=True)
def _square_basis(mu, u, cov):
    """(M₂, μṽᵀ + ṽμᵀ, ṽṽᵀ, 0): E[yₖxxᵀ] = Σᵣ Bᵣ,ₖ·(this)ᵣ, (4, d, d)."""
    d = mu.shape[0]
    out = np.zeros((4, d, d))
    for i in range(d):
        for j in range(d):
            out[0, i, j] = cov[i, j] + mu[i] * mu[j]
            out[1, i, j] = mu[i] * u[j] + u[i] * mu[j]
            out[2, i, j] = u[i] * u[j]
    return out


@numba.njit(cache=True, nogil=True)
def cell_moments(beta, mu, cov, lei, cens, discrete):
    """The blocks of :class:`~pm_private.survival.regression.moments.StatBlocks` for one cell.

    Parameters
    ----------
    beta, mu : float64 arrays (d,)
        Log hazard ratios and the covariate mean.
    cov : float64 array (d, d)
        The covariate covariance.
    lei, cens : float64 arrays (J,)
        log(λⱼΔⱼ) and the censoring terms (cumulative hazards, or probabilities if ``discrete``).
    discrete : bool
        The grouped (discrete-time) model.

    Returns
    -------
    tuple
        exit_mean (E, p), exit_second (E, p, p), border_weight (4, E) (transposed against
        ``StatBlocks``), border_basis (4, p, P), square_mean (P,), square_second (P, P);
        E = 2J + 1, p = d + 1, P = d(d + 1)/2.
    """
    d, E = mu.shape[0], 2 * lei.shape[0] + 1
    first, second = upper_pairs(d)
    v, s, m = _linear_predictor(beta, mu, cov)
    b = _hermite_weights(m, s, lei, cens, discrete)
    u = v / s
    square = _square_basis(mu, u, cov)
    third = _third_basis(mu, u, cov, first, second)
    size = first.shape[0]
    basis = np.empty((4, d + 1, size))
    for r in range(4):
        for q in range(size):
            basis[r, 0, q] = square[r, first[q], second[q]]
            for x in range(d):  # a loop, not basis[r, 1:] = third[r]: no shape check to compile
                basis[r, 1 + x, q] = third[r, x, q]
    mean, moment = np.empty((E, d + 1)), np.empty((E, d + 1, d + 1))
    for k in range(E):
        mean[k, 0] = b[0, k]
        moment[k, 0, 0] = b[0, k]
        for i in range(d):
            mean[k, 1 + i] = b[0, k] * mu[i] + b[1, k] * u[i]
            moment[k, 0, 1 + i] = mean[k, 1 + i]
            moment[k, 1 + i, 0] = mean[k, 1 + i]
            for j in range(d):
                moment[k, 1 + i, 1 + j] = (
                    b[0, k] * square[0, i, j] + b[1, k] * square[1, i, j] + b[2, k] * square[2, i, j]
                )
    square_mean = basis[0, 0].copy()
    square_second = np.empty((size, size))
    square_covariance(mu, cov, square_second, 0)
    for p in range(size):
        for q in range(size):
            square_second[p, q] += square_mean[p] * square_mean[q]
    return mean, moment, b, basis, square_mean, square_second


@numba.njit(cache=True)
def _third_basis_adjoint(mu, u, cov, first, second, bar, mu_bar, u_bar, cov_bar):
    """Reverse of :func:`_third_basis` (``bar`` of shape (4, d, P)): accumulates the adjoints of
    μ, ṽ and Σ."""
    d, size = mu.shape[0], first.shape[0]
    for x in range(d):
        for q in range(size):
            y, z = first[q], second[q]
            t0, t1, t2, t3 = bar[0, x, q], bar[1, x, q], bar[2, x, q], bar[3, x, q]
            # r = 0: μxμyμz + μxΣyz + μyΣxz + μzΣxy; r = 1: its derivative along ṽ
            mu_bar[x] += t0 * (mu[y] * mu[z] + cov[y, z]) + t1 * (u[y] * mu[z] + mu[y] * u[z])
            mu_bar[y] += t0 * (mu[x] * mu[z] + cov[x, z]) + t1 * (u[x] * mu[z] + mu[x] * u[z])
            mu_bar[z] += t0 * (mu[x] * mu[y] + cov[x, y]) + t1 * (u[x] * mu[y] + mu[x] * u[y])
            cov_bar[y, z] += t0 * mu[x] + t1 * u[x]
            cov_bar[x, z] += t0 * mu[y] + t1 * u[y]
            cov_bar[x, y] += t0 * mu[z] + t1 * u[z]
            u_bar[x] += t1 * (mu[y] * mu[z] + cov[y, z])
            u_bar[y] += t1 * (mu[x] * mu[z] + cov[x, z])
            u_bar[z] += t1 * (mu[x] * mu[y] + cov[x, y])
            # r = 2: μxuyuz + uxμyuz + uxuyμz; r = 3: uxuyuz
            mu_bar[x] += t2 * u[y] * u[z]
            mu_bar[y] += t2 * u[x] * u[z]
            mu_bar[z] += t2 * u[x] * u[y]
            u_bar[x] += t2 * (mu[y] * u[z] + u[y] * mu[z]) + t3 * u[y] * u[z]
            u_bar[y] += t2 * (mu[x] * u[z] + u[x] * mu[z]) + t3 * u[x] * u[z]
            u_bar[z] += t2 * (mu[x] * u[y] + u[x] * mu[y]) + t3 * u[x] * u[y]


@numba.njit(cache=True)
def _hermite_weights_adjoint(m, s, lei, cens, discrete, b_bar, lei_bar, cens_bar):
    """Reverse of :func:`_hermite_weights`: (adjoint of m, adjoint of s); accumulates those of the
    hazards."""
    g_bar = _HW.T @ b_bar  # (Q, E)
    m_bar, s_bar = 0.0, 0.0
    increments = np.exp(lei)
    scratch = np.empty((4, lei.shape[0]))
    for q in range(_Z.shape[0]):
        a_bar = exits_adjoint_into(
            math.exp(m + s * _Z[q]), increments, cens, discrete, g_bar[q], lei_bar, cens_bar, scratch
        )
        m_bar += a_bar
        s_bar += a_bar * _Z[q]
    return m_bar, s_bar


@numba.njit(cache=True)
def _blocks_adjoint(b, mu, u, square, mean_bar, moment_bar, b_bar, mu_bar, u_bar):
    """Reverse of the exit blocks (E[yₖ(1, x)] and E[yₖ(1, x)(1, x)ᵀ] from B, μ, ṽ and the square
    basis): accumulates the adjoints of B, μ and ṽ and returns that of the square basis."""
    d, E = mu.shape[0], b.shape[1]
    square_bar = np.zeros((4, d, d))
    for k in range(E):
        b_bar[0, k] += mean_bar[k, 0] + moment_bar[k, 0, 0]
        for i in range(d):
            x_bar = mean_bar[k, 1 + i] + moment_bar[k, 1 + i, 0] + moment_bar[k, 0, 1 + i]
            b_bar[0, k] += x_bar * mu[i]
            b_bar[1, k] += x_bar * u[i]
            mu_bar[i] += b[0, k] * x_bar
            u_bar[i] += b[1, k] * x_bar
            for j in range(d):
                t = moment_bar[k, 1 + i, 1 + j]
                for r in range(3):
                    b_bar[r, k] += t * square[r, i, j]
                    square_bar[r, i, j] += b[r, k] * t
    return square_bar


@numba.njit(cache=True, nogil=True)
def cell_moments_adjoint(
    beta, mu, cov, lei, cens, discrete, weights, bars, beta_bar, mu_bar, cov_bar, lei_bar, cens_bar
):
    """Reverse of :func:`cell_moments`: adds the adjoints of β, μ, Σ, the log event increments and
    the censoring terms, given those of its outputs.

    Parameters
    ----------
    beta, mu, cov, lei, cens, discrete
        As for :func:`cell_moments`.
    weights : float64 array (4, E)
        The border weights :func:`cell_moments` returned at these inputs (not computed again).
    bars : tuple
        The adjoints of the six outputs of :func:`cell_moments`, in its order and shapes.
    beta_bar, mu_bar, cov_bar, lei_bar, cens_bar : float64 arrays
        Accumulators, shaped as the inputs.
    """
    mean_bar, moment_bar, weight_bar, basis_bar, smean_bar, ssecond_bar = bars
    d = mu.shape[0]
    first, second = upper_pairs(d)
    v, s, m = _linear_predictor(beta, mu, cov)
    u = v / s
    square = _square_basis(mu, u, cov)
    u_bar = np.zeros(d)
    b_bar = weight_bar.copy()
    square_bar = _blocks_adjoint(weights, mu, u, square, mean_bar, moment_bar, b_bar, mu_bar, u_bar)
    for r in range(4):  # row 0 of the border's bases: the square basis' upper triangle
        for q in range(first.shape[0]):
            square_bar[r, first[q], second[q]] += basis_bar[r, 0, q]
    _third_basis_adjoint(mu, u, cov, first, second, basis_bar[:, 1:], mu_bar, u_bar, cov_bar)
    smean = np.empty(first.shape[0])
    for q in range(first.shape[0]):
        smean[q] = cov[first[q], second[q]] + mu[first[q]] * mu[second[q]]
    smean_total = smean_bar + (ssecond_bar + ssecond_bar.T) @ smean
    square_covariance_adjoint(mu, cov, ssecond_bar, 0, mu_bar, cov_bar)
    for q in range(first.shape[0]):
        square_bar[0, first[q], second[q]] += smean_total[q]
    # the square basis: M₂ = Σ + μμᵀ, μṽᵀ + ṽμᵀ, ṽṽᵀ
    sym1 = square_bar[1] + square_bar[1].T
    sym2 = square_bar[2] + square_bar[2].T
    cov_bar += square_bar[0]
    mu_bar += (square_bar[0] + square_bar[0].T) @ mu + sym1 @ u
    u_bar += sym1 @ mu + sym2 @ u
    # ṽ = v/s, the Gauss–Hermite nodes a = m + s·z, s = (βᵀv + ε²)^½, m = βᵀμ, v = Σβ
    m_bar, s_bar = _hermite_weights_adjoint(m, s, lei, cens, discrete, b_bar, lei_bar, cens_bar)
    v_bar = u_bar / s
    s_bar -= (u_bar @ v) / s**2
    t_bar = s_bar / (2.0 * s)
    v_bar += t_bar * beta
    beta_bar += t_bar * v + m_bar * mu + cov.T @ v_bar
    mu_bar += m_bar * beta
    cov_bar += outer(v_bar, beta)
