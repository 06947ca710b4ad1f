import math
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

import pm_private.linear.accumulate as acc
import pm_private.linear.release as ss
from pm_private import BudgetExceededError, PrivacyAccountant, linear_stats, release_linear_stats
from pm_private.linear.stats import LinearStats


def clipped_stats(X, y, bx, by):
    """The statistics before noise, as the release computes them."""
    return acc.accumulate(np.asarray(X, float), np.asarray(y, float), bx, by)[:3]


def stat_changes(X, y, X2, y2, bx, by):
    (xx, xy, yy), (xx2, xy2, yy2) = clipped_stats(X, y, bx, by), clipped_stats(X2, y2, bx, by)
    upper = np.triu_indices(X.shape[1])
    return np.abs(xx - xx2)[upper].sum(), np.abs(xy - xy2).sum(), abs(yy - yy2)


def test_exact_statistics_match_numpy_across_chunks(monkeypatch):
    monkeypatch.setattr(acc, "CHUNK_VALUES", 64)  # force many chunks, including a short last one
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(101, 5)), rng.normal(size=101)
    s = linear_stats(pd.DataFrame(X), pd.Series(y), intercept=False)
    np.testing.assert_allclose(s.xx, X.T @ X, rtol=1e-12)
    np.testing.assert_allclose(s.xy, X.T @ y, rtol=1e-12)
    assert s.yy == pytest.approx(y @ y) and s.n == 101 and s.is_exact


