"""The survival regression under a reference covariate law: the released means of the counts and
covariate sums taken from the law's rows instead of the Gaussian law.

The model's moments (:mod:`pm_private.survival.regression.moments`) integrate each person's exit
probabilities gₖ(a), a = xᵀβ, over a Gaussian law of x.  On binary, categorical or skewed
covariates the part of gₖ that is not linear in a then has the wrong expectation, and β a bias
that does not shrink with n.  As the GLMs do (:func:`pm_private.released.glm.reference_law_averages`),
the model takes the means of the released counts and covariate sums per exit,

    E[yₖ] = (1/N)·Σᵢ gₖ(aᵢ),   E[yₖ·x] = μ·E[yₖ] + L·(1/N)·Σᵢ gₖ(aᵢ)·zᵢ,   aᵢ = μᵀβ + zᵢᵀLᵀβ,

from the N whitened rows zᵢ of a reference law (:func:`pm_private.released.reference_law`: a
Gaussian copula matched to the released moments and the columns' declared kinds), moved onto
each cell's μ and the shared factor L of Σx, while the covariance of the statistics keeps the
Gaussian law's Stein forms.  The likelihood receives the difference of the two laws' means as a
shift of the released values (:func:`law_mean_shift`), through which its gradient passes; the
squares' mean E[xxᵀ] = Σx + μμᵀ is the same under both laws.  The cost per gradient is
O(N·J·d) flops on top of the Gaussian model's, in compiled loops
(:mod:`pm_private.survival.regression.law_ops`).
"""

from __future__ import annotations

import pytensor.tensor as pt

from ..._engine.docstrings import parameters_from
from .law_ops import weighted_exit_sums
from .moments import _NODES, _WEIGHTS, FRAILTY_SD  # the Gaussian law's Gauss–Hermite rule

__all__ = ["law_mean_shift"]


@parameters_from(weighted_exit_sums)
def law_mean_shift(whitened, beta, mu, chol, lei, cens, *, discrete: bool = False):
    """The reference law's means of one person's counts and covariate sums per exit less the
    Gaussian law's (module notes), per cell in the release's order, 0 on the squares.

    Parameters
    ----------
    whitened : tensor (N, d)
        The reference law's rows, whitened (mean 0, covariance I over the rows).
    beta : tensor (d,)
        Log hazard ratios.
    mu : tensor (K, d)
        The cells' covariate means.
    chol : tensor (d, d)
        A factor L of the covariates' covariance Σx = LLᵀ.
    lei, cens : tensor (K, J)
        As for :func:`~pm_private.survival.regression.law_ops.weighted_exit_sums`.

    Returns
    -------
    tensor (K, k)
        k = (2J + 1)(d + 1) + d(d + 1)/2: the counts' shifts, the covariate sums' (exit-major),
        then d(d + 1)/2 zeros.
    """
    whitened, beta, mu, chol, lei, cens = (pt.as_tensor(x) for x in (whitened, beta, mu, chol, lei, cens))
    K, d = mu.type.shape
    loading = (chol * beta[:, None]).sum(axis=0)  # Lᵀβ; elementwise sums: no BLAS wrapper to compile
    m = (mu * beta).sum(axis=-1)  # (K,)
    rows = whitened.shape[0]
    a = m[:, None] + (whitened * loading).sum(axis=-1)[None, :]
    reference, reference_z = weighted_exit_sums(a, whitened, pt.ones(rows) / rows, lei, cens, discrete=discrete)
    # the Gaussian law as the moments compute it: a = m + s·u at the Gauss–Hermite nodes, s² = βᵀΣβ + ε²,
    # and E[gₖ·x] = μ·B₀ + L·(Lᵀβ/s)·B₁
    s = pt.sqrt((loading**2).sum() + FRAILTY_SD**2)
    nodes = m[:, None] + s * _NODES
    gaussian, gaussian_u = weighted_exit_sums(nodes, _NODES[:, None], _WEIGHTS, lei, cens, discrete=discrete)
    count_shift = reference - gaussian  # (K, E)
    whitened_shift = reference_z - gaussian_u * (loading / s)  # (K, E, d)
    x_shift = count_shift[..., None] * mu[:, None, :] + (whitened_shift[:, :, None, :] * chol).sum(axis=-1)
    exits = count_shift.shape[1]
    return pt.concatenate([count_shift, x_shift.reshape((K, exits * d)), pt.zeros((K, d * (d + 1) // 2))], axis=1)
