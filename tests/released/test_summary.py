"""fit_summary and print_summary on posteriors of the families, against draws computed by hand."""

import io

import numpy as np
import pytest
import xarray as xr

from pm_private import print_summary, release_logistic_stats
from pm_private._engine.packing import pack
from pm_private.released.preprocessing import Preprocessing
from pm_private.released.summary import fit_summary

RNG = np.random.default_rng(0)


def _tree(posterior: dict, preprocessing: dict, family: str, transform: str) -> xr.DataTree:
    labels = [f"family={family}", f"release={family}_stats", f"transform={transform}"]
    data = {"fit_record": (("fit_field",), np.zeros(3))}
    coords = {"fit_field": labels}
    if preprocessing:
        vector, entries, _ = pack(preprocessing)
        data["preprocessing"] = (("preprocessing_entry",), vector)
        coords["preprocessing_entry"] = entries
    constant_data = xr.Dataset(data, coords=coords)
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((2, 500), dtype=bool))})
    return xr.DataTree.from_dict(
        {"posterior": xr.Dataset(posterior), "constant_data": constant_data, "sample_stats": stats}
    )


def _draws(mean, sd, shape=()):
    return RNG.normal(mean, sd, size=(2, 500, *shape))


def _logistic_tree(alpha, beta, center, scale, names=("a", "b")):
    posterior = {
        "beta": (("chain", "draw", "feature"), beta),
        "intercept": (("chain", "draw"), alpha),
        "x_mean": (("chain", "draw", "feature"), _draws(0.0, 1.0, (2,))),
    }
    tree = _tree(posterior, {"x_center": center, "x_scale": scale}, "logistic", "logit")
    tree["posterior"] = tree["posterior"].dataset.assign_coords(feature=list(names))
    return tree


def test_original_units_and_ratios_are_the_draws_transformed():
    alpha, beta = _draws(0.3, 0.1), _draws([0.5, -1.0], 0.05, (2,))
    center, scale = np.array([1.0, 10.0]), np.array([2.0, 5.0])
    table = fit_summary(_logistic_tree(alpha, beta, center, scale), interval=0.9)
    assert table.index.tolist() == ["intercept", "beta[a]", "beta[b]"]  # nuisance (x_mean) left out
    assert table.attrs["scale"] == "original" and table.attrs["preprocessed"]
    slopes = beta / scale
    original_alpha = alpha - slopes @ center
    np.testing.assert_allclose(table.loc["beta[b]", "coef"], slopes[..., 1].mean())
    np.testing.assert_allclose(table.loc["intercept", "coef"], original_alpha.mean())
    np.testing.assert_allclose(
        table.loc["beta[a]", ["coef lower 90%", "coef upper 90%"]], np.quantile(slopes[..., 0], [0.05, 0.95]), rtol=1e-6
    )
    np.testing.assert_allclose(
        table.loc["beta[a]", ["exp(coef) lower 90%", "exp(coef) upper 90%"]],
        np.quantile(np.exp(slopes[..., 0]), [0.05, 0.95]),
        rtol=1e-6,
    )
    assert table.attrs["ratio"] == "odds ratio"
    assert (table["r_hat"] < 1.05).all() and (table["ess_bulk"] > 200).all()


def test_exp_coef_is_exp_of_the_coef_printed_on_the_same_scale():
    """exp(coef) is exp of the coef column beside it (lifelines: exp of the point estimate), not
    the posterior mean of exp(β) on another scale; its bounds are exp of coef's."""
    alpha, beta = _draws(-1.0, 0.05, ()), _draws([0.46, -0.47], 0.06, (2,))
    center, scale = np.array([50.0, 27.0]), np.array([9.0, 4.6])
    tree = _logistic_tree(alpha, beta, center, scale)
    for requested, slopes in (("original", beta / scale), ("fitted", beta)):
        table = fit_summary(tree, scale=requested)
        assert table.attrs["scale"] == requested
        np.testing.assert_allclose(table.loc["beta[a]", "coef"], slopes[..., 0].mean())
        np.testing.assert_allclose(table["exp(coef)"], np.exp(table["coef"]))
        np.testing.assert_allclose(table["exp(coef) lower 95%"], np.exp(table["coef lower 95%"]))
        np.testing.assert_allclose(table["exp(coef) upper 95%"], np.exp(table["coef upper 95%"]))
    with pytest.raises(ValueError, match="scale must be one of"):
        fit_summary(tree, scale="public")


def test_the_summary_repeats_the_warnings_of_the_build_after_its_header():
    alpha, beta = _draws(-1.0, 0.05, ()), _draws([0.46, -0.47], 0.06, (2,))
    tree = _logistic_tree(alpha, beta, np.array([50.0, 27.0]), np.array([9.0, 4.6]))
    message = "the covariate law rests on 30 public rows for 40000 private ones: its error is 12.3 times the spread"
    labels = [*tree["constant_data"].dataset.coords["fit_field"].values, f"warning={message}"]
    constant = tree["constant_data"].dataset
    tree["constant_data"] = xr.Dataset(
        {"fit_record": (("fit_field",), np.zeros(4))}, coords={"fit_field": labels}
    ).merge(constant.drop_vars(["fit_record", "fit_field"]))
    out = io.StringIO()
    print_summary(tree, file=out)
    header = " ".join(out.getvalue().split("---")[0].split())  # the header wraps long values
    assert "warning = the covariate law rests on 30 public rows" in header and "12.3 times" in header
    plain = io.StringIO()
    print_summary(_logistic_tree(alpha, beta, np.array([50.0, 27.0]), np.array([9.0, 4.6])), file=plain)
    assert "warning" not in plain.getvalue()


