"""Only the release leaves a mechanism: every result type declares each field's kind, non-output
fields are identical on neighbouring data sets, and the ledger names what the result names."""

import dataclasses
import pickle

import numpy as np
import pytest

import pm_private
from pm_private.linear.adaptive_ssp import adassp
from pm_private.linear.release import release_linear_stats, release_linear_stats_laplace
from pm_private.linear.stats import LinearStats
from pm_private.logistic.data_perturbation import data_perturbation_sgd
from pm_private.logistic.elastic_net import DPElasticNetLogisticRegression
from pm_private.logistic.penalty_selection import select_penalty
from pm_private.logistic.release import release_logistic_stats
from pm_private.poisson.release import release_poisson_stats
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import gaussian_mechanism, laplace_mechanism
from pm_private.privacy.release import CONSTANT, OUTPUT, PUBLIC, ConvergenceError, Release, field_kinds, release_type
from pm_private.release_file import all_release_types, release_from_dict, release_to_dict
from pm_private.survival.discrete.mechanisms import objective_perturbation, output_perturbation
from pm_private.survival.weibull.mechanisms import (
    WeibullLSP,
    weibull_laplace,
    weibull_private,
    weibull_sample_aggregate,
)

RELEASE_TYPES = set(all_release_types().values())  # the registry: every mechanism, found by importing the package


# ---------------------------------------------------------------------------------------------
# Neighbouring data sets: one record replaced by a worst case at the corner of the public box.
# ---------------------------------------------------------------------------------------------

_rng = np.random.default_rng(0)
_X = _rng.uniform(-1, 1, (60, 3))
_Y = _X @ [0.5, -1.0, 0.3] + 0.1 * _rng.standard_normal(60)
_LABELS = (_X[:, 0] + 0.3 * _rng.standard_normal(60) > 0).astype(int)
_X2, _Y2, _LABELS2 = _X.copy(), _Y.copy(), _LABELS.copy()
# y = 2 lies beyond the response bounds of 1 used below, so the neighbour also moves the clipping counts.
_X2[0], _Y2[0], _LABELS2[0] = [1.0, 1.0, 1.0], 2.0, 1 - _LABELS[0]
# a count beyond the count bound of 3 used below
_COUNTS = np.random.default_rng(7).poisson(1.5, 60)
_COUNTS2 = _COUNTS.copy()
_COUNTS2[0] = 9

_UNIT = _X / np.sqrt(3)  # rows in the unit ball (discrete-time mechanisms)
_UNIT2 = _X2 / np.sqrt(3)
_TIME = _rng.uniform(0.05, 1.0, 60)
_EVENT = (_rng.uniform(size=60) < 0.7).astype(int)
_TIME2, _EVENT2 = _TIME.copy(), _EVENT.copy()
_TIME2[0], _EVENT2[0] = 1.0, 1 - _EVENT[0]


def _elastic_net(X, y, accountant):
    model = DPElasticNetLogisticRegression(epsilon=1.0, lam=0.5, norm_bound=1.0, accountant=accountant, rng=3)
    return model.fit(X, y).privacy_


# name -> (release on neighbour 0 or 1 with an accountant, result used for the ledger check)
MECHANISMS = {
    "linear_stats_laplace": lambda k, a: release_linear_stats_laplace(
        (_X, _X2)[k], (_Y, _Y2)[k], epsilon=1.0, x_bound=1.0, y_bound=1.0, accountant=a, rng=1
    ),
    "linear_stats_gaussian": lambda k, a: release_linear_stats(
        (_X, _X2)[k], (_Y, _Y2)[k], epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, accountant=a, rng=1
    ),
    "logistic_stats": lambda k, a: release_logistic_stats(
        (_X, _X2)[k], (_LABELS, _LABELS2)[k], epsilon=1.0, delta=1e-6, x_bound=1.0, accountant=a, rng=1
    ),
    "poisson_stats": lambda k, a: release_poisson_stats(
        (_X, _X2)[k], (_COUNTS, _COUNTS2)[k], epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=3, accountant=a, rng=1
    ),
    "adassp": lambda k, a: adassp(
        (_X, _X2)[k], (_Y, _Y2)[k], epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, accountant=a, rng=1
    ),
    "elastic_net": lambda k, a: _elastic_net((_X, _X2)[k], (_LABELS, _LABELS2)[k], a),
    "penalty_selection": lambda k, a: select_penalty(
        (_X, _X2)[k],
        (_LABELS, _LABELS2)[k],
        lams=[0.3, 1.0],
        alpha=0.5,
        epsilon=2.0,
        delta=1e-6,
        norm_bound=1.0,
        accountant=a,
        rng=2,
    ),
    "data_perturbation": lambda k, a: data_perturbation_sgd(
        (_X, _X2)[k],
        (_LABELS, _LABELS2)[k],
        epsilon=1.0,
        delta=1e-5,
        norm_bound=1.0,
        epochs=1,
        batch_size=20,
        accountant=a,
        rng=4,
    ),
    "weibull_private": lambda k, a: weibull_private(
        (_TIME, _TIME2)[k], (_EVENT, _EVENT2)[k], epsilon=1.0, horizon=1.0, K=10, accountant=a, rng=5
    ),
    "weibull_laplace": lambda k, a: weibull_laplace(
        (_TIME, _TIME2)[k], (_EVENT, _EVENT2)[k], epsilon=1.0, horizon=1.0, accountant=a, rng=5
    ),
    "weibull_sample_aggregate": lambda k, a: weibull_sample_aggregate(
        (_TIME, _TIME2)[k], (_EVENT, _EVENT2)[k], epsilon=1.0, horizon=1.0, subset_size=20, accountant=a, rng=5
    ),
    "discrete_output": lambda k, a: output_perturbation(
        (_UNIT, _UNIT2)[k],
        (_TIME, _TIME2)[k],
        (_EVENT, _EVENT2)[k],
        epsilon=1.0,
        regularization=0.1,
        q=6,
        e=3,
        accountant=a,
        rng=6,
    ),
    "discrete_objective": lambda k, a: objective_perturbation(
        (_UNIT, _UNIT2)[k],
        (_TIME, _TIME2)[k],
        (_EVENT, _EVENT2)[k],
        epsilon=1.0,
        regularization=0.1,
        q=6,
        e=3,
        accountant=a,
        rng=6,
    ),
}


