"""The (ε, δ)-DP Gaussian release of sufficient statistics, and the Gaussian mechanism under it."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

import pm_private.linear.gaussian_release as gr
import pm_private.linear.release as ss
import pm_private.linear.stats as lstats
from pm_private import (
    BudgetExceededError,
    Preprocessing,
    PrivacyAccountant,
    linear_stats,
    predict_linear,
    release_linear_stats,
)
from pm_private.linear.noise_aware import noise_aware_arrays
from pm_private.privacy.gaussian import _certified_epsilon
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import (
    gaussian_mechanism,
    gaussian_noise_multiplier,
    gaussian_scale,
    project_rows,
    row_scale_factors,
)


def scaled_rows(X, y, bx, scale_response=True):
    """Rows as the release maps them before clipping responses: (cx, cy) with c = min(1, Bx/‖x‖),
    or (cx, y) when only the covariates are projected."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    factors = row_scale_factors(X, bx)
    return X * factors[:, None], y * factors if scale_response else y


def statistics(X, y, bx, by, scale_response=True, intercept=False):
    """The statistics before noise (upper Sxx, Sxy, Syy), as the release computes them, checked
    against the scaled rows (with the constant column, scaled with its row, when ``intercept``)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    xx, xy, yy, _ = gr._projected_sums(X, y, bx, by, scale_response, intercept)
    rows, response = scaled_rows(X, y, bx, scale_response)
    if intercept:
        rows = np.column_stack([row_scale_factors(X, bx) if scale_response else np.ones(len(y)), rows])
    np.testing.assert_allclose(xx, rows.T @ rows, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(xy, rows.T @ np.clip(response, -by, by), rtol=1e-10, atol=1e-9)
    return lstats.stat_vector(xx, xy, yy)


def released_vector(X, y, bx, by, scale_response=True, intercept=False):
    """The vector the Gaussian mechanism perturbs: the statistics weighted by frobenius_weights."""
    return lstats.frobenius_weights(X.shape[1] + intercept) * statistics(X, y, bx, by, scale_response, intercept)


def counts(X, y, bx, by, scale_response=True, intercept=False):
    """The release's counts before noise: rows scaled, responses clipped (and Σcᵢ² when scaled)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    return np.asarray(gr._projected_sums(X, y, bx, by, scale_response, intercept)[3])


@pytest.mark.parametrize("d", [1, 2, 4])
def test_frobenius_weights_give_the_frobenius_norm(d):
    rng = np.random.default_rng(d)
    a = rng.normal(size=(d + 1, d + 1))
    m = a + a.T
    upper = np.triu_indices(d)
    vector = np.concatenate([m[:d, :d][upper], m[:d, d], [m[d, d]]])
    assert np.linalg.norm(lstats.frobenius_weights(d) * vector) == pytest.approx(np.linalg.norm(m))


@settings(max_examples=200, deadline=None)
@given(
    data=st.integers(1, 6).flatmap(
        lambda d: st.integers(1, 6).flatmap(
            lambda n: st.tuples(
                arrays(np.float64, (n, d), elements=st.floats(-10, 10)),
                arrays(np.float64, (n,), elements=st.floats(-10, 10)),
                arrays(np.float64, (d,), elements=st.floats(-10, 10)),
                st.floats(-10, 10),
            )
        )
    ),
    bx=st.floats(0.1, 5),
    by=st.floats(0.1, 5),
    scale_response=st.booleans(),
    intercept=st.booleans(),
)
def test_sensitivity_random_neighbours(data, bx, by, scale_response, intercept):
    X, y, new_x, new_y = data
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = new_x, new_y
    change = np.linalg.norm(
        released_vector(X, y, bx, by, scale_response, intercept)
        - released_vector(X2, y2, bx, by, scale_response, intercept)
    )
    assert change <= ss.gaussian_sensitivity(bx, by, intercept=intercept) * (1 + 1e-9)
    # Each count (Σcᵢ² included) changes by at most 1: ℓ2 sensitivity √q of the q counts.
    before, after = counts(X, y, bx, by, scale_response, intercept), counts(X2, y2, bx, by, scale_response, intercept)
    assert before.size == (3 if scale_response else 2)
    assert np.all(np.abs(before - after) <= 1 + 1e-12)


