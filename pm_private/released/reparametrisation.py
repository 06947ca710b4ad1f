"""Reparametrisations as PyMC transforms: the sampler works in a better-conditioned space, the
posterior keeps the model's own names.

A transform changes the space NUTS moves in, not the model: PyMC samples the transformed value
and stores the variable itself (``beta``, ``intercept``) in the posterior, adding the log-Jacobian
of the map, so a reparametrisation written as a transform leaves no internal variable in
``az.summary``, ``az.plot_trace_dist`` or ``pm.model_to_graphviz``.  Each variable below is a
``pm.CustomDist`` whose parameters include what its transform needs (a Cholesky factor that may
be random, the coefficients an intercept is centred on), so PyMC substitutes their values in the
transform as it does for a ``pm.Uniform`` with random bounds.

* :func:`whitened_normal` — β ~ N(0, diag(s²)) sampled as γ = Lᵀβ, the coefficients of the
  whitened covariates u = L⁻¹x (xᵀβ = uᵀγ) for the covariates' Cholesky factor L;
* :func:`centred_intercept` — α ~ N(0, σ²) sampled as γ₀ = l₀₀α + lᵀβ, the intercept at the
  covariates' mean;
* :func:`random_walk` — a Gaussian random walk with a random step τ, sampled non-centred through
  its standardised increments z (the funnel of τ against the walk removed).

With a design [1, x] whose second-moment matrix has the Cholesky factor [[l₀₀, 0], [l, L]], the
pair is exactly the whitening (α, β) ↦ Lₓᵀ(α, β) of the whole design, so the sampler sees the
same geometry as with one whitened vector.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.logprob.transforms import Transform
from pytensor.tensor.linalg import solve_triangular
from pytensor.tensor.random.type import RandomGeneratorType
from pytensor.tensor.type_other import NoneTypeT

from .prior_ops import simplex_from_log_ratios, walk_from_increments, walk_logp

__all__ = ["centred_intercept", "random_walk", "symmetric_dirichlet", "whitened_normal"]


def _parameters(inputs) -> list:
    """The variable's parameters from what its transform is handed: PyMC hands it the inputs of a
    ``pm.CustomDist(dist=...)`` variable's node, [size, *parameters, *random generators]; a
    direct call may hand the parameters alone."""
    if not inputs or not isinstance(getattr(inputs[-1], "type", None), RandomGeneratorType):
        return list(inputs)
    return [node_input for node_input in inputs[1:] if not isinstance(node_input.type, RandomGeneratorType)]


class _Whitening(Transform):
    """γ = Lᵀβ for the lower-triangular L, the last parameter of the variable (log|dβ/dγ| = −Σ log Lᵢᵢ)."""

    name = "whitened"

    def forward(self, value, *inputs):
        chol = _parameters(inputs)[-1]
        return (pt.swapaxes(chol, -1, -2) @ value[..., None])[..., 0]

    def backward(self, value, *inputs):
        chol = _parameters(inputs)[-1]
        return solve_triangular(pt.swapaxes(chol, -1, -2), value[..., None], lower=False)[..., 0]

    def log_jac_det(self, value, *inputs):
        chol = _parameters(inputs)[-1]
        return -pt.sum(pt.log(pt.abs(pt.diagonal(chol, axis1=-2, axis2=-1))), axis=-1)


class _Centring(Transform):
    """γ₀ = l₀₀α + lᵀβ for the parameters (β, l, l₀₀) of the variable (log|dα/dγ₀| = −log l₀₀)."""

    name = "centred"

    def forward(self, value, *inputs):
        beta, loading, scale = _parameters(inputs)
        return scale * value + pt.sum(loading * beta, axis=-1)

    def backward(self, value, *inputs):
        beta, loading, scale = _parameters(inputs)
        return (value - pt.sum(loading * beta, axis=-1)) / scale

    def log_jac_det(self, value, *inputs):
        scale = _parameters(inputs)[-1]
        return -pt.log(pt.abs(scale)) * pt.ones_like(value)


def _rows(walks):
    """Walks (..., J) as rows (R, J)."""
    return walks.reshape((-1, walks.shape[-1]))


def _row_parameters(walks, start, step):
    """The first levels' means and the steps of walks (..., J), one per row (R,)."""
    batch = walks.shape[:-1]
    return pt.broadcast_to(start[..., 0], batch).reshape((-1,)), pt.broadcast_to(step, batch).reshape((-1,))


def _batch_shape(size, *cores) -> tuple:
    """The batch shape of a draw of a ``pm.CustomDist`` graph: ``size`` where given, else the
    broadcast of the parameters' batch parts ``cores``."""
    if isinstance(size.type, NoneTypeT):
        return tuple(pt.broadcast_shape(*cores))
    return tuple(size[i] for i in range(size.type.shape[0]))


