"""NUTS for the noise-aware GLMs with a dense mass matrix started at the Laplace approximation.

The posterior of :func:`pm_private.glm.logistic_model` and :func:`pm_private.glm.poisson_model`
couples the coefficients with the covariate model, and its scales span orders of magnitude (at
d = 10 and n = 10⁵ the curvatures at the mode range over 5·10² to 8·10⁴).  NUTS with a dense mass
matrix adapted from the identity spends its first tuning windows with tiny steps and deep
trees.  :func:`laplace_nuts` starts the adaptation at the Laplace approximation instead (Laplace
1774; e.g. Gelman et al. 2013, Bayesian Data Analysis, §4.1): the mode θ̂ of the log posterior
in the sampler's unconstrained coordinates (L-BFGS, Nocedal & Wright 2006) and the inverse of
the negative Hessian H there, by central differences of the gradient,

    Hᵢ = −(∇log p(θ̂ + h·eᵢ) − ∇log p(θ̂ − h·eᵢ)) / (2h),   M⁻¹ = (½(H + Hᵀ))⁻¹,

with the eigenvalues of H raised to at least 10⁻³ times the largest (a saddle or a flat
direction gets a finite variance).  The dense adaptation (``QuadPotentialFullAdapt``) then
refines M⁻¹ from the draws as usual, the Laplace matrix counting as ``initial_weight`` draws.
The target distribution is unchanged; only the sampler's starting metric is.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
from pymc.step_methods.hmc.quadpotential import QuadPotentialFullAdapt
from scipy.optimize import minimize

from ..privacy.validation import check_fraction, check_positive

__all__ = ["laplace_covariance", "laplace_nuts", "laplace_restart"]

#: Eigenvalues of the negative Hessian are raised to at least this fraction of the largest.
EIGENVALUE_FLOOR = 1e-3
#: Step of the central differences of the gradient, in unconstrained coordinates.
HESSIAN_STEP = 1e-5


def laplace_covariance(logp_dlogp, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mode of a log density and the inverse of its negative Hessian there (module notes).

    Parameters
    ----------
    logp_dlogp : callable
        x ↦ (log p(x), ∇log p(x)) on raveled unconstrained coordinates.
    start : numpy.ndarray
        Where the L-BFGS search starts.

    Returns
    -------
    mode : numpy.ndarray
        θ̂ (the last L-BFGS iterate; the search stops at its default tolerances).
    covariance : numpy.ndarray
        (½(H + Hᵀ))⁻¹ with the eigenvalues of H floored at ``EIGENVALUE_FLOOR`` times the largest
        (or at 1 when none is positive).
    """
    start = np.asarray(start, dtype=np.float64)

    def negative(x):
        value, grad = logp_dlogp(x)
        if not np.isfinite(value):
            return np.inf, np.zeros_like(x)
        return -float(value), -np.asarray(grad, dtype=np.float64)

    result = minimize(negative, start, jac=True, method="L-BFGS-B")
    mode = result.x if np.all(np.isfinite(result.x)) else start
    size = mode.size
    hessian = np.empty((size, size))
    for i in range(size):
        shift = np.zeros(size)
        shift[i] = HESSIAN_STEP
        hessian[i] = -(np.asarray(logp_dlogp(mode + shift)[1]) - np.asarray(logp_dlogp(mode - shift)[1]))
    hessian = 0.5 * (hessian + hessian.T) / (2.0 * HESSIAN_STEP)
    if not np.all(np.isfinite(hessian)):
        return mode, np.eye(size)
    values, vectors = np.linalg.eigh(hessian)
    floor = EIGENVALUE_FLOOR * values[-1] if values[-1] > 0 else 1.0
    values = np.maximum(values, floor)
    return mode, (vectors / values) @ vectors.T


def laplace_nuts(
    model: pm.Model | None = None,
    *,
    target_accept: float = 0.9,
    initial_weight: float = 100.0,
    **kwargs,
) -> pm.NUTS:
    """A NUTS step whose dense mass matrix adaptation starts at the Laplace approximation.

    Build it inside the model context (or pass ``model``) and hand it to ``pm.sample(step=...)``;
    every chain (run one after the other or in processes) adapts its own copy during tuning.

    Parameters
    ----------
    model : pymc.Model, optional
        The model (default: the model of the current context); every free variable must be
        continuous.
    target_accept : float, default 0.9
        NUTS's target acceptance rate.
    initial_weight : float, default 100
        How many draws the Laplace covariance counts as in the adapted estimate.
    **kwargs
        Passed to ``pm.NUTS`` (e.g. ``compile_kwargs``).

    Returns
    -------
    pymc.NUTS
        The step, its potential a ``QuadPotentialFullAdapt`` with initial mean θ̂ and covariance
        (½(H + Hᵀ))⁻¹ of :func:`laplace_covariance`.

    Raises
    ------
    ValueError
        If ``target_accept`` is not in (0, 1) or ``initial_weight`` is not finite and > 0.

    Notes
    -----
    Costs one L-BFGS search and 2k gradient evaluations (k the number of unconstrained
    parameters, 76 for a d = 10 GLM): well under a second after compilation.  Measured on noise-aware
    logistic regression at d = 10 (one chain of 1000 + 1000): 35 000 leapfrog steps in tuning
    instead of 62 000 when the adaptation starts at the identity.
    """
    target_accept = check_fraction("target_accept", target_accept, closed=False)
    initial_weight = check_positive("initial_weight", initial_weight)
    model = pm.modelcontext(model)
    variables = model.continuous_value_vars
    size = sum(int(np.size(model.initial_point()[v.name])) for v in variables)
    potential = QuadPotentialFullAdapt(size, np.zeros(size), np.eye(size), initial_weight)
    step = pm.NUTS(variables, model=model, potential=potential, target_accept=target_accept, **kwargs)
    return laplace_restart(step, model)


def laplace_restart(step: pm.NUTS, model: pm.Model | None = None) -> pm.NUTS:
    """Recompute the Laplace start of a :func:`laplace_nuts` step for the model's current data.

    After the data of the model change (e.g. ``set_logistic_stats``), the compiled step can be
    reused; this moves the start of its mass-matrix adaptation to the Laplace approximation of
    the new posterior (no recompilation).

    Parameters
    ----------
    step : pymc.NUTS
        A step of :func:`laplace_nuts` on ``model``.
    model : pymc.Model, optional
        The model (default: the model of the current context).

    Returns
    -------
    pymc.NUTS
        ``step``, its potential's initial mean and covariance replaced.

    Raises
    ------
    ValueError
        If the step's potential is not a dense adaptation (``QuadPotentialFullAdapt``).
    """
    model = pm.modelcontext(model)
    potential = step.potential
    if not isinstance(potential, QuadPotentialFullAdapt):
        raise ValueError("step: its potential must be a QuadPotentialFullAdapt (build it with laplace_nuts)")
    point = model.initial_point()
    start = np.concatenate([np.ravel(point[v.name]) for v in step.vars]).astype(np.float64)
    logp_dlogp = step._logp_dlogp_func
    logp_dlogp.set_extra_values({})
    mode, covariance = laplace_covariance(logp_dlogp, start)
    potential._initial_mean = mode
    potential._initial_cov = covariance
    potential.reset()
    return step
