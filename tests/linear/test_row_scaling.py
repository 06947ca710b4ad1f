"""Rows scaled as a whole keep the population's regression (the Gaussian release's default, an
option of the Laplace release).

What is checked (the claim of :func:`pm_private.release_linear_stats`):

- with a bound that scales about half the rows and almost no response clipped, least squares on
  the released statistics (large ε) recovers the population β to within its sampling error, where
  projecting the covariates alone inflates it, and with the released Σcᵢ² the noise-aware model's
  σ² is the population's;
- the option is public: it is recorded in the release, written to and read from release files
  (files without it read as covariates projected alone), and refused when not a bool before any
  budget is spent;
- the Laplace release scales rows into the cube on request, and its sensitivities still hold
  (adversarial and random neighbours); predictions scale new rows into the cube alike.
"""

import numpy as np
import pytest

from pm_private import PrivacyAccountant, predict_linear, release_linear_stats
from pm_private.linear.accumulate import accumulate
from pm_private.linear.release import sensitivities
from pm_private.release_file import release_from_dict, release_to_dict

N, D = 200_000, 4
RNG = np.random.default_rng(11)
X = RNG.standard_normal((N, D)) @ np.linalg.cholesky(0.5 * np.eye(D) + 0.5).T
BETA = np.array([1.0, -0.5, 0.25, 0.0])
Y = X @ BETA + 0.5 * RNG.standard_normal(N)
X_BOUND = 0.9 * np.sqrt(np.trace(0.5 * np.eye(D) + 0.5))  # scales about half the rows
Y_BOUND = 4.0 * Y.std()


def _least_squares(scale_response):
    stats = release_linear_stats(
        X,
        Y,
        epsilon=500.0,
        delta=1e-6,
        x_bound=X_BOUND,
        y_bound=Y_BOUND,
        rng=0,
        scale_response=scale_response,
        intercept=False,
    )
    return np.linalg.solve(stats.xx, stats.xy), stats.releases[0]


def test_scaled_rows_recover_the_population_beta_where_projected_covariates_inflate_it():
    scaled, info = _least_squares(True)
    projected, _ = _least_squares(False)
    assert info.clipped_rows / N > 0.4  # the bound bites
    # Sampling error of β̂ at n = 200,000 is about 0.5/√(n·0.5) ≈ 0.002 per coefficient.
    np.testing.assert_allclose(scaled, BETA, atol=0.01)
    inflation = projected[:3] / BETA[:3]
    assert np.all(inflation > 1.05)


def test_the_noise_variance_is_the_populations_where_rows_are_scaled():
    """Scaled rows carry residuals cᵢeᵢ; with the released Σcᵢ² the model's σ² is the population's,
    with n in its place it would be σ²·Σcᵢ²/n."""
    import dataclasses

    import pymc as pm

    from pm_private.linear import LinearStats, linear_model

    stats = release_linear_stats(
        X, Y, epsilon=500.0, delta=1e-6, x_bound=X_BOUND, y_bound=Y_BOUND, rng=0, intercept=False
    )
    info = stats.releases[0]
    factors = np.minimum(1.0, X_BOUND / np.linalg.norm(X, axis=1))
    assert info.effective_rows == pytest.approx(factors @ factors, abs=5 * info.clip_noise)
    weight = info.effective_rows / N
    assert weight < 0.9  # the scaling shrinks the residuals noticeably
    without = LinearStats(stats.xx, stats.xy, stats.yy, N, (dataclasses.replace(info, effective_rows=None),))
    sigma2 = {}
    for key, released in (("with", stats), ("without", without)):
        with linear_model(released):
            mode = pm.find_MAP(
                progressbar=False, jitter=False, return_inferencedata=False, compile_kwargs={"mode": "CVM"}
            )
            sigma2[key] = 1.0 / float(mode["noise_precision"])
    # σ² = 0.25; its sampling error at n = 200,000 is about 0.3 %
    assert sigma2["with"] == pytest.approx(0.25, rel=0.02)
    assert sigma2["without"] == pytest.approx(0.25 * weight, rel=0.02)


def test_the_choice_travels_with_the_release_and_its_file():
    small = dict(epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, rng=0)
    for flag in (True, False):
        stats = release_linear_stats(X[:100], Y[:100], scale_response=flag, **small, intercept=False)
        info = stats.releases[0]
        assert info.scale_response is flag and info.x_clip == ("row-scaled" if flag else "row")
        entry = release_to_dict(stats)
        assert entry["releases"][0]["scale_response"] is flag
        assert release_from_dict(entry).releases[0].scale_response is flag
    # A file written before the option existed projected the covariates alone.
    del entry["releases"][0]["scale_response"]
    assert release_from_dict(entry).releases[0].x_clip == "row"


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])  # None asks for the mechanism's default (below)
def test_a_flag_that_is_not_a_bool_is_refused_before_any_charge(bad):
    accountant = PrivacyAccountant(2.0, 1e-5)
    with pytest.raises(ValueError, match="scale_response"):
        release_linear_stats(
            X[:100],
            Y[:100],
            epsilon=1.0,
            delta=1e-6,
            x_bound=1.0,
            y_bound=1.0,
            scale_response=bad,
            accountant=accountant,
            intercept=False,
        )
    assert accountant.ledger == ()


