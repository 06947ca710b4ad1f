"""Only the release leaves a mechanism: every result type declares each field's kind, non-output
fields are identical on neighbouring data sets, and the ledger names what the result names."""

import dataclasses
import pickle

import numpy as np
import pytest
from cards import CARDS, DATA, N, release_of

import pm_private
from pm_private.linear.stats import LinearStats
from pm_private.logistic.elastic_net import DPElasticNetLogisticRegression
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.release import CONSTANT, OUTPUT, PUBLIC, ConvergenceError, Release, field_kinds, release_type
from pm_private.release_file import all_release_types, release_from_dict, release_to_dict
from pm_private.survival.discrete.mechanisms import objective_perturbation, output_perturbation
from pm_private.survival.weibull.mechanisms import WeibullLSP, weibull_private

RELEASE_TYPES = set(all_release_types().values())  # the registry: every mechanism, found by importing the package
_X, _LABELS, _TIME, _EVENT = DATA["X"], DATA["labels"], DATA["time"], DATA["event"]  # rows in the unit ball


# ---------------------------------------------------------------------------------------------
# The cards' calls on neighbouring data sets (cards.NEIGHBOUR: one record replaced by a worst
# case at the corner of the public box), and the primitives' releases (no accountant).
# ---------------------------------------------------------------------------------------------

_CHARGED = [card for card in CARDS if card.release_kind and card.takes_accountant]
_SHARED = {card.release_kind for card in _CHARGED if sum(c.release_kind == card.release_kind for c in _CHARGED) > 1}
#: name (the release kind, or the mechanism's where several share a kind) -> its card
MECHANISMS = {card.name if card.release_kind in _SHARED else card.release_kind: card for card in _CHARGED}
PRIMITIVES = [card for card in CARDS if card.release_kind and not card.takes_accountant]


def _releases(result):
    """The Release objects inside a mechanism's result (LinearStats carries its release records)."""
    return list(result.releases) if isinstance(result, LinearStats) else [result]


@pytest.fixture(scope="module")
def neighbour_releases():
    """name -> (the release on neighbour 0 with an accountant, on neighbour 1, the accountant)."""
    out = {}
    for name, card in MECHANISMS.items():
        accountant = PrivacyAccountant(epsilon=1e5, delta=1e-3)  # ε up to 1e4 (the SGD's valid call)
        first = release_of(card.run(accountant, neighbour=0))
        out[name] = (first, release_of(card.run(None, neighbour=1)), accountant)
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
        # a relation of the library (public, with choices), or a primitive's constant sensitivity ball
        assert kinds["mechanism"] == CONSTANT and kinds["neighbours"] in (PUBLIC, CONSTANT)
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
    return [card.run() for card in PRIMITIVES]


#: Release types that a release file cannot hold, and why.
NOT_IN_FILES = {card.release_kind: card.not_in_files for card in CARDS if card.not_in_files}


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
                labels = isinstance(x, tuple) and all(isinstance(v, str) for v in x)  # cell labels, names
                same = np.allclose(x, y) if isinstance(x, (np.ndarray, tuple, list)) and not labels else x == y
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
    seen |= {type(release) for release in _primitive_releases()}
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
            mechanism(_X, _TIME, _EVENT, epsilon=0.5, regularization=0.1, q=6, e=3, accountant=accountant, rng=1)
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
    assert repr(lsp) == f"WeibullLSP(n={N}, horizon=1, K=10, γ=10, ω=6)"
    with pytest.raises(TypeError, match="private records"):
        pickle.dumps(lsp)
    with pytest.raises(ValueError, match="K must"):
        WeibullLSP(_TIME, _EVENT, horizon=1.0, K=2.0)


# ---------------------------------------------------------------------------------------------
# A private release without an accountant warns; reprs say when a release is not private
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fresh_warnings(monkeypatch):
    """No mechanism warned about yet in this process (the warning is once per process and mechanism)."""
    import pm_private.privacy.release as release_module

    monkeypatch.setattr(release_module, "_WARNED", (0, set()))