def whitened_normal(name: str, sd, chol, *, dims=None):
    """β ~ N(0, diag(``sd``²)), sampled as γ = Lᵀβ (the value variable ``<name>_whitened__``).

    For a likelihood that depends on the covariates only through their Cholesky factor L (a
    Gaussian law x ~ N(m, LLᵀ), or the Gram matrix LLᵀ), xᵀβ = uᵀγ with u = L⁻¹x uncorrelated,
    so with correlated covariates the posterior of γ is far better conditioned than that of β,
    which trades off along the likelihood's ridge.  The density of γ is N(0, Lᵀdiag(sd²)L), the
    prior of β moved by the linear map, so prior and posterior of β are unchanged.

    Parameters
    ----------
    name : str
        The variable's name (the posterior stores β under it).
    sd : tensor (..., k)
        The prior standard deviations of β (may be random).
    chol : tensor (..., k, k)
        Lower-triangular L with positive diagonal (data, or random such as a Wishart factor).
    dims : sequence of str, optional
        The variable's dims.

    Returns
    -------
    TensorVariable
        β, shape (..., k).
    """

    def logp(value, sd, chol):
        return pm.logp(pm.Normal.dist(0.0, sd), value).sum(axis=-1)

    def dist(sd, chol, size):  # a graph: prior draws compile in every backend
        sd = pt.broadcast_to(sd, (*_batch_shape(size, sd[..., 0], chol[..., 0, 0]), sd.shape[-1]))
        return pm.Normal.dist(pt.zeros_like(sd), sd)

    return pm.CustomDist(
        name, sd, chol, logp=logp, dist=dist, signature="(k),(k,k)->(k)", transform=_Whitening(), dims=dims
    )


def centred_intercept(name: str, sigma: float, beta, loading, scale, *, dims=None):
    """α ~ N(0, ``sigma``²), sampled as γ₀ = l₀₀α + lᵀβ (the value variable ``<name>_centred__``).

    With covariates of mean m the intercept α and the slopes β are correlated a posteriori
    (α + mᵀβ is what the data pin down); the sampler moves γ₀, the intercept at the covariates'
    mean in the scale of the design's Cholesky factor (l₀₀ = 1, l = m for the second-moment
    matrix of [1, x]), and α = (γ₀ − lᵀβ)/l₀₀ follows.  The prior of α is unchanged.

    Parameters
    ----------
    name : str
        The variable's name (the posterior stores α under it).
    sigma : float
        The prior standard deviation of α.
    beta : tensor (..., k)
        The slopes (a variable of the model).
    loading : tensor (..., k)
        l, the first column of the design's Cholesky factor below its corner.
    scale : tensor (...)
        l₀₀ > 0, the corner.
    dims : sequence of str, optional
        The variable's dims.

    Returns
    -------
    TensorVariable
        α, shape (...).
    """

    def logp(value, beta, loading, scale):
        return pm.logp(pm.Normal.dist(0.0, sigma), value)

    def dist(beta, loading, scale, size):
        return pm.Normal.dist(pt.zeros(_batch_shape(size, beta[..., 0], loading[..., 0], scale)), sigma)

    return pm.CustomDist(
        name,
        beta,
        loading,
        scale,
        logp=logp,
        dist=dist,
        signature="(k),(k),()->()",
        transform=_Centring(),
        dims=dims,
    )


class _NonCentring(Transform):
    """z of the walk x: z₀ = (x₀ − μ)/s₀, zⱼ = (xⱼ − xⱼ₋₁)/τ for the parameters (μ, τ) of the
    variable (log|dx/dz| = log s₀ + (J − 1)·log τ)."""

    name = "z"

    def __init__(self, first_sigma: float):
        self.first_sigma = first_sigma

    def forward(self, value, *inputs):
        start, step = _parameters(inputs)
        first = (value[..., :1] - start[..., :1]) / self.first_sigma
        return pt.concatenate([first, pt.diff(value, axis=-1) / step], axis=-1)

    def backward(self, value, *inputs):
        start, step = _parameters(inputs)
        walks = walk_from_increments(_rows(value), *_row_parameters(value, start, step), self.first_sigma)
        return walks.reshape(value.shape)

    def log_jac_det(self, value, *inputs):
        step = _parameters(inputs)[-1]
        return (np.log(self.first_sigma) + (value.shape[-1] - 1) * pt.log(step)) * pt.ones_like(value[..., 0])


