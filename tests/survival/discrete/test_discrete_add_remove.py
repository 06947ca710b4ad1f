"""Ext-Out-Pert and Ext-Obj-Pert under add/remove neighbours (n private, the objective normalised
by a public m).

What is checked:

- one record's gradient is bounded by G = Σ_s √(‖A_s‖² + 1) at random and extreme f, for random
  and extreme records (rows on the unit sphere, every interval, both event values);
- the sensitivity G/(mΛ): the exact minimisers of (1/m)Σℓ + (Λ/2)‖f‖² on D and on D with one
  random or extreme record added move by at most it, and by a sizeable share of it at worst;
- the release: f* + the l2-Gamma noise of scale G/(mΛε) (seeded), n not recorded, the
  relation and m recorded, the ledger entry converted with the replace-one sensitivity L/(mΛ) of
  the same minimiser (ε·L/G, below group privacy's 2ε), no n in its label;
  data of no record released as noise about 0;
- Obj-Pert: adding a record's Hessian to Σ∇²ℓ + mλI grows log det by at most ε_J at m (and by
  a sizeable share of it at worst); the noise b recovered from the optimality condition is the
  seeded l2-Gamma draw of scale G/ε′; data of no record give −b/(m(Λ + Δ)); the ledger counts
  one pure event of replace-one ε ε′·L/G + ε − ε′, and replacing one record moves the log
  density of an output by at most that (and by a sizeable share of it at worst);
- refusals before anything is spent: no ``public_size`` under add/remove, one under replace-one,
  and every invalid ``public_size``; a record whose fields contradict the relation.
"""

import dataclasses

import numpy as np
import pytest

from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.noise import as_noise_source, l2_gamma_vector
from pm_private.survival import (
    DiscreteTimeData,
    fit_discrete_time,
    interval_basis,
    loss_and_grad,
    record_grad_numpy,
    simulate_discrete_time,
)
from pm_private.survival.discrete.mechanisms import objective_perturbation, output_perturbation
from pm_private.survival.discrete.sensitivity import (
    gradient_sensitivity,
    jacobian_epsilon,
    objective_regularization,
    output_sensitivity,
    record_gradient_bound,
)

Q, E, D = 8, 3, 2
BASIS = interval_basis(Q, E)
G = record_gradient_bound(BASIS)


def _sphere(rng, size):
    x = rng.standard_normal((size, D))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _extreme_records(rng):
    """Rows on the unit sphere in both directions, in every interval, with and without the event."""
    u = _sphere(rng, 1)[0]
    return [(sign * u, k, ev) for sign in (1.0, -1.0) for k in range(Q) for ev in (0, 1)]


def _random_records(rng, count):
    X = _sphere(rng, count) * rng.uniform(size=(count, 1))
    return list(zip(X, rng.integers(0, Q, count), rng.integers(0, 2, count), strict=True))


def _data(records):
    X, interval, event = (np.array(column) for column in zip(*records, strict=True))
    return DiscreteTimeData(X, interval, event, BASIS)


def test_one_records_gradient_is_bounded_by_g():
    rng = np.random.default_rng(0)
    data = _data(_extreme_records(rng) + _random_records(rng, 100))
    worst = 0.0
    for scale in (0.1, 1.0, 5.0, 30.0):
        for f in rng.standard_normal((50, E + D)) * scale:
            worst = max(worst, np.linalg.norm(record_grad_numpy(f, data), axis=1).max())
    assert worst <= G
    assert worst > 0.5 * G  # reached: at extreme f a record's weights are all near ±1
    assert G < gradient_sensitivity(BASIS)  # below Lemma 4.2's bound on a difference of two


def _minimiser(records, m, lam):
    """argmin (1/m)Σℓ + (Λ/2)‖f‖², as the mechanism computes it: ridge Λm/n on the mean loss."""
    data = _data(records)
    fit = fit_discrete_time(data, l2=lam * m / data.n, gtol=1e-12)
    assert fit.converged
    return fit.f


@pytest.mark.parametrize("lam", [0.05, 5.0])
def test_the_minimiser_moves_by_at_most_g_over_m_lambda_when_a_record_is_added(lam):
    rng = np.random.default_rng(1)
    m = 30
    t = output_sensitivity(BASIS, m, lam, "add-remove")
    assert t == pytest.approx(G / (m * lam))
    worst = 0.0
    for n in (20, 30, 45):  # the private n below, at and above the public m
        base = _random_records(rng, n)
        f_base = _minimiser(base, m, lam)
        for record in _extreme_records(rng)[::3] + _random_records(rng, 6):
            worst = max(worst, np.linalg.norm(_minimiser([*base, record], m, lam) - f_base))
    assert worst <= t
    # the data's curvature adds to Λ's: reached in part where Λ dominates it
    assert worst > (0.2 if lam > 1 else 0.02) * t


