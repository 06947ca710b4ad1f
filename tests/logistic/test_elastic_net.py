"""Objective-perturbation elastic-net logistic regression (paper 001 Alg. 1) and its solver."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from pm_private.logistic.elastic_net import (
    DPElasticNetLogisticRegression,
    convex_min,
    design_bounds,
    perturbation_noise,
    prepare_design,
    to_signed_labels,
)
from pm_private.logistic.proximal import ConvergenceError, kkt_residual, logistic_objective, solve_elastic_net_logistic
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import project_rows


def _data(n=400, s=5, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, s)) * scale
    beta = np.linspace(1.5, -1.0, s) * (np.arange(s) % 2 == 0)
    y = (rng.uniform(size=n) < expit(X @ beta + 0.3)).astype(int)
    return X, y, beta


# --- privacy conditions of Alg. 1 -------------------------------------------------------------


def _ball_rows(rng, count, s, kappa, norm):
    """Random rows lying exactly on the κ-sphere of the ℓ_norm norm."""
    rows = rng.normal(size=(count, s)) * rng.exponential(size=(count, s)) ** 2
    return rows * (kappa / np.linalg.norm(rows, ord=norm, axis=1))[:, None]


@pytest.mark.parametrize("norm", [1, 2])
@pytest.mark.parametrize("intercept", [True, False])
def test_hessian_bound_holds_and_is_tight(norm, intercept):
    rng = np.random.default_rng(1)
    kappa = 2.5
    rows = prepare_design(_ball_rows(rng, 2000, 4, kappa, norm), kappa, norm, intercept)
    _, c = design_bounds(kappa, norm, intercept)
    theta = rng.normal(size=(2000, rows.shape[1]))
    p = expit(np.einsum("ij,ij->i", theta, rows))
    # largest singular value of the rank-1 Hessian σ(1−σ)xxᵀ is σ(1−σ)‖x‖₂²
    top = p * (1 - p) * np.einsum("ij,ij->i", rows, rows)
    assert top.max() <= c * (1 + 1e-12)
    # tight: at θ = 0 a row of ℓ2 norm κ (a coordinate axis, on both balls) attains c
    axis = prepare_design(np.eye(4)[:1] * kappa, kappa, norm, intercept)
    assert 0.25 * axis[0] @ axis[0] == pytest.approx(c)


@pytest.mark.parametrize("norm", [1, 2])
def test_gradient_sensitivity_is_within_phi(norm):
    """‖∇l(θ;d) − ∇l(θ;d')‖_j ≤ 2κ_j = φ for random and adversarial neighbours on the κ-ball."""
    rng = np.random.default_rng(2)
    kappa, s, count = 3.0, 4, 4000
    kappa_j, _ = design_bounds(kappa, norm, True)
    a = prepare_design(_ball_rows(rng, count, s, kappa, norm) * 1.7, kappa, norm, True)  # clipped
    b = prepare_design(_ball_rows(rng, count, s, kappa, norm), kappa, norm, True)
    ya, yb = rng.choice([-1.0, 1.0], count), rng.choice([-1.0, 1.0], count)
    theta = rng.normal(size=(count, s + 1)) * 20

    def grad(rows, y):
        return (-y * expit(-y * np.einsum("ij,ij->i", theta, rows)))[:, None] * rows

    diff = np.linalg.norm(grad(a, ya) - grad(b, yb), ord=norm, axis=1)
    assert diff.max() <= 2 * kappa_j * (1 + 1e-12)
    assert diff.max() >= 1.5 * kappa_j  # the bound is approached


def _log_output_density_ratio(theta, D, D2, y, y2, *, eps, lam, alpha, extra, noise_norm, phi, mask):
    """log g(θ|D) − log g(θ|D') of Alg. 1's output via the change of variables b = T_D(θ) (App. A.2)."""

    def parts(Z, labels):
        n = len(Z)
        p = expit(-labels * (Z @ theta))
        grad_sum = Z.T @ (-labels * p)
        hess_sum = (Z * (p * (1 - p))[:, None]).T @ Z
        strong = lam * (1 - alpha) + extra
        reg_grad = strong * theta + lam * alpha * np.sign(theta) * mask
        b = -(eps / phi) * (grad_sum + n * reg_grad)
        logdet = np.linalg.slogdet(hess_sum + n * strong * np.eye(len(theta)))[1]
        return -np.linalg.norm(b, ord=noise_norm) / 2 + logdet

    return parts(D, y) - parts(D2, y2)


@pytest.mark.parametrize("noise, norm", [("laplace", 1), ("l2", 2)])
def test_output_density_ratio_bounded_by_epsilon(noise, norm):
    """Thm 3.1 checked directly: |log g(θ|D)/g(θ|D')| ≤ ε for replace-one neighbours (random rows
    and rows on the κ-sphere, labels flipped, θ from small to saturating), with φ = 2κ_j and
    λ(1−α) exactly at the requirement c/(n(e^{ε/4} − 1))."""
    rng = np.random.default_rng(3)
    eps, kappa, s, n = 1.0, 2.0, 3, 6
    kappa_j, c = design_bounds(kappa, norm, True)
    lam, alpha = convex_min(eps, n, c) / 0.5, 0.5
    mask = np.array([True] * s + [False])
    worst = 0.0
    for trial in range(400):
        raw = _ball_rows(rng, n, s, kappa, norm) * rng.uniform(0.2, 1.5, size=(n, 1))
        D = prepare_design(raw, kappa, norm, True)
        y = rng.choice([-1.0, 1.0], n)
        D2, y2 = D.copy(), y.copy()
        D2[0, :s] = -D[0, :s] if trial % 2 else _ball_rows(rng, 1, s, kappa, norm)[0]
        y2[0] = rng.choice([-1.0, 1.0])
        theta = rng.normal(size=s + 1) * rng.choice([0.1, 1.0, 30.0])
        ratio = _log_output_density_ratio(
            theta,
            D,
            D2,
            y,
            y2,
            eps=eps,
            lam=lam,
            alpha=alpha,
            extra=0.0,
            noise_norm=norm,
            phi=2 * kappa_j,
            mask=mask,
        )
        worst = max(worst, abs(ratio))
    assert worst <= eps


def test_noise_density_share_is_attained():
    """With B₁ the noise-density factor exp((‖b_D'‖₁ − ‖b_D‖₁)/2) reaches e^{ε/2} at φ = 2κ₁, so φ has
    no slack: records u = (small, ≈κ) and u' = (small, ≈−κ), saturated by θ₁ = −M, with θ₂ set so
    that b_D has a zero second coordinate."""
    eps, kappa, n, t, M = 1.0, 2.0, 4, math.pi / 2 - 0.01, 1e4
    kappa_j, c = design_bounds(kappa, 1, False)
    lam = convex_min(eps, n, c)
    u = kappa * np.array([math.cos(t), math.sin(t)]) / (math.cos(t) + math.sin(t))
    D = np.vstack([u, np.tile([kappa, 0.0], (n - 1, 1))])
    D2 = D.copy()
    D2[0, 1] = -u[1]
    y = -np.ones(n)  # the other records have margin θᵀx ≪ 0: zero gradient
    y[0] = 1.0
    theta = np.array([-M, u[1] / (n * lam)])
    ratio = _log_output_density_ratio(
        theta,
        D,
        D2,
        y,
        y,
        eps=eps,
        lam=lam,
        alpha=0.0,
        extra=0.0,
        noise_norm=1,
        phi=2 * kappa_j,
        mask=np.ones(2, bool),
    )
    assert 0.49 * eps <= abs(ratio) <= 0.5 * eps + 1e-9


# --- noise distributions ---------------------------------------------------------------------


def test_noise_b1_is_iid_laplace_scale_2():
    b = perturbation_noise(5, "laplace", as_noise_source(10), size=2000)
    assert b.shape == (5, 2000)
    assert stats.kstest(b.ravel(), stats.laplace(scale=2).cdf).pvalue > 1e-3
    # independence across coordinates: correlations are small
    assert np.abs(np.corrcoef(b)[np.triu_indices(5, 1)]).max() < 0.1


def test_noise_b2_radius_gamma_direction_uniform():
    s = 6
    b = perturbation_noise(s, "l2", as_noise_source(11), size=3000)
    radius = np.linalg.norm(b, axis=0)
    # ‖B₂‖₂ ~ Gamma(s, 2) = χ²(2s) (paper 001 Prop. 1)
    assert stats.kstest(radius, stats.gamma(s, scale=2).cdf).pvalue > 1e-3
    assert stats.kstest(radius, stats.chi2(2 * s).cdf).pvalue > 1e-3
    # uniform direction: a squared coordinate of a uniform unit vector is Beta(1/2, (s−1)/2)
    u2 = (b[0] / radius) ** 2
    assert stats.kstest(u2, stats.beta(0.5, (s - 1) / 2).cdf).pvalue > 1e-3
    # and B₁ with the same seed would fail the Gamma radius test in ℓ2 (the tests can tell them apart)
    b1 = perturbation_noise(s, "laplace", as_noise_source(11), size=3000)
    assert stats.kstest(np.linalg.norm(b1, axis=0), stats.gamma(s, scale=2).cdf).pvalue < 1e-6


# --- solver -----------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.95])
def test_solver_kkt_and_matches_sklearn_saga(alpha):
    X, y01, _ = _data(n=300, s=6, seed=4)
    y = 2.0 * y01 - 1
    n, lam = len(y), 0.03
    res = solve_elastic_net_logistic(X, y, lam * (1 - alpha) + 1e-12, lam * alpha)
    theta = res.theta[:, 0]
    assert kkt_residual(theta, X, y, lam * (1 - alpha) + 1e-12, lam * alpha)[0] <= 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = LogisticRegression(
            C=1 / (n * lam), l1_ratio=alpha, solver="saga", fit_intercept=False, tol=1e-12, max_iter=50_000
        ).fit(X, y01)
    np.testing.assert_allclose(theta, ref.coef_[0], atol=1e-6)
    if alpha > 0.5:
        assert np.any(theta == 0.0)  # exact zeros from the proximal step


def test_solver_batch_equals_single_and_is_optimal():
    X, y01, _ = _data(n=200, s=4, seed=5)
    y = 2.0 * y01 - 1
    rng = np.random.default_rng(0)
    l2, l1, lin = np.array([0.01, 0.1, 1.0]), np.array([0.02, 0.0, 0.3]), rng.normal(size=(4, 3)) * 0.1
    mask = np.array([True, True, False, True])
    batch = solve_elastic_net_logistic(X, y, l2, l1, lin, mask).theta
    for k in range(3):
        single = solve_elastic_net_logistic(X, y, l2[k], l1[k], lin[:, k], mask).theta[:, 0]
        np.testing.assert_allclose(batch[:, k], single, atol=1e-9)
        # no random perturbation lowers the objective
        f0 = logistic_objective(single, X, y, l2[k], l1[k], lin[:, k], mask)[0]
        trial = single[:, None] + rng.normal(size=(4, 200)) * 1e-3
        assert np.all(logistic_objective(trial, X, y, l2[k], l1[k], lin[:, k], mask) >= f0 - 1e-12)


def test_solver_refuses_unconverged_and_non_strongly_convex():
    X, y01, _ = _data(n=100, s=3)
    y = 2.0 * y01 - 1
    with pytest.raises(ConvergenceError, match="did not converge to the KKT tolerance"):
        solve_elastic_net_logistic(X, y, 1e-6, 0.0, max_iter=10)
    with pytest.raises(ValueError, match="l2 must be > 0"):
        solve_elastic_net_logistic(X, y, 0.0, 0.1)


# --- estimator --------------------------------------------------------------------------------


def test_large_epsilon_converges_to_non_private_elastic_net():
    X, y, beta = _data(n=3000, s=5, seed=6, scale=0.4)
    kappa, lam, alpha = 3.0, 1e-3, 0.5
    design = prepare_design(X, kappa, 1, True)
    mask = np.array([True] * 5 + [False])
    reference = solve_elastic_net_logistic(design, 2.0 * y - 1, lam * (1 - alpha), lam * alpha, None, mask).theta[:, 0]
    assert np.abs(reference[:5] - beta).max() < 0.35  # the known coefficients, up to sampling error
    errors = []
    for eps in (2.0, 20.0, 200.0, 1e6):
        fits = [
            DPElasticNetLogisticRegression(
                epsilon=eps, lam=lam, alpha=alpha, x_bound=kappa, too_weak="add_ridge", rng=seed
            ).fit(X, y)
            for seed in range(5)
        ]
        errors.append(np.mean([np.abs(np.r_[f.coef_, f.intercept_] - reference).max() for f in fits]))
    assert errors[0] > errors[1] > errors[2] > errors[3]
    assert errors[3] < 1e-6


def test_fit_predict_and_params():
    X, y, _ = _data(n=500, s=4, seed=7)
    model = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, alpha=0.3, x_bound=4.0, rng=1)
    assert model.fit(X, y) is model
    proba = model.predict_proba(X)
    assert proba.shape == (500, 2) and np.allclose(proba.sum(axis=1), 1)
    assert set(np.unique(model.predict(X))) <= {0, 1}
    assert np.mean(model.predict(X) == y) > 0.6
    info = model.privacy_
    assert info.epsilon == 5.0 and info.private is False and info.phi == pytest.approx(2 * (4.0 + 1))
    assert info.neighbours == "replace-one"
    params = model.get_params()
    assert params["lam"] == 0.05 and params["noise"] == "laplace"
    clone = DPElasticNetLogisticRegression(**params)
    assert clone.set_params(alpha=0.9).alpha == 0.9
    with pytest.raises(ValueError, match="Invalid parameter 'C'"):
        clone.set_params(C=1.0)
    # the same seed gives the same release; labels ±1 give the same fit as 0/1
    again = DPElasticNetLogisticRegression(**params).fit(X, 2 * y - 1)
    np.testing.assert_array_equal(again.coef_, model.coef_)
    # secure randomness is marked private
    secure = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, alpha=0.3, x_bound=4.0).fit(X, y)
    assert secure.privacy_.private is True