def random_walk(name: str, first_mu, first_sigma: float, step_sigma: float, dims: tuple[str, ...], shape):
    """x₀ ~ N(μ, s₀²), xⱼ − xⱼ₋₁ ~ N(0, τ²), τ ~ HalfNormal(``step_sigma``) (``<name>_step``), over
    the last axis, one walk per row of the leading axes; sampled non-centred (Papaspiliopoulos,
    Roberts & Sköld 2007) through z₀ = (x₀ − μ)/s₀ and zⱼ = (xⱼ − xⱼ₋₁)/τ, which are N(0, 1)
    a priori whatever τ (the value variable ``<name>_z__``).

    Parameters
    ----------
    name : str
        The walk's name (the posterior stores x under it).
    first_mu : float or tensor
        μ, the prior mean of the first level (broadcast against the leading axes).
    first_sigma : float
        s₀ > 0.
    step_sigma : float
        Scale of the half-normal prior of the step τ.
    dims : tuple of str
        The walk's dims (the last: the steps).
    shape : tuple of int
        The walk's shape.

    Returns
    -------
    TensorVariable
        x, of ``shape``.
    """
    step = pm.HalfNormal(f"{name}_step", step_sigma)
    start = pt.broadcast_to(pt.as_tensor(first_mu, dtype="float64"), shape)

    def logp(value, start, step):
        return walk_logp(_rows(value), *_row_parameters(value, start, step), first_sigma).reshape(value.shape[:-1])

    def dist(start, step, size):
        start = pt.broadcast_to(start, (*_batch_shape(size, start[..., 0], step), start.shape[-1]))
        z = pm.Normal.dist(pt.zeros_like(start), 1.0)
        first = start[..., :1] + first_sigma * z[..., :1]
        return pt.concatenate([first, first + pt.shape_padright(step) * pt.cumsum(z[..., 1:], axis=-1)], axis=-1)

    def support_point(rv, size, start, step):
        return pt.broadcast_to(start, rv.shape)

    return pm.CustomDist(
        name,
        start,
        step,
        logp=logp,
        dist=dist,
        support_point=support_point,
        signature="(j),()->(j)",
        transform=_NonCentring(first_sigma),
        dims=dims,
    )


class _CentredLogRatio(Transform):
    """yₖ = log wₖ − mean log w, k < K, of shares w on the simplex (PyMC's ``simplex`` transform), its
    inverse one Op with a hand-written gradient (log|dw/dy| = log K + Σₖ log wₖ, Aitchison 1986)."""

    name = "simplex"

    def forward(self, value, *inputs):
        log_value = pt.log(value)
        return log_value[..., :-1] - pt.mean(log_value, axis=-1, keepdims=True)

    def backward(self, value, *inputs):
        return simplex_from_log_ratios(value)

    def log_jac_det(self, value, *inputs):
        return np.log(value.shape[-1] + 1.0) + pt.sum(pt.log(simplex_from_log_ratios(value)), axis=-1)


def symmetric_dirichlet(name: str, alpha: float, size: int, *, dims=None):
    """Shares w ~ Dirichlet(α, …, α) on the simplex of ``size`` ≥ 2 parts, sampled through their
    centred log ratios (the value variable ``<name>_simplex__``, as ``pm.Dirichlet``'s).

    The density and the sampler's space are those of ``pm.Dirichlet(name, a=np.full(size, alpha))``;
    the map from the log ratios to the shares and its gradient are one compiled Op
    (:func:`pm_private.released.prior_ops.simplex_from_log_ratios`) instead of PyMC's graph of a
    log-sum-exp, joins and bound checks, which Numba compiles node by node on a model's first fit.

    Parameters
    ----------
    name : str
        The variable's name.
    alpha : float
        The concentration α > 0 of every part.
    size : int
        The number of parts K ≥ 2.
    dims : str or tuple of str, optional
        The variable's dims.

    Returns
    -------
    TensorVariable
        w, shape (K,).

    References
    ----------
    Aitchison, J. (1986). The Statistical Analysis of Compositional Data. Chapman and Hall.
    """
    from scipy.special import gammaln

    if size < 2:
        raise ValueError(f"size must be at least 2, got {size}")
    norm = float(gammaln(size * alpha) - size * gammaln(alpha))

    def logp(value, concentration):
        return norm + pt.sum((concentration - 1.0) * pt.log(value), axis=-1)

    def dist(concentration, size):  # a graph: prior draws compile in every backend
        return pm.Dirichlet.dist(concentration, size=size)

    def support_point(rv, size_, concentration):
        return pt.full_like(concentration, 1.0 / concentration.shape[-1])

    return pm.CustomDist(
        name,
        np.full(size, float(alpha)),
        logp=logp,
        dist=dist,
        support_point=support_point,
        signature="(k)->(k)",
        transform=_CentredLogRatio(),
        dims=dims,
    )