@pytest.fixture(scope="module")
def records():
    sim = simulate_discrete_time(300, alpha=[-2.0, 0.5, -0.3], beta=[0.8, -0.6], q=Q, rng=4)
    return sim.data.X, sim.time, sim.data.event, sim.data


def test_the_add_remove_release_keeps_n_private(records):
    X, time, event, data = records
    eps, lam, m = 0.8, 0.02, 250
    acct = PrivacyAccountant(epsilon=4.0)
    release = output_perturbation(
        X, time, event, epsilon=eps, regularization=lam, q=Q, e=E, accountant=acct, rng=7,
        relation="add-remove", public_size=m,
    )  # fmt: skip
    t = G / (m * lam)
    f_star = fit_discrete_time(data, l2=lam * m / data.n).f
    np.testing.assert_allclose(release.f - f_star, l2_gamma_vector(E + D, t / eps, as_noise_source(7)), atol=1e-8)
    assert release.sensitivity == pytest.approx(t) and release.noise_scale == pytest.approx(t / eps)
    assert (release.n, release.public_size, release.neighbours) == (None, m, "add-remove")
    (entry,) = acct.ledger  # the same noise over the replace-one sensitivity L/(mΛ) of the same minimiser
    ratio = min(gradient_sensitivity(BASIS), 2 * G) / G
    assert entry.neighbours == "add-remove as replace-one" and entry.epsilon == pytest.approx(ratio * eps)
    assert 1 < ratio < 2 and [e.kind for e in entry.noise] == ["l2-laplace"]
    assert "n=" not in entry.label and f"m={m}" in entry.label
    with pytest.raises(ValueError, match="public_size"):  # the record's own check
        dataclasses.replace(release, public_size=None)
    with pytest.raises(ValueError, match="'n'"):
        dataclasses.replace(release, n=data.n)


def test_data_of_no_record_are_released_under_add_remove():
    acct = PrivacyAccountant(epsilon=2.0)
    release = output_perturbation(
        np.zeros((0, D)), np.zeros(0), np.zeros(0, int), epsilon=1.0, regularization=0.1, q=Q, e=E,
        accountant=acct, rng=3, relation="add-remove", public_size=100,
    )  # fmt: skip
    t = G / (100 * 0.1)
    np.testing.assert_allclose(release.f, l2_gamma_vector(E + D, t, as_noise_source(3)))
    assert release.n is None and acct.spent[0] == pytest.approx(min(gradient_sensitivity(BASIS), 2 * G) / G)
    with pytest.raises(ValueError, match="at least one row"):  # n is public under replace-one: refused, free
        output_perturbation(
            np.zeros((0, D)), np.zeros(0), np.zeros(0, int), epsilon=1.0, regularization=0.1, q=Q, e=E,
            accountant=acct,
        )  # fmt: skip
    assert len(acct.ledger) == 1


@pytest.mark.parametrize(
    ("relation", "public_size"),
    [("add-remove", None), ("replace-one", 100)]
    + [("add-remove", v) for v in (0, -1, 1.5, True, "10", 10.0, 10**11, 2**63, np.nan)],
)
def test_public_size_is_refused_naming_it_and_spends_nothing(records, relation, public_size):
    X, time, event, _ = records
    acct = PrivacyAccountant(epsilon=10.0)
    with pytest.raises(ValueError, match="public_size"):
        output_perturbation(
            X, time, event, epsilon=1.0, regularization=0.1, q=Q, e=E, accountant=acct, rng=0,
            relation=relation, public_size=public_size,
        )  # fmt: skip
    assert not acct.ledger


def _log_det_curvature(records, f, m, lam):
    """log det of the Jacobian of f ↦ b: Σ∇²ℓ + mλI over the records."""
    data = _data(records)
    _, _, hess = loss_and_grad(f, data, "logit", hessian=True)
    return np.linalg.slogdet(data.n * hess + m * lam * np.eye(data.dim))[1]


