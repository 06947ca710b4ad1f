"""Compiled (Numba) log-density of a released exit table with covariate moments, and its gradient.

The value is that of :func:`pm_private.survival.regression.likelihood.exit_table_normal_logp`,
computed by the same block factorisation (its module notes): per cell c, the exit blocks Aₖ of
M = n·B + D, their Cholesky factors and inverses, the Schur complement Ŝ of the corner and the
Gram matrix of the right-hand sides (ρ, m, Dw).  The gradient is that of a Gaussian log-density
in its mean and covariance (Magnus & Neudecker 2019, ch. 8): with ρ = r − n·m the released
values r less their mean, α = Σ⁻¹ρ and G = ½(ααᵀ − Σ⁻¹),

    ∂logp/∂m = n·α·(1 − ρᵀM⁻¹m/γ) + n·M⁻¹m/γ,   ∂logp/∂B = n·G,   ∂logp/∂r = −α,

where Σ⁻¹ = M⁻¹ + (n/γ)·M⁻¹m·mᵀM⁻¹ (Sherman–Morrison) and only the blocks of G on B's
block-arrowhead pattern are needed: those of M⁻¹ there are Aₖ⁻¹ + Aₖ⁻¹CₖŜ⁻¹CₖᵀAₖ⁻¹ (exits),
−Aₖ⁻¹CₖŜ⁻¹ (borders) and Ŝ⁻¹ (corner).  With the borders' shared bases, Cₖ = Σᵣ wᵣ,ₖHᵣ, the
contractions need only the 4(d + 1)-wide matrices HŜ⁻¹Hᵀ and Σₖ wᵣ,ₖBₛ,ₖAₖ⁻¹: O(J·d³ + d⁵)
flops, as the value.  The adjoints of the blocks then go through
:func:`~pm_private.survival.regression.kernel_moments.cell_moments_adjoint`.  The products of the
4(d + 1)-wide and P-wide matrices call BLAS (OpenBLAS keeps products this small on one thread,
so chains sampled in threads do not compete for cores); the blocks' small products and
factorisations are plain loops that write no temporaries.

References
----------
Magnus, J. R. & Neudecker, H. (2019). Matrix Differential Calculus with Applications in Statistics
and Econometrics, 3rd ed. Wiley.

Golub, G. H. & Van Loan, C. F. (2013). Matrix Computations, 4th ed., §4.2 and §2.1.4.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading

import numba
import numpy as np

from ..._engine.compile_worker import wait_for_compile_worker
from ..._engine.numba_arrays import copy_into, outer
from .kernel_moments import cell_moments, cell_moments_adjoint

__all__ = ["logp_grad_address", "logp_grad_entry", "logp_grad_signature", "regression_logp_grad", "release_law"]

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


@numba.njit(cache=True, nogil=True)
def _factor(value, noise, size, share, n, moments):
    """One cell's block factorisation: (inverses Aₖ⁻¹, L⁻¹ of Ŝ, W = Σₖ bₖbₖᵀ ⊗ Aₖ⁻¹ with bₖ the
    border weights B·,ₖ, right-hand sides (E, p, 3) and (P, 3), Aₖ⁻¹Rₖ,
    Y = L⁻¹(R_corner − HᵀΣₖCₖ…), log det M, ok)."""
    mean, moment, b, basis, smean, ssecond = moments
    E, p, P = mean.shape[0], mean.shape[1], smean.shape[0]
    d = p - 1
    r_blocks, r_square = _split(value, E, d)
    d_blocks, d_square = _split(noise, E, d)
    inverse = np.empty((E, p, p))
    log_det = 0.0
    ok = True
    rhs, solved = np.zeros((E, p, 3)), np.empty((E, p, 3))
    weighted = np.zeros((4 * p, 4 * p))  # W
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
        copy_into(inverse[k], _lower_gram(low_inv))
        copy_into(solved[k], _mm(inverse[k], rhs[k]))
        _add_weighted_blocks(weighted, b[:, k], inverse[k])
        for r in range(4):
            wr = size * b[r, k]
            for i in range(p):
                for j in range(3):
                    through[r * p + i, j] += wr * solved[k, i, j]
    _mirror_blocks(weighted, p)
    flat = basis.reshape((4 * p, P))
    schur = size * ssecond - size**2 * (flat.T @ (weighted @ flat))  # HᵀZH, Z = (nπ)²·W
    for i in range(P):
        schur[i, i] += d_square[i]
    rhs_square = np.zeros((P, 3))
    for i in range(P):
        rhs_square[i, 0] = r_square[i] - n * (share * smean[i])
        rhs_square[i, 1] = share * smean[i]
    low_inv, log_diag, good = _cholesky_inverse(schur)
    ok = ok and good
    log_det += 2.0 * log_diag
    y = _mm(low_inv, rhs_square - flat.T @ through)
    return inverse, low_inv, weighted, rhs, rhs_square, solved, y, log_det, ok


@numba.njit(cache=True)
def _lower_gram(low):
    """LᵀL of a lower-triangular L, by loops over its non-zero entries only."""
    size = low.shape[0]
    out = np.empty((size, size))
    for i in range(size):
        for j in range(i, size):
            t = 0.0
            for m in range(j, size):
                t += low[m, i] * low[m, j]
            out[i, j] = t
            out[j, i] = t
    return out


@numba.njit(cache=True)
def _add_weighted_blocks(z, w, block):
    """Adds wᵣwₛ·``block`` to the blocks (r, s ≥ r) of the 4 × 4 block matrix z (the lower blocks
    are filled by :func:`_mirror_blocks`: z is symmetric)."""
    p = block.shape[0]
    for r in range(4):
        for s in range(r, 4):
            ws = w[r] * w[s]
            for i in range(p):
                for j in range(p):
                    z[r * p + i, s * p + j] += ws * block[i, j]


@numba.njit(cache=True)
def _mirror_blocks(z, p):
    """Fills the blocks (s, r), s > r, of z from the blocks (r, s), which are symmetric."""
    for r in range(4):
        for s in range(r + 1, 4):
            for i in range(p):
                for j in range(p):
                    z[s * p + i, r * p + j] = z[r * p + i, s * p + j]


@numba.njit(cache=True)
def _factor_cells(value, n, share, noise, beta, mu, cov, lei, cens, discrete):
    """Every cell's moments and factorisation, the summed 3 × 3 Gram matrix of the right-hand
    sides (module notes of the block likelihood), log det M and whether every factor exists."""
    cells_moments, factors = [], []
    gram = np.zeros((3, 3))
    log_det = 0.0
    ok = True
    for c in range(value.shape[0]):
        moments = cell_moments(beta, mu[c], cov, lei[c], cens[c], discrete)
        factor = _factor(value[c], noise[c], n * share[c], share[c], n, moments)
        gram += _gram(factor[3], factor[5], factor[6])
        log_det += factor[7]
        ok = ok and factor[8]
        cells_moments.append(moments)
        factors.append(factor)
    return cells_moments, factors, gram, log_det, ok


@numba.njit(cache=True, nogil=True)
def _gram(rhs, solved, y):
    """Σₖ RₖᵀAₖ⁻¹Rₖ + YᵀY: one cell's term of the 3 × 3 Gram matrix."""
    gram = _mtm(y, y)
    for k in range(rhs.shape[0]):
        gram += _mtm(rhs[k], solved[k])
    return gram


