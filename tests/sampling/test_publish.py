"""publishable: only the posterior draws of the free random variables leave, each draw is paid
for, and draws from a replayable run are refused or marked not private."""

from unittest import mock

import numpy as np
import pymc as pm
import pytest
import xarray as xr

from pm_private import BudgetExceededError, PrivacyAccountant, publishable
from pm_private.sampling import PSGLD, secure_sample
from pm_private.sampling.publish import RANDOM_SOURCE_ATTR, SEAL_ATTR, SECURE_SOURCE
from pm_private.sampling.sanitized import LABEL, MECHANISM, logistic_loss, sanitized_loss


def records(n=30, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)) / 2, np.where(rng.random(n) < 0.5, -1.0, 1.0)


@pytest.fixture(scope="module")
def sampled():
    X, y = records()
    with pm.Model(coords={"feature": ["a", "b"]}) as model:
        f = pm.Flat("f", dims="feature")
        pm.Deterministic("margin0", y[0] * (pm.math.dot(X[0], f)))  # a function of a record
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
        idata = (
            pm.sample(  # PyMC's sampler, whose recorded lp the test reads (nutpie is PyMC's default where installed)
                draws=30,
                tune=30,
                chains=1,
                random_seed=1,
                progressbar=False,
                compute_convergence_checks=False,
                nuts_sampler="pymc",
            )
        )
    return model, idata, X, y


def draws_of(chains, draws, *, secure=True):
    """A stand-in for a sampler's output: draws of f (chain, draw, 2), sealed by secure_sample itself
    (with pm.sample replaced by the stand-in) when ``secure``."""
    values = np.random.default_rng(0).normal(size=(chains, draws, 2))
    posterior = xr.Dataset({"f": (("chain", "draw", "f_dim_0"), values)})
    tree = xr.DataTree.from_dict(
        {"posterior": posterior, "sample_stats": xr.Dataset({"lp": (("chain", "draw"), values[..., 0])})}
    )
    if secure:
        with mock.patch.object(pm, "sample", lambda *args, **kwargs: tree):
            tree = secure_sample()
    return tree


def sanitized_model(epsilon=0.5, accountant=None):
    X, y = records()
    with pm.Model() as model:
        f = pm.Flat("f", shape=2)
        term = sanitized_loss("U", logistic_loss, f, (X, y), epsilon=epsilon, accountant=accountant)
    return model, term


@pytest.mark.slow
def test_raw_sampler_output_is_a_function_of_the_records(sampled):
    model, idata, X, y = sampled
    logp = model.compile_logp(mode="CVM")
    draws = idata.posterior["f"].values[0]
    lp = idata.sample_stats["lp"].values[0]
    # sample_stats.lp is the exact log-density ε/(2v)·U(f; D) at each draw: not publishable
    assert np.allclose(lp, [logp({"f": f}) for f in draws], rtol=1e-10)
    assert np.allclose(idata.posterior["margin0"].values[0], y[0] * draws @ X[0])


@pytest.mark.slow
def test_publishable_keeps_only_the_draws_of_free_random_variables(sampled):
    model, idata, _, _ = sampled
    release = publishable(idata, model=model, private=False)
    assert list(release.children) == ["posterior"]
    posterior = release["posterior"]
    assert list(posterior.data_vars) == ["f"]
    assert dict(release.attrs) == {} and posterior["f"].attrs == {}
    assert dict(posterior.attrs) == {
        "mechanism": MECHANISM,
        "label": LABEL,
        "neighbours": "replace-one",
        "epsilon": 30.0,
        "draws": 30,
        "private": False,
    }
    assert posterior["f"].dims == ("chain", "draw", "feature")
    assert list(posterior["feature"].values) == ["a", "b"]
    np.testing.assert_array_equal(posterior["f"].values, idata.posterior["f"].values)
    with model:
        assert list(publishable(idata, private=False)["posterior"].data_vars) == ["f"]


@pytest.mark.slow
@pytest.mark.parametrize("var_names, match", [(["margin0"], "refused: \\['margin0'\\]"), (["U"], "refused")])
def test_publishable_refuses_deterministics_and_potentials(sampled, var_names, match):
    model, idata, _, _ = sampled
    with pytest.raises(ValueError, match=match):
        publishable(idata, var_names, model=model, private=False)


def test_publishable_needs_a_posterior():
    with pm.Model() as model:
        pm.Normal("a")
    with pytest.raises(ValueError, match="idata must be the output of pm.sample"):
        publishable({"sample_stats": None}, model=model)


def test_models_without_a_sanitized_term_are_published_unmarked_and_free():
    with pm.Model() as model:
        pm.Normal("f", shape=2)
    release = publishable(draws_of(2, 5, secure=False), model=model)
    assert dict(release["posterior"].attrs) == {}


