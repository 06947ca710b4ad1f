"""Compiled (Numba) log-density of a released exit table with covariate moments, and its gradient.

The value is that of :func:`pm_private.survival.regression.likelihood.exit_table_normal_logp`,
computed by the same block factorisation (its module notes): per cell c, the exit blocks Aₖ of
M = n·B + D, their Cholesky factors and inverses, the Schur complement Ŝ of the corner and the
Gram matrix of the right-hand sides (ρ, m, Dw).  The gradient is that of a Gaussian log-density
in its mean and covariance (Magnus & Neudecker 2019, ch. 8): with α = Σ⁻¹ρ and
G = ½(ααᵀ − Σ⁻¹),

    ∂logp/∂m = n·α·(1 − ρᵀM⁻¹m/γ) + n·M⁻¹m/γ,   ∂logp/∂B = n·G,

where Σ⁻¹ = M⁻¹ + (n/γ)·M⁻¹m·mᵀM⁻¹ (Sherman–Morrison) and only the blocks of G on B's
block-arrowhead pattern are needed: those of M⁻¹ there are Aₖ⁻¹ + Aₖ⁻¹CₖŜ⁻¹CₖᵀAₖ⁻¹ (exits),
−Aₖ⁻¹CₖŜ⁻¹ (borders) and Ŝ⁻¹ (corner).  With the borders' shared bases, Cₖ = Σᵣ wᵣ,ₖHᵣ, the
contractions need only the 4(d + 1)-wide matrices HŜ⁻¹Hᵀ and Σₖ wᵣ,ₖBₛ,ₖAₖ⁻¹: O(J·d³ + d⁵)
flops, as the value.  The adjoints of the blocks then go through
:func:`~pm_private.survival.regression.kernel_moments.cell_moments_adjoint`.  Small dense
products and factorisations are plain loops (no BLAS threads on a busy machine).

References
----------
Magnus, J. R. & Neudecker, H. (2019). Matrix Differential Calculus with Applications in Statistics
and Econometrics, 3rd ed. Wiley.

Golub, G. H. & Van Loan, C. F. (2013). Matrix Computations, 4th ed., §4.2 and §2.1.4.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .kernel_moments import cell_moments, cell_moments_adjoint

__all__ = ["regression_logp", "regression_logp_grad", "release_law"]

_LOG_2PI = math.log(2.0 * math.pi)


@numba.njit(cache=True)
def _mm(a, b):
    """a @ b by loops (i, k, j order: the inner loop runs along rows of b)."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            x = a[i, k]
            for j in range(b.shape[1]):
                out[i, j] += x * b[k, j]
    return out


@numba.njit(cache=True)
def _mtm(a, b):
    """aᵀ @ b by loops."""
    out = np.zeros((a.shape[1], b.shape[1]))
    for k in range(a.shape[0]):
        for i in range(a.shape[1]):
            x = a[k, i]
            for j in range(b.shape[1]):
                out[i, j] += x * b[k, j]
    return out


@numba.njit(cache=True)
def _mmt(a, b):
    """a @ bᵀ by loops."""
    out = np.zeros((a.shape[0], b.shape[0]))
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            t = 0.0
            for k in range(a.shape[1]):
                t += a[i, k] * b[j, k]
            out[i, j] = t
    return out


@numba.njit(cache=True)
def _cholesky_inverse(a):
    """(L⁻¹, Σ log Lᵢᵢ, ok) of the lower Cholesky factor L of a; ok is False where a is not
    positive definite (as far as the factorisation tells)."""
    size = a.shape[0]
    low = np.zeros((size, size))
    inv = np.zeros((size, size))
    log_diag = 0.0
    for j in range(size):
        s = a[j, j]
        for k in range(j):
            s -= low[j, k] * low[j, k]
        if not s > 0.0:
            return inv, -np.inf, False
        low[j, j] = math.sqrt(s)
        log_diag += math.log(low[j, j])
        for i in range(j + 1, size):
            t = a[i, j]
            for k in range(j):
                t -= low[i, k] * low[j, k]
            low[i, j] = t / low[j, j]
    for j in range(size):
        inv[j, j] = 1.0 / low[j, j]
        for i in range(j + 1, size):
            t = 0.0
            for k in range(j, i):
                t -= low[i, k] * inv[k, j]
            inv[i, j] = t / low[i, i]
    return inv, log_diag, True


@numba.njit(cache=True)
def _split(vector, E, d):
    """A cell's statistics in exit-block order: (E, d + 1) exit blocks and the P square terms."""
    blocks = np.empty((E, d + 1))
    for k in range(E):
        blocks[k, 0] = vector[k]
        for a in range(d):
            blocks[k, 1 + a] = vector[E + k * d + a]
    return blocks, vector[E * (d + 1) :].copy()


