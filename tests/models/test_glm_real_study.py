"""The GLM real-data study's split: preprocessing and bound from the public rows only (the study
itself is an hour long)."""

import numpy as np
import pytest

from benchmarks.study_glm_real import DELTA, choose_bound, split
from pm_private import logistic_bounds, poisson_bounds


def _data(seed=0, n=400, d=6):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(size=(n, d)) * np.arange(1, d + 1)  # skewed, on different scales
    y = (rng.uniform(size=n) < 0.4).astype(int)
    return X, y


@pytest.mark.parametrize("transform", ["yeo-johnson", "standardise"])
@pytest.mark.parametrize("pca", [False, True])
def test_split_uses_only_the_public_rows(transform, pca):
    X, y = _data()
    order = np.random.default_rng(3).permutation(len(y))  # the split's shuffle
    public, others = order[: int(0.2 * len(y))], order[int(0.2 * len(y)) :]
    changed = X.copy()
    changed[others] = changed[others] * 7.0 + 100.0  # every non-public row moves
    first = split(X, y, np.random.default_rng(3), 0.2, 3, pca, transform=transform)
    second = split(changed, y, np.random.default_rng(3), 0.2, 3, pca, transform=transform)
    np.testing.assert_array_equal(first[2][0], second[2][0])  # the same public rows, hence the same bound
    # the same map: the transformed rows of the changed data are those of the map applied to them
    reference = split(
        np.vstack([X[public], changed[others]]), y[np.r_[public, others]], _Identity(), 0.2, 3, pca, transform=transform
    )
    np.testing.assert_allclose(reference[0][0], second[0][0])


class _Identity:
    """A stand-in generator whose permutation keeps the order (public rows first)."""

    def permutation(self, n):
        return np.arange(n)


def test_split_leaves_rows_unprojected_and_the_bound_comes_from_public_figures():
    X, y = _data(seed=1)
    (Xp, yp), (Xt, yt), (Xpub, ypub) = split(X, y, _Identity(), 0.25, 3, False)
    assert len(yp) + len(yt) + len(ypub) == len(y) and len(ypub) == int(0.25 * len(y))
    norms = np.linalg.norm(Xpub, axis=1)
    quantile = choose_bound(Xpub, ypub, len(yp), 1.0, binary=True, bound_quantile=0.9)
    assert quantile == pytest.approx(np.quantile(norms, 0.9)) and quantile < norms.max()
    factor = choose_bound(Xpub, ypub, len(yp), 1.0, binary=True, bound_factor=3.0)
    assert factor == pytest.approx(3.0 * np.sqrt(X.shape[1]))
    rule = choose_bound(Xpub, ypub, len(yp), 1.0, binary=True)
    assert rule == logistic_bounds(len(yp), X.shape[1], 1.0, DELTA, public_X=Xpub).x_bound
    assert np.mean(norms > rule) <= 0.05
    counts = choose_bound(Xpub, ypub, len(yp), 1.0, binary=False, y_bound=5)
    tau = np.sqrt(np.mean(np.minimum(ypub, 5) ** 2))
    assert counts == poisson_bounds(len(yp), X.shape[1], 1.0, DELTA, y_bound=5, response_sd=tau, public_X=Xpub).x_bound


def test_split_refuses_an_unknown_transform():
    X, y = _data()
    with pytest.raises(ValueError, match="unknown transform"):
        split(X, y, _Identity(), 0.2, 3, False, transform="log")