@numba.njit(cache=True)
def _value(gram, log_det, n, size):
    """The log-density from the Gram matrix and log det M (−∞ where it is not defined)."""
    quad, m_rho, gamma = gram[0, 0], gram[1, 0], gram[2, 1]
    if not gamma > 0.0:
        return -np.inf
    logp = -0.5 * (quad + n * m_rho**2 / gamma + log_det + math.log(gamma) + size * _LOG_2PI)
    return logp if math.isfinite(logp) else -np.inf


@numba.njit(cache=True)
def _exit_adjoints(moments, factor, n, share, scalars, ht, h_inv):
    """Per unit of the cell's share: the adjoints of the exit blocks' means and second moments,
    of the border weights, the sums Σₖ Bᵣ,ₖαₖ and Σₖ Bᵣ,ₖxₖ (module notes), and α = Σ⁻¹ρ on each
    exit block."""
    mean, moment, b, basis, smean, ssecond = moments
    inverse, solved = factor[0], factor[5]
    coef, ratio, kappa = scalars
    E, p, P = mean.shape[0], mean.shape[1], smean.shape[0]
    size = n * share
    h_alpha, h_x = ht[:, 0] + coef * ht[:, 1], ht[:, 1].copy()  # H·α_corner, H·x_corner
    tee = h_inv @ basis.reshape((4 * p, P)).T  # T = H Ŝ⁻¹ Hᵀ, (4p, 4p)
    mean_bar, moment_bar, weight_bar = np.empty((E, p)), np.empty((E, p, p)), np.empty((4, E))
    alphas = np.empty((E, p))  # Σ⁻¹ρ on each exit block: −∂logp/∂r there
    b_alpha, b_x = np.zeros(4 * p), np.zeros(4 * p)
    mixed = np.empty((4, p, p))  # Gᵣ = Σₛ wₛTᵣₛ, wₛ = nπ·Bₛ,ₖ
    for k in range(E):
        w = size * b[:, k]
        ct = np.zeros((p, 3))
        q = np.zeros((p, p))
        for r in range(4):
            for i in range(p):
                for j in range(3):
                    ct[i, j] += w[r] * ht[r * p + i, j]
                for j in range(p):
                    t = 0.0
                    for s in range(4):
                        t += w[s] * tee[r * p + i, s * p + j]
                    mixed[r, i, j] = t
                    q[i, j] += w[r] * t
        full = solved[k] - _mm(inverse[k], ct)
        alpha, x = full[:, 0] + coef * full[:, 1], full[:, 1]
        copy_into(alphas[k], alpha)
        copy_into(mean_bar[k], n * alpha * (1.0 - ratio) + kappa * x)
        inner = _mm(_mm(inverse[k], q), inverse[k])
        for i in range(p):
            for j in range(p):
                moment_bar[k, i, j] = (
                    0.5 * n * (alpha[i] * alpha[j] - kappa * x[i] * x[j] - inverse[k, i, j] - inner[i, j])
                )
        for r in range(4):
            trace, dot_alpha, dot_x = 0.0, 0.0, 0.0
            for i in range(p):
                dot_alpha += alpha[i] * h_alpha[r * p + i]
                dot_x += x[i] * h_x[r * p + i]
                b_alpha[r * p + i] += b[r, k] * alpha[i]
                b_x[r * p + i] += b[r, k] * x[i]
                for j in range(p):
                    trace += inverse[k, i, j] * mixed[r, i, j]
            weight_bar[r, k] = n * (dot_alpha - kappa * dot_x + trace)
    return mean_bar, moment_bar, weight_bar, b_alpha, b_x, alphas