def _laplace_stats(**kwargs):
    from pm_private.linear import release_linear_stats

    return release_linear_stats(DATA["X"], DATA["y"], noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, **kwargs)


def test_a_private_release_without_an_accountant_warns_once_per_mechanism(fresh_warnings):
    import warnings

    from pm_private.privacy import laplace_mechanism
    from pm_private.privacy.noise import as_noise_source
    from pm_private.privacy.release import NoAccountantWarning

    with pytest.warns(NoAccountantWarning) as caught:
        _laplace_stats()
    (warning,) = [w for w in caught if issubclass(w.category, NoAccountantWarning)]
    message = str(warning.message)
    assert "Laplace sufficient statistics" in message and "no ledger records" in message and "accountant=" in message
    assert issubclass(NoAccountantWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoAccountantWarning)
        _laplace_stats()  # once per process and mechanism
        _laplace_stats(rng=0)  # seeded: not private, nothing to warn about
        _laplace_stats(accountant=PrivacyAccountant(1.0))  # recorded
        laplace_mechanism([1.0], sensitivity=1.0, epsilon=1.0, source=as_noise_source())  # charges nothing itself
        with pytest.raises(NoAccountantWarning, match="Gaussian"):
            CARDS[[c.name for c in CARDS].index("release_linear_stats")].run(None, rng=None)  # another mechanism


def test_the_warning_can_be_filtered(fresh_warnings):
    import warnings

    from pm_private.privacy.release import NoAccountantWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=NoAccountantWarning)
        _laplace_stats()
    assert not [w for w in caught if issubclass(w.category, NoAccountantWarning)]


def test_seeded_results_print_not_private(fresh_warnings):
    import warnings

    from pm_private.privacy import laplace_mechanism
    from pm_private.privacy.noise import as_noise_source

    seeded = _laplace_stats(rng=0, accountant=PrivacyAccountant(10.0))
    assert (
        repr(seeded)
        == f"LinearStats(n={N}, d={DATA['X'].shape[1] + 1} (intercept first), not private (seeded), 1 seeded release(s))"
    )
    (release,) = seeded.releases
    assert repr(release).startswith("LinearStatsLaplaceRelease(not private (seeded), private=False, epsilon=1.0,")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a deliberate release without an accountant
        private = _laplace_stats()
    assert repr(private) == f"LinearStats(n={N}, d={DATA['X'].shape[1] + 1} (intercept first), 1 private release(s))"
    assert repr(private.releases[0]).startswith("LinearStatsLaplaceRelease(private=True, epsilon=1.0,")
    assert "not private" not in repr(private.releases[0])
    both = private + seeded + seeded
    assert repr(both).endswith("not private (seeded), 1 private release(s), 2 seeded release(s))")
    primitive = laplace_mechanism([1.0], sensitivity=1.0, epsilon=1.0, source=as_noise_source(0))
    assert repr(primitive).startswith("LaplaceRelease(not private (seeded), private=False,")


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_a_release_its_own_record_refuses_spends_nothing(neighbour_releases, name, monkeypatch):
    """Every mechanism builds its release record (the class's checks of its public fields) before
    it charges: with every record of its release type refused, the call raises and the ledger
    holds no entry, not even a released reservation."""
    first, _, _ = neighbour_releases[name]
    for release_class in {type(release) for release in _releases(first)}:

        def refuse(self, *args, **kwargs):
            raise ValueError("refused for the test")

        monkeypatch.setattr(release_class, "__init__", refuse)
    card = MECHANISMS[name]
    relations = ["add-remove"] if "relation" in card.valid else []  # and the card's own (replace-one)
    for overrides in [{}, *({"relation": relation, **card.add_remove} for relation in relations)]:
        accountant = PrivacyAccountant(epsilon=1e5, delta=1e-3)
        with pytest.raises(ValueError, match="refused for the test"):
            card.run(accountant, **overrides)
        assert not accountant.ledger, (name, overrides)
