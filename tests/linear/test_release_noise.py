"""release_linear_stats(noise=...): one function, one keyword for the noise; the former
release_linear_stats_laplace is a deprecated spelling of the same Laplace release, and arguments of the other mechanism are refused
before anything is spent."""

import numpy as np
import pytest

import pm_private as pp

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(300, 2))
Y = X @ [1.0, -0.5] + 0.1 * RNG.normal(size=300)


def test_the_former_laplace_function_warns_and_is_the_same_release():
    accountant = pp.PrivacyAccountant(2.0)
    one = pp.release_linear_stats(X, Y, epsilon=1.0, x_bound=1.0, y_bound=2.0, noise="laplace", rng=3,
                                  accountant=accountant, split=(0.5, 0.4, 0.1))  # fmt: skip
    with pytest.warns(FutureWarning, match='now release_linear_stats\\(..., noise="laplace"\\)'):
        other = pp.release_linear_stats_laplace(
            X, Y, epsilon=1.0, x_bound=1.0, y_bound=2.0, rng=3, split=(0.5, 0.4, 0.1)
        )
    np.testing.assert_array_equal(one.xx, other.xx)
    np.testing.assert_array_equal(one.xy, other.xy)
    assert one.yy == other.yy and one.releases[0] == other.releases[0]
    assert one.releases[0].kind == "linear_stats_laplace" and accountant.spent.epsilon == 1.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (dict(noise="laplace", delta=1e-6), "delta applies to the Gaussian mechanism only"),
        (dict(noise="exponential", delta=1e-6), "noise must be 'gaussian' or 'laplace'"),
        (dict(delta=1e-6, split=(0.5, 0.4, 0.1)), "split applies to the Laplace mechanism only"),
        (dict(), "delta: the Gaussian mechanism needs"),
    ],
)
def test_arguments_of_the_other_mechanism_are_refused_before_spending(arguments, message):
    accountant = pp.PrivacyAccountant(2.0, 1e-5)
    with pytest.raises(ValueError, match=message):
        pp.release_linear_stats(X, Y, epsilon=1.0, x_bound=1.0, y_bound=2.0, accountant=accountant, **arguments)
    assert accountant.spent.epsilon == 0.0
