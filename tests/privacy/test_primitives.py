"""General DP primitives: exponential mechanism, row projection, count validation, Laplace release."""

import numpy as np
import pytest
from scipy import stats

from pm_private.privacy.noise import NoiseSource, as_noise_source
from pm_private.privacy.primitives import LAPLACE_MECHANISM, exponential_mechanism, laplace_mechanism, project_rows
from pm_private.privacy.validation import check_count


def _softmax(logits):
    w = np.exp(logits - logits.max())
    return w / w.sum()


@pytest.mark.parametrize("secure", [False, True])
def test_exponential_mechanism_draws_the_exponential_weights(secure, p_min):
    scores = np.array([-0.7, -0.6, -0.65, -0.9])
    log_base = np.log([1.0, 0.5, 2.0, 1.0])
    eps, sens, n = 1.0, 0.05, 20_000 if not secure else 4_000
    source = NoiseSource() if secure else as_noise_source(3)
    draws = exponential_mechanism(scores, epsilon=eps, sensitivity=sens, source=source, log_base=log_base, size=n)
    expected = _softmax(eps * scores / (2 * sens) + log_base)
    counts = np.bincount(draws, minlength=4)
    assert stats.chisquare(counts, expected * n).pvalue > p_min(secure)


def test_exponential_mechanism_never_draws_a_zero_base_measure():
    source = as_noise_source(0)
    draws = exponential_mechanism(
        [5.0, 0.0, 0.0], epsilon=1.0, sensitivity=1.0, source=source, log_base=[-np.inf, 0.0, 0.0], size=2000
    )
    assert set(draws.tolist()) == {1, 2}
    assert isinstance(exponential_mechanism([1.0, 2.0], epsilon=1.0, sensitivity=1.0, source=NoiseSource()), int)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(scores=[]), "non-empty"),
        (dict(scores=[1.0, np.nan]), "finite"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(sensitivity=-1.0), "sensitivity"),
        (dict(log_base=[0.0]), "log_base"),
        (dict(log_base=[-np.inf, -np.inf]), "zero everywhere"),
    ],
)
def test_exponential_mechanism_rejects_bad_input(kwargs, message):
    args = dict(scores=[1.0, 2.0], epsilon=1.0, sensitivity=1.0, source=as_noise_source(0)) | kwargs
    with pytest.raises(ValueError, match=message):
        exponential_mechanism(**args)


@pytest.mark.parametrize("norm", [1, 2])
def test_project_rows_bounds_every_computed_norm(norm):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5000, 7)) * rng.lognormal(0, 3, (5000, 1))
    bound = 1.3
    P = project_rows(X, bound, norm)
    norms = np.linalg.norm(P, ord=norm, axis=1)
    assert (norms <= bound).all()
    inside = np.linalg.norm(X, ord=norm, axis=1) <= bound
    np.testing.assert_array_equal(P[inside], X[inside])
    np.testing.assert_allclose(norms[~inside], bound, rtol=1e-13)
    # same direction
    np.testing.assert_allclose(
        P[~inside] / norms[~inside, None],
        X[~inside] / np.linalg.norm(X[~inside], ord=norm, axis=1)[:, None],
        rtol=1e-12,
    )


def test_project_rows_huge_and_zero_rows():
    P = project_rows([[1e300, 1e300], [0.0, 0.0], [5e-324, 0.0]], 2.0)
    np.testing.assert_allclose(P[0], [np.sqrt(2.0)] * 2)
    np.testing.assert_array_equal(P[1:], [[0.0, 0.0], [5e-324, 0.0]])
    with pytest.raises(ValueError, match="norm"):
        project_rows([[1.0]], 1.0, norm=3)


def test_check_count_accepts_integers_only():
    assert check_count("k", 3) == 3 and check_count("k", np.int64(4), 2, 5) == 4
    for bad in (3.0, True, "3", None, 0, 7):
        with pytest.raises(ValueError, match="k must be an integer"):
            check_count("k", bad, 1, 6)


def test_laplace_release_is_a_release():
    release = laplace_mechanism([1.0, 2.0], sensitivity=1.0, epsilon=0.5, source=as_noise_source(0))
    assert release.mechanism == LAPLACE_MECHANISM and release.delta == 0.0 and not release.private
    with pytest.raises(AttributeError):
        release.epsilon = 1.0
