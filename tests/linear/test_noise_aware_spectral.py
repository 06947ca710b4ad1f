"""Tests of the O(d³) noise-aware likelihood for releases with noise isotropic in the Frobenius
geometry (pm_private.linear.frobenius.frobenius_stats_logp) and of its BLAS-thread handling.

What is checked:

- its log-density and its gradient with respect to (L_C, released statistics, n, σ²) equal the
  dense k × k likelihood's (``noisy_stats_logp`` with v = σ²/w²) to relative 1e-8 for
  d ∈ {1, 2, 5, 10}, on random C, on C = I and on C with nearly repeated eigenvalues, batched and
  unbatched; the Numba backend gives what the Python perform gives;
- the gradient matches central finite differences, also at C = I;
- ``frobenius_noise_variance`` recognises Gaussian releases (and sums of them) and refuses
  Laplace ones;
- ``linear_model`` picks the spectral likelihood for Gaussian releases and the dense one
  for Laplace releases, refuses Laplace releases beyond the dense limit, and ``set_linear_stats``
  swaps statistics in both;
- the plug-in covariate covariance ``release_x_cov`` is Sxx/n for exact or nearly exact
  statistics and a multiple of the identity when the noise hides the covariates' spread;
  ``x_cov="release"`` uses it (the default stays the Wishart prior) and ``set_linear_stats`` recomputes it;
- building a noise-aware model holds BLAS at one thread until the model is collected, the
  likelihood's linear algebra runs on one thread during evaluations and a NUTS fit, and a
  process that unpickles the model's graph takes the limit;
- both Ops have a Numba cache key, so a model graph holding them is compiled once per machine.
"""

import gc
import pickle
import subprocess
import sys

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from pm_private import linear_stats, release_linear_stats
from pm_private.linear import frobenius, released_stats_ops
from pm_private.linear.model import linear_model, release_x_cov, set_linear_stats
from pm_private.linear.noise_aware import (
    DENSE_MAX_D,
    frobenius_noise_variance,
    frobenius_stats_logp,
    noise_aware_arrays,
    noisy_stats_logp,
)
from pm_private.linear.stats import frobenius_weights, stat_pairs

RTOL = 1e-8
_FUNCTIONS = {}


def _functions(d):
    """Compiled (dense, spectral) log-density and gradients of one batch of two releases."""
    key = d
    if key not in _FUNCTIONS:
        a, b = stat_pairs(d)
        weights2 = frobenius_weights(d) ** 2
        chol = pt.tensor3("chol")
        r = pt.matrix("r", dtype="float64")
        n = pt.vector("n", dtype="float64")
        s2 = pt.vector("s2", dtype="float64")
        matrix = pt.zeros((2, d + 1, d + 1))
        matrix = pt.set_subtensor(matrix[:, a, b], r)
        matrix = pt.set_subtensor(matrix[:, b, a], r)
        dense = noisy_stats_logp(chol, r, n, s2[:, None] / weights2, d)
        fast = frobenius_stats_logp(chol, matrix, n, s2)
        outputs = []
        for logp in (dense, fast):
            outputs += [logp, *pytensor.grad(logp.sum(), [chol, r, n, s2])]
        fn = pytensor.function([chol, r, n, s2], outputs, mode="FAST_COMPILE")
        _FUNCTIONS[key] = fn
    out = _FUNCTIONS[key]
    return lambda *args: (lambda values: (values[:5], values[5:]))(out(*args))


def _covariances(d, rng):
    """Covariances C of z = (x, y): random, identity, and nearly repeated eigenvalues."""
    d1 = d + 1
    a = rng.standard_normal((d1, d1))
    q = np.linalg.qr(rng.standard_normal((d1, d1)))[0]
    clustered = np.full(d1, 1.5) + 1e-9 * rng.standard_normal(d1)
    clustered[0] = 4.0
    two_values = np.where(np.arange(d1) % 2 == 0, 0.3, 0.3 + 1e-12)
    return {
        "random": a @ a.T / d1 + 0.05 * np.eye(d1),
        "identity": np.eye(d1),
        "nearly repeated": (q * clustered) @ q.T,
        "two values": (q * two_values) @ q.T,
    }


def _release_arrays(cov, n, rng):
    d1 = cov.shape[0]
    a, b = stat_pairs(d1 - 1)
    noise = rng.standard_normal((d1 + 2, d1))
    stats = n * cov + np.sqrt(n) * noise.T @ noise / d1
    return stats[a, b]