@numba.njit(cache=True, nogil=True)
def _cell_adjoints(moments, factor, n, share, scalars):
    """The adjoints of one cell's moments (:func:`cell_moments` order, scaled by the share), that
    of its share, and that of its released statistics, −Σ⁻¹ρ (release order)."""
    mean, moment, b, basis, smean, ssecond = moments
    coef, ratio, kappa = scalars
    p, P = mean.shape[1], smean.shape[0]
    t = _mtm(factor[1], factor[6])  # Ŝ⁻¹(R_corner − Σₖ CₖᵀAₖ⁻¹Rₖ): M⁻¹'s corner rows of (ρ, m, Dw)
    alpha_c, x_c = t[:, 0] + coef * t[:, 1], t[:, 1].copy()
    flat = basis.reshape((4 * p, P))
    inv_schur = _lower_gram(factor[1])
    h_inv = flat @ inv_schur  # H Ŝ⁻¹, (4p, P)
    mean_bar, moment_bar, weight_bar, b_alpha, b_x, alphas = _exit_adjoints(
        moments, factor, n, share, scalars, _mm(flat, t), h_inv
    )
    # Σₖ Bᵣ,ₖ·nπ·Bₛ,ₖ·Aₖ⁻¹ = nπ·W
    weighted_h = (n * share) * (factor[2] @ h_inv)
    basis_bar = n * (outer(b_alpha, alpha_c) - kappa * outer(b_x, x_c) + weighted_h)
    smean_bar = n * alpha_c * (1.0 - ratio) + kappa * x_c
    ssecond_bar = 0.5 * n * (outer(alpha_c, alpha_c) - kappa * outer(x_c, x_c) - inv_schur)
    share_bar = (
        np.sum(mean_bar * mean) + np.sum(moment_bar * moment) + np.sum(weight_bar * b)
        + smean_bar @ smean + np.sum(ssecond_bar * ssecond)
    )  # fmt: skip
    bars = (
        share * mean_bar, share * moment_bar, share * weight_bar, share * basis_bar.reshape((4, p, P)),
        share * smean_bar, share * ssecond_bar,
    )  # fmt: skip
    value_bar = np.empty(mean.shape[0] * p + P)
    index = _release_index(mean.shape[0], p - 1)
    for k in range(mean.shape[0]):
        for i in range(p):
            value_bar[index[k * p + i]] = -alphas[k, i]
    for q in range(P):
        value_bar[index[mean.shape[0] * p + q]] = -alpha_c[q]
    return bars, share_bar, value_bar


