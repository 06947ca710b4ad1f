"""AdaSSP baseline (Wang 2018, Alg. 2): sensitivities, Gaussian calibration, noise, accuracy, checks."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import integrate, stats

import pm_private.linear.adaptive_ssp as ad
from pm_private.linear.adaptive_ssp import MECHANISM, AdaSSPRelease, adassp, adassp_sensitivities
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.primitives import gaussian_delta, gaussian_noise_multiplier, project_rows

P_MIN = 1e-3
REL = 1e-9  # rounding slack on sensitivity comparisons


# ---------------------------------------------------------------------------------------------
# projection
# ---------------------------------------------------------------------------------------------


def test_projection_is_onto_the_row_norm_ball():
    X = np.array([[3.0, 4.0], [0.3, -0.4], [0.0, 0.0], [-6.0, 8.0], [1e300, -1e300]])
    P = project_rows(X, 2.0)
    np.testing.assert_array_equal(P[1:3], X[1:3])  # inside the ball: unchanged
    directions = {0: [0.6, 0.8], 3: [-0.6, 0.8], 4: [math.sqrt(0.5), -math.sqrt(0.5)]}  # no overflow at 1e300
    for i, direction in directions.items():
        assert np.linalg.norm(P[i]) == pytest.approx(2.0, rel=1e-14)
        np.testing.assert_allclose(P[i], 2.0 * np.array(direction), rtol=1e-14)
    # a row-norm bound, not per-entry clipping: (1.5, 0) stays, (1.5, 1.5) shrinks
    np.testing.assert_allclose(project_rows([[1.5, 0.0], [1.5, 1.5]], 1.6), [[1.5, 0.0], [1.6 / math.sqrt(2)] * 2])


def test_projected_statistics_match_numpy_across_chunks(monkeypatch):
    monkeypatch.setattr(ad, "CHUNK_VALUES", 64)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(101, 5)), 2 * rng.normal(size=101)
    xx, xy = ad._projected_stats(X, y, 1.3, 1.1)
    P, yc = project_rows(X, 1.3), np.clip(y, -1.1, 1.1)
    np.testing.assert_allclose(xx, P.T @ P, rtol=1e-12)
    np.testing.assert_allclose(xy, P.T @ yc, rtol=1e-12)
    np.testing.assert_array_equal(xx, xx.T)


# ---------------------------------------------------------------------------------------------
# replace-one sensitivities
# ---------------------------------------------------------------------------------------------


def changes(X, y, X2, y2, bx, by):
    """(|Δλ_min|, ‖ΔXᵀX‖_F, ‖Δ upper triangle‖₂, ‖ΔXᵀy‖₂) of the projected statistics."""
    xx, xy = ad._projected_stats(np.asarray(X, float), np.asarray(y, float), bx, by)
    xx2, xy2 = ad._projected_stats(np.asarray(X2, float), np.asarray(y2, float), bx, by)
    upper = np.triu_indices(xx.shape[0])
    lam = abs(np.linalg.eigvalsh(xx)[0] - np.linalg.eigvalsh(xx2)[0])
    # eigvalsh is backward stable: allow its rounding error relative to ‖XᵀX‖
    lam_slack = 1e-12 * max(1.0, np.abs(xx).sum(), np.abs(xx2).sum())
    return (
        max(0.0, lam - lam_slack),
        np.linalg.norm(xx - xx2),
        np.linalg.norm((xx - xx2)[upper]),
        np.linalg.norm(xy - xy2),
    )


def assert_within(X, y, X2, y2, bx, by):
    d = X.shape[1]
    s_lam, s_xx, s_xy = adassp_sensitivities(d, bx, by)
    lam, frob, upper, xy = changes(X, y, X2, y2, bx, by)
    assert lam <= s_lam * (1 + REL)
    assert frob <= s_xx * (1 + REL)
    assert upper <= s_xx * (1 + REL)
    assert xy <= s_xy * (1 + REL)


def box_data(n, d):
    return st.tuples(
        arrays(np.float64, (n, d), elements=st.floats(-10, 10)),
        arrays(np.float64, (n,), elements=st.floats(-10, 10)),
    )


@settings(max_examples=200, deadline=None)
@given(
    data=st.integers(1, 6).flatmap(lambda d: st.integers(1, 8).flatmap(lambda n: box_data(n, d))),
    draw=st.data(),
    bx=st.floats(0.1, 5),
    by=st.floats(0.1, 5),
)
def test_sensitivity_random_neighbours(data, draw, bx, by):
    X, y = data
    n, d = X.shape
    i = draw.draw(st.integers(0, n - 1))
    X2, y2 = X.copy(), y.copy()
    X2[i] = draw.draw(arrays(np.float64, (d,), elements=st.floats(-10, 10)))
    y2[i] = draw.draw(st.floats(-10, 10))
    assert_within(X, y, X2, y2, bx, by)


def sphere_row(d):
    """A row on or far outside the sphere (projected onto it), from a non-zero direction."""
    direction = arrays(np.float64, (d,), elements=st.floats(-1, 1)).filter(lambda v: np.linalg.norm(v) > 1e-3)
    return st.tuples(direction, st.sampled_from([1.0, 3.0, 1e6]))


@settings(max_examples=200, deadline=None)
@given(
    d=st.integers(1, 5),
    draw=st.data(),
    bx=st.floats(0.1, 5),
    by=st.floats(0.1, 5),
)
def test_sensitivity_adversarial_neighbours_on_the_ball(d, draw, bx, by):
    """Old and new rows on the sphere ‖x‖ = B_X (or projected onto it), |y| = B_Y (or clipped)."""
    n = draw.draw(st.integers(1, 6))
    rows = [draw.draw(sphere_row(d)) for _ in range(n + 1)]
    X = np.array([v / np.linalg.norm(v) * bx * k for v, k in rows])
    ys = np.array([draw.draw(st.sampled_from([-1.0, 1.0, -50.0, 50.0])) * by for _ in range(n + 1)])
    X, new_x = X[:n], X[n]
    y, new_y = ys[:n], ys[n]
    i = draw.draw(st.integers(0, n - 1))
    X2, y2 = X.copy(), y.copy()
    X2[i], y2[i] = new_x, new_y
    assert_within(X, y, X2, y2, bx, by)


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_sensitivities_are_attained(d):
    """The declared sensitivities are tight: orthogonal rows on the sphere (XᵀX), x′ = −x (Xᵀy),
    a single row against the zero row (λ_min, d = 1)."""
    bx, by = 0.7, 1.3
    s_lam, s_xx, s_xy = adassp_sensitivities(d, bx, by)
    e = np.eye(d)
    rest = np.zeros((2, d))
    if d >= 2:
        X, X2 = np.vstack([5 * e[0], rest]), np.vstack([5 * e[1], rest])
        _, frob, upper, _ = changes(X, np.ones(3), X2, np.ones(3), bx, by)
        assert frob == pytest.approx(math.sqrt(2) * bx**2, rel=1e-12) == s_xx
        assert upper == pytest.approx(s_xx, rel=1e-12)
    X, X2 = np.vstack([bx * e[0], rest]), np.vstack([-bx * e[0], rest])
    *_, xy = changes(X, [by, 0, 0], X2, [by, 0, 0], bx, by)
    assert xy == pytest.approx(s_xy, rel=1e-12) and s_xy == pytest.approx(2 * bx * by)
    lam, *_ = changes([[bx]], [0.0], [[0.0]], [0.0], bx, by)
    assert lam == pytest.approx(s_lam, rel=1e-9) and s_lam == bx**2


# ---------------------------------------------------------------------------------------------
# Gaussian mechanism calibration
# ---------------------------------------------------------------------------------------------


def delta_by_integration(multiplier, eps):
    """sup_S P(S) − e^ε Q(S) for P = N(1, c²), Q = N(0, c²): ∫ (p − e^ε q)₊ by quadrature."""
    t = multiplier**2 * eps + 0.5  # p > e^ε q exactly for x > t

    def f(x):
        return stats.norm.pdf(x, 1, multiplier) - math.exp(eps) * stats.norm.pdf(x, 0, multiplier)

    value, _ = integrate.quad(f, t, t + 40 * multiplier, epsabs=1e-16, epsrel=1e-10, limit=200)
    return value


@pytest.mark.parametrize("eps, delta", [(0.01, 1e-6), (1 / 3, 1e-6 / 3), (1.0, 1e-5), (100 / 3, 1e-6 / 3), (5.0, 0.1)])
def test_analytic_multiplier_is_minimal_and_matches_quadrature(eps, delta):
    c = gaussian_noise_multiplier(eps, delta)
    assert gaussian_delta(c, eps) <= delta
    assert gaussian_delta(c * (1 - 1e-9), eps) > delta * (1 - 1e-6)  # minimal up to bisection tolerance
    assert gaussian_delta(c * 0.99, eps) > delta
    assert delta_by_integration(c, eps) == pytest.approx(gaussian_delta(c, eps), rel=1e-5)
    if eps < 1:  # the classic calibration (valid for ε < 1) is never smaller than the exact one
        assert math.sqrt(2 * math.log(1.25 / delta)) / eps >= c


def test_wang_constants_do_not_give_the_stated_privacy():
    """Why pm_private recalibrates: s = √log(6/δ)/(ε/3) per unit of add/remove sensitivity."""
    for eps, delta in [(1.0, 1e-6), (3.0, 1e-6), (10.0, 1e-5)]:
        s = math.sqrt(math.log(6 / delta)) / (eps / 3)
        assert gaussian_delta(s, eps / 3) > delta / 3  # fails even under add/remove-one
        assert gaussian_delta(s / 2, eps / 3) > delta / 3  # Xᵀy under replace-one: Δ doubles
    eps, delta = 1.0, 1e-6
    assert gaussian_delta(math.sqrt(math.log(6 / delta)) / (eps / 3), eps / 3) == pytest.approx(8.85e-7, rel=1e-2)
    eps, delta = 0.3, 1e-6  # small ε: Wang's constant is valid under add/remove-one
    assert gaussian_delta(math.sqrt(math.log(6 / delta)) / (eps / 3), eps / 3) <= delta / 3


# ---------------------------------------------------------------------------------------------
# the release
# ---------------------------------------------------------------------------------------------


def test_noise_has_the_declared_gaussian_scales():
    rng = np.random.default_rng(11)
    d, bx, by, eps, delta = 30, 0.8, 1.5, 1.0, 1e-6
    X, y = rng.normal(size=(300, d)) * 0.3, rng.normal(size=300)
    xx, xy = ad._projected_stats(X, y, bx, by)
    upper = np.triu_indices(d)
    noise_xx, noise_xy = [], []
    gen = np.random.default_rng(12)
    for _ in range(20):
        r = adassp(X, y, epsilon=eps, delta=delta, x_bound=bx, y_bound=by, rng=gen)
        np.testing.assert_array_equal(r.xx_noisy, r.xx_noisy.T)
        noise_xx.append((r.xx_noisy - xx)[upper])
        noise_xy.append(r.xy_noisy - xy)
    c = gaussian_noise_multiplier(eps / 3, delta / 3)
    assert r.noise_multiplier == c and not r.private
    expected = (c * bx**2, c * math.sqrt(2) * bx**2, c * 2 * bx * by)
    np.testing.assert_allclose(r.noise_scales, expected, rtol=1e-15)
    assert stats.kstest(np.concatenate(noise_xx), stats.norm(scale=expected[1]).cdf).pvalue > P_MIN
    assert stats.kstest(np.concatenate(noise_xy), stats.norm(scale=expected[2]).cdf).pvalue > P_MIN


def test_lambda_min_noise_and_ridge_rule():
    rng = np.random.default_rng(13)
    d, bx, by, eps, delta, rho = 2, 1.0, 1.0, 30.0, 1e-3, 0.05
    X = rng.normal(size=(300, d))
    X /= np.linalg.norm(X, axis=1)[:, None]  # on the sphere: λ_min ≈ 150
    y = rng.uniform(-1, 1, size=300)
    xx, _ = ad._projected_stats(X, y, bx, by)
    lam_min = np.linalg.eigvalsh(xx)[0]
    gen = np.random.default_rng(14)
    z = []
    for _ in range(400):
        r = adassp(X, y, epsilon=eps, delta=delta, x_bound=bx, y_bound=by, rho=rho, rng=gen)
        s_lam, s_xx, _ = r.noise_scales
        assert r.lambda_min_noisy > 0
        z.append((r.lambda_min_noisy - lam_min) / s_lam + math.sqrt(math.log(6 / delta)))
        assert r.ridge == max(0.0, s_xx * math.sqrt(d * math.log(2 * d * d / rho)) - r.lambda_min_noisy)
    assert stats.kstest(z, "norm").pvalue > P_MIN


def test_large_epsilon_matches_ols_on_projected_data():
    rng = np.random.default_rng(15)
    n, d, bx, by = 20000, 3, 1.5, 2.0
    X = rng.normal(size=(n, d)) * 0.7
    beta = np.array([1.0, -0.5, 0.25])
    y = X @ beta + 0.5 * rng.normal(size=n)
    P, yc = project_rows(X, bx), np.clip(y, -by, by)
    assert (np.linalg.norm(X, axis=1) > bx).mean() > 0.05 and (np.abs(y) > by).mean() > 0.01
    ols = np.linalg.lstsq(P, yc, rcond=None)[0]
    r = adassp(X, y, epsilon=100.0, delta=1e-6, x_bound=bx, y_bound=by, rng=16)
    assert r.ridge == 0.0 and r.solver == "solve"
    np.testing.assert_allclose(r.coef, ols, atol=1e-3)
    # new rows are projected onto the release's ball, as the released rows were
    np.testing.assert_allclose(r.predict(X[:50]), P[:50] @ r.coef)
    outside = np.linalg.norm(X[:50], axis=1) > bx
    assert outside.any() and not np.allclose(r.predict(X[:50])[outside], X[:50][outside] @ r.coef)


def test_small_data_gets_a_ridge_and_a_finite_estimate():
    rng = np.random.default_rng(17)
    X, y = rng.normal(size=(40, 5)), rng.normal(size=40)
    r = adassp(X, y, epsilon=0.5, delta=1e-5, x_bound=1.0, y_bound=1.0, rng=18)
    assert r.ridge > 0 and np.isfinite(r.coef).all()


def test_singular_system_falls_back_to_least_squares():
    A = np.array([[1.0, 1.0], [1.0, 1.0]])
    b = np.array([2.0, 2.0])
    theta, solver = ad._ridge_solve(A, b)
    assert solver == "lstsq"
    np.testing.assert_allclose(theta, [1.0, 1.0])
    theta, solver = ad._ridge_solve(np.eye(2) * 2, b)
    assert solver == "solve" and np.allclose(theta, [1.0, 1.0])


def test_result_metadata_accounting_and_immutability():
    rng = np.random.default_rng(19)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    acct = PrivacyAccountant(epsilon=2.0, delta=1e-5)
    r = adassp(X, y, epsilon=1.5, delta=6e-6, x_bound=1.0, y_bound=2.0, accountant=acct)
    assert isinstance(r, AdaSSPRelease) and r.private  # secure default
    assert (r.epsilon, r.delta, r.x_bound, r.y_bound, r.neighbours, r.n, r.d) == (
        1.5,
        6e-6,
        1.0,
        2.0,
        "replace-one",
        60,
        3,
    )
    (entry,) = acct.ledger
    assert (entry.mechanism, entry.epsilon, entry.delta, entry.neighbours) == (MECHANISM, 1.5, 6e-6, "replace-one")
    with pytest.raises(ValueError):
        r.coef[0] = 1.0
    with pytest.raises(AttributeError):
        r.ridge = 0.0
    assert not any(isinstance(v, np.ndarray) and v.shape[0] == 60 for v in vars(r).values())
    with pytest.raises(ValueError, match="3 columns"):
        r.predict(np.ones((2, 4)))
    a = adassp(X, y, epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=2.0, rng=5)
    b = adassp(X, y, epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=2.0, rng=5)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert not a.private


BAD_INPUTS = [
    (dict(X=np.array([[1.0, np.nan]] * 3)), "X contains NaN"),
    (dict(X=np.array([[1.0, np.inf]] * 3)), "X contains NaN"),
    (dict(y=np.array([1.0, np.nan, 0.0])), "y contains NaN"),
    (dict(y=np.array([1.0, -np.inf, 0.0])), "y contains NaN"),
    (dict(y=np.ones(4)), r"y must have shape \(3,\)"),
    (dict(X=np.ones(3)), "X must be 2-D"),
    (dict(X=np.ones((0, 2)), y=np.ones(0)), "at least one row"),
    (dict(epsilon=0.0), "epsilon"),
    (dict(epsilon=-1.0), "epsilon"),
    (dict(epsilon=float("nan")), "epsilon"),
    (dict(epsilon=float("inf")), "epsilon"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(delta=-1e-6), "delta"),
    (dict(delta=float("nan")), "delta"),
    (dict(x_bound=0.0), "x_bound"),
    (dict(x_bound=-1.0), "x_bound"),
    (dict(y_bound=0.0), "y_bound"),
    (dict(y_bound=float("inf")), "y_bound"),
    (dict(rho=0.0), "rho"),
    (dict(rho=1.5), "rho"),
]


@pytest.mark.parametrize("override, message", BAD_INPUTS)
def test_bad_input_raises_and_spends_nothing(override, message):
    args = dict(X=np.ones((3, 2)), y=np.zeros(3), epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0)
    args.update(override)
    acct = PrivacyAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match=message):
        adassp(args.pop("X"), args.pop("y"), accountant=acct, **args)
    assert acct.ledger == ()


def test_overspend_draws_no_noise_and_records_nothing():
    X, y = np.ones((5, 2)), np.ones(5)
    acct = PrivacyAccountant(epsilon=1.0, delta=1e-5)
    adassp(X, y, epsilon=0.75, delta=5e-6, x_bound=1, y_bound=1, accountant=acct)
    ledger = acct.ledger
    generator = np.random.default_rng(5)
    state = generator.bit_generator.state
    with pytest.raises(BudgetExceededError):  # ε over budget
        adassp(X, y, epsilon=0.5, delta=1e-6, x_bound=1, y_bound=1, accountant=acct, rng=generator)
    with pytest.raises(BudgetExceededError):  # δ over budget
        adassp(X, y, epsilon=0.1, delta=6e-6, x_bound=1, y_bound=1, accountant=acct, rng=generator)
    assert generator.bit_generator.state == state  # no noise was drawn
    assert acct.ledger == ledger and acct.spent == (0.75, 5e-6)
    adassp(X, y, epsilon=0.25, delta=5e-6, x_bound=1, y_bound=1, accountant=acct)
    assert acct.remaining[0] == pytest.approx(0.0) and acct.remaining[1] == pytest.approx(0.0)


def test_secure_noise_is_the_exact_discrete_gaussian_of_the_same_scale():
    rng = np.random.default_rng(23)
    d = 40
    X, y = rng.normal(size=(300, d)) / np.sqrt(d), rng.normal(size=300)
    xx, xy = ad._projected_stats(X, y, 1.0, 1.5)
    upper = np.triu_indices(d)
    secure = adassp(X, y, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.5)
    seeded = adassp(X, y, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.5, rng=3)
    assert secure.private and secure.noise_scales == seeded.noise_scales  # same σ in both modes
    _, s_xx, s_xy = secure.noise_scales
    for released, exact, sigma in ((secure.xx_noisy[upper], xx[upper], s_xx), (secure.xy_noisy, xy, s_xy)):
        grid = 2.0 ** (np.floor(np.log2(sigma)) - 40)  # OpenDP's discrete Gaussian lies on its grid
        np.testing.assert_array_equal(released / grid, np.round(released / grid))
        # 820 + 40 standardised noise values: N(0, 1) (a correct sampler fails once in 10⁹ runs)
        assert stats.kstest((released - exact) / sigma, "norm").pvalue > 1e-9
    np.testing.assert_array_equal(secure.xx_noisy, secure.xx_noisy.T)