@pytest.mark.parametrize("d", [1, 2, 5, 10])
def test_spectral_equals_dense_value_and_gradient(d):
    rng = np.random.default_rng(d)
    fn = _functions(d)
    for name, cov in _covariances(d, rng).items():
        other = _covariances(d, rng)["random"]
        chol = np.stack([np.linalg.cholesky(cov), np.linalg.cholesky(other)])
        n = np.array([float(rng.integers(20, 5000)), float(rng.integers(20, 5000))])
        r = np.stack([_release_arrays(cov, n[0], rng), _release_arrays(other, n[1], rng)])
        s2 = rng.uniform(0.01, 50.0, 2)
        dense, fast = fn(chol, r, n, s2)
        np.testing.assert_allclose(fast[0], dense[0], rtol=RTOL, err_msg=f"log-density, C {name}")
        for label, got, want in zip(("L_C", "statistics", "n", "σ²"), fast[1:], dense[1:], strict=True):
            if label == "L_C":  # the dense graph sees only the lower triangle
                got, want = np.tril(got), np.tril(want)
            scale = np.max(np.abs(want), axis=tuple(range(1, want.ndim)), keepdims=True)
            worst = np.max(np.abs(got - want) / scale)
            assert worst < RTOL, f"gradient in {label}, C {name}: relative error {worst:.1e}"


@pytest.mark.slow
def test_numba_backend_equals_python_perform():
    rng = np.random.default_rng(5)
    d1 = 4
    chol = pt.tensor3("chol")
    stats = pt.tensor3("stats")
    n, s2 = pt.dvector("n"), pt.dvector("s2")
    op = frobenius.FrobeniusStatsLogp()
    covs = [_covariances(d1 - 1, rng)[name] for name in ("random", "identity")]
    args = [
        np.stack([np.linalg.cholesky(c) for c in covs]),
        np.stack([100 * c + np.diag(rng.uniform(0, 1, d1)) for c in covs]),
        np.array([100.0, 200.0]),
        np.array([2.0, 0.5]),
    ]
    values = [
        pytensor.function([chol, stats, n, s2], op(chol, stats, n, s2), mode=mode)(*args)
        for mode in ("FAST_COMPILE", "NUMBA")
    ]
    for got, want in zip(values[1], values[0], strict=True):
        # two LAPACK eigendecompositions: gradient entries that cancel to a small value agree to
        # 1e-12 of the largest entry, not of themselves
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    one_chol, one_stats = pt.dmatrix("one_chol"), pt.dmatrix("one_stats")
    unbatched = pytensor.function(
        [one_chol, one_stats], frobenius_stats_logp(one_chol, one_stats, 100.0, 2.0), mode="NUMBA"
    )
    np.testing.assert_allclose(unbatched(args[0][0], args[1][0]), values[0][0][0], rtol=1e-12)


def test_numba_functions_of_the_likelihood_and_the_gate_are_cacheable():
    """PyTensor caches a compiled graph only if every Op in it has a Numba cache key; without
    one every process recompiled the model's log-density and gradient."""
    from pytensor.link.numba.dispatch.basic import numba_funcify_and_cache_key

    chol, stats = pt.tensor3("chol"), pt.tensor3("stats")
    n, s2 = pt.dvector("n"), pt.dvector("s2")
    logp = frobenius.FrobeniusStatsLogp()(chol, stats, n, s2)[0]
    gated = frobenius._blas_gate(logp)
    for node in (logp.owner, gated.owner):
        _, key = numba_funcify_and_cache_key(node.op, node=node)
        assert key is not None, f"{node.op} has no Numba cache key"


def _logp_and_grad(chol, stats, n, s2):
    logp, grad_chol, *_ = frobenius._frobenius_logp_and_grads(chol, stats, np.float64(n), np.float64(s2))
    return float(logp), grad_chol


@pytest.mark.parametrize("start", ["random", "identity"])
def test_gradient_matches_finite_differences(start):
    rng = np.random.default_rng(11)
    d = 4
    cov = _covariances(d, rng)[start]
    chol = np.linalg.cholesky(cov)
    a, b = stat_pairs(d)
    stats = np.zeros((d + 1, d + 1))
    stats[a, b] = stats[b, a] = _release_arrays(cov, 300.0, rng)
    _, grad = _logp_and_grad(chol, stats, 300.0, 2.0)
    h = 1e-6
    for i, j in zip(*np.tril_indices(d + 1), strict=True):
        step = np.zeros_like(chol)
        step[i, j] = h
        numeric = (
            _logp_and_grad(chol + step, stats, 300.0, 2.0)[0] - _logp_and_grad(chol - step, stats, 300.0, 2.0)[0]
        ) / (2 * h)
        np.testing.assert_allclose(grad[i, j], numeric, rtol=1e-5, atol=1e-5 * np.abs(grad).max())


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + rng.standard_normal(n)


