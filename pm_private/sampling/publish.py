"""What may leave the data holder after sampling a private posterior: the parameter draws only.

A sampler's output holds more than the draws of the parameters, and the rest is a function of
the private records: ``sample_stats`` (NUTS stores the model's log-density at every draw, which
for the sanitized-loss mechanism of Nguyên & Hui (2017a) is ε/(2v)·U(f; D), so a few draws and
the other records determine a record exactly; step sizes, tree depths, energies and timings
depend on the data too), ``log_likelihood``, ``observed_data`` and ``constant_data``,
deterministics (which may be functions of the data), the tuning draws, and the attributes
(``sampling_time`` is a timing side channel).  :func:`publishable` keeps the posterior draws of
the model's free random variables and nothing else.
"""

from __future__ import annotations

import xarray as xr

__all__ = ["publishable"]


def publishable(idata, var_names=None, *, model=None) -> xr.DataTree:
    """A ``DataTree`` with only the posterior draws of the model's free random variables.

    The draws of a private posterior (e.g. the sanitized-loss mechanism, Nguyên & Hui 2017a)
    are its output; everything else ``pm.sample`` returns may be a function of the records (see
    the module docstring).  The result has one group, ``posterior``, with the variables'
    (chain, draw, …) arrays and their coordinates, and no attributes.

    Parameters
    ----------
    idata : xarray.DataTree
        The output of ``pm.sample`` (or anything with a ``posterior`` group).
    var_names : sequence of str, optional
        The free random variables to keep (default: all of the model's).  Deterministics,
        potentials and observed variables are refused.
    model : pm.Model, optional
        The sampled model (default: the model on the context stack); it tells which posterior
        variables are free random variables.

    Returns
    -------
    xarray.DataTree
        ``posterior`` only.

    Raises
    ------
    ValueError
        If ``var_names`` names anything but free random variables, or ``idata`` has no
        posterior group or lacks draws of a variable.

    Examples
    --------
    >>> with model:                                                 # doctest: +SKIP
    ...     release = publishable(pm.sample(step=PSGLD(batch_size=200)))
    """
    import pymc as pm

    model = pm.modelcontext(model)
    free = [rv.name for rv in model.free_RVs]
    if var_names is None:
        names = free
    else:
        if isinstance(var_names, str):
            var_names = [var_names]
        names = list(var_names)
        other = [name for name in names if name not in free]
        if other:
            raise ValueError(f"var_names may only name free random variables of the model ({free}); refused: {other}")
    try:
        posterior = idata["posterior"]
    except (KeyError, TypeError):
        raise ValueError("idata must be the output of pm.sample, with a posterior group") from None
    missing = [name for name in names if name not in posterior.data_vars]
    if missing:
        raise ValueError(f"idata's posterior has no draws of {missing}")
    draws = xr.Dataset({name: xr.Variable(posterior[name].dims, posterior[name].values) for name in names})
    draws = draws.assign_coords({dim: posterior[dim].values for dim in draws.dims if dim in posterior.coords})
    return xr.DataTree.from_dict({"posterior": draws})