def test_m_published_draws_are_charged_m_epsilon_in_the_ledger():
    accountant = PrivacyAccountant(100.0)
    model, term = sanitized_model(0.5, accountant)
    assert accountant.spent == (0.5, 0.0) and term.prepaid_draws == 1
    release = publishable(draws_of(2, 5), model=model, accountant=accountant)  # m = 10
    assert accountant.spent[0] == pytest.approx(10 * 0.5)
    entry = accountant.ledger[-1]
    assert (entry.mechanism, entry.label, entry.note) == (MECHANISM, LABEL, "10 draws published")
    assert entry.epsilon == pytest.approx(9 * 0.5)
    attrs = release["posterior"].attrs
    assert (attrs["epsilon"], attrs["draws"], attrs["private"]) == (5.0, 10, True)
    assert term.prepaid_draws == 0
    # publishing again (here one draw) charges again: nothing is prepaid any more
    publishable(draws_of(1, 1), model=model, accountant=accountant)
    assert accountant.spent[0] == pytest.approx(11 * 0.5)
    assert len(accountant.ledger) == 3


def test_the_prepaid_draw_is_published_without_a_further_charge():
    accountant = PrivacyAccountant(1.0)
    model, term = sanitized_model(0.5, accountant)
    release = publishable(draws_of(1, 1), model=model)
    assert release["posterior"].attrs["epsilon"] == 0.5
    assert accountant.spent == (0.5, 0.0) and len(accountant.ledger) == 1 and term.prepaid_draws == 0
    with pytest.raises(ValueError, match="pass accountant="):
        publishable(draws_of(1, 1), model=model)  # the prepaid draw is used up


def test_a_seeded_run_cannot_be_published_silently():
    accountant = PrivacyAccountant(100.0)
    model, _ = sanitized_model(0.5, accountant)
    with pytest.raises(ValueError, match="not sampled by pm_private.sampling.secure_sample.*private=False"):
        publishable(draws_of(2, 5, secure=False), model=model, accountant=accountant)
    assert accountant.spent == (0.5, 0.0) and len(accountant.history) == 1  # nothing reserved
    release = publishable(draws_of(2, 5, secure=False), model=model, accountant=accountant, private=False)
    assert release["posterior"].attrs["private"] is False
    assert accountant.spent[0] == pytest.approx(5.0)  # not private, and still charged
    # asking for private=False marks even secure draws not private
    assert (
        publishable(draws_of(1, 1), model=model, accountant=accountant, private=False)["posterior"].attrs["private"]
        is False
    )


@pytest.mark.parametrize("private", ["no", 0, None])
def test_private_must_be_a_bool(private):
    model, _ = sanitized_model()
    with pytest.raises(ValueError, match="private must be True or False"):
        publishable(draws_of(1, 1), model=model, private=private)


def test_draws_beyond_the_prepaid_one_need_the_terms_accountant():
    accountant = PrivacyAccountant(100.0)
    model, term = sanitized_model(0.5, accountant)
    with pytest.raises(ValueError, match=r"publishing 10 draws costs 10·ε.*4.5.*pass accountant="):
        publishable(draws_of(2, 5), model=model)
    with pytest.raises(ValueError, match="accountant the sanitized term 'U' was charged to"):
        publishable(draws_of(2, 5), model=model, accountant=PrivacyAccountant(100.0))
    with pytest.raises(TypeError, match="accountant must be a PrivacyAccountant"):
        publishable(draws_of(2, 5), model=model, accountant=100.0)
    assert accountant.spent == (0.5, 0.0) and term.prepaid_draws == 1


def test_the_same_ledger_file_reopened_is_the_same_accountant(tmp_path):
    path = tmp_path / "ledger.sqlite"
    with PrivacyAccountant.open(path, epsilon=10.0) as accountant:
        model, _ = sanitized_model(0.5, accountant)
    with PrivacyAccountant.open(path) as reopened:
        publishable(draws_of(1, 4), model=model, accountant=reopened)
        assert reopened.spent[0] == pytest.approx(2.0)


def test_an_over_budget_publication_returns_nothing_and_keeps_the_prepaid_draw():
    accountant = PrivacyAccountant(2.0)
    model, term = sanitized_model(0.5, accountant)
    with pytest.raises(BudgetExceededError):
        publishable(draws_of(1, 5), model=model, accountant=accountant)  # 2.5 > 2
    assert accountant.spent == (0.5, 0.0) and len(accountant.history) == 1 and term.prepaid_draws == 1
    publishable(draws_of(1, 4), model=model, accountant=accountant)  # exactly 2.0
    assert accountant.spent[0] == pytest.approx(2.0)


