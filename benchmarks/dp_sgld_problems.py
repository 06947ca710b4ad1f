"""Problems of the DP-SGLD benchmark (:mod:`benchmarks.bench_dp_sgld`, whose docstring describes
them): the :class:`Problem` record, release-then-infer shared by the logistic and Poisson rows
(:class:`ReleaseThenNuts`), Poisson regression on statsmodels' ``randhie``, the synthetic
grouped logistic regression with random intercepts and a logistic regression on covariates in
mixed units."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pymc as pm
from scipy.special import expit

from benchmarks.bench_calibration_glm import Fitter
from pm_private import poisson_bounds, poisson_model, release_poisson_stats, set_poisson_stats
from pm_private.poisson import count_bound

DELTA = 1e-5
#: DP-SGLD's expected subsample size q·n on the new data sets.
SUBSAMPLE = 200
#: randhie: prior s.d.s of the intercept and of the coefficients (log rate ratios).
POISSON_INTERCEPT_SD, POISSON_BETA_SD = 2.0, 1.0
#: randhie: the public share of people (one row each), as in ``benchmarks.study_glm_real``.
PUBLIC_SHARE = 0.1
#: The mixed-units logistic regression: the covariates' public units (a data dictionary's scales)
#: and the truth on the standardised scale (intercept, β·unit).
UNITS, UNITS_INTERCEPT, UNITS_BETA = np.array([10.0, 0.1]), -0.4, np.array([0.8, -0.5])
#: The grouped logistic regression's truth: μ, τ, β.
GROUP_MU, GROUP_TAU, GROUP_BETA = -0.3, 0.6, np.array([0.7, -0.4])


class ReleaseThenNuts:
    """Release-then-infer: per ε the row bound ``bound(ε)``; per replicate the statistics released
    by ``release(ε, Bx, seed)``, put into the noise-aware model ``build(release)`` by
    ``swap(release, model, noise_aware=True)`` and one NUTS chain of ``tune`` + ``draws`` with
    the dense Laplace-started mass matrix of :class:`benchmarks.bench_calibration_glm.Fitter`.  The
    model and the sampler are built and compiled on the first release only."""

    def __init__(self, rows, *, bound, release, build, swap, tune: int, draws: int, seed: int):
        self.rows, self.bound, self.release, self.build, self.swap = rows, bound, release, build, swap
        self.tune, self.draws, self.seed = tune, draws, seed
        self.fitter = None

    def projected(self, epsilon: float) -> tuple[float, float]:
        """(Bx at ε, the share of the rows the release projects onto its ball)."""
        bound = self.bound(epsilon)
        return bound, float(np.mean(np.linalg.norm(self.rows, axis=1) > bound))

    def fit(self, epsilon: float, bound: float, seed: int):
        """(the chain's posterior, wall seconds of the release and the chain, its divergent draws)."""
        start = time.perf_counter()
        stats = self.release(epsilon, bound, seed)
        if self.fitter is None:
            self.fitter = Fitter(self.build(stats), draws=self.draws, tune=self.tune, seed=self.seed)
        self.swap(stats, self.fitter.model, noise_aware=True)
        before = self.fitter.divergent
        posterior = self.fitter.sample().posterior
        return posterior, time.perf_counter() - start, self.fitter.divergent - before


@dataclass
class Problem:
    """One data set and model: DP-SGLD's sampling rate q, the scored variables (their draws
    concatenated in this order), release-then-infer where there is one, and a line about it."""

    name: str
    model: pm.Model
    rate: float
    variables: tuple[str, ...]
    release: ReleaseThenNuts | None
    about: str
    notes: list[str] | None = None
    #: A public diagonal preconditioner (``dp_sgld``'s ``scale``): DP-SGLD runs with and without it.
    scale: dict | None = None


def poisson_regression(X, y) -> pm.Model:
    """intercept ~ N(0, 2²), βⱼ ~ N(0, 1²), y ~ Poisson(exp(b + Xβ)), data as plain numpy arrays."""
    with pm.Model() as model:
        intercept = pm.Normal("intercept", 0.0, POISSON_INTERCEPT_SD)
        beta = pm.Normal("beta", 0.0, POISSON_BETA_SD, shape=X.shape[1])
        pm.Poisson("y", mu=pm.math.exp(intercept + pm.math.dot(X, beta)), observed=y)
    return model


def randhie(*, tune: int, draws: int, seed: int) -> Problem:
    """Outpatient visits (``mdvis``) of statsmodels' ``randhie`` with the preparation of
    ``benchmarks.study_glm_real`` (its ``load`` and ``split``: the nine covariates, one public row
    per person for a tenth of the people, Yeo-Johnson transforms with standardisation fitted on
    those, no test rows); the private rows are the data."""
    from benchmarks.study_glm_real import load, split  # needs scikit-learn and statsmodels

    X, y, _ = load("randhie", 0)
    (X, y), _, (public_X, public_y) = split(
        X, y, np.random.default_rng(0), PUBLIC_SHARE, 0, pca=False, transform="yeo-johnson", test_share=0.0
    )
    n, d = X.shape
    y_bound = count_bound(public_y)

    def bound(epsilon):
        return poisson_bounds(n, d, epsilon, DELTA, y_bound=y_bound, public_X=public_X, public_y=public_y).x_bound

    def release(epsilon, x_bound, rng):
        return release_poisson_stats(X, y, epsilon=epsilon, delta=DELTA, x_bound=x_bound, y_bound=y_bound, rng=rng)

    def build(stats):  # the Gaussian covariate law (x_sample=None), as the logistic rows
        return poisson_model(stats, beta_sigma=POISSON_BETA_SD, intercept_sigma=POISSON_INTERCEPT_SD, x_sample=None)

    fit = ReleaseThenNuts(
        X, bound=bound, release=release, build=build, swap=set_poisson_stats, tune=tune, draws=draws, seed=seed
    )
    return Problem(
        "randhie",
        poisson_regression(X, y),
        SUBSAMPLE / n,
        ("intercept", "beta"),
        fit,
        f"n = {n} private person-years, d = {d} + intercept, {len(public_y)} public rows",
        [
            f"counts: mean {y.mean():.2f}, variance {y.var():.1f}, max {y.max()}; release count bound B = {y_bound} "
            f"({np.mean(y > y_bound):.1%} of the private counts above it)"
        ],
    )


def grouped_data(seed: int = 2468, n: int = 10_000, groups: int = 20):
    """(X, group, y): two standard Gaussian covariates, each record's group uniform over the
    groups, a_g = μ + τ·u_g with u_g ~ N(0, 1), y ~ Bernoulli(σ(a_group + xᵀβ))."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, GROUP_BETA.size))
    group = rng.integers(groups, size=n)
    intercepts = GROUP_MU + GROUP_TAU * rng.normal(size=groups)
    y = (rng.uniform(size=n) < expit(intercepts[group] + X @ GROUP_BETA)).astype(np.int64)
    return X, group, y


def grouped_model(X, group, y, groups: int) -> pm.Model:
    """μ ~ N(0, 2²), τ ~ HalfNormal(1), z_g ~ N(0, 1), a_g = μ + τ·z_g (non-centred), βⱼ ~ N(0, 2²),
    y ~ Bernoulli(logit⁻¹(a_group + xᵀβ)); the group index is a data array, one entry per record."""
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 2.0)
        tau = pm.HalfNormal("tau", 1.0)
        z = pm.Normal("z", 0.0, 1.0, shape=groups)
        beta = pm.Normal("beta", 0.0, 2.0, shape=X.shape[1])
        pm.Bernoulli("y", logit_p=mu + tau * z[group] + pm.math.dot(X, beta), observed=y)
    return model


def hierarchical(groups: int = 20) -> Problem:
    """The grouped logistic regression, scored on (μ, τ, β); no release-then-infer exists for it.
    DP-SGLD also runs preconditioned by the prior s.d.s (2 for μ and β; 1, the default, for the
    unconstrained τ and the z_g)."""
    X, group, y = grouped_data(groups=groups)
    sizes = np.bincount(group, minlength=groups)
    return Problem(
        "hierarchical",
        grouped_model(X, group, y, groups),
        SUBSAMPLE / len(y),
        ("mu", "tau", "beta"),
        None,
        f"n = {len(y)}, G = {groups} groups ({sizes.min()}–{sizes.max()} records), d = {X.shape[1]}; "
        f"truth μ = {GROUP_MU:g}, τ = {GROUP_TAU:g}, β = {GROUP_BETA.tolist()}; preconditioner: the prior s.d.s",
        scale={"mu": 2.0, "beta": 2.0},
    )


def mixed_units(seed: int = 11, n: int = 10_000) -> Problem:
    """Logistic regression on two covariates in units 10 and 0.1 (x = unit·N(0, 1)), priors
    β ~ N(0, (2/unit)²) in those units, DP-SGLD with and without the public preconditioner
    s_β = 1/unit (the coefficients' scale in the data dictionary's units); no release-then-infer
    (the GLM releases assume standardised covariates)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, UNITS.size)) * UNITS
    y = (rng.uniform(size=n) < expit(UNITS_INTERCEPT + X @ (UNITS_BETA / UNITS))).astype(np.int64)
    with pm.Model() as model:
        intercept = pm.Normal("intercept", 0.0, 2.0)
        beta = pm.Normal("beta", 0.0, 2.0 / UNITS, shape=UNITS.size)
        pm.Bernoulli("y", logit_p=intercept + pm.math.dot(X, beta), observed=y)
    about = f"n = {n}, covariates in units {UNITS.tolist()}, preconditioner s_β = 1/unit"
    return Problem("units", model, SUBSAMPLE / n, ("intercept", "beta"), None, about, scale={"beta": 1.0 / UNITS})