def test_parallel_blocks_give_the_serial_statistics_and_thefirst_bad_row(monkeypatch):
    monkeypatch.setattr(acc, "CHUNK_VALUES", 64)  # 12 rows a chunk: 1003 rows make several blocks
    monkeypatch.setattr(acc.os, "cpu_count", lambda: 4)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(1003, 5)), rng.normal(size=1003)
    s = release_linear_stats(
        X, y, noise="laplace", epsilon=1e12, x_bound=0.5, y_bound=1.0, rng=0, intercept=False
    )  # noise ≈ 0
    Xc, yc = np.clip(X, -0.5, 0.5), np.clip(y, -1, 1)
    np.testing.assert_allclose(s.xx, Xc.T @ Xc, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(s.xy, Xc.T @ yc, rtol=1e-9, atol=1e-9)
    X[[700, 900], 2] = [np.inf, np.nan]  # two bad rows in the last blocks: the first one is named
    with pytest.raises(ValueError, match="row 700"):
        linear_stats(X, y, intercept=False)


def test_clipping_is_elementwise_projection():
    X = np.array([[3.0, -0.5], [-4.0, 0.2]])
    y = np.array([10.0, -0.1])
    xx, xy, yy = clipped_stats(X, y, 1.0, 2.0)
    Xc, yc = np.clip(X, -1, 1), np.clip(y, -2, 2)
    np.testing.assert_allclose(xx, Xc.T @ Xc)
    np.testing.assert_allclose(xy, Xc.T @ yc)
    assert yy == pytest.approx(yc @ yc)


def box_data(n, d):
    return st.tuples(
        arrays(np.float64, (n, d), elements=st.floats(-10, 10)),
        arrays(np.float64, (n,), elements=st.floats(-10, 10)),
    )


@settings(max_examples=200, deadline=None)
@given(
    data=st.integers(1, 6).flatmap(lambda d: st.integers(1, 8).flatmap(lambda n: box_data(n, d))),
    new_row=st.data(),
    bx=st.floats(0.1, 5),
    by=st.floats(0.1, 5),
)
def test_sensitivity_random_neighbours(data, new_row, bx, by):
    X, y = data
    n, d = X.shape
    i = new_row.draw(st.integers(0, n - 1))
    X2, y2 = X.copy(), y.copy()
    X2[i] = new_row.draw(arrays(np.float64, (d,), elements=st.floats(-10, 10)))
    y2[i] = new_row.draw(st.floats(-10, 10))
    changes = stat_changes(X, y, X2, y2, bx, by)
    for change, bound in zip(changes, ss.sensitivities(d, bx, by), strict=True):
        assert change <= bound * (1 + 1e-12)
    assert changes[0] <= d * (d + 1) * bx**2 / 2 * (1 + 1e-12)  # the exact Sxx sensitivity


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_sensitivity_adversarial_corner_neighbours(d):
    """Every pair of rows from {−100, 0, 100}ᵈ (clipped onto the corners, edges and centre of the
    box) with y ∈ {−100, 0, 100}: the worst case of each statistic, exhaustively."""
    bx, by = 0.7, 1.3
    levels = np.array([-100.0, 0.0, 100.0])
    rows = np.array(np.meshgrid(*[levels] * d, indexing="ij")).reshape(d, -1).T
    rng = np.random.default_rng(d)
    rest_X, rest_y = rng.uniform(-bx, bx, size=(3, d)), rng.uniform(-by, by, size=3)
    worst = np.zeros(3)
    for a in rows:
        for b in rows:
            for ya, yb in [(-100, 100), (0, 100), (100, 100)]:
                X, X2 = np.vstack([a, rest_X]), np.vstack([b, rest_X])
                y, y2 = np.r_[ya, rest_y], np.r_[yb, rest_y]
                worst = np.maximum(worst, stat_changes(X, y, X2, y2, bx, by))
    bounds = np.array(ss.sensitivities(d, bx, by))
    assert np.all(worst <= bounds * (1 + 1e-12))
    # every bound is attained: Sxx's, d(d+1)Bx²/2, by a corner row replaced by the zero row (half
    # Honkela et al.'s d(d+1)Bx²), Sxy's by flipping y, Syy's by a zero response
    np.testing.assert_allclose(worst, bounds, rtol=1e-12)
    assert bounds[0] == pytest.approx(d * (d + 1) * bx**2 / 2)


def exact_clipped(X, y, bx, by):
    xx, xy, yy = clipped_stats(X, y, bx, by)
    return xx, xy, yy


# Secure noise: a smaller d and more releases, ≥ 2000 draws of every statistic for the secure threshold.
@pytest.mark.filterwarnings("ignore::pm_private.privacy.release.NoAccountantWarning")  # deliberate: no ledger
@pytest.mark.parametrize(("secure", "d", "releases"), [(False, 30, 300), (True, 4, 2000)])
def test_released_noise_has_the_declared_laplace_scales(secure, d, releases, p_min):
    rng = np.random.default_rng(1)
    bx, by, eps = 0.5, 2.0, 0.8
    X, y = rng.normal(size=(200, d)), rng.normal(size=200) * 3
    xx, xy, yy = exact_clipped(X, y, bx, by)
    changed = ((np.abs(X) > bx).any(axis=1).sum(), (np.abs(y) > by).sum())
    upper = np.triu_indices(d)
    noise = {"xx": [], "xy": [], "yy": [], "counts": []}
    for _ in range(releases):
        r = release_linear_stats(
            X, y, noise="laplace", epsilon=eps, x_bound=bx, y_bound=by, rng=None if secure else rng, intercept=False
        )
        np.testing.assert_array_equal(r.xx, r.xx.T)
        noise["xx"].append((r.xx - xx)[upper])
        noise["xy"].append(r.xy - xy)
        noise["yy"].append([r.yy - yy])
        info = r.releases[0]
        noise["counts"].append(np.subtract((info.clipped_rows, info.clipped_responses), changed))
    stats_eps = (1 - ss.CLIP_SHARE) * eps  # the clipping counts take ss.CLIP_SHARE of ε, with ℓ1 sensitivity 2
    expected = (
        d * (d + 1) * bx**2 / 2 / (0.6 * stats_eps),  # the exact Sxx sensitivity, half Honkela et al.'s
        2 * d * bx * by / (0.35 * stats_eps),
        by**2 / (0.05 * stats_eps),
        2 / (ss.CLIP_SHARE * eps),
    )
    np.testing.assert_allclose([*info.noise_scales, info.clip_noise], expected, rtol=1e-8)
    assert math.fsum(info.epsilon_parts) + info.clip_share * eps == pytest.approx(eps)
    assert info.private is secure
    for key, scale in zip(noise, expected, strict=True):
        sample = np.concatenate(noise[key])[:20000]
        assert stats.kstest(sample, stats.laplace(scale=scale).cdf).pvalue > p_min(secure), key


def test_release_metadata_and_immutability():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    r = release_linear_stats(
        X, y, noise="laplace", epsilon=2.0, x_bound=1.0, y_bound=1.5, split=(0.5, 0.3, 0.2), rng=3, intercept=False
    )
    info = r.releases[0]
    assert (info.epsilon, info.split, info.x_bound, info.y_bound, info.n) == (2.0, (0.5, 0.3, 0.2), 1.0, 1.5, 50)
    assert info.neighbours == "replace-one"
    np.testing.assert_allclose(info.epsilon_parts, np.multiply((1.0, 0.6, 0.4), 1 - ss.CLIP_SHARE))
    assert info.clip_share == ss.CLIP_SHARE and info.clipped_rows is not None
    np.testing.assert_allclose(info.epsilon_certified, info.epsilon_parts, rtol=1e-12)
    assert not hasattr(r, "X") and not any(isinstance(v, np.ndarray) and v.shape[0] == 50 for v in vars(r).values())
    with pytest.raises(ValueError):
        r.xx[0, 0] = 1.0
    with pytest.raises(AttributeError):
        r.n = 3


def test_public_plus_private_statistics_add():
    rng = np.random.default_rng(3)
    Xp, yp = rng.normal(size=(30, 4)), rng.normal(size=30)
    Xq, yq = rng.normal(size=(80, 4)), rng.normal(size=80)
    public = linear_stats(Xp, yp, intercept=False)
    private = release_linear_stats(
        Xq, yq, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, rng=4, intercept=False
    )
    both = public + private
    assert both.n == 110 and both.releases == private.releases
    np.testing.assert_allclose(both.xx, public.xx + private.xx)
    with pytest.raises(ValueError, match="d = 4"):
        public + linear_stats(Xp[:, :2], yp, intercept=False)


BAD_INPUTS = [
    (dict(X=np.array([[1.0, np.nan]] * 3)), "X contains NaN"),
    (dict(X=np.array([[1.0, np.inf]] * 3)), "X contains NaN"),
    (dict(y=np.array([1.0, np.nan, 0.0])), "y contains NaN"),
    (dict(y=np.ones(4)), r"y must have shape \(3,\)"),
    (dict(X=np.ones(3)), "X must be 2-D"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(x_bound=0.0), "x_bound"),
    (dict(y_bound=-2.0), "y_bound"),
    (dict(split=(0.5, 0.3, 0.1)), "sum to 1"),
    (dict(split=(0.9, 0.2, -0.1)), "> 0"),
    (dict(split=(0.5, 0.5)), "three"),
]


@pytest.mark.parametrize("override, message", BAD_INPUTS)
def test_bad_input_raises_and_spends_nothing(override, message):
    args = dict(X=np.ones((3, 2)), y=np.zeros(3), epsilon=1.0, x_bound=1.0, y_bound=1.0, split=(0.6, 0.35, 0.05))
    args.update(override)
    acct = PrivacyAccountant(epsilon=1.0)
    with pytest.raises(ValueError, match=message):
        release_linear_stats(args.pop("X"), args.pop("y"), noise="laplace", accountant=acct, **args, intercept=False)
    assert acct.ledger == ()


def test_overspend_draws_no_noise_and_records_nothing():
    X, y = np.ones((5, 2)), np.ones(5)
    acct = PrivacyAccountant(epsilon=1.0)
    release_linear_stats(X, y, noise="laplace", epsilon=0.75, x_bound=1, y_bound=1, accountant=acct, intercept=False)
    generator = np.random.default_rng(5)
    state = generator.bit_generator.state
    with pytest.raises(BudgetExceededError):
        release_linear_stats(
            X, y, noise="laplace", epsilon=0.5, x_bound=1, y_bound=1, accountant=acct, rng=generator, intercept=False
        )
    assert generator.bit_generator.state == state  # no noise was drawn
    assert len(acct.ledger) == 1 and acct.spent[0] == 0.75
    release_linear_stats(X, y, noise="laplace", epsilon=0.25, x_bound=1, y_bound=1, accountant=acct, intercept=False)
    assert acct.remaining[0] == pytest.approx(0.0)


def test_peak_memory_is_bounded_beyond_X():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(100_000, 32))  # 25.6 MB
    y = rng.normal(size=100_000)
    tracemalloc.start()
    release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, rng=1, intercept=False)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # one clip buffer (2 MiB), the finiteness mask of one chunk, a clipped copy of y (0.8 MB)
    assert peak < 6e6, peak


