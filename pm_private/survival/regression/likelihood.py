"""The normal log-density of a released exit table with covariate moments, by blocks.

The released vector r (k statistics in the release's order) is modelled as

    r ~ N(n·m, Σ),   Σ = n·(B − mmᵀ) + D,

with m = E[t], B = E[ttᵀ] the raw moments of one person's contribution t
(:func:`pm_private.survival.regression.moments.regression_stat_blocks`) and D the diagonal
noise variances.  Since a person leaves by exactly one exit (yₖyₗ = δₖₗyₖ), B in exit-block
order is block-arrowhead: 2J + 1 diagonal blocks of size p = d + 1, a border of P = d(d + 1)/2
columns and a P × P corner.  Let M = n·B + D, with diagonal blocks Aₖ, borders Cₖ and corner S.
By the Schur complement of the corner,

    log det M = Σₖ log det Aₖ + log det(S − Σₖ CₖᵀAₖ⁻¹Cₖ),

and quadratic forms in M⁻¹ follow the same way.  The borders share four bases, Cₖ = Σᵣ Bᵣ,ₖHᵣ
(:class:`~pm_private.survival.regression.moments.StatBlocks`), so
Σₖ CₖᵀAₖ⁻¹Cₖ = HᵀZH with Z = Σₖ (BₖBₖᵀ) ⊗ Aₖ⁻¹ only 4(d + 1) wide: the cost is
O(J·d³ + d⁵) flops per evaluation instead of the dense k³/3,
k = (2J + 1)(d + 1) + P.  The rank-one term follows from the matrix determinant lemma and
Sherman–Morrison,

    log det Σ = log det M + log γ,   ρᵀΣ⁻¹ρ = ρᵀM⁻¹ρ + n(mᵀM⁻¹ρ)²/γ,   γ = 1 − n·mᵀM⁻¹m,

with ρ = r − n·m.  Every person has one exit, so the count selector w (1 on the counts, 0
elsewhere) has wᵀt = 1 and Bw = m; hence γ = mᵀM⁻¹Dw exactly, which is computed without the
cancellation of 1 − n·mᵀM⁻¹m (γ is of the order of the count noise over n, and of 10⁻¹⁰ for the
jitter of exact statistics).  All three quadratic forms are entries of one 3 × 3 Gram matrix of
the right-hand sides (ρ, m, Dw).  The graph is plain PyTensor (batched Cholesky factors and
triangular solves), so every backend compiles it and its gradient.

References
----------
Golub, G. H. & Van Loan, C. F. (2013). Matrix Computations, 4th ed., §4.2 (block Cholesky) and
§2.1.4 (Sherman–Morrison–Woodbury).
"""

from __future__ import annotations

import math

import numpy as np
import pytensor.tensor as pt

from .moments import StatBlocks, block_order

__all__ = ["exit_table_normal_logp"]

_LOG_2PI = math.log(2.0 * math.pi)


