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

__all__ = [
    "ApproximationWarning",
    "laplace_approximation",
    "laplace_covariance",
    "laplace_nuts",
    "laplace_restart",
    "laplace_start",
]

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


class ApproximationWarning(UserWarning):
    """An approximate posterior that its own diagnostic finds unreliable (Pareto k̂ > 0.7)."""


#: Degrees of freedom of the Student-t proposal of :func:`laplace_approximation`.
PROPOSAL_DOF = 5.0
#: Proposal draws per returned draw in :func:`laplace_approximation`.
PROPOSALS_PER_DRAW = 4
#: Pareto k̂ above which importance resampling is unreliable (Vehtari et al. 2024).
PARETO_K_LIMIT = 0.7
#: Rounds in which the proposal of :func:`laplace_approximation` adapts to the weighted draws.
ADAPTATION_ROUNDS = 2


def _importance_round(logp, centre, scale, proposals: int, rng):
    """``proposals`` draws of a Student-t proposal (``PROPOSAL_DOF``, centre, scale matrix), their
    normalised Pareto-smoothed importance weights for the target ``logp`` and the weights' Pareto k̂."""
    from arviz_stats.base.array import array_stats
    from scipy.special import gammaln

    values, vectors = np.linalg.eigh(scale)
    values = np.maximum(values, EIGENVALUE_FLOOR * max(values[-1], 1e-300))
    root = vectors * np.sqrt(values)
    k, nu = centre.size, PROPOSAL_DOF
    z = rng.standard_normal((proposals, k))
    u = rng.chisquare(nu, size=len(z)) / nu
    proposals = centre + (z @ root.T) / np.sqrt(u)[:, None]
    log_q = -0.5 * (nu + k) * np.log1p(np.sum(z**2, axis=1) / u / nu) - 0.5 * np.sum(np.log(values))
    log_q += gammaln(0.5 * (nu + k)) - gammaln(0.5 * nu) - 0.5 * k * np.log(nu * np.pi)
    log_p = np.array([float(logp(x)[0]) for x in proposals])
    log_ratio = np.where(np.isfinite(log_p), log_p - log_q, -np.inf)
    log_ratio -= np.max(log_ratio)
    # ArviZ's psislw takes the negated log ratios (its leave-one-out convention, ratios 1/p(yᵢ | θ))
    smoothed, pareto_k = array_stats.psislw(-log_ratio, r_eff=1.0)
    weights = np.exp(smoothed - np.logaddexp.reduce(smoothed))
    return proposals, weights / weights.sum(), float(pareto_k)