@numba.njit(cache=True)
def _factor(value, noise, size, share, n, moments):
    """One cell's block factorisation: (inverses Aₖ⁻¹, L⁻¹ of Ŝ, Z, right-hand sides (E, p, 3)
    and (P, 3), Aₖ⁻¹Rₖ, Y = L⁻¹(R_corner − HᵀΣₖCₖ…), log det M, ok)."""
    mean, moment, b, basis, smean, ssecond = moments
    E, p, P = mean.shape[0], mean.shape[1], smean.shape[0]
    d = p - 1
    r_blocks, r_square = _split(value, E, d)
    d_blocks, d_square = _split(noise, E, d)
    inverse = np.empty((E, p, p))
    log_det = 0.0
    ok = True
    rhs, solved = np.zeros((E, p, 3)), np.empty((E, p, 3))
    z = np.zeros((4 * p, 4 * p))
    through = np.zeros((4 * p, 3))
    for k in range(E):
        a = size * moment[k]
        for i in range(p):
            a[i, i] += d_blocks[k, i]
            rhs[k, i, 0] = r_blocks[k, i] - n * (share * mean[k, i])
            rhs[k, i, 1] = share * mean[k, i]
        rhs[k, 0, 2] = d_blocks[k, 0]
        low_inv, log_diag, good = _cholesky_inverse(a)
        ok = ok and good
        log_det += 2.0 * log_diag
        inverse[k] = _mtm(low_inv, low_inv)
        solved[k] = _mm(inverse[k], rhs[k])
        for r in range(4):
            wr = size * b[r, k]
            for s in range(4):
                ws = wr * size * b[s, k]
                z[r * p : (r + 1) * p, s * p : (s + 1) * p] += ws * inverse[k]
            through[r * p : (r + 1) * p] += wr * solved[k]
    flat = basis.reshape((4 * p, P))
    schur = size * ssecond - _mtm(flat, _mm(z, flat))
    for i in range(P):
        schur[i, i] += d_square[i]
    rhs_square = np.zeros((P, 3))
    for i in range(P):
        rhs_square[i, 0] = r_square[i] - n * (share * smean[i])
        rhs_square[i, 1] = share * smean[i]
    low_inv, log_diag, good = _cholesky_inverse(schur)
    ok = ok and good
    log_det += 2.0 * log_diag
    y = _mm(low_inv, rhs_square - _mtm(flat, through))
    return inverse, low_inv, z, rhs, rhs_square, solved, y, log_det, ok


@numba.njit(cache=True)
def _factor_cells(value, n, share, noise, beta, mu, cov, lei, cens, discrete):
    """Every cell's moments and factorisation, the summed 3 × 3 Gram matrix of the right-hand
    sides (module notes of the block likelihood) and log det M."""
    K = value.shape[0]
    cells_moments, factors = [], []
    gram = np.zeros((3, 3))
    log_det = 0.0
    ok = True
    for c in range(K):
        moments = cell_moments(beta, mu[c], cov, lei[c], cens[c], discrete)
        factor = _factor(value[c], noise[c], n * share[c], share[c], n, moments)
        inverse, low_inv, z, rhs, rhs_square, solved, y, cell_log_det, good = factor
        for k in range(rhs.shape[0]):
            gram += _mtm(rhs[k], solved[k])
        gram += _mtm(y, y)
        log_det += cell_log_det
        ok = ok and good
        cells_moments.append(moments)
        factors.append(factor)
    return cells_moments, factors, gram, log_det, ok


@numba.njit(cache=True)
def _value(gram, log_det, n, size):
    """The log-density from the Gram matrix and log det M (−∞ where it is not defined)."""
    quad, m_rho, gamma = gram[0, 0], gram[1, 0], gram[2, 1]
    if not gamma > 0.0:
        return -np.inf
    logp = -0.5 * (quad + n * m_rho**2 / gamma + log_det + math.log(gamma) + size * _LOG_2PI)
    return logp if math.isfinite(logp) else -np.inf


@numba.njit(cache=True)
def regression_logp(value, n, share, noise, beta, mu, chol, lei, cens, discrete):
    """log N(value | n·m, n·(B − mmᵀ) + diag(noise)) over the K cells.

    Parameters
    ----------
    value, noise : float64 arrays (K, k)
        The released statistics (release order) and their noise variances.
    n : float
        The number of people.
    share : float64 array (K,)
        The cells' shares of the people.
    beta : float64 array (d,)
        Log hazard ratios.
    mu : float64 array (K, d)
        The cells' covariate means.
    chol : float64 array (d, d)
        A factor L of the covariate covariance Σ = LLᵀ.
    lei, cens : float64 arrays (K, J)
        The cells' log event increments and censoring terms.
    discrete : bool
        The grouped (discrete-time) model.

    Returns
    -------
    float
        The log-density; −∞ where the covariance is not positive definite.
    """
    cov = _mm(chol, chol.T.copy())
    _, _, gram, log_det, ok = _factor_cells(value, n, share, noise, beta, mu, cov, lei, cens, discrete)
    return _value(gram, log_det, n, value.size) if ok else -np.inf