def test_frobenius_noise_variance_recognises_gaussian_releases():
    X, y = _data(200, 3, 1)
    g1 = release_linear_stats(
        X[:100], y[:100], epsilon=1.0, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=0, intercept=False
    )
    g2 = release_linear_stats(
        X[100:], y[100:], epsilon=2.0, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=1, intercept=False
    )
    lap = release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=3.0, y_bound=4.0, rng=0, intercept=False)
    expected = g1.releases[0].noise_scale ** 2 + g2.releases[0].noise_scale ** 2
    got = frobenius_noise_variance(noise_aware_arrays(g1 + g2)["noise_var"], 3)
    assert got == pytest.approx(expected, rel=1e-12)
    assert frobenius_noise_variance(noise_aware_arrays(lap)["noise_var"], 3) is None
    assert frobenius_noise_variance(noise_aware_arrays(g1 + lap)["noise_var"], 3) is None


def test_regression_model_picks_the_spectral_likelihood():
    X, y = _data(300, 3, 2)
    gauss = release_linear_stats(X, y, epsilon=1.0, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=0, intercept=False)
    lap = release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=3.0, y_bound=4.0, rng=0, intercept=False)
    spectral = linear_model(gauss, x_cov="wishart")
    assert "likelihood_frobenius_noise_var" in spectral.named_vars
    assert "likelihood_noise_var" not in spectral.named_vars
    dense = linear_model(lap, x_cov="wishart")
    assert "likelihood_noise_var" in dense.named_vars
    assert "likelihood_frobenius_noise_var" not in dense.named_vars
    # Both likelihoods of the same Gaussian release give the same log-density.
    forced = linear_model(gauss, likelihood="dense")
    point = spectral.initial_point()
    logps = [m.compile_logp(mode="FAST_COMPILE")(point) for m in (spectral, forced)]
    np.testing.assert_allclose(logps[0], logps[1], rtol=1e-10)
    with pytest.raises(ValueError, match="isotropic"):
        linear_model(lap, likelihood="spectral")
    with pytest.raises(ValueError, match="likelihood|method"):
        linear_model(gauss, likelihood="fast")
    # set_linear_stats swaps Gaussian statistics; a Laplace release cannot enter the spectral model.
    other = release_linear_stats(X, y, epsilon=3.0, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=5, intercept=False)
    set_linear_stats(other, spectral)
    assert spectral["likelihood_frobenius_noise_var"].get_value() == pytest.approx(other.releases[0].noise_scale ** 2)
    with pytest.raises(ValueError, match="isotropic"):
        set_linear_stats(lap, spectral)
    # Batched: one spectral model for two releases.
    batched = linear_model([gauss, other], x_cov="wishart")
    np.testing.assert_allclose(
        batched["likelihood_frobenius_noise_var"].get_value(),
        [gauss.releases[0].noise_scale ** 2, other.releases[0].noise_scale ** 2],
    )


def test_laplace_releases_beyond_the_dense_limit_are_refused():
    d = DENSE_MAX_D + 1
    X, y = _data(400, d, 3)
    lap = release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=3.0, y_bound=4.0, rng=0, intercept=False)
    with pytest.raises(ValueError, match=r"stats: .* d ≤ 25"):
        linear_model(lap, x_cov="wishart")
    gauss = release_linear_stats(X, y, epsilon=1.0, delta=1e-5, x_bound=9.0, y_bound=4.0, rng=0, intercept=False)
    assert "likelihood_frobenius_noise_var" in linear_model(gauss, x_cov="wishart").named_vars


