"""Covariate models of the noise-aware regressions: the law of x that the released second
moments are explained by.

* :func:`lkj_cholesky` — Σx = diag(s)·R·diag(s), s half-normal and R ~ LKJ(η) through its
  canonical partial correlations (Lewandowski, Kurowicka & Joe 2009): the logistic and Poisson
  models' covariate model, with a mean μ;
* :func:`wishart_cholesky` — Σx ~ Wishart(ν, (s²/ν)·I) by the Bartlett decomposition: the linear
  model's covariate model (Bernstein & Sheldon 2019).
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.transforms import Interval

from .covariance_ops import factor_and_covariance

__all__ = [
    "check_wishart_prior",
    "wishart_cholesky",
    "lkj_cholesky",
    "lkj_factor_and_covariance",
    "lkj_partial_shapes",
    "partial_correlation_cholesky",
]


def lkj_partial_shapes(d: int, eta: float) -> np.ndarray:
    """Beta shapes bₖ of the partial correlations of an LKJ(η) correlation matrix, in the order of
    ``numpy.tril_indices(d, -1)``.

    The correlation matrix of the LKJ(η) distribution (Lewandowski, Kurowicka & Joe 2009) is, by
    their vine construction, the one whose canonical partial correlations cᵢₖ (of variables i and k
    given variables 0, …, k − 1, i > k) are independent with (cᵢₖ + 1)/2 ~ Beta(bₖ, bₖ),

        bₖ = η + (d − 2 − k)/2,   k = 0, …, d − 2.

    Parameters
    ----------
    d : int
        The dimension.
    eta : float
        The LKJ shape η > 0.

    Returns
    -------
    numpy.ndarray, shape (d(d − 1)/2,)
        bₖ for each (i, k) of ``numpy.tril_indices(d, -1)``.
    """
    _, cols = np.tril_indices(d, -1)
    return eta + (d - 2 - cols) / 2.0


def partial_correlation_cholesky(partial, d: int):
    """The Cholesky factor L of the correlation matrix with canonical partial correlations ``partial``.

    With c the partial correlations placed strictly below the diagonal (order of
    ``numpy.tril_indices(d, -1)``), the rows of L are (Lewandowski, Kurowicka & Joe 2009; the
    Stan reference manual's transform of a correlation Cholesky factor)

        Lᵢₖ = cᵢₖ · √(Π_{j<k} (1 − cᵢⱼ²)) for k < i,   Lᵢᵢ = √(Π_{j<i} (1 − cᵢⱼ²)),

    so every row has unit norm and LLᵀ is a correlation matrix; computed from cumulative sums of
    log(1 − cᵢⱼ²), differentiable in c.

    Parameters
    ----------
    partial : tensor (d(d − 1)/2,)
        Partial correlations in (−1, 1).
    d : int
        The dimension.

    Returns
    -------
    tensor (d, d)
        Lower-triangular L with positive diagonal.
    """
    rows, cols = np.tril_indices(d, -1)
    strict = pt.zeros(d * d)[rows * d + cols].set(partial).reshape((d, d))
    log_rest = pt.log1p(-(strict**2))
    before = pt.cumsum(log_rest, axis=1) - log_rest  # Σ over j < k of log(1 − cᵢⱼ²)
    return (strict + pt.eye(d)) * pt.exp(0.5 * before)


def _pair_dim(model: pm.Model, dim: str, d: int) -> str | None:
    """The coordinate ``{dim}_pair`` of the partial correlations, added to ``model``: the pair
    (k, i), i > k, of ``numpy.tril_indices(d, -1)`` labelled ``"<name k>,<name i>"`` from
    ``dim``'s labels; None when ``dim`` has no d labels or the pairs' labels would not be distinct."""
    names = model.coords.get(dim)
    if names is None or len(names) != d:
        return None
    rows, cols = np.tril_indices(d, -1)
    labels = tuple(f"{names[k]},{names[i]}" for i, k in zip(rows, cols, strict=True))
    name = f"{dim}_pair"
    if len(set(labels)) != len(labels) or model.coords.get(name, labels) != labels:
        return None
    if name not in model.coords:
        model.add_coord(name, labels)
    return name


def lkj_cholesky(d: int, sd_sigma: float, eta: float, *, dim: str = "feature"):
    """The covariate model's Σx = diag(s)·R·diag(s) in the current model, returned as its Cholesky factor.

    Prior: standard deviations s ~ HalfNormal(``sd_sigma``) (``x_sd``) and correlation matrix
    R ~ LKJ(η), the distribution of ``pm.LKJCholeskyCov``, parametrised by R's canonical partial
    correlations: (cᵢₖ + 1)/2 ~ Beta(bₖ, bₖ) independently (``x_partial_corr``, the partial
    correlations c ∈ (−1, 1) themselves; :func:`lkj_partial_shapes`), R = LLᵀ with L of
    :func:`partial_correlation_cholesky`.  NUTS samples log s and logit((c + 1)/2) = 2 atanh(c), in
    which the prior factorises into independent one-dimensional densities; PyMC's packed
    Cholesky parametrisation of the same prior couples the standard deviations with the
    correlations.  Σx and R are not recorded: d² numbers each, nuisance of the regression, which
    would crowd the coefficients out of ``az.summary`` and ``az.plot_trace_dist`` (draw them from the
    posterior with :func:`partial_correlation_cholesky` when needed).

    Where the model has d labels of ``dim`` (its features), the variables are labelled by them:
    ``x_sd`` has dims ``dim`` (``x_sd[age]``) and ``x_partial_corr`` dims ``{dim}_pair``, a
    coordinate added to the model whose label ``"age,bmi"`` names the pair (k, i), i > k, of
    ``numpy.tril_indices(d, -1)``: the partial correlation of features i and k given the features
    before k.

    Parameters
    ----------
    d : int
        The number of covariates.
    sd_sigma : float
        Scale of the half-normal prior of the standard deviations.
    eta : float
        LKJ shape of the correlations (1: uniform).
    dim : str, default "feature"
        The model's coordinate of the covariates.

    Returns
    -------
    tensor (d, d)
        diag(s)·L, lower triangular.
    """
    return lkj_factor_and_covariance(d, sd_sigma, eta, dim=dim)[0]


def lkj_factor_and_covariance(d: int, sd_sigma: float, eta: float, *, dim: str = "feature"):
    """The covariate model of :func:`lkj_cholesky` in the current model, returned as its Cholesky
    factor and its covariance Σx, both from one Op with a hand-written gradient
    (``pm_private.released.covariance_ops.factor_and_covariance``).

    Parameters
    ----------
    d, sd_sigma, eta, dim
        As for :func:`lkj_cholesky`.

    Returns
    -------
    factor : tensor (d, d)
        diag(s)·L, lower triangular.
    covariance : tensor (d, d)
        Σx = diag(s)·R·diag(s).
    """
    model = pm.modelcontext(None)
    labelled = model.coords.get(dim) is not None and len(model.coords[dim]) == d
    sd = pm.HalfNormal("x_sd", sd_sigma, shape=d, dims=dim if labelled else None)
    if d == 1:
        return sd[:, None], (sd**2)[:, None]
    shapes = lkj_partial_shapes(d, eta)
    pairs = _pair_dim(model, dim, d)
    partial = pm.CustomDist(
        "x_partial_corr",
        shapes,
        dist=_signed_beta,
        transform=Interval(np.float64(-1.0), np.float64(1.0)),  # float64 bounds: an exact log-Jacobian
        shape=shapes.size,
        dims=pairs,
    )
    return factor_and_covariance(sd, partial)


def _signed_beta(shape, size):
    """c = 2u − 1 with u ~ Beta(b, b) (b = ``shape``): a partial correlation of :func:`lkj_cholesky`,
    whose density PyMC derives by the change of variables, p(c) = Beta((c + 1)/2 | b, b)/2."""
    two, one = pt.constant(2.0, dtype="float64"), pt.constant(1.0, dtype="float64")
    return two * pm.Beta.dist(shape, shape, size=size) - one


def check_wishart_prior(d: int, scale: float, dof: float) -> None:
    """ValueError naming the argument unless ``x_dof`` ν > d − 1 and ``x_scale`` s is finite and > 0
    (the Wishart prior Σx ~ W(ν, (s²/ν)·I) of :func:`wishart_cholesky`)."""
    if not dof > d - 1:
        raise ValueError(f"x_dof must be > d − 1 = {d - 1}, got {dof!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"x_scale must be finite and > 0, got {scale!r}")


def wishart_cholesky(name: str, d: int, *, scale: float, dof: float, dims=(), batch_shape=(), dim: str = "feature"):
    """Wishart prior Σx ~ W(ν, (s²/ν)·I) (prior mean s²·I) for the covariate covariance, as its
    Cholesky factor Lx = (s/√ν)·T by the Bartlett decomposition (Bartlett 1933): T lower
    triangular, T_jj² ~ χ²(ν − j) (j = 0…d−1), T_jk ~ N(0, 1) below the diagonal.

    Parameters
    ----------
    name : str
        Prefix of the model variables ``{name}_chi2`` (dims ``(*dims, dim)``) and
        ``{name}_offdiag``.
    d : int
        The number of covariates.
    scale : float
        The prior scale s > 0 of the covariates.
    dof : float
        The degrees of freedom ν > d − 1.
    dims : tuple of str, default ()
        Leading batch dims of the model variables.
    batch_shape : tuple of int, default ()
        Their lengths.
    dim : str, default "feature"
        The model's dim of the d covariates (of the design's columns in a model with an intercept).

    Returns
    -------
    pytensor.tensor.TensorVariable
        Lx, of shape ``(*batch_shape, d, d)``.

    Raises
    ------
    ValueError
        If ``dof`` ≤ d − 1 or ``scale`` is not finite and > 0.
    """
    check_wishart_prior(d, scale, dof)
    chi2 = pm.Gamma(f"{name}_chi2", alpha=(dof - np.arange(d)) / 2.0, beta=0.5, dims=(*dims, dim))
    lower = np.tril_indices(d, -1)
    t = pt.zeros((*batch_shape, d, d))
    t = pt.set_subtensor(t[..., np.arange(d), np.arange(d)], pt.sqrt(chi2))
    if lower[0].size:
        offdiag = pm.Normal(f"{name}_offdiag", 0.0, 1.0, shape=(*batch_shape, lower[0].size))
        t = pt.set_subtensor(t[..., lower[0], lower[1]], offdiag)
    return (scale / np.sqrt(dof)) * t
