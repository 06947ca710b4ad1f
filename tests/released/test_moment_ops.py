"""The compiled moments Op and the public-rows law's average against the PyTensor graphs they
replace (kept here as references): values and gradients at random points, and the logistic and
Poisson models' log-density and gradient with the references substituted."""

import warnings

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

import pm_private as pp
from pm_private.released import glm, moments
from pm_private.released.moment_ops import degree2_moments
from pm_private.released.moments import square_covariance, sym3, sym_vector_matrix


def reference_moments(coef, mu, cov, v, d):
    """The symbolic assembly of the moments that ``Degree2Moments`` replaces."""
    a0, a1, a2, a3, h0, h1, h2 = (coef[i] for i in range(7))
    m2 = cov + pt.outer(mu, mu)
    exg = a0 * mu + a1 * v
    egxx = a0 * m2 + a1 * (pt.outer(mu, v) + pt.outer(v, mu)) + a2 * pt.outer(v, v)
    m3 = mu[:, None, None] * mu[None, :, None] * mu[None, None, :] + sym_vector_matrix(mu, cov)
    egxxx = (
        a0 * m3
        + a1 * (sym3(v, mu, mu) + sym_vector_matrix(v, cov))
        + a2 * sym3(mu, v, v)
        + a3 * v[:, None, None] * v[None, :, None] * v[None, None, :]
    )
    ehx = h0 * mu + h1 * v
    ehxx = h0 * m2 + h1 * (pt.outer(mu, v) + pt.outer(v, mu)) + h2 * pt.outer(v, v)
    i, j = np.triu_indices(d)
    upper = i * d + j
    flat_cov, flat_m2 = cov.reshape((d * d,)), m2.reshape((d * d,))
    a = np.arange(d)[:, None]
    c13 = flat_cov[a * d + i[None, :]] * mu[j][None, :] + flat_cov[a * d + j[None, :]] * mu[i][None, :]
    m2_upper = flat_m2[upper]
    c12, c14, c22 = exg - a0 * mu, egxx - pt.outer(mu, exg), h0 - a0**2
    c23 = egxx.reshape((d * d,))[upper] - a0 * m2_upper
    c24 = ehx - a0 * exg
    c34 = egxxx.reshape((d * d, d))[upper] - pt.outer(m2_upper, exg)
    c44 = ehxx - pt.outer(exg, exg)
    rows = [
        pt.concatenate([cov, c12[:, None], c13, c14], axis=1),
        pt.concatenate([c12[None, :], pt.shape_padleft(c22, 2), c23[None, :], c24[None, :]], axis=1),
        pt.concatenate([c13.T, c23[:, None], square_covariance(mu, cov, d), c34], axis=1),
        pt.concatenate([c14.T, c24[:, None], c34.T, c44], axis=1),
    ]
    return pt.concatenate([mu, pt.shape_padleft(a0, 1), m2_upper, exg]), pt.concatenate(rows, axis=0)


def reference_average(z, beta, b, mu, x_chol, link_mean):
    """The public-rows average (1/m)Σₖ g(aₖ)(1, xₖ) with the rows xₖ = μ + Lₓzₖ formed."""
    rows = mu + pt.dot(z, x_chol.T)
    g = link_mean(pt.dot(rows, beta) + b)
    return pt.concatenate([g.mean(axis=-1)[..., None], (g[..., None] * rows).mean(axis=-2)], axis=-1)