@pytest.mark.parametrize("scale_response", [True, False])
def test_intercept_sensitivity_is_attained_by_orthogonal_rows_on_the_bounds(scale_response):
    """With the constant column a row is z = c·(1, x, y), ‖z‖² ≤ 1 + Bx² + By²; two rows on the
    bounds with zᵀz′ = 1 + xᵀx′ + yy′ = 0 attain √2·(1 + Bx² + By²), and no random pair exceeds it."""
    bx, by = 1.7, 0.6
    cos = (by**2 - 1.0) / bx**2  # y = By, y′ = −By: 1 + Bx²·cos θ − By² = 0
    x, x2 = bx * np.array([1.0, 0.0]), bx * np.array([cos, np.sqrt(1.0 - cos**2)]) * (1 - 1e-12)
    rest_X, rest_y = np.random.default_rng(3).normal(size=(4, 2)), np.random.default_rng(4).normal(size=4)
    bound = ss.gaussian_sensitivity(bx, by, intercept=True)
    assert bound == pytest.approx(np.sqrt(2.0) * (1.0 + bx**2 + by**2))

    def change(a, ya, b, yb):
        X, X2 = np.vstack([a, rest_X]), np.vstack([b, rest_X])
        y, y2 = np.r_[ya, rest_y], np.r_[yb, rest_y]
        return np.linalg.norm(
            released_vector(X, y, bx, by, scale_response, True) - released_vector(X2, y2, bx, by, scale_response, True)
        )

    assert change(x, by, x2, -by) == pytest.approx(bound, rel=1e-9)
    rng = np.random.default_rng(5)
    worst = max(
        change(rng.normal(size=2) * 5, rng.normal() * 5, rng.normal(size=2) * 5, rng.normal() * 5) for _ in range(200)
    )
    assert worst <= bound * (1 + 1e-9)
    # without the constant column the same pair moves the statistics by less than the smaller bound
    assert ss.gaussian_sensitivity(bx, by) < bound


def test_counts_sensitivity_adversarial_neighbour_attains_sqrt3():
    """A small row replaced by a huge one with a huge response changes all three counts by ≈ 1."""
    X, y = np.array([[0.1, 0.1], [0.3, -0.2]]), np.array([0.1, 0.2])
    X2, y2 = np.array([[1e8, 0.0], [0.3, -0.2]]), np.array([1e12, 0.2])
    change = np.linalg.norm(counts(X, y, 1.5, 2.0) - counts(X2, y2, 1.5, 2.0))
    assert np.sqrt(3) * (1 - 1e-9) <= change <= np.sqrt(3)


@pytest.mark.parametrize("scale_response", [True, False])
@pytest.mark.parametrize("d", [1, 2, 5])
def test_sensitivity_adversarial_neighbours_attain_the_bound(d, scale_response):
    """Orthogonal rows z, z′ of maximal norm attain √2·(Bx² + By²); no other pair from a grid exceeds it."""
    bx, by = 1.7, 0.6
    rng = np.random.default_rng(d)
    rest_X, rest_y = rng.normal(size=(4, d)), rng.normal(size=4)
    # z = (x, y) = (Bx·e₁·a, By·b) and z′ with x′ ⊥ x; the bound needs xᵀx′ + yy′ = 0.
    x = np.zeros(d)
    x[0] = 100.0
    x2 = np.zeros(d)
    x2[-1] = 100.0
    cases = [(x, 100.0, -x, 0.0)] if d == 1 else [(x, 0.0, x2, 0.0), (x, 100.0, x2, -100.0)]
    worst = 0.0
    for a, ya, b, yb in cases + [(rng.normal(size=d) * 50, rng.normal() * 50, rng.normal(size=d), 0.0)] * 20:
        X, X2 = np.vstack([a, rest_X]), np.vstack([b, rest_X])
        y, y2 = np.r_[ya, rest_y], np.r_[yb, rest_y]
        change = released_vector(X, y, bx, by, scale_response) - released_vector(X2, y2, bx, by, scale_response)
        worst = max(worst, np.linalg.norm(change))
    bound = ss.gaussian_sensitivity(bx, by)
    assert worst <= bound * (1 + 1e-9)
    if d > 1:  # attained: orthogonal x and x′ on the sphere (and y = 0)
        assert worst >= np.sqrt(2) * bx**2 * (1 - 1e-9)
    # The unweighted triangle has the same sensitivity, so the weights cost nothing.
    unweighted = max(
        np.linalg.norm(statistics(X, y, bx, by, scale_response) - statistics(X2, y2, bx, by, scale_response))
        for X, y, X2, y2 in [
            (np.vstack([a, rest_X]), np.r_[ya, rest_y], np.vstack([b, rest_X]), np.r_[yb, rest_y])
            for a, ya, b, yb in cases
        ]
    )
    assert unweighted <= bound * (1 + 1e-9)