@numba.njit(cache=True)
def _exit_adjoints(moments, factor, n, share, scalars, ht, h_inv):
    """Per unit of the cell's share: the adjoints of the exit blocks' means and second moments,
    of the border weights, and the sums Σₖ Bᵣ,ₖαₖ, Σₖ Bᵣ,ₖxₖ and Σₖ Bᵣ,ₖWₛ,ₖAₖ⁻¹ (module notes)."""
    mean, moment, b, basis, smean, ssecond = moments
    inverse, solved = factor[0], factor[5]
    coef, ratio, kappa = scalars
    E, p, P = mean.shape[0], mean.shape[1], smean.shape[0]
    size = n * share
    h_alpha, h_x = ht[:, 0] + coef * ht[:, 1], ht[:, 1].copy()  # H·α_corner, H·x_corner
    tee = _mmt(h_inv, basis.reshape((4 * p, P)))  # T = H Ŝ⁻¹ Hᵀ, (4p, 4p)
    mean_bar, moment_bar, weight_bar = np.empty((E, p)), np.empty((E, p, p)), np.empty((4, E))
    b_alpha, b_x, y_mix = np.zeros(4 * p), np.zeros(4 * p), np.zeros((4 * p, 4 * p))
    for k in range(E):
        ct = np.zeros((p, 3))
        q = np.zeros((p, p))
        for r in range(4):
            ct += (size * b[r, k]) * ht[r * p : (r + 1) * p]
            for s in range(4):
                q += (size * b[r, k]) * (size * b[s, k]) * tee[r * p : (r + 1) * p, s * p : (s + 1) * p]
        full = solved[k] - _mm(inverse[k], ct)
        alpha, x = full[:, 0] + coef * full[:, 1], full[:, 1]
        mean_bar[k] = n * alpha * (1.0 - ratio) + kappa * x
        inner = _mm(_mm(inverse[k], q), inverse[k])
        moment_bar[k] = 0.5 * n * (np.outer(alpha, alpha) - kappa * np.outer(x, x) - inverse[k] - inner)
        for r in range(4):
            rows = slice(r * p, (r + 1) * p)
            trace = 0.0
            for s in range(4):
                trace += size * b[s, k] * np.sum(inverse[k] * tee[rows, s * p : (s + 1) * p])
            weight_bar[r, k] = n * (alpha @ h_alpha[rows] - kappa * (x @ h_x[rows]) + trace)
            b_alpha[rows] += b[r, k] * alpha
            b_x[rows] += b[r, k] * x
            for s in range(4):
                y_mix[rows, s * p : (s + 1) * p] += (b[r, k] * size * b[s, k]) * inverse[k]
    return mean_bar, moment_bar, weight_bar, b_alpha, b_x, y_mix


@numba.njit(cache=True)
def _cell_adjoints(moments, factor, n, share, scalars):
    """The adjoints of one cell's moments (:func:`cell_moments` order, scaled by the share) and
    that of its share."""
    mean, moment, b, basis, smean, ssecond = moments
    coef, ratio, kappa = scalars
    p, P = mean.shape[1], smean.shape[0]
    t = _mtm(factor[1], factor[6])  # Ŝ⁻¹(R_corner − Σₖ CₖᵀAₖ⁻¹Rₖ): M⁻¹'s corner rows of (ρ, m, Dw)
    alpha_c, x_c = t[:, 0] + coef * t[:, 1], t[:, 1].copy()
    flat = basis.reshape((4 * p, P))
    inv_schur = _mtm(factor[1], factor[1])
    h_inv = _mm(flat, inv_schur)  # H Ŝ⁻¹, (4p, P)
    mean_bar, moment_bar, weight_bar, b_alpha, b_x, y_mix = _exit_adjoints(
        moments, factor, n, share, scalars, _mm(flat, t), h_inv
    )
    basis_bar = n * (np.outer(b_alpha, alpha_c) - kappa * np.outer(b_x, x_c) + _mm(y_mix, h_inv))
    smean_bar = n * alpha_c * (1.0 - ratio) + kappa * x_c
    ssecond_bar = 0.5 * n * (np.outer(alpha_c, alpha_c) - kappa * np.outer(x_c, x_c) - inv_schur)
    share_bar = (
        np.sum(mean_bar * mean) + np.sum(moment_bar * moment) + np.sum(weight_bar * b)
        + smean_bar @ smean + np.sum(ssecond_bar * ssecond)
    )  # fmt: skip
    bars = (
        share * mean_bar, share * moment_bar, share * weight_bar, share * basis_bar.reshape((4, p, P)),
        share * smean_bar, share * ssecond_bar,
    )  # fmt: skip
    return bars, share_bar