def test_too_weak_penalty_raises_or_adds_ridge():
    X, y, _ = _data(n=200, s=3)
    kappa, eps = 2.0, 0.5
    _, c = design_bounds(kappa, 1, True)
    need = convex_min(eps, 200, c)
    with pytest.raises(ValueError, match="penalty too weak"):
        DPElasticNetLogisticRegression(epsilon=eps, lam=0.9 * need / 0.5, alpha=0.5, x_bound=kappa).fit(X, y)
    with pytest.raises(ValueError, match="no λ works with alpha = 1"):
        DPElasticNetLogisticRegression(epsilon=eps, lam=1.0, alpha=1.0, x_bound=kappa).fit(X, y)
    ok = DPElasticNetLogisticRegression(epsilon=eps, lam=need / 0.5, alpha=0.5, x_bound=kappa, rng=0).fit(X, y)
    assert ok.privacy_.extra_ridge == 0.0
    fixed = DPElasticNetLogisticRegression(
        epsilon=eps, lam=0.1 * need, alpha=0.5, x_bound=kappa, too_weak="add_ridge", rng=0
    ).fit(X, y)
    assert fixed.privacy_.extra_ridge == pytest.approx(need - 0.05 * need)


def test_rows_are_clipped_to_public_bound():
    X = np.array([[3.0, 4.0], [0.1, 0.2]])
    np.testing.assert_allclose(np.linalg.norm(project_rows(X, 1.0, 2), axis=1), [1.0, math.hypot(0.1, 0.2)])
    np.testing.assert_allclose(np.abs(project_rows(X, 1.0, 1)).sum(axis=1), [1.0, 0.3])


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(X=np.array([[np.nan, 1.0]] * 10)), "NaN"),
        (dict(X=np.ones(10)), "Expected 2D array"),
        (dict(y=np.ones(9)), "inconsistent numbers of samples"),
        (dict(y=np.arange(10) % 3), "Only binary classification"),
        (dict(y=np.ones(10)), "one class"),
        (dict(y=np.linspace(0, 1, 10)), "Unknown label type"),
        (dict(epsilon=0.0), "epsilon"),
        (dict(epsilon=float("nan")), "epsilon"),
        (dict(lam=-1.0), "lam"),
        (dict(alpha=1.5), "alpha"),
        (dict(noise="gauss"), "'noise' parameter"),
        (dict(x_bound=0.0), "x_bound"),
        (dict(too_weak="ignore"), "too_weak"),
        (dict(lam=1e-9), "penalty too weak"),
        (dict(max_iter=0), "max_iter"),
        (dict(max_iter=-5), "max_iter"),
        (dict(max_iter="a"), "max_iter"),
        (dict(max_iter=2.5), "max_iter"),
        (dict(max_iter=True), "max_iter"),
        (dict(tol=-1.0), "tol"),
        (dict(tol=float("nan")), "tol"),
        (dict(tol=0.0), "tol"),
        (dict(fit_intercept="no"), "fit_intercept"),
        (dict(fit_intercept=1), "fit_intercept"),
        (dict(epsilon=1e-7), "epsilon"),
        (dict(epsilon="1"), "epsilon"),
        (dict(lam=True), "lam"),
        (dict(x_bound=float("inf")), "x_bound"),
        (dict(classes=[0, 1, 2]), "classes"),
        (dict(rng=-1), "rng"),
        (dict(rng="seed"), "rng"),
    ],
)
def test_bad_input_raises_before_spending(change, message):
    args = dict(X=np.random.default_rng(0).normal(size=(10, 2)), y=np.arange(10) % 2)
    params = dict(epsilon=1.0, lam=50.0, alpha=0.5, x_bound=1.0, rng=0)
    data = {k: change.pop(k) for k in ("X", "y") if k in change}
    args.update(data)
    params.update(change)
    acct = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match=message):
        DPElasticNetLogisticRegression(**params, accountant=acct).fit(args["X"], args["y"])
    assert acct.spent == (0.0, 0.0) and not acct.ledger


