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
from ..privacy.validation import as_matrix, check_bool, check_positive
from .covariates import lkj_cholesky
from .degree2 import stats_vector
from .normal_logp import normal_logp

__all__ = []


def _arrays(stats, kinds: tuple, noise_aware: bool) -> dict[str, np.ndarray]:
    """The released vector (release order), its noise variances and n, as the model's data."""
    if not isinstance(stats, kinds):
        raise ValueError(f"stats must be a {' or '.join(k.__name__ for k in kinds)}, got {type(stats).__name__}")
    vector = stats_vector(stats.x_sum, stats.y_sum, stats.xx, stats.yx)
    noise_var = stats.noise_variance() if noise_aware else np.zeros(vector.size)
    return {"stats_vector": vector, "stats_noise_var": noise_var, "stats_n": np.float64(stats.n)}


def _glm_model(stats, arrays, moments, *, intercept, feature_names, priors, extra_data) -> pm.Model:
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
    with pm.Model(coords={"feature": names}) as model:
        data = {key: pm.Data(key, value) for key, value in arrays.items()}
        pm.Data("x_bound", np.float64(x_bound))
        for key, value in extra_data.items():
            pm.Data(key, value)
        beta = pm.Normal("beta", 0.0, priors["beta_sigma"], dims="feature")
        b = pm.Normal("intercept", 0.0, priors["intercept_sigma"]) if intercept else pt.constant(0.0)
        mu = pm.Normal("x_mean", 0.0, priors["x_mean_sigma"], dims="feature")
        x_chol = lkj_cholesky(d, priors["x_sd_sigma"], priors["x_eta"])
        mean, cov = moments(beta, b, mu, x_chol @ x_chol.T, d)
        n = data["stats_n"]
        total = n * cov + pt.diag(data["stats_noise_var"])
        logp = normal_logp(data["stats_vector"], n * mean, total)
        pm.Potential("likelihood", logp)
    hold_one_blas_thread_while(model)
    return model


def _set_stats(stats, model, kinds, noise_aware, **extra) -> None:
    model = pm.modelcontext(model)
    arrays = _arrays(stats, kinds, check_bool("noise_aware", noise_aware))
    if arrays["stats_vector"].shape != model["stats_vector"].get_value().shape:
        raise ValueError("stats: the number of features differs from the model's")
    for key, value in extra.items():
        if model[key].get_value() != value:
            raise ValueError(f"stats: {key} is {value}, the model's {model[key].get_value()} (build a new model)")
    pm.set_data({**arrays, "x_bound": np.float64(np.inf if stats.x_bound is None else stats.x_bound)}, model=model)


def _posterior_dataset(posterior) -> xr.Dataset:
    if isinstance(posterior, xr.DataTree):
        return posterior["posterior"].to_dataset()
    if isinstance(posterior, xr.Dataset):
        return posterior
    raise ValueError(
        f"posterior must be the DataTree of pm.sample or its posterior Dataset, got {type(posterior).__name__}"
    )


def _linear_predictor(posterior, X, x_bound, builder: str) -> np.ndarray:
    """xᵀβ⁽ˢ⁾ + b⁽ˢ⁾ of the (projected) rows for every posterior draw s: shape (m, S)."""
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
    X = as_matrix(X)
    if X.shape[1] != beta.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns, the model {beta.shape[1]} features")
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds missing or non-finite values")
    if x_bound is not None and np.isfinite(x_bound):
        X = project_rows(X, x_bound)
    return X @ beta.T + b


def _interval_table(values: np.ndarray, interval: float) -> pd.DataFrame:
    lower, upper = np.quantile(values, [(1 - interval) / 2, (1 + interval) / 2], axis=1)
    return pd.DataFrame({"mean": values.mean(axis=1), "lower": lower, "upper": upper})
