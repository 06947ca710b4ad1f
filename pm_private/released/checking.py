"""Posterior predictive checks of a fit to released statistics: the release against replicates.

A model of released statistics (``linear_model``, ``logistic_model``, ``poisson_model``,
``survival_model``) has the release itself as its observed variable ``likelihood``, whose random
method draws replicated releases: statistics of a new data set from the model, plus the release's
noise.  Comparing the observed release with replicates drawn at the posterior (Gelman, Meng &
Stern 1996) checks the model and the noise model together, on what was released, and spends no
budget.  Leave-one-out over records is not available from one release (the records are not
observed); a replicate check is the model check that is.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm

__all__ = ["release_check"]


def release_check(idata, model: pm.Model | None = None, *, var_name: str = "likelihood", random_seed=None):
    """Each released statistic against its replicates drawn from the posterior.

    With replicates r⁽ˢ⁾ ~ p(r | θ⁽ˢ⁾) at the posterior draws θ⁽ˢ⁾, per statistic k the
    standardised residual zₖ = (rₖ − mean r⁽ˢ⁾ₖ)/sd r⁽ˢ⁾ₖ and the two-sided posterior predictive
    p-value pₖ = 2·min(P(r⁽ˢ⁾ₖ ≤ rₖ), P(r⁽ˢ⁾ₖ ≥ rₖ)); overall, the discrepancy D(r) = Σₖ zₖ² and
    its p-value P(D(r⁽ˢ⁾) ≥ D(r)) (Gelman, Meng & Stern 1996).  Small p-values say the model, the
    noise model or both do not reproduce what was released; p-values near 1 are not a failure
    (the posterior predictive check is conservative).

    Parameters
    ----------
    idata : xarray.DataTree or arviz.InferenceData
        Posterior draws of ``model`` (the ``posterior`` group).
    model : pymc.Model, optional
        The model (default: the model of the current context).
    var_name : str, default "likelihood"
        The observed variable (the release).
    random_seed : int, optional
        Seed of the replicates.

    Returns
    -------
    pandas.DataFrame
        One row per statistic (the variable's coordinates), columns ``observed``, ``mean``,
        ``sd``, ``z`` and ``p_value``; ``attrs["discrepancy"]`` D(r) and
        ``attrs["p_value"]`` its p-value.

    Raises
    ------
    ValueError
        If the model has no observed variable ``var_name``, or ``idata`` has no posterior or is
        not the posterior of ``model`` (a free variable without draws, draws of another shape).

    Examples
    --------
    >>> import numpy as np
    >>> import pymc as pm
    >>> from pm_private import release_survival_stats, survival_model
    >>> from pm_private.released import release_check
    >>> rng = np.random.default_rng(0)
    >>> arm = rng.choice(["a", "b"], 800)
    >>> time = rng.exponential(np.where(arm == "b", 3.0, 2.0))
    >>> release = release_survival_stats(time, np.ones(800), arm, edges=[1.0, 2.0], cells=["a", "b"],
    ...                                  epsilon=1.0, delta=1e-6, rng=0)
    >>> with survival_model(release) as model:
    ...     idata = pm.sample_prior_predictive(50, random_seed=1)  # stands in for posterior draws
    >>> table = release_check({"posterior": idata["prior"]}, model, random_seed=2)
    >>> list(table.columns)
    ['observed', 'mean', 'sd', 'z', 'p_value']
    """
    model = pm.modelcontext(model)
    if var_name not in model.named_vars or model[var_name] not in model.observed_RVs:
        raise ValueError(f"var_name: the model has no observed variable {var_name!r}")
    if "posterior" not in idata:
        raise ValueError("idata has no posterior group")
    _check_draws(idata["posterior"], model)
    with model:
        try:
            replicated = pm.sample_posterior_predictive(
                idata["posterior"], var_names=[var_name], random_seed=random_seed, progressbar=False
            )
        except (AssertionError, TypeError) as error:  # PyTensor's shape checks, for draws it cannot take
            raise ValueError(
                f"idata: its draws do not fit the model, not the posterior of this model ({error})"
            ) from None
    draws = np.asarray(replicated["posterior_predictive"][var_name])
    draws = draws.reshape(draws.shape[0] * draws.shape[1], -1)  # (chain·draw, statistic)
    observed = np.asarray(model.rvs_to_values[model[var_name]].eval(), dtype=np.float64).ravel()
    mean, sd = draws.mean(axis=0), draws.std(axis=0, ddof=1)
    safe = np.where(sd > 0, sd, np.inf)
    z = (observed - mean) / safe
    below, above = (draws <= observed).mean(axis=0), (draws >= observed).mean(axis=0)
    dims = model.named_vars_to_dims.get(var_name, ())
    labels = list(model.coords[dims[-1]]) if dims and len(dims) == 1 else range(observed.size)
    table = pd.DataFrame(
        {
            "observed": observed,
            "mean": mean,
            "sd": sd,
            "z": z,
            "p_value": np.minimum(1.0, 2 * np.minimum(below, above)),
        },
        index=pd.Index(labels, name=dims[-1] if dims else "statistic"),
    )
    discrepancy = float(np.sum(z**2))
    replicate_discrepancy = np.sum(((draws - mean) / safe) ** 2, axis=1)
    table.attrs["discrepancy"] = discrepancy
    table.attrs["p_value"] = float(np.mean(replicate_discrepancy >= discrepancy))
    return table


def _check_draws(posterior, model: pm.Model) -> None:
    """Refuse a ``posterior`` that lacks draws of a free variable of ``model`` or whose draws of a
    variable of the model have another shape (another model's fit)."""
    names = set(posterior.data_vars)
    missing = [rv.name for rv in model.free_RVs if rv.name not in names]
    if missing:
        raise ValueError(
            f"idata: its posterior has no draws of {missing}, free variables of the model: pass the "
            "posterior of this model (missing variables would be drawn from their prior)"
        )
    variables = [v for v in (*model.free_RVs, *model.deterministics) if v.name in names]
    shapes = model.compile_fn(  # a graph of shapes only: the Python linker compiles it in a fraction of a second
        [v.shape for v in variables], inputs=model.value_vars, on_unused_input="ignore", mode="FAST_COMPILE"
    )(model.initial_point())
    for variable, shape in zip(variables, shapes, strict=True):
        draws = posterior[variable.name]
        if draws.dims[:2] != ("chain", "draw") or tuple(draws.shape[2:]) != tuple(int(k) for k in shape):
            raise ValueError(
                f"idata: its draws of {variable.name!r} have shape {tuple(draws.shape)} {draws.dims}, the "
                f"model's {variable.name!r} has (chain, draw) + {tuple(int(k) for k in shape)}: not the "
                "posterior of this model"
            )
