"""Bayesian linear regression on (private) sufficient statistics inside PyMC (Honkela et al. 2018, Eq. 4.1).

For yᵢ | xᵢ ~ N(xᵢᵀβ, 1/λ) the log-likelihood of all n rows depends on the data only through
Sxx, Sxy, Syy and n:

    log p(y | X, β, λ) = (n/2)·log(λ/2π) − (λ/2)·(βᵀSxxβ − 2βᵀSxy + Syy).

:func:`SuffStatRegression` adds exactly this term to the current ``pm.Model``, so users keep
their own priors, and its cost does not depend on n.

Noisy statistics.  Laplace noise can make Sxx indefinite and the "residual sum of squares"
βᵀSxxβ − 2βᵀSxy + Syy negative for some β, which makes the likelihood unbounded (λ → ∞) and
breaks NUTS and ADVI.  For exact data the augmented matrix M = [[Sxx, Sxy], [Sxyᵀ, Syy]] = ZᵀZ,
Z = [X, y], is positive semi-definite, and the residual sum of squares is [β; −1]ᵀ M [β; −1].
pm_private therefore projects a *noisy* M onto {M : eig(M) ≥ floor} (eigenvalues below the floor
are raised to it, eigenvectors kept; the nearest such matrix in Frobenius norm) before building
the likelihood.  This is post-processing of the released statistics, free under DP.  Exact
statistics are used unchanged.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..privacy.validation import check_count
from .priors import _intercept_prior, _prior_precision_rate
from .stats import LinearStats

__all__ = ["PSD_FLOOR", "SuffStatRegression", "gibbs_regression", "project_psd", "suff_stat_logp"]

#: Relative eigenvalue floor of the projection: floor = PSD_FLOOR · largest eigenvalue of M.
PSD_FLOOR = 1e-6


def project_psd(stats: LinearStats, *, floor: float = PSD_FLOOR) -> LinearStats:
    """Project noisy statistics so that the augmented matrix [[Sxx, Sxy], [Sxyᵀ, Syy]] has
    eigenvalues ≥ ``floor`` × its largest eigenvalue (exact statistics are returned as they are).

    The nearest such matrix in Frobenius norm: eigenvalues below the floor are raised to it,
    eigenvectors kept.  Post-processing only: the result carries the same ``releases`` metadata
    and privacy.

    Parameters
    ----------
    stats : LinearStats
        The statistics to project.
    floor : float, default PSD_FLOOR (1e-6)
        Relative eigenvalue floor: the eigenvalues of the result are at least ``floor`` times the
        largest.

    Returns
    -------
    LinearStats
        ``stats`` itself when exact, else the projected statistics (same n, releases and exact part).

    Raises
    ------
    ValueError
        If the noisy augmented matrix has no positive eigenvalue.
    """
    if stats.is_exact:
        return stats
    d = stats.d
    augmented = np.empty((d + 1, d + 1))
    augmented[:d, :d] = stats.xx
    augmented[:d, d] = augmented[d, :d] = stats.xy
    augmented[d, d] = stats.yy
    values, vectors = np.linalg.eigh(augmented)
    top = max(values[-1], 0.0)
    if top == 0.0:
        raise ValueError("noisy statistics have no positive eigenvalue; nothing to fit")
    values = np.maximum(values, floor * top)
    projected = (vectors * values) @ vectors.T
    projected = (projected + projected.T) / 2
    return LinearStats(
        projected[:d, :d], projected[:d, d], projected[d, d], stats.n, stats.releases, stats.exact_part, stats.intercept
    )


def gibbs_regression(
    stats,
    *,
    draws: int = 1000,
    tune: int = 300,
    noise_precision_alpha: float = 2.0,
    noise_precision_beta: float = 2.0,
    prior_precision_alpha: float = 2.0,
    prior_precision_beta: float | None = None,
    intercept_sigma: float | None = None,
    rng=None,
) -> np.ndarray:
    """Exact posterior draws of β in Honkela et al.'s (2018) model (``noise_aware=False``) by Gibbs sampling.

    The model β ~ N(0, I/λ₀), λ ~ Gamma(a, b), λ₀ ~ Gamma(a₀, b₀) (shape-rate), with α ~ N(0, s_α²)
    on the constant column of statistics that have one, and the sufficient-statistic likelihood
    is conditionally conjugate (θ = (α, β), D = diag(1/s_α², λ₀, …, λ₀) or λ₀I without the
    intercept):

    * θ | λ, λ₀ ~ N(P⁻¹λSxy, P⁻¹), P = λSxx + D;
    * λ | θ ~ Gamma(a + n/2, b + RSS(θ)/2), RSS(θ) = θᵀSxxθ − 2θᵀSxy + Syy;
    * λ₀ | β ~ Gamma(a₀ + k/2, b₀ + ‖β‖²/2), k the number of covariates.

    Noisy statistics are first projected by :func:`project_psd` (as the PyMC model does), so
    this samples the same posterior as NUTS on ``linear_model(stats, noise_aware=False)``,
    without compilation and without NUTS's trouble when the projected Sxx is nearly singular.
    Post-processing of the release: no budget.

    Parameters
    ----------
    stats : LinearStats or sequence of LinearStats
        A sequence is sampled as independent chains in one vectorised sweep.
    draws, tune : int
        Kept draws and discarded initial sweeps (the chain starts at β = 0).
    noise_precision_alpha, noise_precision_beta : float, default 2.0
        Shape a and rate b of the Gamma prior of the noise precision λ (Honkela et al. 2018 use 2).
    prior_precision_alpha : float, default 2.0
        Shape a₀ of the Gamma prior of the prior precision λ₀.
    prior_precision_beta : float, optional
        Rate b₀ of the Gamma prior of λ₀; default 2/(k·v̄) for k covariates of mean variance v̄,
        as in :func:`linear_model`.
    intercept_sigma : float, optional
        s_α, as in :func:`linear_model` (default: the releases' response bound).
    rng : None, int or numpy.random.Generator
        Randomness of the sampler (not a privacy parameter).

    Returns
    -------
    numpy.ndarray
        (draws, d) for one LinearStats, (draws, B, d) for a sequence of B: the design's
        coefficients, the intercept first when the statistics have one.
    """
    a, b = noise_precision_alpha, noise_precision_beta
    single = isinstance(stats, LinearStats)
    given = [stats] if single else list(stats)
    batch = [project_psd(s) for s in given]
    if not batch:
        raise ValueError("no statistics given")
    draws, tune = check_count("draws", draws), check_count("tune", tune, minimum=0)
    rng = np.random.default_rng(rng)
    xx = np.stack([s.xx for s in batch])
    xy = np.stack([s.xy for s in batch])
    yy = np.array([s.yy for s in batch])
    n = np.array([s.n_estimate for s in batch], dtype=float)
    count, d = xy.shape
    intercept, intercept_sigma = _intercept_prior(batch, intercept_sigma)
    first = int(intercept)
    a0, b0 = prior_precision_alpha, _prior_precision_rate(prior_precision_beta, given, not single)
    beta = np.zeros((count, d))
    out = np.empty((draws, count, d))
    slopes = np.diag(np.r_[np.zeros(first), np.ones(d - first)])
    constant = np.diag(np.r_[np.ones(first), np.zeros(d - first)]) / (intercept_sigma**2 if first else 1.0)
    for sweep in range(draws + tune):
        rss = np.einsum("ri,rij,rj->r", beta, xx, beta) - 2.0 * (beta * xy).sum(axis=1) + yy
        lam = rng.gamma(a + n / 2.0, 1.0 / (b + np.maximum(rss, 0.0) / 2.0))
        lam0 = rng.gamma(a0 + (d - first) / 2.0, 1.0 / (b0 + (beta[:, first:] ** 2).sum(axis=1) / 2.0))
        precision = lam[:, None, None] * xx + lam0[:, None, None] * slopes + constant
        chol = np.linalg.cholesky(precision)
        mean = np.linalg.solve(precision, (lam[:, None] * xy)[..., None])[..., 0]
        noise = rng.standard_normal((count, d))
        beta = mean + np.linalg.solve(np.swapaxes(chol, -1, -2), noise[..., None])[..., 0]
        if sweep >= tune:
            out[sweep - tune] = beta
    return out[:, 0] if single else out


def suff_stat_logp(beta, noise_precision, xx, xy, yy, n):
    """(n/2)·log(λ/2π) − (λ/2)·(βᵀSxxβ − 2βᵀSxy + Syy) as a PyTensor expression.

    Batched over leading axes: the result has the batch shape of the arguments.

    Parameters
    ----------
    beta : tensor_like, shape (..., d)
        Regression coefficients β.
    noise_precision : tensor_like, shape (...)
        Noise precision λ = 1/σ².
    xx : tensor_like, shape (..., d, d)
        Sxx.
    xy : tensor_like, shape (..., d)
        Sxy.
    yy : tensor_like, shape (...)
        Syy.
    n : tensor_like, shape (...)
        Number of rows.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The Gaussian linear-regression log-likelihood of the rows summarised by the statistics.
    """
    quad = (beta[..., :, None] * xx * beta[..., None, :]).sum(axis=(-2, -1))
    rss = quad - 2.0 * (beta * xy).sum(axis=-1) + yy
    return 0.5 * n * (pt.log(noise_precision) - np.log(2 * np.pi)) - 0.5 * noise_precision * rss


def _stack(stats) -> dict[str, np.ndarray]:
    """Projected statistics as arrays; a sequence of LinearStats is stacked on a leading axis."""
    batch = [stats] if isinstance(stats, LinearStats) else list(stats)
    if not batch:
        raise ValueError("no statistics given")
    if len({s.d for s in batch}) != 1:
        raise ValueError(f"statistics must share d, got {sorted({s.d for s in batch})}")
    batch = [project_psd(s) for s in batch]
    arrays = {
        "xx": np.stack([s.xx for s in batch]),
        "xy": np.stack([s.xy for s in batch]),
        "yy": np.array([s.yy for s in batch]),
        "n": np.array([s.n_estimate for s in batch]),
    }
    if isinstance(stats, LinearStats):
        arrays = {key: value[0] for key, value in arrays.items()}
    return arrays


def SuffStatRegression(name: str, stats, *, beta, noise_precision):
    """Add the Gaussian linear-regression log-likelihood of ``stats`` to the current model.

    Parameters
    ----------
    name : str
        Name of the ``pm.Potential`` holding the log-likelihood; the statistics are stored as
        ``pm.Data`` named ``{name}_xx``, ``{name}_xy``, ``{name}_yy``, ``{name}_n`` so that
        :func:`set_linear_stats` can swap them without recompiling.
    stats : LinearStats or sequence of LinearStats
        Exact (:func:`pm_private.linear_stats`), private (:func:`pm_private.release_linear_stats`)
        or summed statistics.  Noisy ones are projected with :func:`project_psd`.  A sequence
        gives B independent regressions (batch axis first): beta must then be (B, d) and
        noise_precision (B,).
    beta : tensor of shape (d,) or (B, d)
        Regression coefficients (any PyMC variable or expression).
    noise_precision : tensor of shape () or (B,)
        λ = 1/σ² of the observation noise.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The ``pm.Potential``.  Its log-density equals the row-wise Normal likelihood when the
        statistics are exact; its cost is O(B·d²) whatever n is.
    """
    data = {key: pm.Data(f"{name}_{key}", value) for key, value in _stack(stats).items()}
    logp = suff_stat_logp(
        pt.as_tensor(beta), pt.as_tensor(noise_precision), data["xx"], data["xy"], data["yy"], data["n"]
    )
    return pm.Potential(name, logp.sum())