def test_scale_is_the_smallest_that_opendp_certifies():
    for size, sens, eps, delta in [(66, 1.0, 1.0, 1e-5), (3, 2.5, 0.3, 1e-6), (10, 0.1, 5.0, 1e-8)]:
        scale = gaussian_scale(size, sens, eps, delta)
        assert _certified_epsilon(size, sens, scale, delta) <= eps
        assert _certified_epsilon(size, sens, scale * (1 - 1e-7), delta) > eps
        # The zCDP route costs a little against the analytic Gaussian mechanism of the continuous noise.
        assert 1.0 <= scale / (sens * gaussian_noise_multiplier(eps, delta)) < 1.3


# Secure noise: a smaller d and more releases, ≥ 3000 draws in every group for the secure threshold.
@pytest.mark.parametrize(("secure", "d", "releases"), [(False, 6, 200), (True, 3, 1000)])
def test_noise_is_gaussian_with_the_declared_scale(secure, d, releases, p_min):
    rng = np.random.default_rng(3)
    bx, by, eps, delta = 2.0, 1.5, 0.7, 1e-6
    X, y = rng.normal(size=(300, d)), rng.normal(size=300) * 2
    exact = statistics(X, y, bx, by)
    factors = np.minimum(1.0, bx / np.linalg.norm(X, axis=1))
    changed = (
        (np.linalg.norm(X, axis=1) > bx).sum(),
        (np.abs(scaled_rows(X, y, bx)[1]) > by).sum(),
        factors @ factors,  # Σcᵢ², the residuals' weight
    )
    weights = lstats.frobenius_weights(d)
    noise, count_noise = [], []
    for _ in range(releases):
        r = release_linear_stats(
            X, y, epsilon=eps, delta=delta, x_bound=bx, y_bound=by, rng=None if secure else rng, intercept=False
        )
        np.testing.assert_array_equal(r.xx, r.xx.T)
        noise.append(weights * (lstats.stat_vector(r.xx, r.xy, r.yy) - exact))
        info = r.releases[0]
        count_noise.append(np.subtract((info.clipped_rows, info.clipped_responses, info.effective_rows), changed))
    assert info.private is secure and info.delta == delta and info.epsilon <= eps
    # The three counts (ℓ2 sensitivity √3, weighted by a) take ss.CLIP_SHARE of the squared sensitivity.
    p = ss.CLIP_SHARE
    assert info.sensitivity == pytest.approx(np.sqrt(2) * (bx**2 + by**2) / np.sqrt(1 - p))
    assert info.noise_scale == pytest.approx(gaussian_scale(exact.size + 3, info.sensitivity, eps, delta))
    a = np.sqrt(2) * (bx**2 + by**2) * np.sqrt(p / (3 * (1 - p)))
    assert info.clip_noise == pytest.approx(info.noise_scale / a)
    fit = stats.kstest(np.ravel(count_noise), stats.norm(scale=info.clip_noise).cdf)
    assert fit.pvalue > p_min(secure)
    # σ on the diagonal statistics, σ/√2 on the off-diagonal ones: weighted, all are N(0, σ²).
    np.testing.assert_allclose(info.noise_variance(d) * weights**2, info.noise_scale**2)
    sample = np.array(noise)
    for entries in (weights == 1.0, weights > 1.0):
        fit = stats.kstest(sample[:, entries].ravel(), stats.norm(scale=info.noise_scale).cdf)
        assert fit.pvalue > p_min(secure)


