"""LSP, TLL and the baselines of paper 003 (SPEC §2): ladder constraint, noise, accounting."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from weibull_ladders import (
    FLOOR,
    GAMMA,
    NEW_TIMES,
    OMEGA,
    TOL,
    check_a_drawn_data_set,
    check_a_large_data_set,
    data_sets,
)

from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.noise import as_noise_source
from pm_private.survival.weibull.fit import mle_rows
from pm_private.survival.weibull.ladder import _draw_lsp, _event_mean_bounds, _first_crossing, _tll
from pm_private.survival.weibull.mechanisms import (
    SAMPLE_AGGREGATE,
    lsp_ladder,
    weibull_laplace,
    weibull_private,
    weibull_sample_aggregate,
)
from pm_private.survival.weibull.simulate import simulate_weibull


def _neighbour(t, d, kind, i, new_t, new_d):
    """Replace one record: the longest / shortest time, a censoring flip, or record i."""
    t, d = t.copy(), d.copy()
    j = {"longest": np.argmax(t), "shortest": np.argmin(t)}.get(kind, i % t.size)
    if kind == "flip":
        d[j] = 1 - d[j]
    else:
        t[j], d[j] = new_t, new_d
    return t, d


DATA_SETS = data_sets(4, 60)
REPLACEMENTS = st.tuples(
    st.sampled_from(["longest", "shortest", "flip", "random"]), st.integers(0, 10**6), NEW_TIMES, st.integers(0, 1)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DATA_SETS, REPLACEMENTS)
def test_ladder_constraint_on_random_and_adversarial_neighbours(data, change):
    check_a_drawn_data_set(data, lambda t, d: _neighbour(t, d, *change))


@pytest.mark.parametrize("kind", ["longest", "shortest", "flip", "random"])
def test_ladder_constraint_on_a_large_data_set(kind):
    check_a_large_data_set(lambda t, d, new_t, new_d: _neighbour(t, d, kind, 17, new_t, new_d))


def test_rungs_contain_the_mle_of_data_sets_at_distance_k():
    rng = np.random.default_rng(4)
    for _ in range(40):
        n = int(rng.integers(10, 80))
        t = np.exp(-rng.uniform(0, OMEGA, n) * rng.uniform(0.05, 1))
        d = (rng.uniform(size=n) < 0.6).astype(int)
        lower, upper = lsp_ladder(t, d, K=4)
        for k in range(1, 5):
            t2, d2 = t.copy(), d.copy()
            rows = rng.choice(n, size=k, replace=False)
            t2[rows] = rng.choice([FLOOR, 1.0], size=k) if k % 2 else np.exp(-rng.uniform(0, OMEGA, k))
            d2[rows] = rng.integers(0, 2, size=k)
            p = min(mle_rows(np.log(t2), d2)[0][0], GAMMA)
            assert lower[k] - TOL <= p <= upper[k] + TOL


def _paper_lower_rungs(t, d, K):
    """l⁽ᵏ⁾ from the transcribed f_U^k and g_L^k (first crossing; g_L = 1/p − ω when Σd ≤ k)."""
    x, k = np.log(t), np.arange(K + 1)
    events, total = d.sum(), (d * x).sum()

    def gap(p):
        w = t[None, :] ** p[:, None]
        f_upper = ((w * x).sum(1) + k / (math.e * p)) / (w.sum(1) + k)
        with np.errstate(divide="ignore", invalid="ignore"):
            g_lower = np.where(events > k, 1 / p + (total - k * OMEGA) / (events - k), 1 / p - OMEGA)
        return f_upper - g_lower

    return _first_crossing(gap, K + 1, GAMMA)


def test_transcribed_lower_bounds_violate_the_ladder_constraint():
    """Why the module changes the paper's bounds: with f_U^k as printed, l⁽ᵏ⁺¹⁾(D′) > l⁽ᵏ⁾(D)."""
    rng = np.random.default_rng(1)
    worst = 0.0
    for trial in range(200):
        n = int(rng.integers(8, 40))
        t = np.exp(-rng.uniform(0, OMEGA, n) * rng.uniform(0.02, 1))
        d = (rng.uniform(size=n) < rng.uniform(0.1, 1)).astype(int)
        t2, d2 = _neighbour(t, d, ["longest", "shortest", "flip"][trial % 3], 0, 1.0, 1)
        K = 8
        la, lb = _paper_lower_rungs(t, d, K), _paper_lower_rungs(t2, d2, K)
        worst = max(worst, (lb[1:] - la[:-1]).max(), (la[1:] - lb[:-1]).max())
    assert worst > 0.05