def test_no_flag_means_each_mechanisms_default():
    """scale_response=None: rows scaled with their response for the Gaussian release, not for the Laplace one."""
    small = dict(epsilon=1.0, x_bound=1.0, y_bound=1.0, rng=0, intercept=False)
    gaussian = release_linear_stats(X[:100], Y[:100], delta=1e-6, scale_response=None, **small).releases[0]
    laplace = release_linear_stats(X[:100], Y[:100], noise="laplace", scale_response=None, **small).releases[0]
    assert gaussian.scale_response is True and laplace.scale_response is False


def test_the_laplace_release_scales_rows_into_the_cube_on_request():
    rng = np.random.default_rng(5)
    X, y = rng.uniform(-1.5, 1.5, (300, 3)), rng.normal(size=300)
    kwargs = dict(epsilon=500.0, x_bound=1.0, y_bound=1.5, rng=0, clip_share=0.0)
    entrywise = release_linear_stats(X, y, noise="laplace", **kwargs, intercept=False).releases[0]
    assert entrywise.x_clip == "entry" and not entrywise.scale_response  # Honkela et al.'s clipping by default
    stats = release_linear_stats(X, y, noise="laplace", scale_response=True, **kwargs, intercept=False)
    assert stats.releases[0].x_clip == "entry-scaled"
    factors = np.minimum(1.0, 1.0 / np.abs(X).max(axis=1))
    xt, yt = X * factors[:, None], np.clip(y * factors, -1.5, 1.5)
    exact = [xt.T @ xt, xt.T @ yt, yt @ yt]
    scales = stats.releases[0].noise_scales
    np.testing.assert_allclose(stats.xx, exact[0], atol=30 * scales[0])
    np.testing.assert_allclose(stats.xy, exact[1], atol=30 * scales[1])
    assert abs(stats.yy - exact[2]) < 30 * scales[2]
    # The whole pass, in chunks and threads, equals the direct computation.
    xx, xy, yy, changed = accumulate(X, y, 1.0, 1.5, scale_response=True, workers=2)
    np.testing.assert_allclose(xx, exact[0], rtol=1e-12)
    np.testing.assert_allclose(xy, exact[1], rtol=1e-12)
    assert yy == pytest.approx(exact[2], rel=1e-12)
    assert changed == ((factors < 1).sum(), (np.abs(y * factors) > 1.5).sum())


def test_the_laplace_sensitivities_hold_for_scaled_rows():
    """Adversarial and random neighbours: each released statistic moves by at most its ℓ1 sensitivity."""
    rng = np.random.default_rng(6)
    d, bx, by = 3, 0.8, 1.3
    sens = sensitivities(d, bx, by)
    upper = np.triu_indices(d)
    rest_X, rest_y = rng.normal(size=(5, d)), rng.normal(size=5)
    extremes = [(np.full(d, 50.0), 50.0), (-np.full(d, 50.0), 50.0), (np.zeros(d), 0.0), (np.eye(d)[0] * 9, -9.0)]
    candidates = extremes + [(rng.normal(size=d) * 5, rng.normal() * 5) for _ in range(40)]
    worst = np.zeros(3)
    for a, ya in candidates:
        for b, yb in candidates[:8]:
            one = accumulate(np.vstack([a, rest_X]), np.r_[ya, rest_y], bx, by, scale_response=True)
            two = accumulate(np.vstack([b, rest_X]), np.r_[yb, rest_y], bx, by, scale_response=True)
            moves = [np.abs(one[0][upper] - two[0][upper]).sum(), np.abs(one[1] - two[1]).sum(), abs(one[2] - two[2])]
            worst = np.maximum(worst, moves)
    assert np.all(worst <= np.asarray(sens) * (1 + 1e-9))
    # A corner of the cube against the origin moves Sxx's triangle by d(d+1)/2·Bx² (half the bound).
    assert worst[0] >= d * (d + 1) / 2 * bx**2 * (1 - 1e-9)


def test_predictions_scale_new_rows_into_the_cube_of_a_scaled_laplace_release():
    rng = np.random.default_rng(8)
    X, y = rng.uniform(-2, 2, (200, 2)), rng.normal(size=200)
    draws = np.array([[1.0, -1.0], [0.5, 0.5]])
    X_new = np.array([[0.5, 0.25], [4.0, -1.0]])
    scaled = release_linear_stats(
        X, y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=2.0, rng=0, scale_response=True, intercept=False
    )
    expected = X_new * np.minimum(1.0, 1.0 / np.abs(X_new).max(axis=1))[:, None]  # (4, −1) → (1, −0.25)
    np.testing.assert_allclose(predict_linear(draws, X_new, stats=scaled)["mean"], (expected @ draws.T).mean(axis=1))
    clipped = release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=2.0, rng=0, intercept=False)
    expected = np.clip(X_new, -1.0, 1.0)
    np.testing.assert_allclose(predict_linear(draws, X_new, stats=clipped)["mean"], (expected @ draws.T).mean(axis=1))
