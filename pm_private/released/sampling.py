"""NUTS for the noise-aware GLMs with a dense mass matrix started at the Laplace approximation.

The posterior of :func:`pm_private.logistic_model` and :func:`pm_private.poisson_model`
couples the coefficients with the covariate model, and its scales span orders of magnitude (at
d = 10 and n = 10⁵ the curvatures at the mode range over 5·10² to 8·10⁴).  NUTS with a dense mass
matrix adapted from the identity spends its first tuning windows with tiny steps and deep
trees.  :func:`laplace_nuts` starts the adaptation at the Laplace approximation instead (Laplace
1774; e.g. Gelman et al. 2013, Bayesian Data Analysis, §4.1): the mode θ̂ of the log posterior
in the sampler's unconstrained coordinates (L-BFGS, Nocedal & Wright 2006) and the inverse of
the negative Hessian H there, by central differences of the gradient,

    Hᵢ = −(∇log p(θ̂ + h·eᵢ) − ∇log p(θ̂ − h·eᵢ)) / (2h),   M⁻¹ = (½(H + Hᵀ))⁻¹,

with the eigenvalues of H at most 10⁻¹² times the largest (a saddle or a flat direction)
replaced by the smallest of the others.  No coarser floor: at n = 10⁴ with exact statistics the
curvatures span up to 10³–10⁴ and a floor at 10⁻³ of the largest made the mass matrix too
narrow in the flattest directions.  The dense adaptation (``QuadPotentialFullAdapt``) then
refines M⁻¹ from the draws as usual, the Laplace matrix counting as ``initial_weight`` draws.
The target distribution is unchanged; only the sampler's starting metric is.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
from pymc.step_methods.hmc.quadpotential import QuadPotentialFullAdapt
from scipy.optimize import minimize

from ..privacy.validation import check_fraction, check_positive

__all__ = ["laplace_covariance", "laplace_nuts", "laplace_restart", "laplace_start"]

#: Eigenvalues of the negative Hessian at most this fraction of the largest count as flat.
EIGENVALUE_FLOOR = 1e-12
#: The most L-BFGS runs of the mode search (each restarted where the last stopped).
MODE_SEARCH_RESTARTS = 10
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
        θ̂: L-BFGS (Nocedal & Wright 2006), restarted where it stopped, up to
        ``MODE_SEARCH_RESTARTS`` times, until the log density no longer increases.
    covariance : numpy.ndarray
        (½(H + Hᵀ))⁻¹ with the eigenvalues of H at most ``EIGENVALUE_FLOOR`` times the largest
        replaced by the smallest of the others (the identity when none is positive).
    """
    start = np.asarray(start, dtype=np.float64)

    def negative(x):
        value, grad = logp_dlogp(x)
        if not np.isfinite(value):
            return np.inf, np.zeros_like(x)
        return -float(value), -np.array(grad, dtype=np.float64)

    # L-BFGS stops early on a tight posterior (large gradients, a line search meeting a
    # non-finite value); restart it from where it stopped until the value no longer improves.
    mode, value = start, negative(start)[0]
    for _ in range(MODE_SEARCH_RESTARTS):
        result = minimize(negative, mode, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
        if not (np.all(np.isfinite(result.x)) and result.fun < value):
            break
        improvement = value - result.fun
        mode, value = result.x, result.fun
        if improvement <= 1e-10 * (1.0 + abs(value)):
            break
    size = mode.size
    hessian = np.empty((size, size))
    for i in range(size):
        shift = np.zeros(size)
        shift[i] = HESSIAN_STEP
        # copies: a compiled function may return its gradient in the same buffer every call
        upper = np.array(logp_dlogp(mode + shift)[1], dtype=np.float64)
        lower = np.array(logp_dlogp(mode - shift)[1], dtype=np.float64)
        hessian[i] = lower - upper
    hessian = 0.5 * (hessian + hessian.T) / (2.0 * HESSIAN_STEP)
    if not np.all(np.isfinite(hessian)):
        return mode, np.eye(size)
    values, vectors = np.linalg.eigh(hessian)
    if not values[-1] > 0:
        return mode, np.eye(size)
    # a flat or negatively curved direction gets the widest positive curvature's variance
    positive = values > EIGENVALUE_FLOOR * values[-1]
    values = np.where(positive, values, values[positive].min())
    return mode, (vectors / values) @ vectors.T


def laplace_nuts(
    model: pm.Model | None = None,
    *,
    target_accept: float = 0.9,
    initial_weight: float = 100.0,
    **kwargs,
) -> pm.NUTS:
    """A NUTS step whose dense mass matrix adaptation starts at the Laplace approximation.

    Build it inside the model context (or pass ``model``) and hand it to ``pm.sample`` with the
    chains started at the mode: ``pm.sample(step=step, initvals=laplace_start(step))``; every
    chain (run one after the other or in processes) adapts its own copy during tuning.

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
    parameters, 76 for a d = 10 GLM).  Start the chains at the mode with :func:`laplace_start`.
    The leapfrog steps it saves against PyMC's dense adaptation started at the identity are
    measured on the documentation's model-selection page.
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


def laplace_start(step: pm.NUTS, model: pm.Model | None = None) -> dict[str, np.ndarray]:
    """The mode θ̂ of a :func:`laplace_nuts` step as ``initvals`` for ``pm.sample``.

    Start the chains there: a chain started at the model's initial point spends its first
    tuning iterations travelling to the posterior, and those draws enter the first window's
    covariance estimate next to the Laplace matrix, and the early steps grow long (measured on
    the documentation's model-selection page).

    Parameters
    ----------
    step : pymc.NUTS
        A step of :func:`laplace_nuts` (after :func:`laplace_restart` when the data changed).
    model : pymc.Model, optional
        The model (default: the model of the current context).

    Returns
    -------
    dict
        The value of every free random variable at θ̂, on its own (constrained) scale, keyed by
        name: ``pm.sample(step=step, initvals=laplace_start(step))``.
    """
    import pytensor

    model = pm.modelcontext(model)
    mode = np.asarray(step.potential._initial_mean, dtype=np.float64)
    values, offset = {}, 0
    point = model.initial_point()
    for var in step.vars:
        size = int(np.size(point[var.name]))
        values[var.name] = mode[offset : offset + size].reshape(np.shape(point[var.name]))
        offset += size
    fn = getattr(step, "_laplace_start_fn", None)
    if fn is None:
        outputs = []
        for rv in model.free_RVs:
            value = model.rvs_to_values[rv]
            transform = model.rvs_to_transforms.get(rv)
            outputs.append(value if transform is None else transform.backward(value, *rv.owner.inputs))
        outputs = model.replace_rvs_by_values(outputs)
        fn = pytensor.function(model.value_vars, outputs, on_unused_input="ignore", mode="FAST_COMPILE")
        step._laplace_start_fn = fn
    inputs = [values.get(v.name, point[v.name]) for v in model.value_vars]
    return {rv.name: np.asarray(v) for rv, v in zip(model.free_RVs, fn(*inputs), strict=True)}