def test_event_mean_bounds_are_exact_on_a_small_case():
    """Brute force over every data set at distance 1 with times on a grid that holds the extremes."""
    t = np.array([FLOOR, 0.2, 0.5, 0.9, 1.0])
    d = np.array([1, 0, 1, 1, 0])
    low, high = _event_mean_bounds(np.log(t), d, 1, OMEGA)
    means = []
    for i in range(t.size):
        for new_t in (FLOOR, 0.3, 1.0):
            for new_d in (0, 1):
                t2, d2 = t.copy(), d.copy()
                t2[i], d2[i] = new_t, new_d
                means.append((d2 * np.log(t2)).sum() / d2.sum())
    assert low[1] == pytest.approx(min(means), abs=1e-12)
    assert high[1] == pytest.approx(max(means), abs=1e-12)
    assert low[0] == high[0] == pytest.approx((d * np.log(t)).sum() / d.sum())


def test_ladder_degrades_with_few_events():
    t = np.linspace(0.1, 1.0, 50)
    d = np.zeros(50, int)
    lower, upper = lsp_ladder(t, d, K=5)
    assert lower[0] == upper[0] == GAMMA and (upper == GAMMA).all()
    d[[3, 20]] = 1
    lower, upper = lsp_ladder(t, d, K=5)
    assert (upper[2:] == GAMMA).all() and upper[1] < GAMMA and lower[-1] == 0.0


def test_ladder_input_checks():
    with pytest.raises(ValueError, match="K must"):
        lsp_ladder([0.5, 1.0], [1, 0], K=0)
    with pytest.raises(ValueError, match="e\\^−ω"):
        lsp_ladder([1e-9, 1.0], [1, 0], K=3)


@pytest.fixture(scope="module")
def ladder():
    sim = simulate_weibull(300, shape=1.2, scale=0.4, censor=(0.1, 1.0), horizon=1.0, rng=9)
    return lsp_ladder(np.maximum(sim.time, FLOOR), sim.event, K=20)


def test_exponential_mechanism_level_frequencies_match_the_weights(ladder):
    lower, upper = ladder
    eps_p = 0.8
    levels, p = _draw_lsp(lower, upper, eps_p, as_noise_source(3), size=100_000)
    length = (lower[:-1] - lower[1:]) + (upper[1:] - upper[:-1])
    weights = length * np.exp(-np.arange(1, length.size + 1) * eps_p / 2)
    expected = 100_000 * weights / weights.sum()
    observed = np.bincount(levels - 1, minlength=length.size)
    keep = expected >= 5  # pool the sparse tail levels into one cell
    observed = np.r_[observed[keep], observed[~keep].sum()]
    expected = np.r_[expected[keep], expected[~keep].sum()]
    chi2 = stats.chisquare(observed[expected > 0], expected[expected > 0])
    assert chi2.pvalue > 1e-3
    inside = np.array(
        [
            (lower[i] <= x < lower[i - 1]) or (upper[i - 1] < x <= upper[i])
            for i, x in zip(levels[:2000], p[:2000], strict=True)
        ]
    )
    assert inside.all()


def test_draw_is_uniform_within_the_level(ladder):
    lower, upper = ladder
    levels, p = _draw_lsp(lower, upper, 0.05, as_noise_source(4), size=50_000)
    i = np.bincount(levels).argmax()
    left, right = lower[i - 1] - lower[i], upper[i] - upper[i - 1]
    x = p[levels == i]
    position = np.where(x < lower[i - 1], x - lower[i], left + x - upper[i - 1]) / (left + right)
    assert stats.kstest(position, "uniform").pvalue > 1e-3


def test_tll_noise_is_laplace_4_over_epsilon():
    t = np.linspace(0.05, 1.0, 200)
    d = (np.arange(200) % 3 == 0).astype(int)
    epsilon = 0.5
    source = as_noise_source(6)
    draws = [_tll(t, d, 1.3, epsilon / 2, omega=OMEGA, gamma=GAMMA, source=source, n=t.size) for _ in range(3000)]
    events = np.array([r[1].values[0] for r in draws]) - d.sum()
    powers = np.array([r[2].values[0] for r in draws]) - np.sum(t**1.3)
    assert draws[0][1].scale == draws[0][2].scale == pytest.approx(4 / epsilon)
    for noise in (events, powers):
        assert stats.kstest(noise, "laplace", args=(0, 4 / epsilon)).pvalue > 1e-3
    lam = np.array([r[0] for r in draws])
    assert ((lam > 0) & (lam <= GAMMA)).all()


