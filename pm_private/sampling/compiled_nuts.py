"""``pm_private.sample``: NUTS on a model, compiled once per model and refitted without compiling.

``pm.sample`` uses nutpie wherever nutpie is installed, and nutpie compiles the model afresh on
every call (its Numba wrappers close over the model's data), so a refit after ``pm.set_data`` or a
family's ``set_<family>_stats`` costs a full compilation.  :func:`sample` compiles a model once
(nutpie's ``compile_pymc_model``, kept with the model) and swaps the model's current data into it
(``with_data``) at every later call; without nutpie it is ``pm.sample`` with PyMC's own NUTS, whose
compiled functions PyTensor caches on disk.  Either way the result carries the model's data in
its ``constant_data`` group, which the predictors and summaries read.
"""

from __future__ import annotations

import importlib.util
import weakref

import numpy as np
import pymc as pm
import xarray as xr

from .._engine.compile_notice import record_compiled

__all__ = ["sample"]

#: nutpie's compiled model of each model sampled with it (dropped with the model).
_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
SAMPLERS = ("auto", "nutpie", "pymc")


def _sampler(sampler: str) -> str:
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sampler == "auto":
        return "nutpie" if importlib.util.find_spec("nutpie") is not None else "pymc"
    return sampler


def _constant_data(model: pm.Model) -> xr.Dataset:
    """The model's data at their current values (PyMC's ``find_constants``, which ``pm.sample``
    records), on their dims."""
    from pymc.backends.arviz import find_constants

    variables, coords = {}, {}
    for name, value in find_constants(model).items():
        value = np.asarray(value)
        dims = model.named_vars_to_dims.get(name) or tuple(f"{name}_dim_{i}" for i in range(value.ndim))
        variables[name] = (dims, value)
        coords.update({dim: list(model.coords[dim]) for dim in dims if model.coords.get(dim) is not None})
    return xr.Dataset(variables, coords=coords)


def _family(model: pm.Model):
    """The family whose builder built the model (None for a model no family built)."""
    from ..released.family import recorded_fit, registered_families

    record = recorded_fit(model)  # a model's builder declared its family: it is registered
    return registered_families().get(record["family"]) if record else None


def _family_adaptation(model: pm.Model) -> str:
    """nutpie's mass-matrix adaptation for the model's family (its ``nutpie_adaptation``), or
    nutpie's default ``"diag"`` for a model no family built."""
    family = _family(model)
    return family.nutpie_adaptation if family is not None else "diag"


def _nutpie(model, *, draws, tune, chains, cores, random_seed, target_accept, progressbar, **options) -> xr.DataTree:
    import nutpie

    compiled = _COMPILED.get(model)
    if compiled is None:
        compiled = _COMPILED[model] = nutpie.compile_pymc_model(model, backend="numba")
        record_compiled(model)
    names = {var.name for var in compiled.shared_var_keys} & {var.name for var in model.data_vars}
    current = compiled.with_data(**{name: np.asarray(model[name].get_value()) for name in sorted(names)})
    seed = int(np.random.default_rng(random_seed).integers(2**31)) if not isinstance(random_seed, int) else random_seed
    options.setdefault("adaptation", _family_adaptation(model))
    result = nutpie.sample(
        current,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        seed=seed,
        target_accept=target_accept,
        progress_bar=progressbar,
        **options,
    )
    result["constant_data"] = xr.DataTree(_constant_data(model))
    return result


def sample(
    model: pm.Model | None = None,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    cores: int | None = None,
    random_seed=None,
    target_accept: float | None = None,
    sampler: str = "auto",
    progressbar: bool = False,
    **sampler_options,
) -> xr.DataTree:
    """Draw from a model's posterior with NUTS, compiling it once however often it is refitted.

    With nutpie (``sampler="nutpie"``, the default where nutpie is installed) the model is compiled
    on its first call (``nutpie.compile_pymc_model``, Numba backend) and kept with the model;
    later calls sample the model's current data (after ``pm.set_data`` or a family's
    ``set_<family>_stats``) without compiling.  With ``sampler="pymc"`` it is
    ``pm.sample(nuts_sampler="pymc")``, whose compiled log-density PyTensor caches on disk.  NUTS
    and its adaptation are the samplers' own (Hoffman & Gelman 2014).

    Parameters
    ----------
    model : pymc.Model, optional
        The model (default: the model of the current context).
    draws, tune : int, default 1000
        Kept and tuning draws per chain.
    chains : int, default 2
        Number of chains.
    cores : int, optional
        Chains run at once (None: the sampler's default, as many as the machine has cores for
        nutpie, whose chains are threads, and up to four for PyMC's NUTS, whose chains are
        processes).
    random_seed : int, optional
        Seed of the sampler (None: a fresh one).
    target_accept : float, optional
        NUTS's target acceptance rate, in (0, 1).  Default: the model's family's
        (``target_accept``: 0.9 for :func:`pm_private.survival_regression_model`, whose
        random walks' steps make NUTS diverge more often at 0.8), else 0.8, the samplers' default.
    sampler : {"auto", "nutpie", "pymc"}, default "auto"
        nutpie where it is installed, else PyMC's NUTS.
    progressbar : bool, default False
        Show the sampler's progress bar.
    **sampler_options
        Passed on to ``nutpie.sample`` or ``pm.sample``: for example ``adaptation="low_rank"``
        (nutpie), a mass matrix that adds the directions of the posterior's strongest correlations
        to the diagonal.  Without ``adaptation`` nutpie adapts as the model's family asks (its
        ``nutpie_adaptation``: ``"low_rank"`` for :func:`pm_private.survival_regression_model`,
        whose gradient evaluations per draw it halves; nutpie's default ``"diag"`` elsewhere).

    Returns
    -------
    xarray.DataTree
        ``posterior``, ``sample_stats`` and ``constant_data`` (the model's data, read by the
        predictors and :func:`pm_private.print_summary`).

    Raises
    ------
    ValueError
        If ``sampler`` is unknown.

    Notes
    -----
    Privacy: sampling is post-processing of a release and spends no budget.

    Examples
    --------
    >>> import numpy as np
    >>> import pm_private as pp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> y = rng.uniform(size=500) < 1 / (1 + np.exp(-X @ [1.0, -0.5]))
    >>> release = pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=0)
    >>> model = pp.logistic_model(release, x_sample=None)
    >>> idata = pp.sample(model, draws=200, tune=200)  # doctest: +SKIP
    >>> pp.set_logistic_stats(pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=1), model)
    >>> again = pp.sample(model, draws=200, tune=200)  # no compilation  # doctest: +SKIP
    """
    model = pm.modelcontext(model)
    options = dict(draws=int(draws), tune=int(tune), chains=int(chains), cores=None if cores is None else int(cores))
    if target_accept is None:
        family = _family(model)
        target_accept = 0.8 if family is None else family.target_accept
    if not (isinstance(target_accept, int | float) and 0 < target_accept < 1):
        raise ValueError(f"target_accept must be in (0, 1), got {target_accept!r}")
    if _sampler(sampler) == "nutpie":
        return _nutpie(
            model,
            **options,
            random_seed=random_seed,
            target_accept=target_accept,
            progressbar=progressbar,
            **sampler_options,
        )
    return pm.sample(
        **options,
        model=model,
        random_seed=random_seed,
        target_accept=target_accept,
        nuts_sampler="pymc",
        progressbar=progressbar,
        **sampler_options,
    )
