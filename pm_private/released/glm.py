"""The noise-aware model of released degree-2 statistics shared by the logistic and Poisson
families, and its predictor core.

A release publishes r = s + ξ/w with s = Σᵢ t(xᵢ, yᵢ) the true statistics of the n private
records, t(x, y) = (x, y, upper(xxᵀ), y·x), and Gaussian noise of known variance.  As for linear
regression (Bernstein & Sheldon 2019) the true statistics are latent and marginalised with their
central-limit normal under a model of the covariates, and the Gaussian noise adds to its
covariance exactly:

    r ~ N(n·m(θ), n·V(θ) + diag(v)),   θ = (β, b, μ, Σx),

where m and V are the mean and covariance of t(x, y) for one record (Kulkarni et al. 2021).
The cost of a gradient is that of a k × k Cholesky factorisation, k = 2d + 1 + d(d+1)/2,
whatever n is.  Known limits: the projection of rows onto the Bx ball is not modelled (choose Bx
so that few rows are projected); the covariates are modelled as Gaussian.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from .._engine.threads import hold_one_blas_thread_while
from ..privacy.primitives import project_rows
from ..privacy.validation import align_columns, check_bool, check_positive
from .covariates import lkj_cholesky
from .degree2 import degree2_vector, stat_labels
from .family import Family, check_posterior, check_stats, feature_coords, record_fit
from .likelihood import normal_logp

__all__ = ["glm_arrays", "glm_model", "interval_table", "linear_predictor_draws", "set_glm_stats"]


def glm_arrays(stats, family: Family, noise_aware: bool) -> dict[str, np.ndarray]:
    """The released vector (release order), its noise variances and n, as the model's data."""
    check_stats(stats, family)
    vector = degree2_vector(stats.x_sum, stats.y_sum, stats.xx, stats.yx)
    noise_var = stats.noise_variance() if noise_aware else np.zeros(vector.size)
    return {"degree2_vector": vector, "stats_noise_var": noise_var, "stats_n": np.float64(stats.n)}


def glm_model(stats, arrays, moments, *, family, intercept, feature_names, priors, extra_data) -> pm.Model:
    """The noise-aware model of released statistics shared by the GLMs: priors, covariate model,
    and the normal likelihood r ~ N(n·m(θ), n·V(θ) + diag(v)) with the moments of ``moments``."""
    priors = {name: check_positive(name, value) for name, value in priors.items()}
    d = stats.d
    if feature_names is None:
        feature_names = getattr(stats, "features", None)
    names = [f"x{j}" for j in range(d)] if feature_names is None else [str(v) for v in feature_names]
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"feature_names must be {d} distinct names, one per feature, got {len(names)}")
    x_bound = np.inf if stats.x_bound is None else stats.x_bound
    with pm.Model(coords={"feature": names, "statistic": stat_labels(names)}) as model:
        record_fit(family, getattr(stats, "kind", "exact"))
        data = {key: pm.Data(key, value) for key, value in arrays.items()}
        pm.Data("x_bound", np.float64(x_bound))
        for key, value in _preprocessing_arrays(stats).items():
            pm.Data(key, value)
        for key, value in extra_data.items():
            pm.Data(key, value)
        beta = pm.Normal("beta", 0.0, priors["beta_sigma"], dims="feature")
        b = pm.Normal("intercept", 0.0, priors["intercept_sigma"]) if intercept else pt.constant(0.0)
        mu = pm.Normal("x_mean", 0.0, priors["x_mean_sigma"], dims="feature")
        x_chol = lkj_cholesky(d, priors["x_sd_sigma"], priors["x_eta"])
        mean, cov = moments(beta, b, mu, x_chol @ x_chol.T, d)
        n = data["stats_n"]
        total = n * cov + pt.diag(data["stats_noise_var"])
        pm.CustomDist(
            "likelihood",
            n * mean,
            total,
            logp=lambda value, mean, cov: normal_logp(value, mean, cov),
            dist=_normal_dist,
            signature="(k),(k,k)->(k)",
            observed=data["degree2_vector"],
            dims="statistic",
        )
    hold_one_blas_thread_while(model)
    return model