def test_tll_post_processing_handles_non_positive_noisy_sums():
    t, d = np.full(3, 0.5), np.array([1, 0, 0])
    lams = [
        _tll(t, d, 0.01, 1e-3, omega=OMEGA, gamma=GAMMA, source=as_noise_source(s), n=t.size)[0] for s in range(200)
    ]
    assert np.isfinite(lams).all() and (np.array(lams) <= GAMMA).all()


@pytest.fixture(scope="module")
def fl_like():
    sim = simulate_weibull(3000, shape=1.1, scale=2000.0, censor=(2000.0, 5479.0), horizon=5479.0, rng=1)
    return sim.time, sim.event, sim.horizon


def test_release_metadata_and_privacy_flag(fl_like):
    t, d, horizon = fl_like
    seeded = weibull_private(t, d, epsilon=1.0, horizon=horizon, K=50, rng=0)
    assert not seeded.private and seeded.neighbours == "replace-one"
    assert (seeded.epsilon, seeded.epsilon_shape) == (1.0, 0.5) and seeded.epsilon_scale == pytest.approx(0.5)
    assert seeded.noise_scales == (4.0, 4.0) and (seeded.horizon, seeded.omega, seeded.gamma, seeded.n) == (
        horizon,
        6.0,
        10.0,
        3000,
    )
    assert 0 < seeded.shape <= GAMMA and 0 < seeded.scale <= GAMMA * horizon
    secure = weibull_private(t, d, epsilon=1.0, horizon=horizon, K=50)
    assert secure.private and secure.epsilon_scale == pytest.approx(0.5, rel=1e-9)
    assert all(np.ndim(v) == 0 or len(v) <= 2 for v in vars(secure).values() if not isinstance(v, str))


@pytest.mark.parametrize("mechanism", [weibull_private, weibull_laplace, weibull_sample_aggregate])
def test_accountant_is_charged_once_and_refusal_spends_nothing(mechanism, fl_like):
    t, d, horizon = fl_like
    accountant = PrivacyAccountant(1.0)
    mechanism(t, d, epsilon=0.6, horizon=horizon, accountant=accountant, rng=1)
    assert accountant.spent == (0.6, 0.0) and len(accountant.ledger) == 1
    assert accountant.ledger[0].neighbours == "replace-one"
    with pytest.raises(BudgetExceededError):
        mechanism(t, d, epsilon=0.6, horizon=horizon, accountant=accountant, rng=1)
    assert len(accountant.ledger) == 1


@pytest.mark.parametrize("mechanism", [weibull_private, weibull_laplace, weibull_sample_aggregate])
@pytest.mark.parametrize(
    "time, event, kwargs, match",
    [
        ([1.0, np.nan], [1, 0], {}, "NaN"),
        ([1.0, -1.0], [1, 0], {}, "≥ 0"),
        ([1.0, 2.0], [1, 3], {}, "0 or 1"),
        ([1.0, 2.0], [1, 0], {"epsilon": 0.0}, "epsilon"),
        ([1.0, 2.0], [1, 0], {"epsilon": -1.0}, "epsilon"),
        ([1.0, 2.0], [1, 0], {"gamma": 0.0}, "gamma"),
    ],
)
def test_bad_input_raises_and_spends_nothing(mechanism, time, event, kwargs, match):
    accountant = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match=match):
        mechanism(time, event, **({"epsilon": 1.0, "horizon": 10.0} | kwargs), accountant=accountant)
    assert accountant.ledger == ()


@pytest.mark.parametrize("mechanism", [weibull_private, weibull_laplace, weibull_sample_aggregate])
def test_times_beyond_the_horizon_are_censored_there_not_refused(mechanism):
    """A refusal would tell whether any private time exceeds the horizon the caller chose (a binary
    search on it reads the private maximum); administrative censoring at the horizon does not."""
    rng = np.random.default_rng(4)
    t, d = rng.uniform(0.1, 12.0, 60), rng.integers(0, 2, 60)
    late = t > 10.0
    kwargs = dict(epsilon=5.0, horizon=10.0, rng=3) | (
        {"subset_size": 10} if mechanism is weibull_sample_aggregate else {}
    )
    censored = mechanism(np.where(late, 10.0, t), np.where(late, 0, d), **kwargs)
    assert late.any() and mechanism(t, d, **kwargs) == censored


