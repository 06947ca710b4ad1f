"""The reference covariate law: rows matched to released moments and declared column kinds,
checked against brute-force Monte Carlo of a population with those kinds."""

import numpy as np
import pytest
from scipy.special import expit, ndtri

from pm_private import Preprocessing, logistic_model, release_logistic_stats
from pm_private.logistic import logistic_stats, set_logistic_stats
from pm_private.released.copula_law import ReferenceLaw, copula_rows, reference_law

SHARES = np.array([0.05, 0.4, 0.7])


def _population(rng, k):
    """Two continuous columns (one skewed) and three binary ones, from a latent Gaussian copula."""
    corr = np.full((5, 5), 0.4) + 0.6 * np.eye(5)
    z = rng.normal(size=(k, 5)) @ np.linalg.cholesky(corr).T
    return np.column_stack([z[:, 0], np.exp(0.7 * z[:, 1]), z[:, 2:] < ndtri(SHARES)]).astype(float)


def test_copula_rows_keep_the_kinds_and_match_the_moments():
    rng = np.random.default_rng(0)
    X = _population(rng, 200_000)
    mean, cov = X.mean(axis=0), np.cov(X, rowvar=False, bias=True)
    rows = copula_rows(mean, cov, ["continuous", "continuous", "binary", "binary", "binary"], 4096)
    assert rows.shape == (4096, 5)
    for j in (2, 3, 4):
        assert set(np.unique(rows[:, j])) == {0.0, 1.0}
    np.testing.assert_allclose(rows.mean(axis=0), mean, atol=0.01)
    np.testing.assert_allclose(rows.std(axis=0)[:2], np.sqrt(np.diag(cov))[:2], rtol=1e-9)
    target = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    np.testing.assert_allclose(np.corrcoef(rows, rowvar=False), target, atol=0.03)


def test_its_expectations_match_brute_force_monte_carlo_where_the_gaussian_law_misses():
    """E[g(a)·x] under the reference law (with the population's public marginals) against 10⁶
    draws of the population; the Gaussian law with the same mean and covariance misses by more."""
    rng = np.random.default_rng(1)
    X = _population(rng, 1_000_000)
    beta, b = np.array([0.8, -0.6, 1.5, -1.0, 0.7]), -0.4
    truth = (expit(X @ beta + b)[:, None] * np.column_stack([np.ones(len(X)), X])).mean(axis=0)
    mean, cov = X.mean(axis=0), np.cov(X, rowvar=False, bias=True)
    public = _population(rng, 200)
    rows = copula_rows(mean, cov, ["continuous", "continuous", "binary", "binary", "binary"], 4096, public=public)
    # the model moves the rows affinely onto (μ, Σx): here the population's
    centred = rows - rows.mean(axis=0)
    white = np.linalg.solve(np.linalg.cholesky(centred.T @ centred / len(rows)), centred.T).T
    moved = mean + white @ np.linalg.cholesky(cov).T
    law = (expit(moved @ beta + b)[:, None] * np.column_stack([np.ones(len(moved)), moved])).mean(axis=0)
    gaussian = rng.multivariate_normal(mean, cov, size=1_000_000)
    normal = (expit(gaussian @ beta + b)[:, None] * np.column_stack([np.ones(len(gaussian)), gaussian])).mean(axis=0)
    law_error, normal_error = np.abs(law - truth).max(), np.abs(normal - truth).max()
    assert law_error < 0.01
    assert law_error < normal_error / 2


def test_reference_law_of_a_release_is_raw_and_refuses_unknown_kinds():
    rng = np.random.default_rng(2)
    X = _population(rng, 3000)
    y = (rng.random(3000) < expit(X[:, 0] - X[:, 2])).astype(float)
    prep = Preprocessing.from_public(_population(rng, 60))
    release = release_logistic_stats(X, y, epsilon=2.0, delta=1e-6, x_bound=6.0, preprocessing=prep, rng=rng)
    law = reference_law(release, {2: "binary", 3: "binary", "x4": "binary"}, size=512)
    assert isinstance(law, ReferenceLaw) and len(law) == 512
    assert law.kinds == ("continuous", "continuous", "binary", "binary", "binary")
    for j in (2, 3, 4):
        assert set(np.unique(law.rows[:, j])) <= {0.0, 1.0}
    assert not law.rows.flags.writeable
    with pytest.raises(ValueError, match="kinds"):
        reference_law(release, {"age": "binary"})
    with pytest.raises(ValueError, match="kinds"):
        reference_law(release, ["binary"] * 4)
    with pytest.raises(ValueError, match="kinds"):
        reference_law(release, ["ordinal"] * 5)
    with pytest.raises(ValueError, match="size"):
        reference_law(release, ["continuous"] * 5, size=100)


KINDS = ["continuous", "continuous", "binary", "binary", "binary"]


def _reference_model(seed: int, n: int):
    """Rows of the population, labels, their exact statistics and a logistic model on their
    reference law (512 rows)."""
    rng = np.random.default_rng(seed)
    X = _population(rng, n)
    y = (rng.random(n) < expit(X[:, 0] - X[:, 2])).astype(float)
    stats = logistic_stats(X, y)
    return X, y, stats, logistic_model(stats, x_sample=reference_law(stats, KINDS, size=512))