def exit_table_normal_logp(value, n, share, noise_var, blocks: StatBlocks, J: int, d: int):
    """log N(value | n·m, n·(B − mmᵀ) + diag(noise_var)) by the block factorisation of the
    module notes, over K cells.

    With cells, a person's contribution is the cell's t in the cell's slot, so m stacks the cells'
    πc·mc and B is block-diagonal over the cells with blocks πc·Bc (πc the cell's share of the n
    people): M = n·B + D factorises cell by cell, and the rank-one term is shared.

    Parameters
    ----------
    value : tensor (K, k)
        The released statistics of each cell in the release's order (counts, covariate sums per
        exit, upper triangle of Σxxᵀ).
    n : scalar tensor
        The number of people.
    share : tensor (K,)
        The cells' shares πc of the people (summing to 1).
    noise_var : tensor (K, k)
        The noise variances, like ``value`` (> 0 on the counts).
    blocks : StatBlocks
        The raw moments of one person's contribution in each cell (leading axis K).
    J, d : int
        The number of intervals and of covariates.

    Returns
    -------
    scalar tensor
        The log-density; −∞ where the covariance is not positive definite.
    """
    exits, p = 2 * J + 1, d + 1
    order = block_order(J, d)
    value, noise_var = pt.as_tensor(value)[:, order], pt.as_tensor(noise_var)[:, order]
    cells = value.shape[0]
    split = exits * p
    r_blocks, r_square = value[:, :split].reshape((cells, exits, p)), value[:, split:]
    d_blocks, d_square = noise_var[:, :split].reshape((cells, exits, p)), noise_var[:, split:]
    share = pt.as_tensor(share)
    size = n * share  # n·πc
    mean_blocks = share[:, None, None] * blocks.exit_mean  # πc·mc
    mean_square = share[:, None] * blocks.square_mean
    diagonal = size[:, None, None, None] * blocks.exit_second + d_blocks[..., None] * np.eye(p)  # Aₖ per cell
    chol = pt.linalg.cholesky(diagonal, lower=True, on_error="nan")
    chol_inv = pt.linalg.solve_triangular(chol, pt.broadcast_to(np.eye(p), diagonal.shape), lower=True, b_ndim=2)
    inverse = pt.matrix_transpose(chol_inv) @ chol_inv  # Aₖ⁻¹
    weight = size[:, None, None] * blocks.border_weight  # Cₖ = Σᵣ n·πc·Bᵣ,ₖ·Hᵣ
    basis = blocks.border_basis.reshape((cells, 4 * p, -1))
    # Σₖ CₖᵀAₖ⁻¹Cₖ = Hᵀ Z H with Z[(r, a), (s, b)] = Σₖ (nπc)²Bᵣ,ₖBₛ,ₖ(Aₖ⁻¹)ₐᵦ: 4(d + 1) wide, not (2J + 1)(d + 1)
    pair = weight[:, :, :, None] * weight[:, :, None, :]  # (K, E, 4, 4)
    z = (pair[:, :, :, None, :, None] * inverse[:, :, None, :, None, :]).sum(axis=1).reshape((cells, 4 * p, 4 * p))
    corner = size[:, None, None] * blocks.square_second + d_square[:, :, None] * np.eye(d * (d + 1) // 2)
    schur = corner - pt.matrix_transpose(basis) @ z @ basis
    chol_s = pt.linalg.cholesky(schur, lower=True, on_error="nan")
    count_noise = pt.set_subtensor(pt.zeros_like(d_blocks)[..., 0], d_blocks[..., 0])  # D·w
    rhs_blocks = pt.stack([r_blocks - n * mean_blocks, mean_blocks, count_noise], axis=-1)  # (K, E, p, 3)
    rhs_square = pt.stack([r_square - n * mean_square, mean_square, pt.zeros_like(d_square)], axis=-1)
    solved = inverse @ rhs_blocks  # Aₖ⁻¹Rₖ
    through = (weight[:, :, :, None, None] * solved[:, :, None, :, :]).sum(axis=1).reshape((cells, 4 * p, 3))
    y_square = pt.linalg.solve_triangular(
        chol_s, rhs_square - pt.matrix_transpose(basis) @ through, lower=True, b_ndim=2
    )
    gram = pt.tensordot(rhs_blocks, solved, axes=[[0, 1, 2], [0, 1, 2]]) + pt.tensordot(
        y_square, y_square, axes=[[0, 1], [0, 1]]
    )  # (3, 3), summed over the cells
    quad, m_rho, gamma = gram[0, 0], gram[1, 0], gram[2, 1]
    log_det = (
        2.0 * pt.sum(pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)))
        + 2.0 * pt.sum(pt.log(pt.diagonal(chol_s, axis1=-2, axis2=-1)))
        + pt.log(gamma)
    )
    k = cells * (split + d * (d + 1) // 2)
    logp = -0.5 * (quad + n * m_rho**2 / gamma + log_det + k * _LOG_2PI)
    return pt.switch(pt.isnan(logp) | (gamma <= 0), -np.inf, logp)