@pytest.mark.parametrize("K", [0, -3, 2.5, True])
def test_bad_rung_count_raises(K):
    with pytest.raises(ValueError, match="K must"):
        weibull_private([1.0, 2.0], [1, 0], epsilon=1.0, horizon=10.0, K=K)


def test_laplace_baseline_noise_is_laplace_2gamma_over_epsilon():
    t, d = np.linspace(0.1, 1.0, 100), (np.arange(100) % 2).astype(int)
    p_mle = mle_rows(np.log(t), d)[0][0]
    source = as_noise_source(8)
    shapes = np.array([weibull_laplace(t, d, epsilon=200.0, horizon=1.0, rng=source).shape for _ in range(2000)])
    assert stats.kstest(shapes - p_mle, "laplace", args=(0, 2 * GAMMA / 200.0)).pvalue > 1e-3


def test_sample_and_aggregate_uses_subsets_of_about_the_requested_size(fl_like):
    t, d, horizon = fl_like
    release = weibull_sample_aggregate(t, d, epsilon=1.0, horizon=horizon, rng=2)
    assert release.mechanism == SAMPLE_AGGREGATE and release.subsets == 6
    assert release.noise_scales == (pytest.approx(2 * GAMMA / 6),) * 2


def test_lsp_tll_beats_the_baselines(fl_like):
    """At ε = 8 neither baseline is swamped by noise and clipped to [0, γ]; LSP still wins."""
    t, d, horizon = fl_like
    scaled = np.maximum(t / horizon, FLOOR)
    p_mle = mle_rows(np.log(scaled), d)[0][0]
    source = as_noise_source(12)

    def mdae(mechanism, **kwargs):
        draws = [mechanism(t, d, epsilon=8.0, horizon=horizon, rng=source, **kwargs).shape for _ in range(60)]
        return np.median(np.abs(np.array(draws) - p_mle))

    assert mdae(weibull_private, K=100) < mdae(weibull_sample_aggregate) < mdae(weibull_laplace)


def test_the_laplace_baseline_under_add_remove_keeps_n_private_and_is_charged_its_own_epsilon():
    """The clipped MLE lies in [0, γ] for any data set, of no record included, so γ is its
    sensitivity under both relations: the add/remove release has the replace-one one's noise, n is
    not recorded, the ledger charges ε itself (not the 2ε of group privacy), and data of no record
    are released under add/remove and refused before spending under replace-one."""
    data = simulate_weibull(300, shape=1.5, scale=100.0, horizon=250.0, rng=3)
    both = {}
    for relation in ("replace-one", "add-remove"):
        accountant = PrivacyAccountant(5.0)
        both[relation] = weibull_laplace(
            data.time, data.event, epsilon=2.0, horizon=250.0, accountant=accountant, rng=4, relation=relation
        )
        (entry,) = accountant.ledger
        assert entry.epsilon == 2.0 and accountant.tight_epsilon() == pytest.approx(2.0)
        assert entry.neighbours == ("replace-one" if relation == "replace-one" else "add-remove as replace-one")
        assert ("n=300" in entry.label) == (relation == "replace-one")
    removed, replaced = both["add-remove"], both["replace-one"]
    assert removed.n is None and removed.neighbours == "add-remove" and replaced.n == 300
    assert removed.noise_scales == replaced.noise_scales == (10.0, 10.0)  # Laplace(2γ/ε)
    assert (removed.shape, removed.scale) == (replaced.shape, replaced.scale)  # the same seeded noise
    accountant = PrivacyAccountant(5.0)
    nobody = weibull_laplace([], [], epsilon=2.0, horizon=250.0, accountant=accountant, rng=4, relation="add-remove")
    assert 0.0 <= nobody.shape <= nobody.gamma and len(accountant.ledger) == 1
    with pytest.raises(ValueError, match="time"):
        weibull_laplace([], [], epsilon=2.0, horizon=250.0, accountant=accountant, rng=4)
    assert len(accountant.ledger) == 1


def test_a_weibull_record_under_add_remove_keeps_n_private():
    data = simulate_weibull(200, shape=1.5, scale=100.0, horizon=250.0, rng=5)
    for release in (
        weibull_private(data.time, data.event, epsilon=2.0, horizon=250.0, rng=0),
        weibull_sample_aggregate(data.time, data.event, epsilon=2.0, horizon=250.0, subset_size=50, rng=0),
        weibull_laplace(data.time, data.event, epsilon=2.0, horizon=250.0, rng=0),
    ):
        assert dataclasses.replace(release, neighbours="add-remove", n=None).n is None
        with pytest.raises(ValueError, match="'n'"):
            dataclasses.replace(release, neighbours="add-remove")