def test_accountant_charged_once_per_fit_and_refuses_over_budget():
    X, y, _ = _data(n=300, s=3)
    acct = PrivacyAccountant(1.0)
    model = DPElasticNetLogisticRegression(epsilon=0.6, lam=1.0, alpha=0.5, x_bound=2.0, accountant=acct, rng=0)
    model.fit(X, y)
    assert acct.spent == (pytest.approx(0.6), 0.0)
    assert acct.ledger[0].neighbours == "replace-one"
    with pytest.raises(BudgetExceededError):
        model.fit(X, y)
    assert len(acct.ledger) == 1


def test_private_fits_take_the_step_size_from_the_public_row_bound(monkeypatch):
    # The solver's step 1/L must not come from ‖X‖₂ of the private design: L = R²/4 + l2 (public).
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(300, 4)), (rng.random(300) < 0.5).astype(int)
    norm = np.linalg.norm

    def no_spectral_norm(x, ord=None, axis=None, **kwargs):
        assert not (ord == 2 and axis is None and np.ndim(x) == 2), "spectral norm of the private design"
        return norm(x, ord=ord, axis=axis, **kwargs)

    monkeypatch.setattr(np.linalg, "norm", no_spectral_norm)
    model = DPElasticNetLogisticRegression(epsilon=1.0, lam=0.1, alpha=0.5, x_bound=1.0, rng=0).fit(X, y)
    monkeypatch.setattr(np.linalg, "norm", norm)
    reference = DPElasticNetLogisticRegression(epsilon=1.0, lam=0.1, alpha=0.5, x_bound=1.0, rng=0).fit(X, y)
    np.testing.assert_allclose(model.coef_, reference.coef_, atol=1e-8)