def _random_inputs(rng, d):
    factor = rng.normal(size=(d, d))
    return [rng.normal(size=7), rng.normal(size=d), factor @ factor.T + np.eye(d), rng.normal(size=d)]


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_moments_and_gradient_match_the_symbolic_assembly(d):
    rng = np.random.default_rng(d)
    coef, mu, cov, v = pt.dvector(), pt.dvector(), pt.dmatrix(), pt.dvector()
    k = 2 * d + 1 + d * (d + 1) // 2
    weights_mean, weights_cov = rng.normal(size=k), rng.normal(size=(k, k))
    outputs = []
    for build in (degree2_moments, lambda *args: reference_moments(*args, d)):
        mean, covariance = build(coef, mu, cov, v)
        objective = (mean * weights_mean).sum() + (covariance * weights_cov).sum()
        outputs.append([mean, covariance, *pytensor.grad(objective, [coef, mu, cov, v])])
    new = pytensor.function([coef, mu, cov, v], outputs[0])  # PyTensor's default backend (Numba)
    reference = pytensor.function([coef, mu, cov, v], outputs[1], mode="FAST_COMPILE")
    for _ in range(3):
        point = _random_inputs(rng, d)
        for got, expected in zip(new(*point), reference(*point), strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("output", [0, 1])
def test_gradient_through_one_output(output):
    rng = np.random.default_rng(0)
    inputs = coef, mu, cov, v = pt.dvector(), pt.dvector(), pt.dmatrix(), pt.dvector()
    point = _random_inputs(rng, 3)
    grads = []
    for target in (degree2_moments(*inputs)[output], reference_moments(*inputs, 3)[output]):
        grads.append(pytensor.function(inputs, pytensor.grad(target.sum(), inputs), mode="FAST_COMPILE")(*point))
    for got, expected in zip(*grads, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def _models(monkeypatch, build):
    """The model of ``build`` with the compiled pieces and with the references substituted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = build()
        monkeypatch.setattr(
            moments, "degree2_moments", lambda coef, mu, cov, v: reference_moments(coef, mu, cov, v, mu.type.shape[0])
        )
        monkeypatch.setattr(glm, "sample_law_moments", _reference_sample_law)
        reference = build()
    return new, reference


def _reference_sample_law(whitened, replicates, beta, b, mu, x_chol, link_mean):
    values = reference_average(replicates, beta, b, mu, x_chol, link_mean)
    groups = replicates.shape[0]
    estimate = groups * reference_average(whitened, beta, b, mu, x_chol, link_mean) - (groups - 1) * values.mean(0)
    centred = values - values.mean(axis=0)
    return estimate, glm.JACKKNIFE_VARIANCE_FACTOR * (groups - 1) / groups * centred.T @ centred


RNG = np.random.default_rng(3)
X = RNG.normal(size=(3000, 4)) / 2
PUBLIC = pp.Preprocessing.from_public(RNG.normal(size=(60, 4)) / 2)


LABELS = RNG.uniform(size=3000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5, 0.3, 0.0] + 0.2)))
COUNTS = RNG.poisson(np.exp(0.3 + X @ [0.3, 0.1, -0.2, 0.0]))


def _logistic(public):
    release = pp.release_logistic_stats(X, LABELS, epsilon=1.0, delta=1e-6, x_bound=5.0, preprocessing=PUBLIC, rng=0)
    return pp.logistic_model(release, x_sample="public" if public else None)


def _poisson():
    release = pp.release_poisson_stats(
        X, COUNTS, epsilon=1.0, delta=1e-6, x_bound=5.0, y_bound=8, preprocessing=PUBLIC, rng=0
    )
    return pp.poisson_model(release)


@pytest.mark.parametrize(
    "build", [lambda: _logistic(True), lambda: _logistic(False), _poisson], ids=["logistic", "gaussian", "poisson"]
)
def test_model_logp_and_gradient_unchanged(monkeypatch, build):
    new, reference = _models(monkeypatch, build)
    values = []
    for model in (new, reference):
        logp = model.compile_logp(mode="FAST_COMPILE")
        dlogp = model.compile_dlogp(mode="FAST_COMPILE")
        values.append((logp, dlogp))
    start = new.initial_point()
    rng = np.random.default_rng(1)
    for _ in range(4):
        point = {key: value + 0.3 * rng.standard_normal(np.shape(value)) for key, value in start.items()}
        (logp, dlogp), (ref_logp, ref_dlogp) = values
        np.testing.assert_allclose(logp(point), ref_logp(point), rtol=1e-9)
        expected = ref_dlogp(point)
        np.testing.assert_allclose(dlogp(point), expected, rtol=1e-8, atol=1e-9 * np.abs(expected).max())


def test_sampling_helpers_still_work():
    model = _logistic(True)
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = {"mode": "FAST_COMPILE"}  # the Ops' Python implementations call the compiled kernels
        idata = pm.sample(
            draws=20, tune=20, chains=1, random_seed=0, progressbar=False, nuts_sampler="pymc", compile_kwargs=fast
        )
        pm.compute_log_likelihood(idata, progressbar=False, compile_kwargs=fast)
        predictive = pm.sample_posterior_predictive(idata, progressbar=False, random_seed=0, compile_kwargs=fast)
    assert np.isfinite(idata["log_likelihood"]["likelihood"].values).all()
    assert predictive["posterior_predictive"]["likelihood"].shape[-1] == model["degree2_vector"].get_value().size


def test_jax_implementation_matches():
    pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    inputs = coef, mu, cov, v = pt.dvector(), pt.dvector(), pt.dmatrix(), pt.dvector()
    mean, covariance = degree2_moments(*inputs)
    weights = rng.normal(size=13), rng.normal(size=(13, 13))  # k = 13 at d = 3
    outputs = [mean, covariance, *pytensor.grad((mean * weights[0]).sum() + (covariance * weights[1]).sum(), inputs)]
    point = _random_inputs(rng, 3)
    reference = pytensor.function(inputs, outputs, mode="FAST_COMPILE")(*point)
    for got, expected in zip(pytensor.function(inputs, outputs, mode="JAX")(*point), reference, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())
