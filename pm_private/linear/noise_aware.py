"""Noise-aware likelihood of privately released sufficient statistics (Bernstein & Sheldon 2019).

A release (:func:`pm_private.release_suff_stats` or :func:`pm_private.release_suff_stats_gaussian`)
publishes r = s + w, where
s = Σᵢ t(xᵢ, yᵢ) are the true statistics of the n private rows, t(x, y) = upper triangle of
zzᵀ with z = (x, y) ∈ ℝᵈ⁺¹ (the d(d+1)/2 entries of xxᵀ, the d entries of xy, and y²), and
w is Laplace noise whose scales b₁, b₂, b₃ are in the release's metadata (or Gaussian noise of
standard deviation σ on every entry).  Treating r as exact
(Honkela et al. 2018) ignores w and gives over-confident posteriors.

Model (Bernstein & Sheldon 2019, "Differentially private Bayesian linear regression"):

* data model: x ~ N(0, Σx) (covariates centred by a public centre), y | x ~ N(xᵀβ, σ²), so
  z ~ N(0, C) with C = [[Σx, Σxβ], [βᵀΣx, βᵀΣxβ + σ²]] = L_C L_Cᵀ,
  L_C = [[Lx, 0], [βᵀLx, σ]], Lx = chol(Σx);
* the true statistics, by the central limit theorem, s ≈ N(n·m(C), n·V(C)) with the Gaussian
  moments (Isserlis) m_(ab) = C_ab and V_(ab),(ce) = C_ac·C_be + C_ae·C_bc;
* the release noise w is independent of s with known variance 2bₖ² per entry.

Bernstein & Sheldon keep s latent and run a Gibbs sampler.  Here s is marginalised in closed
form after replacing Laplace noise by a Gaussian of the same variance (Gaussian noise enters
exactly):

    r ≈ N(n·m(C), n·V(C) + diag(v)),  v = 2b² (Laplace) or σ² (Gaussian),

a single multivariate normal of dimension k = (d+1)(d+2)/2 whose log-density is a smooth
PyTensor expression, so it runs with NUTS and ADVI inside any ``pm.Model`` and costs
O(k³) per evaluation whatever n is.  Exact (public) statistics S_pub of n_pub further rows
enter through the exact Gaussian log-likelihood of those rows,
−(n_pub/2)·log|2πC| − ½·tr(C⁻¹S_pub), which depends on the rows only through S_pub.  With no
noise the model is the Gaussian model of (x, y) with s approximated by its CLT normal.

Why this and not Ju et al. (2022): their data-augmentation MCMC keeps the n private records
latent and is exact for any record-additive statistic, but every sweep costs O(n) (it updates
records one by one) and needs a custom Gibbs sampler outside PyMC's gradient-based samplers;
the marginal model above is O(1) in n, differentiable, and its approximations (CLT for s,
Gaussian for the noise) are checked by the calibration benchmark.

Known limits.  Clipping is not modelled: the released statistics are those of clipped data, the
model is for unclipped Gaussian data; when the bounds bite (more than a few per cent of the
entries clipped) the posterior is biased towards zero (measured in the calibration benchmark's
misspecified case).  Non-Gaussian covariates change the fourth moments V: bounded covariates
(lighter tails) make V over-dispersed for Sxx, which errs on the wide side.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.tensor.linalg import solve_triangular

from .suffstats import SuffStats, stat_pairs, stat_vector

__all__ = [
    "NoisySuffStatRegression",
    "augmented_cholesky",
    "covariate_cholesky",
    "noise_aware_arrays",
    "noisy_stats_logp",
    "exact_stats_logp",
    "set_noisy_stats",
]


def noise_aware_arrays(stats: SuffStats) -> dict[str, np.ndarray]:
    """Split ``stats`` into its private and exact parts, as the arrays the likelihood needs.

    Returns ``private`` (released vector of the private rows, exact part subtracted), ``private_n``
    (their count), ``noise_var`` (per-entry variance 2b² of the Laplace noise, summed over
    releases, from each release's ``noise_variance``), ``exact`` ((d+1)×(d+1) augmented matrix
    of the exact rows) and ``exact_n``.  Without a private release the private part is empty:
    ``private_n`` = 0, ``noise_var`` = 1 and the private term is switched off.
    """
    if not isinstance(stats, SuffStats):
        raise ValueError(f"stats must be SuffStats, got {type(stats).__name__}")
    d = stats.d
    k = (d + 1) * (d + 2) // 2
    exact = stats.public
    exact_aug = np.zeros((d + 1, d + 1))
    exact_n = 0
    if exact is not None:
        exact_aug[:d, :d] = exact.xx
        exact_aug[:d, d] = exact_aug[d, :d] = exact.xy
        exact_aug[d, d] = exact.yy
        exact_n = exact.n
    if stats.is_exact:
        private = np.zeros(k)
        private_n, noise_var = 0, np.ones(k)
    else:
        private = stat_vector(stats.xx, stats.xy, stats.yy) - stat_vector(
            exact_aug[:d, :d], exact_aug[:d, d], exact_aug[d, d]
        )
        private_n = stats.n - exact_n
        if private_n != sum(r.n for r in stats.releases):
            raise ValueError("the row counts of the releases do not add up to the private part of stats")
        noise_var = sum(release.noise_variance(d) for release in stats.releases)
    return {
        "private": private,
        "private_n": np.float64(private_n),
        "noise_var": noise_var,
        "private_on": np.float64(not stats.is_exact),
        "exact": exact_aug,
        "exact_n": np.float64(exact_n),
    }


def augmented_cholesky(beta, noise_precision, x_chol):
    """Cholesky factor L_C = [[Lx, 0], [βᵀLx, σ]] of the covariance C of z = (x, y), σ = λ^(−1/2).

    Batched over leading axes: beta (..., d), noise_precision (...), x_chol (..., d, d) or (d, d).
    """
    beta = pt.as_tensor(beta)
    x_chol = pt.as_tensor(x_chol)
    sigma = 1.0 / pt.sqrt(pt.as_tensor(noise_precision))
    x_chol = pt.broadcast_to(x_chol, (*beta.shape[:-1], *x_chol.shape[-2:]))
    bottom_x = (beta[..., :, None] * x_chol).sum(axis=-2)  # βᵀLx, (..., d)
    top = pt.concatenate([x_chol, pt.zeros((*beta.shape[:-1], beta.shape[-1], 1))], axis=-1)
    bottom = pt.concatenate([bottom_x, sigma[..., None]], axis=-1)[..., None, :]
    return pt.concatenate([top, bottom], axis=-2)


def noisy_stats_logp(chol_c, private, private_n, noise_var, d: int):
    """log N(r | n·m(C), n·V(C) + diag(noise_var)) with C = L_C L_Cᵀ (see the module notes).

    chol_c (..., d+1, d+1); private (..., k); private_n (...); noise_var (..., k);
    k = (d+1)(d+2)/2.
    """
    a, b = stat_pairs(d)
    c = chol_c @ pt.swapaxes(chol_c, -1, -2)
    mean = c[..., a, b]
    caa = c[..., a[:, None], a[None, :]]
    cbb = c[..., b[:, None], b[None, :]]
    cab = c[..., a[:, None], b[None, :]]
    cba = c[..., b[:, None], a[None, :]]
    n = pt.as_tensor(private_n)[..., None, None]
    cov = n * (caa * cbb + cab * cba) + pt.as_tensor(noise_var)[..., None, :] * np.eye(a.size)
    chol = pt.linalg.cholesky(cov)
    resid = pt.as_tensor(private) - pt.as_tensor(private_n)[..., None] * mean
    white = solve_triangular(chol, resid[..., None], lower=True)[..., 0]
    log_det = pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return -0.5 * (white**2).sum(axis=-1) - log_det - 0.5 * a.size * np.log(2 * np.pi)


def exact_stats_logp(chol_c, exact, exact_n, d: int):
    """Exact log-likelihood of n_pub rows z ~ N(0, C) from their augmented matrix S = Σ zzᵀ:
    −(n_pub/2)·((d+1)·log 2π + log|C|) − ½·tr(C⁻¹S)."""
    d1 = d + 1
    inv_s = solve_triangular(chol_c, pt.as_tensor(exact), lower=True)
    whitened = solve_triangular(chol_c, pt.swapaxes(inv_s, -1, -2), lower=True)
    trace = pt.diagonal(whitened, axis1=-2, axis2=-1).sum(axis=-1)
    log_det = 2.0 * pt.log(pt.diagonal(chol_c, axis1=-2, axis2=-1)).sum(axis=-1)
    return -0.5 * exact_n * (d1 * np.log(2 * np.pi) + log_det) - 0.5 * trace


def covariate_cholesky(name: str, d: int, *, scale: float, dof: float, dims=(), batch_shape=()):
    """Wishart prior Σx ~ W(ν, (scale²/ν)·I) (prior mean scale²·I) for the covariate covariance,
    as its Cholesky factor Lx = (scale/√ν)·T by the Bartlett decomposition:
    T lower triangular, T_jj² ~ χ²(ν − j) (j = 0…d−1), T_jk ~ N(0, 1) below the diagonal.

    Creates ``{name}_chi2`` (dims ``(*dims, "feature")``) and ``{name}_offdiag``; returns Lx.
    """
    if not dof > d - 1:
        raise ValueError(f"x_dof must be > d − 1 = {d - 1}, got {dof!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"x_scale must be finite and > 0, got {scale!r}")
    chi2 = pm.Gamma(f"{name}_chi2", alpha=(dof - np.arange(d)) / 2.0, beta=0.5, dims=(*dims, "feature"))
    lower = np.tril_indices(d, -1)
    t = pt.zeros((*batch_shape, d, d))
    t = pt.set_subtensor(t[..., np.arange(d), np.arange(d)], pt.sqrt(chi2))
    if lower[0].size:
        offdiag = pm.Normal(f"{name}_offdiag", 0.0, 1.0, shape=(*batch_shape, lower[0].size))
        t = pt.set_subtensor(t[..., lower[0], lower[1]], offdiag)
    return (scale / np.sqrt(dof)) * t


def _stack_arrays(stats) -> dict[str, np.ndarray]:
    batch = [stats] if isinstance(stats, SuffStats) else list(stats)
    if not batch:
        raise ValueError("no statistics given")
    if len({s.d for s in batch}) != 1:
        raise ValueError(f"statistics must share d, got {sorted({s.d for s in batch})}")
    parts = [noise_aware_arrays(s) for s in batch]
    arrays = {key: np.stack([p[key] for p in parts]) for key in parts[0]}
    if isinstance(stats, SuffStats):
        arrays = {key: value[0] for key, value in arrays.items()}
    return arrays


def NoisySuffStatRegression(name: str, stats, *, beta, noise_precision, x_chol):
    """Add the noise-aware log-likelihood of released statistics to the current model
    (Bernstein & Sheldon 2019; the marginal Gaussian form of the module notes).

    Parameters
    ----------
    name : str
        Name of the ``pm.Potential``; the statistics are stored as ``pm.Data`` named
        ``{name}_private``, ``{name}_private_n``, ``{name}_noise_var``, ``{name}_private_on``,
        ``{name}_exact``, ``{name}_exact_n`` so that :func:`set_noisy_stats` can swap them.
    stats : SuffStats or sequence of SuffStats
        Private releases, possibly plus exact public statistics (``public + release``: the
        public part enters exactly).  Noise variances are read from the release metadata.
        A sequence gives B independent regressions (batch axis first).
    beta : tensor (d,) or (B, d)
    noise_precision : tensor () or (B,)
        λ = 1/σ².
    x_chol : tensor (d, d) or (B, d, d)
        Cholesky factor of the covariate covariance Σx (a prior from :func:`covariate_cholesky`,
        or a constant from public data).

    Returns
    -------
    The ``pm.Potential`` (cost O(B·d⁶), independent of n).
    """
    arrays = _stack_arrays(stats)
    d = arrays["exact"].shape[-1] - 1
    data = {key: pm.Data(f"{name}_{key}", value) for key, value in arrays.items()}
    chol_c = augmented_cholesky(beta, noise_precision, x_chol)
    private = noisy_stats_logp(chol_c, data["private"], data["private_n"], data["noise_var"], d)
    logp = data["private_on"] * private + exact_stats_logp(chol_c, data["exact"], data["exact_n"], d)
    return pm.Potential(name, logp.sum())


def set_noisy_stats(name: str, stats, model: pm.Model | None = None) -> None:
    """Replace the statistics of :func:`NoisySuffStatRegression` ``name`` (same d and batch)."""
    pm.set_data({f"{name}_{key}": value for key, value in _stack_arrays(stats).items()}, model=model)