def test_release_x_cov_plug_in():
    X, y = _data(5000, 12, 6)
    exact = linear_stats(X, y, intercept=False)
    np.testing.assert_allclose(release_x_cov(exact), exact.xx / exact.n)
    precise = release_linear_stats(X, y, epsilon=500.0, delta=1e-5, x_bound=12.0, y_bound=8.0, rng=0, intercept=False)
    np.testing.assert_allclose(release_x_cov(precise), exact.xx / exact.n, atol=1e-2)
    # Noise far above the covariates' spread: Sxx/n shrinks to a multiple of the identity.
    noisy = release_linear_stats(
        X[:200], y[:200], epsilon=0.5, delta=1e-5, x_bound=12.0, y_bound=8.0, rng=1, intercept=False
    )
    cov = release_x_cov(noisy)
    mu = np.trace(cov) / 12
    np.testing.assert_allclose(cov, mu * np.eye(12), atol=1e-9 * mu)
    assert np.linalg.eigvalsh(cov)[0] > 0
    # x_cov="release" uses this plug-in; set_linear_stats recomputes it.
    model = linear_model(precise, x_cov="release")
    assert d_free(model) == {"beta", "noise_precision", "prior_precision"}
    np.testing.assert_allclose(
        model["x_cov_release_chol"].get_value(), np.linalg.cholesky(release_x_cov(precise)), rtol=1e-12
    )
    set_linear_stats(noisy, model)
    np.testing.assert_allclose(model["x_cov_release_chol"].get_value(), np.linalg.cholesky(cov), rtol=1e-12)
    assert "x_cov_chi2" in d_free(linear_model(precise, x_cov="wishart"))


def d_free(model):
    return {v.name for v in model.free_RVs}


def _blas_threads():
    return {info["filepath"]: info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


def _recording_kernel(monkeypatch):
    """Replace the likelihood's kernels (of the spectral term alone, and of the model's likelihood)
    by ones that record the BLAS threads at every call."""
    seen = []

    def recording(kernel):
        def record(*args):
            seen.append(max(_blas_threads().values()))
            return kernel(*args)

        return record

    monkeypatch.setattr(frobenius, "_frobenius_kernel", recording(frobenius._frobenius_kernel))
    monkeypatch.setitem(released_stats_ops.STATS_KERNEL, True, recording(released_stats_ops.spectral_stats_kernel))
    return seen


def test_model_holds_one_blas_thread_while_alive(monkeypatch):
    # Start from a process with no limit held: an earlier test of this worker may have unpickled a
    # model's graph in-process, which holds the limit for the rest of the process by design.
    from pm_private._engine import threads

    gc.collect()
    monkeypatch.setattr(threads, "_held", None)
    monkeypatch.setattr(threads, "_holders_alive", 0)
    X, y = _data(300, 4, 4)
    gauss = release_linear_stats(X, y, epsilon=1.0, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=0, intercept=False)
    seen = _recording_kernel(monkeypatch)
    with threadpool_limits(2, user_api="blas"):
        before = _blas_threads()
        model = linear_model(gauss, x_cov="wishart")
        assert set(_blas_threads().values()) == {1}
        fn = model.logp_dlogp_function(ravel_inputs=True, mode="FAST_COMPILE")
        fn.set_extra_values({})
        point = np.concatenate([np.ravel(model.initial_point()[v.name]) for v in fn._grad_vars])
        for _ in range(3):
            fn(point)
        assert seen and set(seen) == {1}
        del model, fn
        gc.collect()
        assert _blas_threads() == before
    # Outside a model the likelihood limits BLAS around each evaluation.
    seen.clear()
    with threadpool_limits(2, user_api="blas"):
        chol, stats = pt.dmatrix("chol"), pt.dmatrix("stats")
        f = pytensor.function([chol, stats], frobenius_stats_logp(chol, stats, 10.0, 1.0), mode="FAST_COMPILE")
        f(np.eye(3), 10 * np.eye(3))
        assert seen == [1]
        assert max(_blas_threads().values()) == 2


@pytest.mark.slow
def test_nuts_fit_runs_blas_on_one_thread(monkeypatch):
    X, y = _data(500, 5, 5)
    gauss = release_linear_stats(X, y, epsilon=2.0, delta=1e-5, x_bound=4.0, y_bound=6.0, rng=0, intercept=False)
    seen = _recording_kernel(monkeypatch)
    with threadpool_limits(2, user_api="blas"):
        with linear_model(gauss, x_cov="wishart"):
            idata = pm.sample(
                draws=30,
                tune=30,
                chains=1,
                cores=1,
                progressbar=False,
                random_seed=1,
                compile_kwargs={"mode": "FAST_COMPILE"},
            )
    assert idata.posterior["beta"].shape == (1, 30, 5)
    assert len(seen) > 60 and set(seen) == {1}


def test_unpickling_the_graph_limits_a_worker_process():
    payload = pickle.dumps(frobenius._blas_gate).hex()
    code = (
        "import pickle, sys\n"
        "from threadpoolctl import threadpool_info, threadpool_limits\n"
        "import numpy, scipy.linalg\n"
        "threadpool_limits(2, user_api='blas')\n"
        "pickle.loads(bytes.fromhex(sys.argv[1]))\n"
        "print(max(i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code, payload], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "1"