def test_a_model_on_the_reference_law_evaluates_and_refits_with_a_new_law():
    X, y, stats, model = _reference_model(3, 2000)
    assert model["x_sample_whitened"].get_value().shape == (512, 5) and "x_sample_jackknife" not in model
    assert np.isfinite(model.compile_logp(mode="FAST_COMPILE")(model.initial_point()))
    other = logistic_stats(X[:1500], y[:1500])
    set_logistic_stats(other, model, x_sample=reference_law(other, KINDS, size=512))
    with pytest.raises(ValueError, match="reference law"):
        set_logistic_stats(other, model)
    plain = logistic_model(stats, x_sample=None)
    with pytest.raises(ValueError, match="without a reference law"):
        set_logistic_stats(other, plain, x_sample=reference_law(other, KINDS, size=512))


def test_declared_kinds_travel_with_the_release_and_its_file_and_make_the_default_law(tmp_path):
    from pm_private.release_file import read_release_file, release_from_dict, release_to_dict, write_release_file

    rng = np.random.default_rng(4)
    X = _population(rng, 3000)
    y = (rng.random(3000) < expit(X[:, 0] - X[:, 2])).astype(float)
    prep = Preprocessing.from_public(_population(rng, 80), kinds="infer")
    assert prep.x_kinds == ("continuous", "continuous", "binary", "binary", "binary")
    release = release_logistic_stats(X, y, epsilon=2.0, delta=1e-6, x_bound=6.0, preprocessing=prep, rng=rng)
    write_release_file(tmp_path / "r.json", [release_to_dict(release)])
    read = release_from_dict(read_release_file(tmp_path / "r.json")[0])
    assert read.preprocessing.x_kinds == prep.x_kinds
    model = logistic_model(read)
    assert "x_sample_whitened" in model and "x_sample_jackknife" not in model
    set_logistic_stats(read, model)  # the default refits with the new release's reference law
    with pytest.raises(ValueError, match="x_kinds"):
        Preprocessing(x_center=np.zeros(3), x_kinds=("binary",))
    with pytest.raises(ValueError, match="x_kinds"):
        Preprocessing(x_kinds=("binary", "ordinal"))
    with pytest.raises(ValueError, match="x_kinds"):
        Preprocessing(x_kinds="binary")


def test_a_level_rarer_than_the_noise_warns_at_build_and_is_recorded():
    import warnings

    from pm_private.released import CovariateLawWarning, recorded_warnings

    rng = np.random.default_rng(5)
    n = 2000
    X = np.column_stack([rng.normal(size=n), rng.random(n) < 0.002, rng.random(n) < 0.4]).astype(float)
    y = (rng.random(n) < expit(X[:, 0])).astype(float)
    release = release_logistic_stats(X, y, epsilon=0.3, delta=1e-6, x_bound=4.0, rng=rng)
    law = reference_law(release, {1: "binary", 2: "binary"}, size=512)
    with pytest.warns(CovariateLawWarning, match=r"rarer than the release's noise can resolve: x1 \(released share"):
        model = logistic_model(release, x_sample=law)
    (message,) = recorded_warnings(model)
    assert "x2" not in message
    exact = logistic_stats(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariateLawWarning)  # exact statistics: no noise, no warning
        logistic_model(exact, x_sample=reference_law(exact, {1: "binary", 2: "binary"}, size=512))


def test_a_categorical_covariate_keeps_one_level_per_row_and_its_shares():
    rng = np.random.default_rng(6)
    z = rng.normal(size=(100_000, 2)) @ np.linalg.cholesky([[1.0, 0.6], [0.6, 1.0]]).T
    level = np.searchsorted([0.4, 0.7, 0.9], expit(1.7 * z[:, 1]))  # four levels, 0 the reference
    X = np.column_stack([z[:, 0], *(level == k for k in (1, 2, 3))]).astype(float)
    mean, cov = X.mean(axis=0), np.cov(X, rowvar=False, bias=True)
    kinds = ["continuous"] + ["categorical:region"] * 3
    rows = copula_rows(mean, cov, kinds, 4096)
    assert rows[:, 1:].sum(axis=1).max() == 1.0  # never two levels at once
    np.testing.assert_allclose(rows[:, 1:].mean(axis=0), mean[1:], atol=0.01)
    np.testing.assert_allclose(np.corrcoef(rows, rowvar=False)[0], np.corrcoef(X, rowvar=False)[0], atol=0.05)
    independent = copula_rows(mean, cov, ["continuous"] + ["binary"] * 3, 4096)
    assert independent[:, 1:].sum(axis=1).max() > 1.0  # as binary columns they would overlap
    with pytest.raises(ValueError, match="x_kinds"):
        Preprocessing(x_kinds=("categorical:",))


def test_the_automatic_size_grows_with_n_within_its_range():
    from pm_private.released.copula_law import reference_size

    assert reference_size(2000) == 2048 and reference_size(20_000) == 4096
    assert reference_size(200_000) == 32768 and reference_size(10**9) == 32768
    stats = logistic_stats(np.column_stack([np.linspace(-1, 1, 300), np.arange(300) % 2]), np.arange(300) % 3 == 0)
    assert len(reference_law(stats, ["continuous", "binary"])) == 2048


def test_a_reference_law_model_keeps_its_law_with_none_and_refuses_public_rows():
    X, y, stats, model = _reference_model(7, 1500)
    before = model["x_sample_whitened"].get_value().copy()
    set_logistic_stats(logistic_stats(X[:1000], y[:1000]), model, x_sample=None)  # keeps the model's law
    np.testing.assert_array_equal(model["x_sample_whitened"].get_value(), before)
    with pytest.raises(ValueError, match="built with a reference law"):
        set_logistic_stats(stats, model, x_sample=X[:100])
    with pytest.raises(ValueError, match="a reference law or a table of public rows"):
        logistic_model(stats, x_sample="rows")
