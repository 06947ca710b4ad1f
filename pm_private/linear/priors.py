"""The priors of the linear model (Honkela et al. 2018): the rate of the prior precision of the slopes,
the intercept's prior scale, and the coefficients sampled whitened by the covariates' Cholesky
factor."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ..privacy.validation import check_positive
from ..released.reparametrisation import centred_intercept, whitened_normal


def _prior_precision_rate(rate, covariates: int) -> float:
    """The rate b₀ of λ₀'s Gamma prior: ``rate`` checked, or 2/k for k ``covariates`` (at least 1)."""
    if rate is None:
        return 2.0 / max(covariates, 1)
    return check_positive("prior_precision_beta", rate)


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
    return float(max(10.0 * np.sqrt(max(s.yy, 0.0) / s.n) for s in batch)) or 1.0


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
