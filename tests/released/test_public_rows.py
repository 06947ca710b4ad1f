"""Public rows kept by ``Preprocessing.from_public``: they travel with a release and its file, the
GLM models take them as the covariates' law by default, and a release refuses private rows among them."""

import json
import warnings

import numpy as np
import pytest
from scipy.special import expit

from pm_private import (
    Preprocessing,
    PrivacyAccountant,
    logistic_model,
    poisson_model,
    release_linear_stats,
    release_logistic_stats,
    release_poisson_stats,
)
from pm_private.logistic import set_logistic_stats
from pm_private.privacy.release import ChargedRefusal
from pm_private.release_file import read_release_file, release_from_dict, release_to_dict, write_release_file
from pm_private.released import CovariateLawWarning, recorded_warnings, shared_row_count
from pm_private.released.glm import public_rows_law_warning


def _binary_data(rng, n):
    X = np.column_stack([rng.uniform(size=n) < 0.3, rng.normal(size=n), rng.uniform(size=n) < 0.6]).astype(float)
    y = rng.uniform(size=n) < expit(X @ [1.0, -0.5, 0.7] - 0.3)
    return X, y


def test_from_public_keeps_the_rows_read_only_unless_asked_not_to():
    rng = np.random.default_rng(0)
    Xp, yp = rng.normal(size=(30, 3)), rng.normal(size=30)
    prep = Preprocessing.from_public(Xp, yp)
    np.testing.assert_array_equal(prep.x_public, Xp)
    assert not prep.x_public.flags.writeable
    assert Preprocessing.from_public(Xp, yp, keep_rows=False).x_public is None
    with pytest.raises(ValueError, match="keep_rows"):
        Preprocessing.from_public(Xp, yp, keep_rows="yes")
    with pytest.raises(ValueError, match="x_public has 2 columns"):
        Preprocessing(x_center=np.zeros(3), x_public=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="x_public must be a finite 2-D"):
        Preprocessing(x_public=np.array([1.0, np.nan]))


def test_shared_row_count_counts_identifying_rows_and_the_private_table_itself():
    rng = np.random.default_rng(1)
    private = rng.normal(size=(200, 3))
    public = np.vstack([rng.normal(size=(40, 3)), private[[3, 17]]])
    assert shared_row_count(public, private) == 2
    # a copy written with 15 significant digits (a CSV re-saved) still matches
    resaved = np.vectorize(lambda v: float(f"{v:.15g}"))(private[:5])
    assert not np.array_equal(resaved, private[:5]) and shared_row_count(resaved, private) == 5
    # binary patterns shared by chance are not counted, even patterns that occur once ...
    binary = (rng.uniform(size=(500, 3)) < 0.5).astype(float)
    assert shared_row_count((rng.uniform(size=(50, 3)) < 0.5).astype(float), binary) == 0
    wide = (rng.uniform(size=(2000, 12)) < 0.3).astype(float)  # 4096 patterns: many occur once
    public_wide = (rng.uniform(size=(50, 12)) < 0.3).astype(float)
    unique = {row.tobytes() for row, c in zip(*np.unique(wide, axis=0, return_counts=True), strict=True) if c == 1}
    assert any(row.tobytes() in unique for row in public_wide) and shared_row_count(public_wide, wide) == 0
    # ... while a copied row with one continuous value is
    mixed = np.column_stack([wide, rng.normal(size=2000)])
    assert shared_row_count(np.vstack([np.column_stack([public_wide, rng.normal(size=50)]), mixed[:3]]), mixed) == 3
    # ... but the private table (or most of it) passed for public is, whatever its values
    assert shared_row_count(binary[:300], binary) == 300
    assert shared_row_count(binary, binary) == 500
    with pytest.raises(ValueError, match="columns"):
        shared_row_count(public[:, :2], private)


@pytest.mark.parametrize("family", ["linear", "logistic", "poisson"])
def test_a_release_refuses_private_rows_among_the_public_ones_charged_and_naming_no_count(family):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    y = (rng.uniform(size=300) < 0.5).astype(float)
    prep = Preprocessing.from_public(np.vstack([rng.normal(size=(20, 2)), X[:1]]), rng.normal(size=21))
    if family != "linear":
        prep = Preprocessing(x_center=prep.x_center, x_scale=prep.x_scale, x_public=prep.x_public)
    accountant = PrivacyAccountant(5.0, 1e-5)
    release = {
        "linear": lambda: release_linear_stats(
            X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=1.0, preprocessing=prep, accountant=accountant
        ),
        "logistic": lambda: release_logistic_stats(
            X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, preprocessing=prep, accountant=accountant
        ),
        "poisson": lambda: release_poisson_stats(
            X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=5, preprocessing=prep, accountant=accountant
        ),
    }[family]
    with pytest.raises(ChargedRefusal, match="preprocessing: its public rows include rows of the private X") as one:
        release()
    assert accountant.spent.epsilon == 1.0  # a free refusal would be a membership test, one call per candidate
    prep = Preprocessing(x_center=prep.x_center, x_scale=prep.x_scale, x_public=np.vstack([prep.x_public, X[1:3]]))
    with pytest.raises(ChargedRefusal) as three:
        release()
    assert str(three.value) == str(one.value) and accountant.spent.epsilon == 2.0  # the same words for 1 and 3 rows