def _releases(result):
    """The Release objects inside a mechanism's result (LinearStats carries its release records)."""
    return list(result.releases) if isinstance(result, LinearStats) else [result]


@pytest.fixture(scope="module")
def neighbour_releases():
    out = {}
    for name, run in MECHANISMS.items():
        accountant = PrivacyAccountant(epsilon=10.0, delta=1e-3)
        out[name] = (run(0, accountant), run(1, None), accountant)
    return out


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b)
    return a == b


# ---------------------------------------------------------------------------------------------


def test_every_release_type_declares_the_kind_of_every_field():
    assert len(RELEASE_TYPES) >= 8
    for cls in RELEASE_TYPES:
        params = cls.__dataclass_params__
        assert params.frozen, cls
        kinds = field_kinds(cls)
        undeclared = [name for name, kind in kinds.items() if kind not in (OUTPUT, PUBLIC, CONSTANT)]
        assert not undeclared, f"{cls.__name__} fields without a declared kind: {undeclared}"
        for name in ("epsilon", "delta", "neighbours", "mechanism", "private"):
            assert name in kinds, (cls, name)
        assert kinds["mechanism"] == CONSTANT and kinds["neighbours"] == CONSTANT
        assert cls.__name__.endswith("Release"), cls


def test_every_release_type_has_a_stable_kind_in_the_registry():
    kinds = {cls.kind for cls in RELEASE_TYPES}
    assert len(kinds) == len(RELEASE_TYPES) >= 10
    assert all(release_type(cls.kind) is cls for cls in RELEASE_TYPES)
    with pytest.raises(TypeError, match="must declare its kind"):

        class Unnamed(Release):  # a mechanism that forgot its kind is refused when it is defined
            pass

    with pytest.raises(TypeError, match="already"):

        class Twin(Release, kind="weibull"):
            pass


def _primitive_releases():
    return [
        laplace_mechanism([0.0, 1.0], sensitivity=1.0, epsilon=1.0, source=as_noise_source(0)),
        gaussian_mechanism([0.0], sensitivity=1.0, epsilon=1.0, delta=1e-6, source=as_noise_source(0)),
    ]


#: Release types that a release file cannot hold, and why.
NOT_IN_FILES = {"penalty_selection": "it holds the fitted estimator of the selected penalty (a Python object)"}


def test_every_release_kind_round_trips_through_a_release_file(neighbour_releases):
    results = [first for first, _, _ in neighbour_releases.values()] + _primitive_releases()
    seen = set()
    for result in results:
        if result.__class__.__name__ != "LinearStats" and result.kind in NOT_IN_FILES:
            with pytest.raises(TypeError, match="cannot write"):
                release_to_dict(result)
            continue
        back = release_from_dict(release_to_dict(result))
        for a, b in zip(_releases(result), _releases(back), strict=True):
            assert type(a) is type(b)
            for f in dataclasses.fields(a):
                x, y = getattr(a, f.name), getattr(b, f.name)
                same = np.allclose(x, y) if isinstance(x, (np.ndarray, tuple, list)) else x == y
                assert same, (type(a).__name__, f.name)
            seen.add(type(a))
    expected = {cls for cls in RELEASE_TYPES if cls.kind not in NOT_IN_FILES}
    assert seen == expected, f"release types without a file round trip: {expected - seen}"


def test_privacy_page_has_a_row_for_every_release_kind():
    from pathlib import Path

    page = (Path(pm_private.__file__).parents[1] / "docs" / "privacy.md").read_text(encoding="utf-8")
    missing = [cls.kind for cls in RELEASE_TYPES if f"release kind `{cls.kind}`" not in page]
    assert not missing, f"release kinds without a row on the privacy page: {missing}"