def test_gaussian_mechanism_certifies_and_marks_seeded_results():
    secure = gaussian_mechanism(np.zeros(5), sensitivity=1.0, epsilon=1.0, delta=1e-5, source=as_noise_source())
    seeded = gaussian_mechanism(np.zeros(5), sensitivity=1.0, epsilon=1.0, delta=1e-5, source=as_noise_source(1))
    assert secure.private and not seeded.private
    assert secure.scale == seeded.scale and secure.epsilon <= 1.0
    with pytest.raises(ValueError, match="delta"):
        gaussian_mechanism(np.zeros(5), sensitivity=1.0, epsilon=1.0, delta=0.0, source=as_noise_source())
    with pytest.raises(ValueError, match="sensitivity"):
        gaussian_mechanism(np.zeros(5), sensitivity=np.inf, epsilon=1.0, delta=1e-5, source=as_noise_source())


def test_accountant_is_charged_epsilon_and_delta():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    acct = PrivacyAccountant(epsilon=1.0, delta=1e-5)
    release_linear_stats(X, y, epsilon=0.6, delta=6e-6, x_bound=2.0, y_bound=2.0, accountant=acct, intercept=False)
    assert acct.spent == pytest.approx((0.6, 6e-6))
    assert acct.ledger[0].mechanism == ss.GAUSSIAN_MECHANISM
    # over the basic total (1.2 > 1) but within the tight one: the Gaussian noise is composed by PLD
    release_linear_stats(X, y, epsilon=0.6, delta=1e-6, x_bound=2.0, y_bound=2.0, accountant=acct, intercept=False)
    assert acct.spent[0] == pytest.approx(1.2) and acct.tight_epsilon() < 1.0
    while acct.cost(0.6, 1e-6, noise=acct.ledger[-1].noise)[1] <= 1.0:
        release_linear_stats(X, y, epsilon=0.6, delta=1e-6, x_bound=2.0, y_bound=2.0, accountant=acct, intercept=False)
    releases = len(acct.ledger)
    generator = np.random.default_rng(5)
    state = generator.bit_generator.state
    with pytest.raises(BudgetExceededError):
        release_linear_stats(
            X, y, epsilon=0.6, delta=1e-6, x_bound=2.0, y_bound=2.0, accountant=acct, rng=generator, intercept=False
        )
    assert generator.bit_generator.state == state and len(acct.ledger) == releases


@pytest.mark.parametrize(
    "override, message",
    [
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(x_bound=0.0), "x_bound"),
        (dict(y_bound=np.nan), "y_bound"),
        (dict(x_bound=1e200), "x_bound"),
        (dict(X=np.array([[1.0, 2.0], [np.nan, 0.0], [0.0, 0.0]])), "row 1"),
        (dict(y=np.array([0.0, np.inf, 0.0])), "y contains"),
        (dict(preprocessing="standardise"), "preprocessing"),
    ],
)
def test_bad_input_raises_and_spends_nothing(override, message):
    args = dict(X=np.ones((3, 2)), y=np.zeros(3), epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0)
    args.update(override)
    acct = PrivacyAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match=message):
        release_linear_stats(args.pop("X"), args.pop("y"), accountant=acct, **args, intercept=False)
    assert acct.ledger == ()


