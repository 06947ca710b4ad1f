"""Stability-based private penalty selection (paper 001 Thm 2.1, Chaudhuri & Vinterbo 2013)."""

import math

import numpy as np
import pytest
from scipy.special import expit

from pm_private.logistic.elastic_net import perturbation_noise, prepare_design
from pm_private.logistic.penalty_selection import MECHANISM, noise_norm_bound, select_penalty, stability_constants
from pm_private.logistic.proximal import softplus, solve_elastic_net_logistic
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.noise import as_noise_source

LAMS = np.array([0.05, 0.2, 0.8])


def _data(N=300, s=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(N, s))
    y = (rng.uniform(size=N) < expit(X @ np.array([2.0, -1.5, 0, 0])[:s])).astype(int)
    return X, y


@pytest.mark.parametrize("noise", ["laplace", "l2"])
def test_xi_bounds_the_noise_norm_tail(noise):
    s, k, delta = 16, 5, 0.05
    xi = noise_norm_bound(s, delta / k)
    b = perturbation_noise(s, noise, as_noise_source(0), size=10_000)
    tail = np.mean(np.linalg.norm(b, axis=0) > xi)
    assert tail <= delta / k + 3 * math.sqrt(delta / k / 10_000)
    if noise == "l2":  # exact quantile: the tail is δ/k, not less
        assert tail >= delta / k - 3 * math.sqrt(delta / k / 10_000)
        # paper 001 Prop. 3's ξ is the Laurent–Massart bound of χ²(s), but ‖B₂‖₂ ~ χ²(2s)
        paper_xi = (math.sqrt(s) + math.sqrt(math.log(k / delta))) ** 2 + math.log(k / delta)
        assert np.mean(np.linalg.norm(b, axis=0) > paper_xi) > 5 * delta / k


def _fit(design, y, lams, alpha, consts, eps, b, mask):
    n = len(y)
    return solve_elastic_net_logistic(
        design, y, lams * (1 - alpha) + consts.extra_ridge, lams * alpha, consts.phi / (eps * n) * b, mask
    ).theta


def _score(theta, design, y):
    return -softplus(-y[:, None] * (design @ theta)).mean(axis=0)


@pytest.mark.parametrize("noise, norm", [("laplace", 1), ("l2", 2)])
def test_training_and_validation_stability(noise, norm):
    """|q(θ_T, V) − q(θ_T', V)| ≤ β₁/n and |q(θ_T, V) − q(θ_T, V')| ≤ β₂/m for replace-one neighbours,
    rows on the κ-sphere, and noise of norm exactly ξ (the edge of the event E)."""
    rng = np.random.default_rng(1)
    n, m, s, kappa, eps, alpha, delta = 30, 20, 3, 1.5, 1.0, 0.5, 0.1
    consts = stability_constants(
        lams=LAMS,
        alpha=alpha,
        epsilon_train=eps,
        delta=delta,
        x_bound=kappa,
        noise=noise,
        fit_intercept=True,
        n_train=n,
        n_valid=m,
        dim=s + 1,
    )
    mask = np.array([True] * s + [False])
    strength = max(consts.c_star, consts.c_min)
    worst1 = worst2 = 0.0
    for _ in range(25):
        rows = rng.normal(size=(n + m + 2, s))
        rows *= (kappa / np.linalg.norm(rows, ord=norm, axis=1))[:, None]
        design = prepare_design(rows, kappa, norm, True)
        y = rng.choice([-1.0, 1.0], n + m + 2)
        T, yT, V, yV = design[:n], y[:n], design[n : n + m], y[n : n + m]
        T2, yT2 = T.copy(), yT.copy()
        T2[0], yT2[0] = design[-1], -yT[0]
        V2, yV2 = V.copy(), yV.copy()
        V2[0], yV2[0] = design[-2], -yV[0]
        b = perturbation_noise(s + 1, noise, as_noise_source(rng), size=len(LAMS))
        b *= consts.xi / np.linalg.norm(b, axis=0)
        theta = _fit(T, yT, LAMS, alpha, consts, eps, b, mask)
        theta2 = _fit(T2, yT2, LAMS, alpha, consts, eps, b, mask)
        assert np.linalg.norm(theta - theta2, axis=0).max() <= 2 * consts.lipschitz / (n * strength) + 1e-9
        bound_norm = (consts.lipschitz + consts.phi * consts.xi / (eps * n)) / strength
        assert np.linalg.norm(theta, axis=0).max() <= bound_norm + 1e-9
        d1 = np.abs(_score(theta, V, yV) - _score(theta2, V, yV)).max() * n
        d2 = np.abs(_score(theta, V, yV) - _score(theta, V2, yV2)).max() * m
        worst1, worst2 = max(worst1, d1), max(worst2, d2)
    assert worst1 <= consts.beta1
    assert worst2 <= consts.beta2
    assert worst1 > 0 and worst2 > 0