def laplace_approximation(
    model: pm.Model | None = None,
    *,
    draws: int = 1000,
    chains: int = 2,
    importance: bool = True,
    random_seed=None,
):
    """Draws from the Laplace approximation of the posterior, corrected by Pareto-smoothed
    importance resampling, in the layout ``pm.sample`` returns.

    The posterior in the sampler's unconstrained coordinates θ is first approximated at its mode θ̂
    by the curvature there, H the negative Hessian (:func:`laplace_covariance`; Laplace 1774, e.g.
    Gelman et al. 2013, Bayesian Data Analysis, §4.1).  With ``importance`` (the default) that
    approximation is only the proposal: ``PROPOSALS_PER_DRAW`` draws per returned draw come from a
    Student-t with ``PROPOSAL_DOF`` degrees of freedom, centre θ̂ and scale H⁻¹ (heavier tails than
    the posterior's, as importance sampling needs), each weighted by p(θ)/q(θ), the weights
    Pareto-smoothed (PSIS; Vehtari, Simpson, Gelman, Yao & Gabry 2024), and the returned draws
    resampled by those weights (Rubin 1988).  The Pareto shape k̂ of the weights' tail says whether
    that worked: before the last round the proposal adapts ``ADAPTATION_ROUNDS`` times to the
    weighted draws' mean and covariance (population Monte Carlo; Cappé, Guillin, Marin & Robert
    2004); below 0.7 the draws estimate posterior moments reliably; above it the curvature at
    the mode does not describe the posterior (a hierarchical prior's funnel, a skewed or heavy
    tail) and an :class:`ApproximationWarning` says to sample with NUTS.  Draws map back through
    the model's transforms, so constrained variables stay in their support and deterministics are
    computed as in a sampled posterior.  PyMC's ``pm.fit`` (mean-field ADVI) gives no such
    diagnostic, and its default 10,000 steps can stop far from the posterior; the documentation's
    Samplers page reports both approximations' distance from NUTS on every family.

    Parameters
    ----------
    model : pymc.Model, optional
        The model (default: the model of the current context); every free variable continuous.
    draws : int, default 1000
        Draws per chain.
    chains : int, default 2
        Sets of draws (resampled draws are not Markov chains; R̂ near 1 is automatic).
    importance : bool, default True
        Correct the Laplace approximation by importance resampling (above); False returns draws of
        the normal N(θ̂, H⁻¹) itself.
    random_seed : int or numpy.random.Generator, optional
        Seed of the draws.

    Returns
    -------
    xarray.DataTree
        Groups ``posterior`` (every free variable and deterministic, with the model's dims) and
        ``constant_data`` (the model's data, with its fit record), as ``pm.sample`` returns them.
        The posterior's ``attrs``: ``pareto_k`` (k̂, with ``importance``) and
        ``importance_ess`` (the effective number of the weighted proposals, 1/Σw²).

    Raises
    ------
    ValueError
        If ``draws`` or ``chains`` is not a positive integer, or the model has a discrete variable.

    Warns
    -----
    ApproximationWarning
        If k̂ > 0.7.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pm_private.released import laplace_approximation
    >>> with pm.Model() as model:
    ...     mu = pm.Normal("mu", 0.0, 1.0)
    ...     _ = pm.Normal("y", mu, 1.0, observed=np.full(9, 1.0))
    ...     idata = laplace_approximation(draws=4000, random_seed=0)
    >>> round(float(idata["posterior"]["mu"].mean()), 1), round(float(idata["posterior"]["mu"].std()), 2)
    (0.9, 0.32)
    >>> bool(idata["posterior"].attrs["pareto_k"] < 0.7)
    True
    """
    import warnings

    from arviz_base import from_dict
    from pymc.backends.arviz import dict_to_dataset, find_constants

    from ..privacy.validation import check_bool, check_count

    draws = check_count("draws", draws)
    chains = check_count("chains", chains)
    importance = check_bool("importance", importance)
    model = pm.modelcontext(model)
    if len(model.continuous_value_vars) != len(model.value_vars):
        raise ValueError("model: the Laplace approximation needs every free variable continuous")
    variables = model.value_vars
    point = model.initial_point()
    shapes = [np.shape(point[v.name]) for v in variables]
    logp_dlogp = model.logp_dlogp_function(variables, ravel_inputs=True)
    logp_dlogp.set_extra_values({})
    start = np.concatenate([np.ravel(point[v.name]) for v in variables]).astype(np.float64)
    mode, covariance = laplace_covariance(logp_dlogp, start)
    covariance = 0.5 * (covariance + covariance.T)
    rng = np.random.default_rng(random_seed)
    wanted = chains * draws
    attrs = {}
    if importance:
        centre, scale = mode, covariance
        for _ in range(ADAPTATION_ROUNDS):  # the moments need fewer draws than the answer
            size = min(PROPOSALS_PER_DRAW * wanted, max(2000, 50 * mode.size))
            proposals, weights, _ = _importance_round(logp_dlogp, centre, scale, size, rng)
            ess = 1.0 / np.sum(weights**2)
            centre = weights @ proposals
            spread = proposals - centre
            # Population Monte Carlo (Cappé et al. 2004): the next proposal matches the weighted
            # draws' moments; with too few effective draws for a covariance, widen instead.
            scale = (spread.T * weights) @ spread if ess > 2 * mode.size else 2.0 * scale
        proposals, weights, pareto_k = _importance_round(logp_dlogp, centre, scale, PROPOSALS_PER_DRAW * wanted, rng)
        attrs = {"pareto_k": float(pareto_k), "importance_ess": float(1.0 / np.sum(weights**2))}
        if not pareto_k <= PARETO_K_LIMIT:
            warnings.warn(
                f"the Laplace approximation with importance resampling is unreliable here (Pareto k = "
                f"{float(pareto_k):.2f} > {PARETO_K_LIMIT}): the posterior is far from normal at its mode; sample "
                "it with NUTS (pm.sample)",
                ApproximationWarning,
                stacklevel=2,
            )
        flat = proposals[rng.choice(len(proposals), size=wanted, replace=True, p=weights)]
    else:
        flat = rng.multivariate_normal(mode, covariance, size=wanted, method="eigh")
    outputs = [v for v in model.unobserved_value_vars if v not in set(variables) or v.name in model.named_vars]
    fn = model.compile_fn(outputs, inputs=variables, on_unused_input="ignore", point_fn=False)
    splits = np.cumsum([int(np.prod(shape)) for shape in shapes])[:-1]
    unique, index = np.unique(flat, axis=0, return_inverse=True)  # resampled draws repeat
    results = [
        fn(*(part.reshape(shape) for part, shape in zip(np.split(x, splits), shapes, strict=True))) for x in unique
    ]
    posterior = {}
    for j, var in enumerate(outputs):
        stacked = np.stack([result[j] for result in results])[np.ravel(index)]
        posterior[var.name] = stacked.reshape(chains, draws, *stacked.shape[1:])
    dims = {name: list(model.named_vars_to_dims.get(name, ())) for name in posterior}
    coords = {key: list(value) for key, value in model.coords.items() if value is not None}
    tree = from_dict({"posterior": posterior}, dims=dims, coords=coords)
    tree["posterior"].attrs.update(attrs)
    constants = find_constants(model)
    if constants:  # as pm.sample stores them: the predictors and summaries read the fit record here
        dims = {name: list(model.named_vars_to_dims.get(name, ())) for name in constants}
        dataset = dict_to_dataset(constants, inference_library=pm, coords=coords, dims=dims, sample_dims=[])
        scalars = [f"{name}_dim_0" for name, value in constants.items() if np.ndim(value) == 0]
        tree["constant_data"] = dataset.squeeze([dim for dim in scalars if dim in dataset.sizes], drop=True)
    return tree