def test_printed_table_fits_100_columns_with_integer_ess_and_names_its_scale():
    alpha, beta = _draws(-1.0, 0.05, ()), _draws([0.46, -0.47], 0.06, (2,))
    tree = _logistic_tree(alpha, beta, np.array([50.0, 27.0]), np.array([9.0, 4.6]))
    out = io.StringIO()
    print_summary(tree, file=out)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 100, text
    flat = " ".join(text.split())  # the header wraps its long lines
    assert "scale = original units (public centring and scaling undone): slopes per unit of each feature" in flat
    assert "exp(coef) = odds ratio: exp of coef" in flat
    table = fit_summary(tree)
    rows = [line.split() for line in text.splitlines() if line.startswith("beta[a]")]
    printed = dict(zip(["coef", "se(coef)", "lower", "upper"], map(float, rows[0][1:5]), strict=True))
    assert printed["coef"] == pytest.approx(table.loc["beta[a]", "coef"], abs=5e-4)
    assert rows[1][-2:] == [str(int(table.loc["beta[a]", key])) for key in ("ess_bulk", "ess_tail")]
    assert float(rows[1][1]) == pytest.approx(np.exp(printed["coef"]), abs=2e-3)  # exp(coef) of the printed coef
    out = io.StringIO()
    print_summary(tree, scale="fitted", file=out)
    assert "scale = the public scale fitted on, (x − x_center)/x_scale" in " ".join(out.getvalue().split())
    long = ("systolic_blood_pressure_at_enrolment", "body_mass_index_at_enrolment")
    out = io.StringIO()
    print_summary(_logistic_tree(alpha, beta, np.array([50.0, 27.0]), np.array([9.0, 4.6]), long), file=out)
    assert max(len(line) for line in out.getvalue().splitlines()) <= 100, out.getvalue()
    assert out.getvalue().count("beta[systolic_blood_pressure_at_enrolment]") == 3  # three blocks


def test_identity_link_without_preprocessing_has_no_ratio():
    tree = _tree({"beta": (("chain", "draw", "feature"), _draws(1.0, 0.1, (3,)))}, {}, "linear", "identity")
    table = fit_summary(tree)
    assert "exp(coef)" not in table and table.attrs["scale"] == "original" and not table.attrs["preprocessed"]
    assert table.attrs["ratio"] is None and len(table) == 3
    out = io.StringIO()
    print_summary(tree, file=out)
    assert "scale = the features as released (no public preprocessing recorded)" in " ".join(out.getvalue().split())


def test_bad_input_is_refused():
    with pytest.raises(TypeError, match="idata"):
        fit_summary({"posterior": None})
    tree = _tree({"x_mean": (("chain", "draw"), _draws(0.0, 1.0))}, {}, "linear", "identity")
    with pytest.raises(ValueError, match="no 'intercept' or 'beta'"):
        fit_summary(tree)
    with pytest.raises(ValueError, match="interval"):
        fit_summary(tree, interval=1.5)
    batched = _tree({"beta": (("chain", "draw", "fit", "feature"), _draws(0.0, 1.0, (2, 3)))}, {}, "linear", "identity")
    with pytest.raises(ValueError, match="batched"):
        fit_summary(batched)


def test_print_summary_header_states_the_release():
    X = RNG.normal(size=(600, 2))
    y = RNG.uniform(size=600) < 0.4
    prep = Preprocessing.from_public(RNG.normal(size=(50, 2)))
    release = release_logistic_stats(X, y, epsilon=0.5, delta=1e-6, x_bound=3.0, rng=0, preprocessing=prep)
    tree = _tree(
        {"beta": (("chain", "draw", "feature"), _draws(0.2, 0.1, (2,)))},
        {"x_center": prep.x_center, "x_scale": prep.x_scale},
        "logistic",
        "logit",
    )
    out = io.StringIO()
    print_summary(tree, release, file=out)
    text = " ".join(out.getvalue().split())  # the header wraps its long lines
    assert max(len(line) for line in out.getvalue().splitlines()) <= 100
    assert "ε = 0.5, δ = 1e-06" in text and "not private" in text  # a seeded release says so
    assert release.mechanism in text and "n = 600 (public)" in text
    assert "x_bound = 3" in text and "count is not released" in text
    assert "2 chains × 500 draws, 0 divergent" in text and "odds ratio" in text


def test_preprocessing_of_an_earlier_saved_posterior_is_still_read():
    """A posterior saved before the map was packed kept one preprocessing_<name> array per name
    (and none for the names added later): the predictors read it, with the defaults filled in."""
    from pm_private.linear.predict import prediction_transform

    labels = ["family=linear", "release=linear_stats_gaussian", "transform=identity"]
    old = {
        "preprocessing_x_center": np.array([1.0, 2.0]),
        "preprocessing_x_scale": np.array([3.0, 4.0]),
        "preprocessing_x_clip": np.inf,
        "preprocessing_x_norm_clip": 5.0,
        "preprocessing_y_center": 0.5,
        "preprocessing_y_scale": 2.0,
    }
    constant = xr.Dataset(
        {key: (tuple(f"{key}_dim_0" for _ in range(np.ndim(v))), v) for key, v in old.items()}
        | {"fit_record": (("fit_field",), np.zeros(3))},
        coords={"fit_field": labels},
    )
    posterior = xr.Dataset({"beta": (("chain", "draw", "feature"), _draws(0.0, 1.0, (2,)))})
    tree = xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})
    transform = prediction_transform(tree)
    np.testing.assert_array_equal(transform["x_scale"], [3.0, 4.0])
    assert float(transform["x_norm_clip"]) == 5.0 and float(transform["y_scale"]) == 2.0
    assert np.isinf(transform["x_cube_scale"]) and float(transform["intercept"]) == 0.0