@numba.njit(cache=True, nogil=True)  # released while it runs: chains in threads (nutpie) run it at once
def regression_logp_grad(value, n, share, noise, beta, mu, chol, lei, cens, discrete):
    """:func:`regression_logp` and its gradient in share, beta, mu, chol, lei and cens.

    Returns
    -------
    tuple
        (logp, ∂/∂share, ∂/∂beta, ∂/∂mu, ∂/∂chol, ∂/∂lei, ∂/∂cens); zero gradients where the
        log-density is −∞.
    """
    cov = _mm(chol, chol.T.copy())
    cells_moments, factors, gram, log_det, ok = _factor_cells(
        value, n, share, noise, beta, mu, cov, lei, cens, discrete
    )
    logp = _value(gram, log_det, n, value.size) if ok else -np.inf
    share_bar, beta_bar, mu_bar = np.zeros_like(share), np.zeros_like(beta), np.zeros_like(mu)
    cov_bar, lei_bar, cens_bar = np.zeros_like(cov), np.zeros_like(lei), np.zeros_like(cens)
    if math.isfinite(logp):
        m_rho, gamma = gram[1, 0], gram[2, 1]
        scalars = (n * m_rho / gamma, m_rho / gamma, n / gamma)
        # γ is computed as mᵀM⁻¹Dw, which equals 1 − n·mᵀM⁻¹m where the shares add up to 1 and
        # grows by 1 − Σπ off the simplex: ∂logp/∂γ for every share
        gamma_bar = 0.5 * (n * m_rho**2 / gamma - 1.0) / gamma
        for c in range(value.shape[0]):
            bars, share_bar[c] = _cell_adjoints(cells_moments[c], factors[c], n, share[c], scalars)
            share_bar[c] += gamma_bar
            cell_moments_adjoint(
                beta, mu[c], cov, lei[c], cens[c], discrete, bars, beta_bar, mu_bar[c], cov_bar, lei_bar[c], cens_bar[c]
            )
    chol_bar = _mm(cov_bar + cov_bar.T, chol)
    return logp, share_bar, beta_bar, mu_bar, chol_bar, lei_bar, cens_bar


@numba.njit(cache=True)
def _release_index(E, d):
    """Positions in the release's order of a cell's statistics in exit-block order."""
    p = d + 1
    index = np.empty(E * p + d * (d + 1) // 2, np.int64)
    for k in range(E):
        index[k * p] = k
        for a in range(d):
            index[k * p + 1 + a] = E + k * d + a
    for q in range(d * (d + 1) // 2):
        index[E * p + q] = E * p + q
    return index


@numba.njit(cache=True, nogil=True)  # released while it runs: chains in threads (nutpie) run it at once
def release_law(n, share, noise, beta, mu, chol, lei, cens, discrete):
    """Mean n·m and covariance n·(B − mmᵀ) + diag(noise) of the K·k released statistics, the
    cells stacked, each in the release's order (arguments as for :func:`regression_logp`)."""
    K, size = noise.shape
    cov = _mm(chol, chol.T.copy())
    mean_all, second_all = np.zeros(K * size), np.zeros((K * size, K * size))
    for c in range(K):
        mean, moment, b, basis, smean, ssecond = cell_moments(beta, mu[c], cov, lei[c], cens[c], discrete)
        E, p, P = mean.shape[0], mean.shape[1], smean.shape[0]
        index = _release_index(E, p - 1) + c * size
        corner = E * p
        for k in range(E):
            for i in range(p):
                row = index[k * p + i]
                mean_all[row] = share[c] * mean[k, i]
                for j in range(p):
                    second_all[row, index[k * p + j]] = share[c] * moment[k, i, j]
                for q in range(P):
                    border = 0.0
                    for r in range(4):
                        border += b[r, k] * basis[r, i, q]
                    second_all[row, index[corner + q]] = share[c] * border
                    second_all[index[corner + q], row] = share[c] * border
        for q in range(P):
            mean_all[index[corner + q]] = share[c] * smean[q]
            for s in range(P):
                second_all[index[corner + q], index[corner + s]] = share[c] * ssecond[q, s]
    cov_all = n * (second_all - np.outer(mean_all, mean_all))
    flat_noise = noise.ravel()
    for i in range(K * size):
        cov_all[i, i] += flat_noise[i]
    return n * mean_all, cov_all