def test_sample_and_aggregate_under_add_remove_deals_records_to_public_subsets():
    """Under add/remove the public ``subsets`` m sizes the subsets and each record is dealt by its
    own draw: the noise is Laplace(2γ/(mε)) as under replace-one, n is not recorded, the ledger
    charges ε itself, data of no record are released (every subset empty: γ), and a call without
    ``subsets`` is refused before anything is spent."""
    data = simulate_weibull(300, shape=1.5, scale=100.0, horizon=250.0, rng=3)
    accountant = PrivacyAccountant(5.0)
    release = weibull_sample_aggregate(
        data.time, data.event, epsilon=2.0, horizon=250.0, subsets=6, accountant=accountant, rng=4,
        relation="add-remove",
    )  # fmt: skip
    (entry,) = accountant.ledger
    assert release.n is None and release.neighbours == "add-remove" and release.subsets == 6
    assert release.noise_scales == pytest.approx((20.0 / 12.0,) * 2)  # 2γ/(mε)
    assert entry.neighbours == "add-remove as replace-one" and "n=" not in entry.label
    assert accountant.tight_epsilon() == pytest.approx(2.0)
    with pytest.raises(ValueError, match="subsets"):
        weibull_sample_aggregate(data.time, data.event, epsilon=2.0, horizon=250.0, accountant=accountant,
                                 relation="add-remove")  # fmt: skip
    with pytest.raises(ValueError, match="subsets"):
        weibull_sample_aggregate(data.time, data.event, epsilon=2.0, horizon=250.0, subsets=0, accountant=accountant)
    with pytest.raises(ValueError, match="not both"):
        weibull_sample_aggregate(data.time, data.event, epsilon=2.0, horizon=250.0, subsets=6, subset_size=50)
    assert len(accountant.ledger) == 1
    nobody = weibull_sample_aggregate(
        [], [], epsilon=2.0, horizon=250.0, subsets=3, accountant=accountant, rng=4, relation="add-remove"
    )
    assert 0.0 <= nobody.shape <= nobody.gamma and len(accountant.ledger) == 2
    same = weibull_sample_aggregate(data.time, data.event, epsilon=2.0, horizon=250.0, subsets=6, rng=4)
    assert same.n == 300 and same.subsets == 6 and same.noise_scales == release.noise_scales


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10", np.float64(10.0), 301, 10**12])
def test_sample_and_aggregate_refuses_a_bad_subset_size_before_spending(bad):
    """The mechanism card sweeps ``subsets``; ``subset_size``, the replace-one default's own
    argument (an integer in [1, n]), is swept here."""
    data = simulate_weibull(300, shape=1.5, scale=100.0, horizon=250.0, rng=3)
    accountant = PrivacyAccountant(5.0)
    with pytest.raises(ValueError, match="subset_size"):
        weibull_sample_aggregate(
            data.time, data.event, epsilon=2.0, horizon=250.0, subset_size=bad, accountant=accountant, rng=0
        )
    assert not accountant.ledger


def test_dealt_subset_means_move_by_at_most_gamma_over_m_when_a_record_is_added():
    """The sensitivity γ/m of the subset means under add/remove, on random and extreme added
    records: with the shared records' draws coupled (a seeded source draws them first), only the
    added record's subset changes."""
    from pm_private.survival.weibull.baselines import _dealt_subset_mles

    rng = np.random.default_rng(11)
    gamma, m, worst = 10.0, 5, 0.0
    for trial in range(300):
        n = int(rng.integers(0, 40))
        log_t = np.log(rng.uniform(1e-3, 1.0, n))
        d = (rng.random(n) < 0.7).astype(float)
        extra_t = np.log([rng.uniform(1e-3, 1.0), 1e-3, 1.0][trial % 3])
        extra_d = float(trial % 2)
        base = _dealt_subset_mles(log_t, d, m, gamma, as_noise_source(trial))
        added = _dealt_subset_mles(np.append(log_t, extra_t), np.append(d, extra_d), m, gamma, as_noise_source(trial))
        worst = max(worst, *np.abs(added - base))
    assert worst <= gamma / m + 1e-12
    assert worst > 0.5 * gamma / m  # a neighbour moves a mean by a large share of the bound
    # m is public and unbounded under add/remove: only the non-empty subsets are fitted
    means = _dealt_subset_mles(np.log([0.5, 0.7]), np.array([1.0, 0.0]), 10**12, gamma, as_noise_source(0))
    assert np.allclose(means, gamma)
