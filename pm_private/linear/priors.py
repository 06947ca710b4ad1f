"""The priors of the linear model (Honkela et al. 2018): the rate of the prior precision of the slopes,
the intercept's prior scale, and the coefficients sampled whitened by the covariates' Cholesky
factor."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ..privacy.validation import check_positive
from ..released.reparametrisation import centred_intercept, whitened_normal
from .stats import LinearStats, stat_pairs


def _prior_precision_rate(rate, batch, batched: bool) -> float | np.ndarray:
    """The rate b₀ of λ₀'s Gamma prior: ``rate`` checked, or per statistics of ``batch``
    2/(k·v̄) for k covariates of mean variance v̄ (:func:`_covariate_variance`), so that the prior
    mean of the explained variance E[βᵀΣxβ] = k·v̄·b₀/(a₀ − 1) is 2 for a₀ = 2 whatever the
    covariates' units (2/k on a standardised scale, v̄ = 1).  An array over a ``batched`` batch."""
    if rate is not None:
        return check_positive("prior_precision_beta", rate)
    rates = np.array([2.0 / (max(s.d - int(s.intercept), 1) * _covariate_variance(s)) for s in batch])
    return rates if batched else float(rates[0])


def _covariate_variance(stats: LinearStats) -> float:
    """v̄, the mean variance of the covariate columns (about their mean where the statistics have
    an intercept column, about 0 without), from public facts or the release alone: 1 on a
    publicly standardised scale; that of the exact (public) rows; else, where the release's
    estimate k·v̄ = Σⱼ(Sⱼⱼ/n − (S₀ⱼ/n)²) stands out of its noise (≥ 3 noise s.d., to first order),
    that estimate (post-processing); else 1, the standardised scale."""
    preps = [r.preprocessing for r in stats.releases]
    if preps and all(p is not None and p.standardises_x for p in preps):
        return 1.0
    first, d, public = int(stats.intercept), stats.d, stats.public
    exact = _mean_variance(public.xx, public.n, first) if public is not None and public.n > 0 else 0.0
    if exact > 0.0:
        return exact
    if not stats.releases:
        return 1.0
    n = stats.n_estimate - (public.n if public is not None else 0)
    xx = stats.xx - (public.xx if public is not None else 0.0)
    noise = sum(r.noise_variance(d) for r in stats.releases)
    rows, cols = stat_pairs(d)
    squares = (rows == cols) & (rows >= first) & (rows < d)
    means = (rows == 0) & (cols >= 1) & (cols < d) if first else np.zeros_like(squares)
    mean_sq = 4.0 * (xx[0, cols[means]] / n) ** 2  # the squared means' first-order noise factor
    total_sd = float(np.sqrt(np.sum(noise[squares]) + np.sum(mean_sq * noise[means]))) / n
    variance = _mean_variance(xx, n, first)
    return variance if (d - first) * variance > 3.0 * total_sd else 1.0


def _mean_variance(xx, n: float, first: int) -> float:
    """The mean over the covariate columns of Sxx/n's diagonal, less the squared column means
    (row 0 of Sxx over n) where column 0 is the intercept's (``first`` = 1)."""
    squares = np.diag(xx)[first:] / n
    means = xx[0, first:] / n if first else np.zeros_like(squares)
    return float(np.mean(squares - means**2))


def _intercept_prior(batch, intercept_sigma) -> tuple[bool, float | None]:
    """Whether the statistics of ``batch`` share the constant column (ValueError when some have it
    and some do not), and then the intercept's prior s.d. s_α, checked (default
    :func:`_default_intercept_sigma`); None without the column."""
    intercept = batch[0].intercept
    if any(s.intercept != intercept for s in batch):
        raise ValueError("stats: some statistics have an intercept column and some do not; fit them separately")
    if not intercept:
        return False, None
    return True, check_positive(
        "intercept_sigma", _default_intercept_sigma(batch) if intercept_sigma is None else intercept_sigma
    )


def _default_intercept_sigma(batch) -> float:
    """Prior s.d. of the intercept: the releases' public bound By (the mean response lies within
    it), else 10·√(Syy/n) of exact (public) statistics."""
    bounds = [r.y_bound for s in batch for r in s.releases if getattr(r, "y_bound", None) is not None]
    if bounds:
        return float(max(bounds))
    return float(max(10.0 * np.sqrt(max(s.yy, 0.0) / s.n_estimate) for s in batch)) or 1.0


def _whitened_coefficients(x_chol, slope_sd, slopes: int, intercept_sigma, batch_dims):
    """β ~ N(0, I/λ₀) over the covariates (``beta``, dims ``feature``) and, with an intercept
    column, α ~ N(0, s_α²) (``intercept``), sampled as γ = Lxᵀ(α, β), the coefficients of the
    whitened design u = Lx⁻¹x (xᵀβ = uᵀγ): ``beta`` whitened by the covariates' block of Lx and
    ``intercept`` centred on the covariates' mean (:mod:`pm_private.released.reparametrisation`).
    Returns the design's coefficients (α, β).

    The same prior and posterior; the noise-aware likelihood depends on (Lx, β) only through
    (Lx, γ), so with correlated covariates the posterior of (Lx, γ) is far better conditioned than
    that of (Lx, β), where β and Lx trade off along the likelihood's ridge (NUTS diverges far
    less; measured on the documentation's model-selection page).
    """
    slope_sd = pt.repeat(pt.as_tensor(slope_sd)[..., None], slopes, axis=-1)
    if intercept_sigma is None:
        return whitened_normal("beta", slope_sd, x_chol, dims=(*batch_dims, "feature"))
    beta = whitened_normal("beta", slope_sd, x_chol[..., 1:, 1:], dims=(*batch_dims, "feature"))
    alpha = centred_intercept(
        "intercept", intercept_sigma, beta, x_chol[..., 1:, 0], x_chol[..., 0, 0], dims=batch_dims
    )
    return pt.concatenate([pt.as_tensor(alpha)[..., None], beta], axis=-1)