def test_logistic_validation_loss_difference_bound():
    """softplus(a) − softplus(−a) = a gives |h(θ;v) − h(θ;v')| ≤ κ‖θ‖₂ although h(0; v) = log 2."""
    rng = np.random.default_rng(2)
    kappa = 2.0
    theta = rng.normal(size=(5000, 3)) * rng.choice([0.01, 1, 10], size=(5000, 1))
    v = rng.normal(size=(5000, 3))
    v *= (kappa / np.linalg.norm(v, axis=1))[:, None]
    w = rng.normal(size=(5000, 3))
    w *= (kappa / np.linalg.norm(w, axis=1))[:, None]
    h = lambda rows: softplus(-np.einsum("ij,ij->i", theta, rows))  # noqa: E731
    bound = kappa * np.linalg.norm(theta, axis=1)
    assert np.all(np.abs(h(v) - h(w)) <= bound + 1e-12)
    aligned = theta * (kappa / np.linalg.norm(theta, axis=1))[:, None]
    np.testing.assert_allclose(np.abs(h(aligned) - h(-aligned)), bound, rtol=1e-9)


def test_select_penalty_releases_chosen_model_and_charges_once():
    X, y = _data()
    acct = PrivacyAccountant(2.0, 1e-5)
    sel = select_penalty(X, y, lams=LAMS, alpha=0.5, epsilon=2.0, delta=1e-6, x_bound=2.0, accountant=acct, rng=4)
    assert acct.spent == (pytest.approx(2.0), pytest.approx(1e-6))
    assert len(acct.ledger) == 1 and acct.ledger[0].neighbours == "replace-one"
    assert acct.ledger[0].mechanism == sel.mechanism == MECHANISM
    assert sel.lam == LAMS[sel.index] and sel.private is False
    assert sel.epsilon_train + sel.epsilon_select == pytest.approx(2.0)
    assert sel.n_train + sel.n_valid == len(y) and sel.n_valid == 90
    assert sel.model.predict_proba(X).shape == (len(y), 2)
    assert not hasattr(sel, "scores")  # the unnoised validation scores are never released


