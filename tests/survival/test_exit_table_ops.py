"""The exit table's log-likelihood Op against the symbolic graph it replaced (the competing and
discrete exits of the model module, the normal form in O(m), the multinomial form), value and gradient, in PyTensor's Python, Numba and JAX modes; and a survival
model's log-density against the same graph built by hand."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.stats import multivariate_normal

from pm_private.survival.exit_kernels import exit_table_probabilities
from pm_private.survival.exits.model import competing_exits, discrete_exits
from pm_private.survival.exits.ops import exit_table_logp

K, J = 3, 5
M = K * (2 * J + 1)


def _symbolic(lei, cens, share, value, n, noise, discrete, normal):
    if discrete:
        event = pt.exp(lei)
        events, censored, survivors = discrete_exits(-event, -pt.expm1(-event), cens)
    else:
        events, censored, survivors = competing_exits(pt.exp(lei), cens)
    p = pt.clip((pt.concatenate([events, censored, survivors[:, None]], axis=-1) * share[:, None]).ravel(), 1e-300, 1.0)
    if not normal:
        return pt.sum(pt.maximum(value, 0.0) * pt.log(p))
    # the O(m) form (which equals the dense Gaussian on the simplex of shares, where the model's
    # shares live; off it the two differ, and so do their derivatives along (1, …, 1))
    diag = n * p + noise
    resid = value - n * p
    s = pt.sum(p * noise / diag)
    proj = pt.sqrt(n) * pt.sum(p * resid / diag)
    return -0.5 * (
        value.shape[0] * np.log(2 * np.pi) + pt.sum(pt.log(diag)) + pt.log(s) + pt.sum(resid**2 / diag) + proj**2 / s
    )


def _point(rng, discrete):
    lei = np.log(rng.uniform(0.02, 0.4, (K, J)))
    cens = rng.uniform(0.05, 0.5, (K, J)) if discrete else rng.uniform(0.0, 0.3, (K, J))
    share = rng.dirichlet(np.full(K, 4.0))
    return lei, cens, share


def _functions(discrete, normal, mode):
    symbols = [pt.matrix("lei"), pt.matrix("cens"), pt.vector("share"), pt.vector("value"), pt.scalar("n"),
               pt.vector("noise")]  # fmt: skip
    wrt = [*symbols[:3], symbols[4]]  # n too: latent when n is private (add/remove neighbours)
    reference = _symbolic(*symbols, discrete, normal)
    op = exit_table_logp(*symbols, discrete=discrete, normal=normal)
    grads = {
        name: pytensor.grad(graph, wrt, disconnected_inputs="ignore")
        for name, graph in (("ref", reference), ("op", op))
    }
    f_ref = pytensor.function(symbols, [reference, *grads["ref"]], mode="FAST_COMPILE", on_unused_input="ignore")
    f_op = pytensor.function(symbols, [op, *grads["op"]], mode=mode, on_unused_input="ignore")
    return f_ref, f_op


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "NUMBA", "JAX"])
@pytest.mark.parametrize(("discrete", "normal"), [(False, True), (True, True), (False, False), (True, False)])
def test_log_likelihood_and_gradient_equal_the_symbolic_graph(discrete, normal, mode):
    if mode == "JAX":
        pytest.importorskip("jax")
    rng = np.random.default_rng(10 * discrete + normal)
    f_ref, f_op = _functions(discrete, normal, mode)
    n = 2000.0
    for _ in range(3):
        lei, cens, share = _point(rng, discrete)
        p = exit_table_probabilities(lei, cens, share, discrete)
        noise = rng.uniform(5.0, 30.0, M) if normal else np.zeros(M)
        value = rng.multinomial(int(n), p / p.sum()) + rng.normal(size=M) * np.sqrt(noise)
        args = (lei, cens, share, value, n, noise)
        expected, got = f_ref(*args), f_op(*args)
        assert np.isfinite(expected[0])
        assert float(got[0]) == pytest.approx(float(expected[0]), rel=1e-10)
        for name, e, g in zip(("lei", "cens", "share", "n"), expected[1:], got[1:], strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-9 * max(np.abs(e).max(), 1e-6), err_msg=name)


def test_normal_form_is_the_dense_gaussian():
    """The O(m) normal form is log N(r; n·p, n·(diag p − ppᵀ) + diag v), computed by SciPy."""
    rng = np.random.default_rng(3)
    lei, cens, share = _point(rng, False)
    p = exit_table_probabilities(lei, cens, share, False)
    noise = rng.uniform(5.0, 30.0, M)
    value = 1000.0 * p + rng.normal(size=M) * 5.0
    cov = 1000.0 * (np.diag(p) - np.outer(p, p)) + np.diag(noise)
    expected = multivariate_normal(1000.0 * p, cov).logpdf(value)
    got = exit_table_logp(lei, cens, share, value, 1000.0, noise, discrete=False, normal=True).eval(mode="FAST_COMPILE")
    assert float(got) == pytest.approx(expected, rel=1e-10)


def test_a_table_the_probabilities_cannot_give_is_minus_infinity_without_gradient():
    rng = np.random.default_rng(4)
    lei, cens, share = _point(rng, False)
    _, f_op = _functions(False, True, "NUMBA")
    noise = np.full(M, -1.0)  # s < 0: the normal form is not defined
    logp, *grads = f_op(lei, cens, share, np.ones(M), 100.0, noise)
    assert logp == -np.inf
    assert all(np.all(g == 0.0) for g in grads)
    # where a sampler strays: no event and no censoring hazard (0/0 in the exits), or an overflow
    for far in (-800.0, 800.0):
        logp, *grads = f_op(np.full((K, J), far), np.zeros((K, J)), share, np.ones(M), 100.0, np.ones(M))
        assert logp == -np.inf


@pytest.mark.parametrize("hazard", ["piecewise_exponential", "weibull", "logit", "cloglog"])
def test_survival_model_log_density_is_the_symbolic_one(hazard):
    """The model's log-density at a random point equals the same model with its likelihood written
    out symbolically (the logit hazard through −log(1 − h) = softplus(η))."""
    import pymc as pm

    from pm_private import release_survival_stats, survival_model

    rng = np.random.default_rng(5)
    arm = rng.choice(["a", "b"], 800)
    time_ = rng.exponential(np.where(arm == "b", 3.0, 2.0))
    release = release_survival_stats(
        time_, np.ones(800), arm, edges=[1.0, 2.0, 3.0], cells=["a", "b"], epsilon=1.0, delta=1e-6, rng=0
    )
    model = survival_model(release, hazard=hazard)
    likelihood = model["likelihood"]
    lei, cens, share, n, noise = likelihood.owner.op.dist_params(likelihood.owner)
    discrete = hazard in ("logit", "cloglog")
    if hazard == "logit":  # the model's ℓ = log(softplus(η)); the symbolic graph takes h = sigmoid(η)
        eta = lei.owner.inputs[0].owner.inputs[0]
        lei = pt.log(-pt.log1p(-pt.sigmoid(eta)))
    (reference,) = model.replace_rvs_by_values(
        [_symbolic(lei, cens, share, model.rvs_to_values[likelihood], n, noise, discrete, True)]
    )
    point = model.initial_point()
    point = {k: v + rng.normal(scale=0.3, size=np.shape(v)) for k, v in point.items()}
    got = model.compile_logp(vars=[likelihood], mode="FAST_COMPILE")(point)
    expected = pytensor.function(model.value_vars, reference, on_unused_input="ignore", mode="FAST_COMPILE")(
        *(point[v.name] for v in model.value_vars)
    )
    assert got == pytest.approx(float(expected), rel=1e-9)
    with model:
        draws = pm.sample_prior_predictive(
            3, var_names=["likelihood"], random_seed=1, compile_kwargs={"mode": "FAST_COMPILE"}
        )
    assert draws.prior_predictive["likelihood"].shape == (1, 3, release.table().size)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "NUMBA", "JAX"])
@pytest.mark.parametrize("discrete", [False, True])
def test_table_probabilities_op_is_the_kernel(discrete, mode):
    if mode == "JAX":
        pytest.importorskip("jax")
    from pm_private.survival.exits.ops import table_probabilities

    lei, cens, share = (pt.matrix("lei"), pt.matrix("cens"), pt.vector("share"))
    f = pytensor.function([lei, cens, share], table_probabilities(lei, cens, share, discrete=discrete), mode=mode)
    point = _point(np.random.default_rng(6), discrete)
    np.testing.assert_allclose(f(*point), exit_table_probabilities(*point, discrete), rtol=1e-12)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_replicated_tables_follow_the_multinomial_plus_noise_law_without_object_mode(noise):
    """Draws of the observed table given its parameters (what posterior-predictive draws compile,
    in Numba without a Python fallback): mean n·p, variance n·p(1 − p) + v, and for Laplace noise
    the heavier tails of a Laplace (excess kurtosis of the noise 3, where the normal's is 0)."""
    import warnings

    import pymc as pm

    from pm_private.survival.exits.model import _replicated_table

    rng = np.random.default_rng(7)
    lei, cens, share = _point(rng, False)
    n, noise_var = 400.0, np.full(M, 900.0)  # noise large against the counts: its law shows
    p = exit_table_probabilities(lei, cens, share, False)
    dist = _replicated_table(noise == "laplace", False)
    table = dist(
        pt.as_tensor(lei), pt.as_tensor(cens), pt.as_tensor(share), pt.as_tensor(n), pt.as_tensor(noise_var), None
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # "Numba will use object mode ..."
        draws = pm.draw(table, draws=40_000, random_seed=8, mode="NUMBA")
    mean, var = n * p, n * p * (1 - p) + noise_var
    z = (draws.mean(axis=0) - mean) / np.sqrt(var / draws.shape[0])
    assert np.abs(z).max() < 5.0
    np.testing.assert_allclose(draws.var(axis=0), var, rtol=0.05)
    resid = (draws - mean) / np.sqrt(var)
    kurtosis = float(np.mean(resid**4) - 3.0)
    assert (kurtosis > 2.0) if noise == "laplace" else (abs(kurtosis) < 0.3)