def test_a_term_built_without_an_accountant_is_charged_every_draw_when_one_is_given():
    model, term = sanitized_model(0.25)
    assert term.prepaid_draws == 0
    assert publishable(draws_of(1, 4), model=model)["posterior"].attrs["epsilon"] == 1.0  # no ledger: nothing charged
    accountant = PrivacyAccountant(10.0)
    publishable(draws_of(2, 4), model=model, accountant=accountant)
    assert accountant.spent[0] == pytest.approx(8 * 0.25)


def test_two_terms_each_cost_their_epsilon_per_draw():
    accountant = PrivacyAccountant(100.0)
    X, y = records()
    with pm.Model() as model:
        f = pm.Flat("f", shape=2)
        sanitized_loss("U1", logistic_loss, f, (X, y), epsilon=0.5, accountant=accountant)
        sanitized_loss("U2", logistic_loss, f, (X, y), epsilon=0.25, accountant=accountant)
    release = publishable(draws_of(1, 4), model=model, accountant=accountant)
    assert release["posterior"].attrs["epsilon"] == 3.0
    assert accountant.spent[0] == pytest.approx(3.0)


def test_the_secure_mark_cannot_be_forged():
    """Audit: publishable trusted a plain attribute; set by hand on a seeded run, it published the
    draws as private.  Only draws sealed by secure_sample in this process, unchanged, are private."""
    model, _ = sanitized_model()
    refused = "not sampled by pm_private.sampling.secure_sample"
    forged = draws_of(1, 4, secure=False)
    forged["posterior"].attrs[RANDOM_SOURCE_ATTR] = SECURE_SOURCE  # the old mark, set by hand
    with pytest.raises(ValueError, match=refused):
        publishable(forged, model=model)
    sealed = draws_of(1, 4)
    copied = draws_of(1, 4, secure=False)  # other draws with a genuine run's seal copied onto them
    copied["posterior"]["f"] = copied["posterior"]["f"] + 1.0
    copied["posterior"].attrs.update(sealed["posterior"].attrs)
    with pytest.raises(ValueError, match=refused):
        publishable(copied, model=model)
    edited = draws_of(1, 4)
    edited["posterior"]["f"] = edited["posterior"]["f"] * 1.0 + np.array([0.0, 1e-12])  # edited after sealing
    with pytest.raises(ValueError, match=refused):
        publishable(edited, model=model)
    for seal in ("", "{}", '{"f": "00"}', "not json", '["f"]'):
        bad = draws_of(1, 4)
        bad["posterior"].attrs[SEAL_ATTR] = seal
        with pytest.raises(ValueError, match=refused):
            publishable(bad, model=model)
    assert publishable(sealed, model=model)["posterior"].attrs["private"] is True


def test_secure_sample_refuses_a_seed_and_external_samplers():
    with pm.Model():
        pm.Normal("a")
        with pytest.raises(TypeError, match="refuses random_seed"):
            secure_sample(draws=5, random_seed=1)
        with pytest.raises(ValueError, match="nuts_sampler must be 'pymc'"):
            secure_sample(draws=5, nuts_sampler="nutpie")
        with pytest.raises(ValueError, match="return_inferencedata must be True"):
            secure_sample(draws=5, return_inferencedata=False)


@pytest.mark.slow
def test_secure_runs_are_marked_not_replayable_and_charged_end_to_end():
    accountant = PrivacyAccountant(100.0)
    model, _ = sanitized_model(0.5, accountant)
    kwargs = dict(draws=20, tune=20, chains=2, cores=1, progressbar=False, compute_convergence_checks=False)
    with model:
        runs = [secure_sample(step=PSGLD(batch_size=10), **kwargs) for _ in range(2)]
    assert runs[0]["posterior"].attrs[RANDOM_SOURCE_ATTR] == SECURE_SOURCE and SEAL_ATTR in runs[0]["posterior"].attrs
    # two runs with the same settings draw different chains: nothing to replay
    assert not np.allclose(runs[0].posterior["f"].values, runs[1].posterior["f"].values)
    release = publishable(runs[0], model=model, accountant=accountant)
    assert release["posterior"]["f"].shape == (2, 20, 2)
    assert accountant.spent[0] == pytest.approx(40 * 0.5)
    assert release["posterior"].attrs["private"] is True


def test_a_pickled_copy_of_a_term_cannot_publish():
    import cloudpickle

    accountant = PrivacyAccountant(100.0)
    model, _ = sanitized_model(0.5, accountant)
    copy = cloudpickle.loads(cloudpickle.dumps(model))  # as for chains in spawned processes
    with pytest.raises(ValueError, match="copies .pickled from the process that built them"):
        publishable(draws_of(1, 1), model=copy, accountant=accountant)
    assert accountant.spent == (0.5, 0.0)
    publishable(draws_of(1, 1), model=model, accountant=accountant)  # the original still can