def test_solver_with_a_row_bound_reaches_the_same_minimiser():
    rng = np.random.default_rng(6)
    X = project_rows(rng.normal(size=(200, 3)), 1.0)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    plain = solve_elastic_net_logistic(X, y, 0.05, 0.01).theta
    bounded = solve_elastic_net_logistic(X, y, 0.05, 0.01, hessian_bound=0.25).theta
    np.testing.assert_allclose(bounded, plain, atol=1e-9)


def test_label_errors_do_not_print_label_values():
    with pytest.raises(ValueError, match=r"labels y must be in \{0, 1\} or \{-1, 1\}$"):
        to_signed_labels(np.array([0.0, 1.0, 1234.5]), 3)


@pytest.mark.parametrize("noise, norm", [("laplace", 1), ("l2", 2)])
def test_predictions_clip_new_rows_to_the_release_ball(noise, norm):
    """New rows are mapped as the training rows were: scaled onto the release's ℓ_j ball."""
    X, y, _ = _data(n=300, s=3)
    model = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, x_bound=2.0, noise=noise, rng=0).fit(X, y)
    far = np.array([[30.0, -40.0, 5.0], [0.3, 0.4, 0.1]])
    clipped = project_rows(far, 2.0, norm)
    np.testing.assert_allclose(model.decision_function(far), clipped @ model.coef_ + model.intercept_)
    np.testing.assert_array_equal(model.predict(far), model.predict(clipped))
    np.testing.assert_allclose(model.predict_proba(far), model.predict_proba(clipped))
    # the rule follows the release, not parameters changed after the fit
    before = model.decision_function(far)
    model.set_params(x_bound=100.0, noise="l2" if noise == "laplace" else "laplace")
    np.testing.assert_array_equal(model.decision_function(far), before)


def test_prediction_refuses_bad_rows():
    X, y, _ = _data(n=200, s=3)
    model = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, rng=0).fit(X, y)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(np.ones((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.array([[np.nan, 0.0, 0.0]]))


def test_model_selection_without_an_accountant_warns_and_with_one_counts_every_fit():
    from sklearn.model_selection import GridSearchCV, cross_val_score

    X, y = _data(n=200)[:2]
    estimator = DPElasticNetLogisticRegression(epsilon=0.5, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimator.fit(X, y)  # one fit is one release, counted or not by its caller: no warning
    with pytest.warns(UserWarning, match="inside scikit-learn model selection without an accountant"):
        GridSearchCV(estimator, {"lam": [0.5, 1.0]}, cv=3).fit(X, y)
    with pytest.warns(UserWarning, match="select_penalty"):
        cross_val_score(estimator, X, y, cv=2)
    accountant = PrivacyAccountant(10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        GridSearchCV(estimator.set_params(accountant=accountant), {"lam": [0.5, 1.0]}, cv=3).fit(X, y)
    # 2 candidates × 3 folds + the refit, each ε = 0.5 by sequential composition.
    assert accountant.spent == pytest.approx((3.5, 0.0))