def test_the_jacobian_share_at_m_bounds_an_added_records_determinant_ratio():
    rng = np.random.default_rng(2)
    m, lam = 3, 0.01
    bound = jacobian_epsilon(BASIS, m, lam)
    worst = 0.0
    for n in (1, 3, 6):
        base = _random_records(rng, n)
        for record in _extreme_records(rng)[::2]:
            beta = rng.standard_normal(D)
            points = [*(rng.standard_normal((4, E + D)) * 3.0), np.r_[-record[0] @ beta, 0.0, 0.0, beta]]
            for f in points:  # the last: z = 0 in every interval, the added record's largest curvature
                ratio = _log_det_curvature([*base, record], f, m, lam) - _log_det_curvature(base, f, m, lam)
                assert ratio >= -1e-9  # adding a record's Hessian only grows the determinant
                worst = max(worst, ratio)
    assert worst <= bound
    assert worst > 0.2 * bound  # the base records' curvature adds to mλ: reached in part


def _objective_log_density(records, f, m, ridge, eps_noise):
    """log of Obj-Pert's output density at f, up to a constant: −ε′‖b(f)‖/G + log det ∂b/∂f, with
    b(f) = −(Σ∇ℓ + m·ridge·f) from the optimality condition."""
    data = _data(records)
    _, grad, hess = loss_and_grad(f, data, "logit", hessian=True)
    b = -(data.n * grad + m * ridge * f)
    return -eps_noise * np.linalg.norm(b) / G + np.linalg.slogdet(data.n * hess + m * ridge * np.eye(data.dim))[1]


def test_the_objective_perturbations_replace_one_epsilon_bounds_a_replaced_records_density_ratio():
    # The ledger counts an add/remove release as (ε′·L/G + ε − ε′)-DP under replace-one: the
    # log density of one output f moves by at most that when one record is replaced by another.
    rng = np.random.default_rng(5)
    m, lam, eps = 30, 0.05, 1.0
    extra, eps_noise = objective_regularization(BASIS, m, eps, lam)
    bound = eps_noise * gradient_sensitivity(BASIS) / G + eps - eps_noise
    worst = 0.0
    for _ in range(20):
        base = _random_records(rng, 25)
        for f in rng.standard_normal((5, E + D)) * rng.choice([0.3, 3.0]):
            here = _objective_log_density(base, f, m, lam + extra, eps_noise)
            for other in _extreme_records(rng)[::3] + _random_records(rng, 5):
                replaced = [other, *base[1:]]
                change = abs(_objective_log_density(replaced, f, m, lam + extra, eps_noise) - here)
                worst = max(worst, change)
    assert worst <= bound
    assert worst > 0.3 * bound


def test_objective_perturbation_under_add_remove(records):
    X, time, event, data = records
    eps, lam, m = 0.8, 0.5, 250
    acct = PrivacyAccountant(epsilon=4.0)
    release = objective_perturbation(
        X, time, event, epsilon=eps, regularization=lam, q=Q, e=E, accountant=acct, rng=9,
        relation="add-remove", public_size=m,
    )  # fmt: skip
    extra, eps_noise = objective_regularization(BASIS, m, eps, lam)
    assert (release.extra_regularization, release.noise_epsilon) == (extra, eps_noise)
    assert (release.n, release.public_size, release.neighbours) == (None, m, "add-remove")
    # optimality: (1/m)(Σ∇ℓ + b) + (Λ + Δ)f = 0  ⇒  b = −(n·∇ mean loss + m(Λ + Δ)f)
    b = -(data.n * loss_and_grad(release.f, data)[1] + m * (lam + extra) * release.f)
    np.testing.assert_allclose(b, l2_gamma_vector(E + D, G / eps_noise, as_noise_source(9)), atol=1e-6)
    assert release.sensitivity == pytest.approx(G) and release.noise_scale == pytest.approx(G / eps_noise)
    (entry,) = acct.ledger  # one pure event: ε′·L/G for the noise, ε − ε′ for the Jacobian
    replace_one = eps_noise * gradient_sensitivity(BASIS) / G + eps - eps_noise
    assert entry.neighbours == "add-remove as replace-one" and entry.epsilon == pytest.approx(replace_one)
    assert eps < entry.epsilon < 2 * eps and [e.kind for e in entry.noise] == ["pure"]
    empty = objective_perturbation(
        np.zeros((0, D)), np.zeros(0), np.zeros(0, int), epsilon=eps, regularization=lam, q=Q, e=E, rng=9,
        relation="add-remove", public_size=m,
    )  # fmt: skip
    noise = l2_gamma_vector(E + D, G / eps_noise, as_noise_source(9))
    np.testing.assert_allclose(empty.f, -noise / (m * (lam + extra)))
    with pytest.raises(ValueError, match="public_size"):
        dataclasses.replace(release, public_size=None)
