"""Every model the library builds compiles its log-density and gradient in PyTensor's Numba, C and
JAX backends, with one answer.

PyMC's samplers reach the model through different backends: ``nuts_sampler="pymc"`` through
PyTensor's default (Numba) or the C backend (``CVM``: C where an Op has C code, Python elsewhere), nutpie through Numba or JAX, numpyro and blackjax
through JAX.  A custom Op without an implementation for a backend fails there (or falls back to
slow object mode), so every model kind is compiled in each, at a point away from the initial one,
and the values and gradients compared.  JAX compiles the model as nutpie's JAX backend does, with
its dims and data frozen to constants (``freeze_dims_and_data``).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pymc as pm
import pytest
from pymc.blocking import DictToArrayBijection
from pymc.model.transform.optimization import freeze_dims_and_data

import pm_private as pp
from pm_private.sampling import sanitized_loss
from pm_private.survival import (
    DiscreteTimeData,
    discrete_time_model,
    record_loss,
    survival_stats,
    weibull_model,
)

pytest.importorskip("jax")

RNG = np.random.default_rng(3)
N, D = 600, 3
X = RNG.normal(size=(N, D))
TIME = RNG.uniform(0.05, 1.0, N)
EVENT = (RNG.random(N) < 0.6).astype(int)
CELL = RNG.choice(["a", "b"], N)


def _linear(**kwargs):
    y = X @ [0.5, -0.3, 0.2] + 0.5 * RNG.normal(size=N)
    release = pp.release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, y_bound=4.0, rng=0)
    return pp.linear_model(release, **kwargs)


def _logistic(**kwargs):
    y = RNG.random(N) < 1 / (1 + np.exp(-(X @ [1.0, -0.5, 0.2])))
    release = pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, rng=0)
    return pp.logistic_model(release, **kwargs)


def _poisson():
    counts = RNG.poisson(np.exp(X @ [0.3, 0.1, -0.2]))
    release = pp.release_poisson_stats(X, counts, epsilon=1.0, delta=1e-6, x_bound=4.0, y_bound=10, rng=0)
    return pp.poisson_model(release)


def _survival(noisy: bool, **kwargs):
    edges = np.linspace(0.0, 1.0, 6)[1:]
    if noisy:
        stats = pp.release_survival_stats(
            TIME, EVENT, CELL, edges=edges, cells=["a", "b"], epsilon=1.0, delta=1e-6, rng=0
        )
    else:
        stats = survival_stats(TIME, EVENT, CELL, edges=edges, cells=["a", "b"])
    return pp.survival_model(stats, **kwargs)


def _survival_regression():
    stats = pp.release_survival_regression_stats(
        TIME, EVENT, X, edges=np.linspace(0.0, 1.0, 4)[1:], x_bound=4.0, epsilon=1.0, delta=1e-6, rng=0
    )
    return pp.survival_regression_model(stats)


def _discrete_time(link: str):
    return discrete_time_model(DiscreteTimeData.from_times(X, TIME, EVENT, q=8, e=3), link=link)


def _sanitized():
    data = DiscreteTimeData.from_times(X / 4.0, TIME, EVENT, q=8, e=3)
    loss = functools.partial(record_loss, basis=data.basis, link="logit")
    with pm.Model() as model:
        f = pm.Normal("f", 0.0, 1.0, shape=data.basis.shape[1] + D)
        sanitized_loss("U", loss, f, (data.X, data.interval, data.event), epsilon=1.0)
    return model


MODELS = {
    "linear (integrated covariates)": lambda: _linear(),
    "linear (Wishart covariates)": lambda: _linear(x_cov="wishart"),
    "logistic": lambda: _logistic(),
    "logistic (public covariate rows)": lambda: _logistic(x_sample=X[:40]),
    "poisson": _poisson,
    "survival, piecewise exponential": lambda: _survival(True),
    "survival, Weibull": lambda: _survival(True, hazard="weibull"),
    "survival, cloglog, own baselines": lambda: _survival(True, hazard="cloglog", proportional=False),
    "survival, logit, exact table": lambda: _survival(False, hazard="logit"),
    "survival_regression_model": _survival_regression,
    "weibull_model": lambda: weibull_model(TIME, EVENT, X),
    "discrete_time_model (logit)": lambda: _discrete_time("logit"),
    "discrete_time_model (cloglog)": lambda: _discrete_time("cloglog"),
    "sanitized_loss": _sanitized,
}


def _evaluate(model: pm.Model, mode: str, point: dict) -> tuple[float, dict]:
    """logp and its gradient by value variable, compiled in ``mode`` as PyMC's NUTS compiles them:
    one function of the raveled point (``logp_dlogp_function``), whose compiled graph the disk
    cache then serves to a later fit of a model of the same structure."""
    function = model.logp_dlogp_function(ravel_inputs=True, mode=mode)
    function.set_extra_values({})
    values = {v.name: point[v.name] for v in model.value_vars}
    value, gradient = function(DictToArrayBijection.map(values).data)
    sizes = [int(np.prod(point[v.name].shape)) for v in model.value_vars]
    parts = np.split(np.asarray(gradient), np.cumsum(sizes)[:-1])
    return float(value), {v.name: part for v, part in zip(model.value_vars, parts, strict=True)}


@pytest.mark.parametrize("name", MODELS)
def test_every_model_compiles_in_numba_c_and_jax_with_one_answer(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MODELS[name]()
    start = model.initial_point()
    jitter = np.random.default_rng(0)
    point = {key: value + 0.1 * jitter.standard_normal(np.shape(value)) for key, value in start.items()}
    reference, gradient = _evaluate(model, "NUMBA", point)
    assert np.isfinite(reference) and all(np.isfinite(g).all() for g in gradient.values())
    for mode, compiled in (("CVM", model), ("JAX", freeze_dims_and_data(model))):
        value, other = _evaluate(compiled, mode, point)
        np.testing.assert_allclose(value, reference, rtol=1e-8, err_msg=f"{name}: logp in {mode}")
        for key, expected in gradient.items():
            np.testing.assert_allclose(
                other[key], expected, rtol=1e-6, atol=1e-8, err_msg=f"{name}: ∂logp/∂{key} in {mode}"
            )
