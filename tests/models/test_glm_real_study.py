"""The GLM real-data study's split: preprocessing and bound from the public rows only (the study
itself is an hour long)."""

import numpy as np
import pytest

from benchmarks.study_glm_real import split


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
    assert first[2] == second[2]  # the same bound Bx
    # the same map: the transformed rows of the changed data are those of the map applied to them
    reference = split(
        np.vstack([X[public], changed[others]]), y[np.r_[public, others]], _Identity(), 0.2, 3, pca, transform=transform
    )
    np.testing.assert_allclose(reference[0][0], second[0][0])


class _Identity:
    """A stand-in generator whose permutation keeps the order (public rows first)."""

    def permutation(self, n):
        return np.arange(n)


def test_split_bound_is_the_public_norm_quantile_and_test_rows_are_projected():
    X, y = _data(seed=1)
    (Xp, yp), (Xt, yt), bound = split(X, y, _Identity(), 0.25, 3, False, bound_quantile=0.9)
    public = split(X, y, _Identity(), 0.25, 3, False, bound_quantile=1.0)[2]
    assert bound < public  # the 90 % quantile lies below the largest public norm
    assert np.linalg.norm(Xt, axis=1).max() <= bound * (1 + 1e-12)
    assert len(yp) + len(yt) + int(0.25 * len(y)) == len(y)
    assert np.mean(np.linalg.norm(Xp, axis=1) > bound) > 0  # private rows are not projected by split
    factor = split(X, y, _Identity(), 0.25, 3, False, bound_factor=3.0)[2]
    assert factor == pytest.approx(3.0 * np.sqrt(X.shape[1]))


def test_split_refuses_an_unknown_transform():
    X, y = _data()
    with pytest.raises(ValueError, match="unknown transform"):
        split(X, y, _Identity(), 0.2, 3, False, transform="log")