def _glm_prep(Xp):
    return Preprocessing(x_center=Xp.mean(axis=0), x_scale=Xp.std(axis=0), x_public=Xp)


def test_glm_models_take_the_releases_public_rows_as_the_covariate_law_by_default(tmp_path):
    rng = np.random.default_rng(3)
    X, y = _binary_data(rng, 2000)
    Xp, _ = _binary_data(rng, 40)
    release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, preprocessing=_glm_prep(Xp), rng=0)
    default = logistic_model(release)
    explicit = logistic_model(release, x_sample=Xp)
    gaussian = logistic_model(release, x_sample=None)
    assert "x_sample_whitened" in default and "x_sample_whitened" not in gaussian
    point = {**default.initial_point(), "beta": np.array([1.0, -0.5, 0.7])}  # at β = 0 the laws agree
    assert default.compile_logp(mode="FAST_COMPILE")(point) == pytest.approx(
        explicit.compile_logp(mode="FAST_COMPILE")(point), rel=1e-12
    )
    assert default.compile_logp(mode="FAST_COMPILE")(point) != pytest.approx(
        gaussian.compile_logp(mode="FAST_COMPILE")(point), rel=1e-6
    )
    # the rows travel in the release file, and a model of the file read back is the same
    path = tmp_path / "release.json"
    write_release_file(path, [release_to_dict(release)])
    back = release_from_dict(read_release_file(path)[0])
    np.testing.assert_array_equal(back.preprocessing.x_public, Xp)
    assert json.loads(path.read_text())  # plain JSON
    assert logistic_model(back).compile_logp(mode="FAST_COMPILE")(point) == pytest.approx(
        default.compile_logp(mode="FAST_COMPILE")(point), rel=1e-12
    )
    # a new release with other public rows swaps in: the model's logp changes with them
    other = release_logistic_stats(
        X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, preprocessing=_glm_prep(_binary_data(rng, 40)[0]), rng=1
    )
    before = default.compile_logp(mode="FAST_COMPILE")(point)
    set_logistic_stats(other, default)
    assert default.compile_logp(mode="FAST_COMPILE")(point) != pytest.approx(before, rel=1e-9)
    with pytest.raises(ValueError, match="'public', None, a reference law or a table"):
        logistic_model(release, x_sample="private")


def test_public_rows_that_cannot_serve_fall_back_to_the_gaussian_law_with_a_warning():
    rng = np.random.default_rng(4)
    X, y = _binary_data(rng, 1000)
    Xp = _binary_data(rng, 30)[0]
    Xp[:, 0] = 0.0  # a rare level absent from the public rows: no spread
    prep = Preprocessing(x_center=np.zeros(3), x_public=Xp)
    release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, preprocessing=prep, rng=0)
    with pytest.warns(CovariateLawWarning, match=r"columns \[0\] are constant"):
        model = logistic_model(release)
    assert "x_sample_whitened" not in model
    assert len(recorded_warnings(model)) == 1 and "columns [0] are constant" in recorded_warnings(model)[0]
    counts = rng.poisson(np.exp(X @ [0.3, 0.2, -0.1]))
    few = Preprocessing(x_center=np.zeros(3), x_public=_binary_data(rng, 4)[0])
    release = release_poisson_stats(X, counts, epsilon=1.0, delta=1e-6, x_bound=4.0, y_bound=10, preprocessing=few)
    with pytest.warns(CovariateLawWarning, match="at least d \\+ 2 = 5"):
        assert "x_sample_whitened" not in poisson_model(release)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariateLawWarning)
        poisson_model(release, x_sample=None)  # the Gaussian law asked for: no warning


def test_a_law_on_too_few_public_rows_for_the_private_ones_warns_with_its_figure_and_records_it():
    # (n/√m)/√(n + s²): 50,000 rows, 100 public ones, noise at the sampling spread: 5000/316 = 15.8
    assert "15.8 times" in public_rows_law_warning(50_000, 100, np.sqrt(50_000))
    assert public_rows_law_warning(20_000, 5_000, 100.0) is None  # 2.0: within the limit
    assert public_rows_law_warning(20_000, 100, 1e4) is None  # the release's noise sets the width
    rng = np.random.default_rng(5)
    X, y = _binary_data(rng, 40_000)
    release = release_logistic_stats(
        X, y, epsilon=3.0, delta=1e-6, x_bound=3.0, preprocessing=_glm_prep(_binary_data(rng, 30)[0]), rng=0
    )
    with pytest.warns(CovariateLawWarning, match=r"rests on 30 public rows for 40000 private ones") as caught:
        model = logistic_model(release)
    message = next(str(w.message) for w in caught if issubclass(w.category, CovariateLawWarning))
    assert recorded_warnings(model) == [message]  # what print_summary repeats
    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariateLawWarning)
        assert recorded_warnings(logistic_model(release, x_sample=None)) == []