def test_noise_aware_model_and_prediction_read_the_release():
    rng = np.random.default_rng(2)
    X = rng.normal(3.0, 2.0, size=(400, 3))
    y = X @ [0.5, -0.2, 0.1] + rng.normal(size=400)
    prep = Preprocessing(x_center=3.0, x_scale=2.0, y_center=0.6, y_scale=1.2)
    r = release_linear_stats(
        X, y, epsilon=1.0, delta=1e-6, x_bound=1.5, y_bound=3.0, preprocessing=prep, rng=0, intercept=False
    )
    info = r.releases[0]
    arrays = noise_aware_arrays(r)
    off_diagonal = [1, 2, 4, 6, 7, 8]  # upper Sxx (00 01 02 11 12 22), Sxy (3 entries), Syy
    expected = np.full(10, info.noise_scale**2)
    expected[off_diagonal] /= 2
    np.testing.assert_allclose(arrays["noise_var"], expected)
    # Exact public rows add exactly; the private part is the release minus them.
    both = linear_stats(X[:5], y[:5], intercept=False) + r
    np.testing.assert_allclose(noise_aware_arrays(both)["noise_var"], arrays["noise_var"])
    # Predictions map new rows' covariates as the released rows' were: standardise, then project onto
    # the ball, whether or not the release scaled the responses with their rows.
    draws = np.array([[1.0, 2.0, -1.0], [0.0, 1.0, 1.0]])
    X_new = np.array([[3.0, 3.0, 3.0], [30.0, -7.0, 3.0]])
    mapped = project_rows((X_new - 3.0) / 2.0, 1.5)
    assert np.linalg.norm(mapped[1]) == pytest.approx(1.5)
    projected = release_linear_stats(
        X,
        y,
        epsilon=1.0,
        delta=1e-6,
        x_bound=1.5,
        y_bound=3.0,
        preprocessing=prep,
        rng=0,
        scale_response=False,
        intercept=False,
    )
    for released in (r, projected):
        got = predict_linear(draws, X_new, stats=released)["mean"].to_numpy()
        np.testing.assert_allclose(got, 0.6 + 1.2 * (mapped @ draws.T).mean(axis=1))


@pytest.mark.parametrize("scale_response", [True, False])
def test_projected_sums_are_the_same_in_chunks(monkeypatch, scale_response):
    rng = np.random.default_rng(4)
    X, y = rng.standard_t(2, size=(101, 4)), rng.standard_t(2, size=101)
    whole = gr._projected_sums(X, y, 1.5, 2.0, scale_response, False)
    monkeypatch.setattr(gr, "CHUNK_VALUES", 12)  # 3 rows per chunk
    chunked = gr._projected_sums(X, y, 1.5, 2.0, scale_response, False)
    for a, b in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(whole[0], project_rows(X, 1.5).T @ project_rows(X, 1.5), rtol=1e-12)
    xt, yt = scaled_rows(X, y, 1.5, scale_response)
    yt = np.clip(yt, -2.0, 2.0)
    np.testing.assert_allclose(whole[1], xt.T @ yt, rtol=1e-12)
    np.testing.assert_allclose(whole[2], yt @ yt, rtol=1e-12)
    factors = row_scale_factors(X, 1.5)
    expected = (
        (np.linalg.norm(X, axis=1) > 1.5).sum(),
        (np.abs(scaled_rows(X, y, 1.5, scale_response)[1]) > 2.0).sum(),
    )
    np.testing.assert_allclose(whole[3], expected + ((factors @ factors,) if scale_response else ()), rtol=1e-12)


def test_release_vector_is_what_the_release_noises():
    from pm_private.linear.release import gaussian_release_vector

    X, y = np.ones((20, 3)) * 0.3, np.ones(20) * 0.5
    cases = itertools.product((0.0, 0.05), (False, True), ("replace-one", "add-remove"))
    for share, scale_response, relation in cases:
        if relation == "add-remove" and share == 0:
            continue  # n is released with the counts' share
        stats = release_linear_stats(
            X,
            y,
            epsilon=1.0,
            delta=1e-5,
            x_bound=2.0,
            y_bound=1.0,
            clip_share=share,
            rng=0,
            scale_response=scale_response,
            intercept=False,
            relation=relation,
        )
        size, both, weight = gaussian_release_vector(
            3, 2.0, 1.0, share, scale_response=scale_response, relation=relation
        )
        sensitivity = both.under(relation)
        counts = ((3 if scale_response else 2) + (relation == "add-remove")) if share else 0
        assert size == 10 + counts
        assert stats.releases[0].sensitivity == pytest.approx(sensitivity, rel=1e-15)
        assert (stats.releases[0].effective_rows is not None) == (scale_response and share > 0)
        assert (stats.releases[0].n_noisy is not None) == (relation == "add-remove")
        # the q counts take the share of the squared sensitivity: Δ² + q·a² = Δ²/(1 − p)
        assert (sensitivity**2) * (1 - share) + counts * weight**2 == pytest.approx(sensitivity**2, rel=1e-12)