def _preprocessing_arrays(stats) -> dict[str, np.ndarray]:
    """The release's public map of new rows, (x − x_center)/x_scale, as length-d arrays (0 and 1 without one)."""
    prep = getattr(stats, "preprocessing", None)
    center = 0.0 if prep is None or prep.x_center is None else prep.x_center
    scale = 1.0 if prep is None or prep.x_scale is None else prep.x_scale
    d = stats.d
    return {
        "preprocessing_x_center": np.array(np.broadcast_to(center, (d,)), dtype=np.float64),
        "preprocessing_x_scale": np.array(np.broadcast_to(scale, (d,)), dtype=np.float64),
    }


def _normal_dist(mean, cov, size):
    """N(mean, cov), whose draws are replicated releases (prior and posterior predictive checks);
    its log-density is :func:`pm_private.released.likelihood.normal_logp`'s."""
    return pm.MvNormal.dist(mean, cov, size=size)


def set_glm_stats(stats, model, family, noise_aware, **extra) -> None:
    model = pm.modelcontext(model)
    arrays = glm_arrays(stats, family, check_bool("noise_aware", noise_aware))
    if arrays["degree2_vector"].shape != model["degree2_vector"].get_value().shape:
        raise ValueError("stats: the number of features differs from the model's")
    for key, value in extra.items():
        if model[key].get_value() != value:
            raise ValueError(f"stats: {key} is {value}, the model's {model[key].get_value()} (build a new model)")
    x_bound = np.float64(np.inf if stats.x_bound is None else stats.x_bound)
    pm.set_data({**arrays, **_preprocessing_arrays(stats), "x_bound": x_bound}, model=model)


def _preprocessed(posterior, X: np.ndarray) -> np.ndarray:
    """New rows through the release's public preprocessing (x − x_center)/x_scale, when the fit recorded one."""
    if not (isinstance(posterior, xr.DataTree) and "constant_data" in posterior.children):
        return X
    data = posterior["constant_data"].dataset
    if "preprocessing_x_center" not in data:
        return X
    return (X - data["preprocessing_x_center"].values) / data["preprocessing_x_scale"].values


def _posterior_dataset(posterior) -> xr.Dataset:
    if isinstance(posterior, xr.DataTree):
        return posterior["posterior"].to_dataset()
    if isinstance(posterior, xr.Dataset):
        return posterior
    raise ValueError(
        f"posterior must be the DataTree of pm.sample or its posterior Dataset, got {type(posterior).__name__}"
    )


def linear_predictor_draws(posterior, X, x_bound, family: Family) -> np.ndarray:
    """xᵀβ⁽ˢ⁾ + b⁽ˢ⁾ of the (projected) rows for every posterior draw s: shape (m, S)."""
    check_posterior(posterior, family)
    builder = family.builder
    if x_bound is not None:
        x_bound = check_positive("x_bound", x_bound)
    elif isinstance(posterior, xr.DataTree) and "constant_data" in posterior.children:
        x_bound = float(posterior["constant_data"]["x_bound"].values)  # ∞: exact statistics, no projection
    draws = _posterior_dataset(posterior)
    if "beta" not in draws:
        raise ValueError(f"posterior holds no 'beta': pass the result of sampling a {builder}")
    beta = draws["beta"].stack(sample=("chain", "draw")).transpose("sample", ...).values
    if "intercept" in draws:
        b = draws["intercept"].stack(sample=("chain", "draw")).values
    else:
        b = np.zeros(beta.shape[0])
    if not (np.isfinite(beta).all() and np.isfinite(b).all()):
        raise ValueError("posterior: its beta or intercept draws hold NaN or infinite values")
    X = align_columns(X, feature_coords(draws["beta"]))
    if X.shape[1] != beta.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns, the model {beta.shape[1]} features")
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds missing or non-finite values")
    X = _preprocessed(posterior, X)
    if x_bound is not None and np.isfinite(x_bound):
        X = project_rows(X, x_bound)
    return X @ beta.T + b


def interval_table(values: np.ndarray, interval: float) -> pd.DataFrame:
    lower, upper = np.quantile(values, [(1 - interval) / 2, (1 + interval) / 2], axis=1)
    return pd.DataFrame({"mean": values.mean(axis=1), "lower": lower, "upper": upper})
