"""The covariate law of the noise-aware linear model: the public prior scale of the design's columns,
the plug-in covariance of a release's own Sxx (Ledoit & Wolf 2004 shrinkage towards the noise) and
the Cholesky factors that whiten the coefficients under each law (public, release, integrated)."""

from __future__ import annotations

import numpy as np

from .integrated import (
    integrated_arrays,
)
from .noise_aware import noise_aware_arrays
from .stats import LinearStats, frobenius_weights, stat_pairs

__all__ = ["release_x_cov"]


def _default_x_scale(stats: LinearStats) -> float:
    """Prior scale s of the design's columns (the Wishart prior's mean n·s²·I): 1 on a publicly
    standardised scale; else the RMS of the exact (public) rows; else, where the released trace
    stands out of its noise (tr R ≥ 3 noise s.d.), the RMS tr R/(n·d) it gives (post-processing);
    else half the clip bound of the releases (per entry: a row-norm bound / √d)."""
    preps = [r.preprocessing for r in stats.releases]
    if preps and all(p is not None and p.standardises_x for p in preps):
        return 1.0
    d = stats.d
    public = stats.public
    if public is not None and public.n > 0 and np.trace(public.xx) > 0:
        return float(np.sqrt(np.trace(public.xx) / (public.n * d)))
    private_n = stats.n_estimate - (public.n if public is not None else 0)
    trace = float(np.trace(stats.xx) - (np.trace(public.xx) if public is not None else 0.0))
    variances = sum(r.noise_variance(d) for r in stats.releases)
    trace_sd = float(np.sqrt(np.sum(variances[np.flatnonzero(np.equal(*stat_pairs(d)))][:d])))
    if trace > 3.0 * trace_sd:
        return float(np.sqrt(trace / (private_n * d)))
    covariates = d - stats.intercept
    per_entry = [r.x_bound / (1.0 if r.x_clip.startswith("entry") else np.sqrt(covariates)) for r in stats.releases]
    return max(per_entry) / 2.0


def release_x_cov(stats: LinearStats) -> np.ndarray:
    """Plug-in covariate covariance from the statistics themselves: Sxx/n shrunk towards a multiple
    of the identity by as much as the release noise demands.

    Post-processing of the release (no privacy cost).  With M = Sxx/n, μ = tr(M)/d and ν the
    expected squared Frobenius norm of the release noise on M (σ²·d(d+1)/(2n²) for noise of
    variance σ² on the diagonal and σ²/2 off it, in the Frobenius geometry of
    :func:`pm_private.linear.release.frobenius_weights`), the shrinkage of Ledoit & Wolf (2004)
    with the noise's share known,

        Σ̂x = (1 − α)·M + α·μI,  α = min(1, ν / ‖M − μI‖²_F),

    keeps M where the covariates' spread dominates the noise and falls back to μI where the noise
    hides it; eigenvalues are then raised to 10⁻³·μ.  Where the noise hides even the trace
    (tr(M)/d not above twice its noise standard deviation σ/(n√d)), μ is the covariates' prior
    scale squared (the ``x_scale`` default of :func:`linear_model`).  Exact statistics give
    Sxx/n (eigenvalues raised to 10⁻⁶ × the largest).

    Parameters
    ----------
    stats : LinearStats
        Exact or released statistics.

    Returns
    -------
    numpy.ndarray (d, d)
        Symmetric positive definite Σ̂x.

    Raises
    ------
    ValueError
        If exact statistics have Sxx = 0 (covariates without spread).
    """
    d = stats.d
    cov = np.asarray(stats.xx) / stats.n_estimate
    cov = (cov + cov.T) / 2
    mu = np.trace(cov) / d
    floor = 1e-6 * np.linalg.eigvalsh(cov)[-1]
    if stats.is_exact and not mu > 0:
        raise ValueError("Sxx is zero: the covariates have no spread; pass x_cov")
    if not stats.is_exact:
        m = d * (d + 1) // 2
        noise_var = noise_aware_arrays(stats)["noise_var"][:m] * frobenius_weights(d)[:m] ** 2
        noise = noise_var.mean() * m / stats.n_estimate**2
        if not mu > 2.0 * np.sqrt(noise_var.mean() / d) / stats.n_estimate:  # trace not above twice its noise s.e.
            mu = _default_x_scale(stats) ** 2
        spread = np.sum((cov - mu * np.eye(d)) ** 2)
        alpha = 1.0 if spread <= noise else noise / spread
        cov = (1 - alpha) * cov + alpha * mu * np.eye(d)
        floor = 1e-3 * mu
    values, vectors = np.linalg.eigh(cov)
    cov = (vectors * np.maximum(values, floor)) @ vectors.T
    return (cov + cov.T) / 2


def _check_x_cov(x_cov, d: int, batch=()) -> np.ndarray:
    """chol of a public Σx given for the d columns, or, for statistics with an intercept column,
    for the d − 1 covariates: then of the rows' second moments [[1, μᵀ], [μ, Σx + μμᵀ]] with μ
    the released first moments Σxᵢ/n (post-processing), averaged over ``batch``."""
    cov = np.asarray(x_cov, dtype=np.float64)
    intercept = bool(batch) and batch[0].intercept
    if intercept and cov.shape == (d - 1, d - 1) and np.isfinite(cov).all() and np.allclose(cov, cov.T):
        mean = np.mean([s.xx[0, 1:] / s.n_estimate for s in batch], axis=0)
        cov = np.block([[np.ones((1, 1)), mean[None, :]], [mean[:, None], cov + np.outer(mean, mean)]])
    if cov.shape != (d, d) or not np.isfinite(cov).all() or not np.allclose(cov, cov.T):
        shape = f"{d - 1}×{d - 1} (the covariates) or {d}×{d}" if intercept else f"{d}×{d}"
        raise ValueError(f"x_cov must be a finite symmetric {shape} matrix")
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError("x_cov must be positive definite") from None


def _release_x_chol(stats) -> np.ndarray:
    """chol(:func:`release_x_cov`) of each statistics (a leading batch axis for a sequence)."""
    if isinstance(stats, LinearStats):
        return np.linalg.cholesky(release_x_cov(stats))
    return np.stack([np.linalg.cholesky(release_x_cov(s)) for s in stats])


def _release_x_cov(stats) -> np.ndarray:
    """:func:`release_x_cov` of each statistics (a leading batch axis for a sequence)."""
    if isinstance(stats, LinearStats):
        return release_x_cov(stats)
    return np.stack([release_x_cov(s) for s in stats])


def _integrated_x_chol(stats, **prior) -> np.ndarray:
    """chol(Ŝ/n) of the integrated likelihood's Gram matrices (the whitening of ``beta``), with the
    eigenvalues of Ŝ/n raised to 10⁻³ × their mean.

    Any positive definite whitening leaves the model unchanged; the floor keeps it well conditioned
    where the release noise leaves Ŝ nearly singular (Ŝ's own floor is 10⁻⁹ × its largest
    eigenvalue), which otherwise magnifies an optimiser's error in the whitened coefficients by up to
    10⁴·⁵ in ``beta`` (mean-field ADVI then gave held-out R² far below zero).
    """
    arrays = integrated_arrays(stats, **prior)
    values, vectors = np.linalg.eigh(arrays["gram"] / np.asarray(arrays["n"])[..., None, None])
    values = np.maximum(values, 1e-3 * values.mean(axis=-1, keepdims=True))
    return np.linalg.cholesky((vectors * values[..., None, :]) @ np.swapaxes(vectors, -1, -2))