@numba.njit(inline="always", error_model="numpy")  # a sampler's stray point: inf or nan
def _logp_grad(value, n, share, noise, beta, mu, chol, lei, cens, discrete):
    """The log-density and its gradient (:func:`regression_logp_grad`), inlined into the kernel's
    C entry (:func:`logp_grad_entry`), so that its stages are linked and optimised once."""
    cov = chol @ np.ascontiguousarray(chol.T)
    cells_moments, factors, gram, log_det, ok = _factor_cells(
        value, n, share, noise, beta, mu, cov, lei, cens, discrete
    )
    logp = _value(gram, log_det, n, value.size) if ok else -np.inf
    share_bar, beta_bar, mu_bar = np.zeros_like(share), np.zeros_like(beta), np.zeros_like(mu)
    cov_bar, lei_bar, cens_bar = np.zeros_like(cov), np.zeros_like(lei), np.zeros_like(cens)
    value_bar = np.zeros_like(value)
    if math.isfinite(logp):
        m_rho, gamma = gram[1, 0], gram[2, 1]
        scalars = (n * m_rho / gamma, m_rho / gamma, n / gamma)
        # γ is computed as mᵀM⁻¹Dw, which equals 1 − n·mᵀM⁻¹m where the shares add up to 1 and
        # grows by 1 − Σπ off the simplex: ∂logp/∂γ for every share
        gamma_bar = 0.5 * (n * m_rho**2 / gamma - 1.0) / gamma
        for c in range(value.shape[0]):
            bars, cell_share_bar, cell_value_bar = _cell_adjoints(cells_moments[c], factors[c], n, share[c], scalars)
            share_bar[c] = cell_share_bar + gamma_bar
            copy_into(value_bar[c], cell_value_bar)
            cell_moments_adjoint(
                beta, mu[c], cov, lei[c], cens[c], discrete, cells_moments[c][2], bars,
                beta_bar, mu_bar[c], cov_bar, lei_bar[c], cens_bar[c],
            )  # fmt: skip
    chol_bar = (cov_bar + cov_bar.T) @ chol
    return logp, share_bar, beta_bar, mu_bar, chol_bar, lei_bar, cens_bar, value_bar


def logp_grad_signature():
    """The C signature of :func:`logp_grad_entry`: eight input and eight output pointers, then n,
    K, k, d, J and discrete."""
    from numba.core import types

    pointer = types.CPointer(types.float64)
    return types.void(*(pointer,) * 16, types.float64, *(types.int64,) * 5)


_ENTRY_LOCK = threading.Lock()