def test_exact_statistics_locate_a_bad_row_only_when_the_sums_are_not_finite(monkeypatch):
    monkeypatch.setattr(acc, "CHUNK_VALUES", 64)
    X = np.full((50, 2), 1e200)  # finite values whose squares overflow: no bad row, but no inf result
    with pytest.raises(ValueError, match="too large: their products overflow"):
        linear_stats(X, np.ones(50), intercept=False)
    X = np.ones((50, 2))
    X[37, 1] = -np.inf  # −inf² = +inf on the diagonal: the scan then names the row
    with pytest.raises(ValueError, match="first in row 37"):
        linear_stats(X, np.ones(50), intercept=False)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (dict(xx=[[np.nan, 0.0], [0.0, 1.0]]), "xx"),
        (dict(xy=[np.inf, 0.0]), "xy"),
        (dict(yy=np.nan), "yy"),
        (dict(yy=[1.0, 2.0]), "yy"),
        (dict(xx=[["a", "b"], ["c", "d"]]), "xx"),
        (dict(n=-3), "n"),
        (dict(n=0), "n"),
        (dict(n=2.5), "n"),
        (dict(n=True), "n"),
        (dict(releases=[]), "releases"),
    ],
)
def test_suff_stats_refuse_non_finite_values_and_bad_n(change, name):
    args = dict(xx=np.eye(2), xy=np.zeros(2), yy=1.0, n=10) | change
    with pytest.raises(ValueError, match=name):
        LinearStats(**args)
