"""The clipping counts that sufficient-statistics releases carry, and :func:`clip_report`."""

import warnings

import numpy as np
import pytest

import pm_private.linear.release as ss
from pm_private import PrivacyAccountant
from pm_private.linear import clip_report, linear_stats, release_linear_stats
from pm_private.release_file import release_from_dict, release_to_dict

RNG = np.random.default_rng(7)
X = RNG.normal(size=(400, 3))
Y = X @ [1.0, -0.5, 0.2] + RNG.normal(size=400)


def release(kind, **kwargs):
    """A seeded release of (X, Y): ``kind`` is "laplace" or "gaussian"."""
    if kind == "laplace":
        return release_linear_stats(
            X, Y, noise="laplace", x_bound=1.0, y_bound=1.5, rng=1, **{"epsilon": 1.0, **kwargs}
        )
    return release_linear_stats(X, Y, delta=1e-6, x_bound=2.0, y_bound=1.5, rng=1, **{"epsilon": 1.0, **kwargs})


def true_counts(kind):
    if kind == "laplace":
        return (np.abs(X) > 1.0).any(axis=1).sum(), (np.abs(Y) > 1.5).sum()
    factors = np.minimum(1.0, 2.0 / np.linalg.norm(X, axis=1))  # the response is scaled with its row
    return (factors < 1).sum(), (np.abs(factors * Y) > 1.5).sum()


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_counts_estimate_the_clipped_rows_and_responses(kind):
    info = release(kind, epsilon=500.0).releases[0]  # noise s.d. ≪ 1 count
    assert (info.clipped_rows, info.clipped_responses) == pytest.approx(true_counts(kind), abs=1.0)
    (report,) = clip_report(release(kind, epsilon=500.0), warn=False)
    rows, responses = true_counts(kind)
    assert report.n == 400 and report.rows == pytest.approx(rows / 400, abs=3e-3)
    assert report.responses == pytest.approx(responses / 400, abs=3e-3)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_the_accountant_sees_one_release_of_the_callers_budget(kind):
    accountant = PrivacyAccountant(2.0, 1e-5)
    info = release(kind, accountant=accountant).releases[0]
    (entry,) = accountant.ledger
    assert entry.epsilon == pytest.approx(1.0) and info.epsilon == pytest.approx(1.0, rel=1e-6)
    assert info.clip_share == ss.CLIP_SHARE and info.clip_noise > 0


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_share_zero_releases_no_counts_and_the_statistics_keep_all_the_budget(kind):
    plain, with_counts = release(kind, clip_share=0.0).releases[0], release(kind).releases[0]
    assert plain.clipped_rows is None and plain.clip_noise is None and plain.clip_share == 0.0
    assert clip_report(release(kind, clip_share=0.0)) == ()
    if kind == "laplace":  # the statistics' noise scales grow by 1/(1 − p)
        np.testing.assert_allclose(np.divide(with_counts.noise_scales, plain.noise_scales), 1 / (1 - ss.CLIP_SHARE))
    else:  # σ grows by about 1/√(1 − p), 2.6 % at p = 0.05
        assert with_counts.noise_scale / plain.noise_scale == pytest.approx(1 / np.sqrt(1 - ss.CLIP_SHARE), rel=2e-3)


def test_report_warns_when_clipping_is_large_and_not_otherwise():
    heavy = release("gaussian", epsilon=500.0)  # |y| > 1.5 for about a third of the responses
    with pytest.warns(UserWarning, match="of the responses"):
        (report,) = clip_report(heavy)
    assert report.large and "of the rows' covariates" in str(report)
    # Scaled rows keep the regression of y on x: many scaled rows alone are no cause for a warning.
    scaled = release_linear_stats(X, Y, epsilon=500.0, delta=1e-6, x_bound=1.0, y_bound=10.0, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (report,) = clip_report(scaled)
    assert report.rows > 0.5 and not report.large and "scaled about" in str(report)
    projected = release_linear_stats(
        X, Y, epsilon=500.0, delta=1e-6, x_bound=1.0, y_bound=10.0, rng=1, scale_response=False
    )
    assert clip_report(projected, warn=False)[0].large
    light = release_linear_stats(X, Y, epsilon=500.0, delta=1e-6, x_bound=10.0, y_bound=10.0, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (report,) = clip_report(light)
    assert not report.large and report.rows == pytest.approx(0.0, abs=3e-3)


def test_report_covers_every_release_of_a_sum_and_none_of_exact_statistics():
    total = linear_stats(X, Y) + release("laplace") + release("gaussian")
    assert len(clip_report(total, warn=False)) == 2
    assert clip_report(linear_stats(X, Y)) == ()
    with pytest.raises(ValueError, match="stats"):
        clip_report(np.zeros(3))


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("share", [-0.1, 0.0005, 0.6, 1.0, "x", True])
def test_bad_share_is_refused_before_any_budget(kind, share):
    accountant = PrivacyAccountant(2.0, 1e-5)
    with pytest.raises(ValueError, match="clip_share"):
        release(kind, clip_share=share, accountant=accountant)
    assert accountant.spent == (0.0, 0.0)


def test_counts_survive_the_release_file_round_trip():
    stats = release("gaussian")
    back = release_from_dict(release_to_dict(stats))
    a, b = stats.releases[0], back.releases[0]
    assert (a.clipped_rows, a.clipped_responses, a.clip_noise, a.clip_share) == (
        b.clipped_rows,
        b.clipped_responses,
        b.clip_noise,
        b.clip_share,
    )