def test_suff_stats_container_declares_its_fields_too():
    assert set(field_kinds(LinearStats).values()) <= {OUTPUT, PUBLIC}


def test_every_release_type_is_exercised_on_neighbours(neighbour_releases):
    seen = {type(r) for first, _, _ in neighbour_releases.values() for r in _releases(first)}
    seen.add(type(laplace_mechanism([0.0], sensitivity=1.0, epsilon=1.0, source=as_noise_source(0))))
    seen.add(type(gaussian_mechanism([0.0], sensitivity=1.0, epsilon=1.0, delta=1e-6, source=as_noise_source(0))))
    assert RELEASE_TYPES <= seen, f"release types without a neighbour test: {RELEASE_TYPES - seen}"


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_non_output_fields_are_identical_on_neighbouring_data(neighbour_releases, name):
    first, second, _ = neighbour_releases[name]
    if isinstance(first, LinearStats):
        assert first.n == second.n
    for a, b in zip(_releases(first), _releases(second), strict=True):
        differ = [
            f.name
            for f in dataclasses.fields(a)
            if f.metadata["kind"] != OUTPUT and not _same(getattr(a, f.name), getattr(b, f.name))
        ]
        assert not differ, f"{name}: non-output fields differ between neighbours: {differ}"
        outputs = [f.name for f in dataclasses.fields(a) if f.metadata["kind"] == OUTPUT]
        if outputs:  # the test data do move the outputs, so the comparison above is not vacuous
            assert any(not _same(getattr(a, o), getattr(b, o)) for o in outputs), name


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_ledger_entry_names_the_release(neighbour_releases, name):
    first, _, accountant = neighbour_releases[name]
    (entry,) = accountant.ledger
    (release,) = _releases(first)
    assert (entry.mechanism, entry.epsilon, entry.delta, entry.neighbours) == (
        release.mechanism,
        release.epsilon,
        release.delta,
        release.neighbours,
    )
    assert release.private is False  # seeded


def test_fitted_estimator_holds_only_the_release():
    model = DPElasticNetLogisticRegression(epsilon=1.0, lam=0.5, rng=0).fit(_X, _LABELS)
    fitted = {name for name in vars(model) if name.endswith("_")}
    assert fitted == {"coef_", "intercept_", "privacy_", "classes_", "n_features_in_"}
    assert set(vars(model)) - fitted == set(model.get_params())
    np.testing.assert_array_equal(model.privacy_.coef, model.coef_)


def test_non_convergence_spends_the_budget():
    """A data-dependent failure after the noise must not be retriable for free."""
    accountant = PrivacyAccountant(epsilon=1.0)
    model = DPElasticNetLogisticRegression(epsilon=0.4, lam=0.5, max_iter=10, accountant=accountant, rng=0)
    with pytest.raises(ConvergenceError) as info:
        model.fit(_X, _LABELS)
    assert accountant.spent[0] == pytest.approx(0.4)
    assert "residual" not in str(info.value)  # no data-dependent value in the message
    assert not hasattr(model, "coef_")


def test_discrete_time_non_convergence_spends_the_budget(monkeypatch):
    import pm_private.survival.discrete.mechanisms as dpriv

    real = dpriv.fit_discrete_time
    monkeypatch.setattr(dpriv, "fit_discrete_time", lambda *a, **k: real(*a, **k)._replace(converged=False))
    accountant = PrivacyAccountant(epsilon=1.0)
    for mechanism in (output_perturbation, objective_perturbation):
        with pytest.raises(ConvergenceError, match="ε was spent"):
            mechanism(_UNIT, _TIME, _EVENT, epsilon=0.5, regularization=0.1, q=6, e=3, accountant=accountant, rng=1)
    assert accountant.spent[0] == pytest.approx(1.0)


def test_weibull_lsp_builds_once_and_charges_every_draw():
    accountant = PrivacyAccountant(epsilon=1.0)
    lsp = WeibullLSP(_TIME, _EVENT, horizon=1.0, K=10)
    first = lsp.release(epsilon=0.4, accountant=accountant, rng=1)
    assert first == weibull_private(_TIME, _EVENT, epsilon=0.4, horizon=1.0, K=10, rng=1)
    lsp.release(epsilon=0.4, accountant=accountant, rng=2)
    assert [e.mechanism for e in accountant.ledger] == [first.mechanism] * 2
    with pytest.raises(ValueError, match="epsilon"):
        lsp.release(epsilon=-1.0, accountant=accountant)
    with pytest.raises(pm_private.BudgetExceededError):
        lsp.release(epsilon=0.4, accountant=accountant)
    assert accountant.spent[0] == pytest.approx(0.8)
    assert repr(lsp) == "WeibullLSP(n=60, horizon=1, K=10, γ=10, ω=6)"
    with pytest.raises(TypeError, match="private records"):
        pickle.dumps(lsp)
    with pytest.raises(ValueError, match="K must"):
        WeibullLSP(_TIME, _EVENT, horizon=1.0, K=2.0)