def logp_grad_entry():
    """:func:`regression_logp_grad` as a C function (``numba.cfunc``), compiled once per machine
    (Numba's disk cache) at its first use.

    Graphs compiled by PyTensor's Numba backend, and nutpie's compiled models, call it through its
    address (:func:`logp_grad_address`), so that the kernel is neither linked into each graph's
    compiled function (whose compilation would optimise it again) nor entered through Python
    (whose lock chains sampled in threads would share).  A model's first build on a machine hands
    its compilation to a second process (:mod:`pm_private._engine.compile_worker`), which this
    function waits for and then loads the entry from the disk cache.

    Returns
    -------
    numba.core.ccallback.CFunc
        With ``address`` and ``ctypes``; arguments as :func:`logp_grad_signature`, arrays
        C-contiguous, the outputs written in place (the log-density into a one-element array).
    """
    with _ENTRY_LOCK:  # chains in threads may ask at once: one entry, kept alive for its address
        return _compiled_entry()


@functools.cache
def _compiled_entry():
    wait_for_compile_worker("survival_regression")  # a worker compiling it: load it instead

    @numba.cfunc(logp_grad_signature(), cache=True, error_model="numpy")
    def regression_logp_grad_entry(
        value, share, noise, beta, mu, chol, lei, cens, logp, d_share, d_beta, d_mu, d_chol, d_lei, d_cens, d_value,
        n, K, k, d, J, discrete,
    ):  # fmt: skip
        result = _logp_grad(
            numba.carray(value, (K, k)), n, numba.carray(share, K), numba.carray(noise, (K, k)),
            numba.carray(beta, d), numba.carray(mu, (K, d)), numba.carray(chol, (d, d)),
            numba.carray(lei, (K, J)), numba.carray(cens, (K, J)), discrete != 0,
        )  # fmt: skip
        numba.carray(logp, 1)[0] = result[0]
        copy_into(numba.carray(d_share, K), result[1])
        copy_into(numba.carray(d_beta, d), result[2])
        copy_into(numba.carray(d_mu, (K, d)), result[3])
        copy_into(numba.carray(d_chol, (d, d)), result[4])
        copy_into(numba.carray(d_lei, (K, J)), result[5])
        copy_into(numba.carray(d_cens, (K, J)), result[6])
        copy_into(numba.carray(d_value, (K, k)), result[7])

    return regression_logp_grad_entry


def logp_grad_address() -> int:
    """The address of :func:`logp_grad_entry` (compiled or loaded at the first call)."""
    return logp_grad_entry().address


def regression_logp_grad(value, n, share, noise, beta, mu, chol, lei, cens, discrete):
    """log N(value | n·m, n·(B − mmᵀ) + diag(noise)) over the K cells, and its gradient in share,
    beta, mu, chol, lei, cens and value.

    The kernel's C entry (:func:`logp_grad_entry`) called through ``ctypes``: the same compiled
    code that graphs compiled by PyTensor's Numba backend call.

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
    tuple
        (logp, a float; then the arrays ∂/∂share, ∂/∂beta, ∂/∂mu, ∂/∂chol, ∂/∂lei, ∂/∂cens,
        ∂/∂value);
        logp is −∞ where the covariance is not positive definite, with zero gradients.
    """
    K, k = value.shape
    d, J = beta.shape[0], lei.shape[1]
    inputs = [np.ascontiguousarray(a, dtype=np.float64) for a in (value, share, noise, beta, mu, chol, lei, cens)]
    shapes = [(1,), (K,), (d,), (K, d), (d, d), (K, J), (K, J), (K, k)]  # logp, then the gradient's parts
    outputs = [np.empty(shape) for shape in shapes]
    pointer = ctypes.POINTER(ctypes.c_double)
    logp_grad_entry().ctypes(
        *(a.ctypes.data_as(pointer) for a in inputs + outputs), float(n), K, k, d, J, int(discrete)
    )
    return float(outputs[0][0]), *outputs[1:]


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
    cov_all = n * (second_all - outer(mean_all, mean_all))
    flat_noise = noise.ravel()
    for i in range(K * size):
        cov_all[i, i] += flat_noise[i]
    return n * mean_all, cov_all