def test_selection_follows_the_validation_score():
    """A huge ε picks the clearly better λ every time; a tiny ε picks nearly at random."""
    X, y = _data(N=600, seed=5)
    grid = np.array([0.02, 50.0])  # λ = 50 shrinks θ to ≈ 0: validation loss ≈ log 2
    big = [
        select_penalty(X, y, lams=grid, alpha=0.5, epsilon=1e6, delta=1e-6, x_bound=2.0, rng=seed).index
        for seed in range(8)
    ]
    assert big == [0] * 8
    small = [
        select_penalty(X, y, lams=grid, alpha=0.5, epsilon=1e-3, delta=1e-6, x_bound=2.0, rng=seed).index
        for seed in range(40)
    ]
    assert 5 <= sum(small) <= 35


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), r"delta must be in \(0, 1\)"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(lams=[]), "non-empty"),
        (dict(lams=[0.1, -0.2]), "lam"),
        (dict(alpha=2.0), "alpha"),
        (dict(selection_share=1.0), "selection_share"),
        (dict(validation_fraction=0.0), "validation_fraction"),
        (dict(noise="gauss"), "noise"),
        (dict(x_bound=float("inf")), "x_bound"),
        (dict(max_iter=0), "max_iter"),
        (dict(max_iter=-5), "max_iter"),
        (dict(max_iter="a"), "max_iter"),
        (dict(max_iter=1e3), "max_iter"),
        (dict(tol=-1.0), "tol"),
        (dict(tol=float("nan")), "tol"),
        (dict(fit_intercept="no"), "fit_intercept"),
        (dict(fit_intercept=None), "fit_intercept"),
        (dict(alpha="0.5"), "alpha"),
        (dict(alpha=float("nan")), "alpha"),
        (dict(lams=[[0.1, 0.2]]), "lams"),
        (dict(lams=[0.1, float("nan")]), "lam"),
        (dict(lams="0.1"), "lams"),
        (dict(noise=["laplace"]), "noise"),
        (dict(selection_share=float("nan")), "selection_share"),
        (dict(validation_fraction="a"), "validation_fraction"),
        (dict(validation_fraction=0.999), "cannot be split"),
        (dict(x_bound="a"), "x_bound"),
        (dict(epsilon=True), "epsilon"),
        (dict(delta=float("nan")), "delta"),
        (dict(X=np.full((50, 4), np.nan)), "NaN"),
        (dict(y=np.arange(50) % 3), "labels"),
    ],
)
def test_bad_input_raises_before_spending(change, message):
    X, y = _data(N=50)
    params = dict(X=X, y=y, lams=LAMS, alpha=0.5, epsilon=1.0, delta=1e-6, x_bound=1.0)
    params.update(change)
    acct = PrivacyAccountant(10.0, 0.5)
    with pytest.raises(ValueError, match=message):
        select_penalty(params.pop("X"), params.pop("y"), **params, accountant=acct, rng=0)
    with pytest.raises(ValueError, match="labels"):
        select_penalty(X, np.arange(50) % 3, lams=LAMS, alpha=0.5, epsilon=1.0, delta=1e-6, x_bound=1.0)
    assert acct.spent == (0.0, 0.0) and not acct.ledger


@pytest.mark.parametrize("change", [dict(accountant="budget"), dict(rng="seed")])
def test_bad_accountant_or_rng_raises_before_spending(change):
    X, y = _data(N=50)
    acct = PrivacyAccountant(10.0, 0.5)
    params = dict(lams=LAMS, alpha=0.5, epsilon=1.0, delta=1e-6, x_bound=1.0, accountant=acct, rng=0) | change
    with pytest.raises(TypeError, match=next(iter(change))):
        select_penalty(X, y, **params)
    assert acct.spent == (0.0, 0.0) and not acct.ledger


def test_selected_model_is_fitted_and_clips_new_rows_like_the_estimator():
    X, y = _data()
    sel = select_penalty(X, 2 * y - 1, lams=LAMS, alpha=0.5, epsilon=2.0, delta=1e-6, x_bound=1.5, rng=4)
    model = sel.model
    assert model.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(model.classes_, [-1, 1])  # the label coding of y
    far = np.array([[30.0, -40.0, 5.0, 0.0], [0.1, 0.2, 0.1, 0.0]])
    clipped = prepare_design(far, 1.5, 1, False)
    np.testing.assert_allclose(model.decision_function(far), clipped @ model.coef_ + model.intercept_)
    assert set(model.predict(X)) <= {-1, 1}
    np.testing.assert_array_equal(
        select_penalty(X, y, lams=LAMS, alpha=0.5, epsilon=2.0, delta=1e-6, x_bound=1.5, rng=4).model.classes_,
        [0, 1],
    )
