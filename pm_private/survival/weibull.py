"""Censored Weibull survival (Nguyên & Hui 2017b, §III): PyMC likelihood, fast MLE, generator.

Data are (tᵢ, dᵢ) with dᵢ = 1 for an observed event and 0 for right-censoring.  With shape p and
scale λ, S(t) = exp(−(t/λ)^p) and h(t) = p t^(p−1)/λ^p, so the log-likelihood is

    ℓ(p, λ) = Σ dᵢ (ln p + (p−1) ln tᵢ − p ln λ) − (tᵢ/λ)^p          (Nguyên & Hui 2017b, §III)

i.e. log-density for events and log-survival for censored records, the same as
``pm.Censored(pm.Weibull(alpha=p, beta=λ), upper=c)`` with cᵢ = tᵢ for censored records.

Covariates act on the scale (accelerated failure time, AFT): ln λᵢ = β₀ + xᵢᵀβ, so
T = λᵢ·W with W ~ Weibull(p, 1), a covariate multiplies survival times by exp(xᵀβ).  This is
lifelines' ``WeibullAFTFitter`` parametrisation; the equivalent proportional-hazards form has
h(t | x) = h₀(t)·exp(−p·xᵀβ).

Setting ∂ℓ/∂λ = ∂ℓ/∂p = 0 gives the MLE equations

    Σ tᵢ^p ln tᵢ / Σ tᵢ^p = 1/p + Σ dᵢ ln tᵢ / Σ dᵢ        (4)
    λ^p = Σ tᵢ^p / Σ dᵢ                                  (5)

The left side of (4) is the tilted mean of ln t, non-decreasing in p (its derivative is the
tilted variance); the right side decreases, so (4) has at most one root, found by
:func:`weibull_mle` with safeguarded Newton steps inside a bracket.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from ..datasets.flchain import SurvivalDataset
from ..privacy.validation import as_matrix, check_positive
from .data import check_survival
from .spline import _integer

__all__ = [
    "WeibullMLE",
    "WeibullSurvival",
    "simulate_weibull",
    "weibull_logp",
    "weibull_mle",
    "weibull_model",
]


def weibull_logp(time, event, p, lam):
    """Per-record log-likelihood dᵢ·ln h(tᵢ) + ln S(tᵢ) as a PyTensor expression (broadcasting).

    ln h(t) = ln p − ln λ + (p − 1)(ln t − ln λ) and ln S(t) = −(t/λ)^p.  Censored records with
    t = 0 contribute 0 (no NaN from 0·ln 0).
    """
    time, event = pt.as_tensor_variable(time), pt.as_tensor_variable(event)
    p, lam = (x if isinstance(x, pt.Variable) else pt.as_tensor(np.asarray(x, dtype=np.float64)) for x in (p, lam))
    log_z = pt.log(time) - pt.log(lam)
    log_hazard = pt.log(p) - pt.log(lam) + (p - 1.0) * log_z
    return pt.switch(pt.eq(event, 1), log_hazard, 0.0) - pt.exp(p * log_z)


def _survival_dist(alpha, beta, censoring, size):
    """Symbolic draw of (tᵢ, dᵢ): Tᵢ ~ Weibull(α, β), tᵢ = min(Tᵢ, cᵢ), dᵢ = [Tᵢ ≤ cᵢ]."""
    event_time = pm.Weibull.dist(alpha=alpha, beta=beta, size=size)
    event = pt.cast(pt.le(event_time, censoring), "float64")
    return pt.stack([pt.minimum(event_time, censoring), event], axis=-1)


def _survival_logp(value, alpha, beta, censoring):
    return weibull_logp(value[..., 0], value[..., 1], alpha, beta)


def _check_observed(observed):
    """Validate a NumPy observed (n, 2) array [time, event]; symbolic values pass unchanged."""
    if observed is None or isinstance(observed, pt.Variable):
        return observed
    value = np.asarray(observed, dtype=np.float64)
    if value.ndim != 2 or value.shape[1] != 2:
        raise ValueError(f"observed must be an (n, 2) array of [time, event] rows, got shape {value.shape}")
    time, event = check_survival(value[:, 0], value[:, 1])
    return np.column_stack([time, event.astype(np.float64)])


class WeibullSurvival:
    """Right-censored Weibull survival (Nguyên & Hui 2017b, §III) as a PyMC distribution.

    Each record is a row (tᵢ, dᵢ) of the observed (n, 2) array: the time and 1 for an observed
    event, 0 for right-censoring at tᵢ.  With shape α and scale β (``pm.Weibull``'s names),

        log p(tᵢ, dᵢ) = dᵢ·ln h(tᵢ) + ln S(tᵢ),   S(t) = exp(−(t/β)^α),   h(t) = α t^(α−1)/β^α,

    one value per record, so ``pm.compute_log_likelihood`` and ``az.loo`` work.  Random draws
    (prior and posterior predictive) are Tᵢ ~ Weibull(α, β) censored at the public ``censoring``
    time cᵢ: (min(Tᵢ, cᵢ), [Tᵢ ≤ cᵢ]).  The likelihood does not depend on cᵢ (non-informative
    censoring); cᵢ only says how new data would be censored, e.g. the study's horizon.

    Parameters
    ----------
    name : str
        Name of the variable.
    alpha, beta : tensor_like
        Shape α > 0 and scale β > 0, scalars or one per record, e.g.
        ``beta = pm.math.exp(b0 + X @ coef)`` for the accelerated-failure-time model.
    censoring : tensor_like, default +inf
        Public censoring time(s) cᵢ of the random draws (scalar or one per record).
    observed : array (n, 2), optional
        Rows [tᵢ, dᵢ]; ``pm.Data`` and ``pm.Minibatch`` (with ``total_size``) are accepted.
    **kwargs
        Passed to ``pm.CustomDist`` (``dims``, ``shape``, ``total_size``, …).

    Examples
    --------
    >>> with pm.Model():                                                  # doctest: +SKIP
    ...     alpha = pm.LogNormal("alpha", 0.0, 1.0)
    ...     beta = pm.math.exp(pm.Normal("b0", 0.0, 5.0) + X @ pm.Normal("coef", 0.0, 2.0, shape=d))
    ...     WeibullSurvival("t", alpha, beta, censoring=horizon, observed=np.column_stack([t, d]))

    The old call ``WeibullSurvival(name, time, event, p=..., lam=...)`` still works (deprecated).
    """

    def __new__(cls, name: str, *args, censoring=np.inf, observed=None, p=None, lam=None, **kwargs):
        if p is not None or lam is not None:
            warnings.warn(
                "WeibullSurvival(name, time, event, p=, lam=) is deprecated: use "
                "WeibullSurvival(name, alpha, beta, observed=np.column_stack([time, event]))",
                DeprecationWarning,
                stacklevel=2,
            )
            if len(args) != 2 or p is None or lam is None or observed is not None:
                raise ValueError("the deprecated form needs time and event positionally, p= and lam=")
            observed = np.column_stack(check_survival(*args))
            args = (p, lam)
        if len(args) != 2:
            raise ValueError("WeibullSurvival needs alpha (shape) and beta (scale)")
        return pm.CustomDist(
            name, *cls._params(*args, censoring), observed=_check_observed(observed), **cls._options(), **kwargs
        )

    @classmethod
    def dist(cls, alpha, beta, *, censoring=np.inf, **kwargs):
        """The unnamed distribution (as ``pm.Weibull.dist``), e.g. for ``pm.draw`` or ``pm.logp``."""
        return pm.CustomDist.dist(*cls._params(alpha, beta, censoring), **cls._options(), **kwargs)

    @staticmethod
    def _params(alpha, beta, censoring):
        return [
            x if isinstance(x, pt.Variable) else pt.as_tensor(np.asarray(x, dtype=np.float64))
            for x in (alpha, beta, censoring)
        ]

    @staticmethod
    def _options():
        return {
            "dist": _survival_dist,
            "logp": _survival_logp,
            "signature": "(),(),()->(2)",
            "class_name": "WeibullSurvival",
        }


def weibull_model(
    time,
    event,
    X=None,
    *,
    censoring=np.inf,
    log_p_sd: float = 1.0,
    coef_sd: float = 2.0,
    intercept_sd: float = 5.0,
):
    """AFT Weibull model: ln p ~ N(0, log_p_sd), β₀ ~ N(0, intercept_sd), β ~ N(0, coef_sd),
    ln λᵢ = β₀ + xᵢᵀβ; the likelihood is :class:`WeibullSurvival` named ``"t"`` (shape α = p,
    scale λᵢ), observed ``pm.Data("survival", [t, d])`` with dims (record, outcome).

    Variables: ``p`` (deterministic e^(ln p)), ``log_p``, ``intercept``, ``beta`` (if X given),
    ``lam`` (only without covariates).  ``censoring`` is the public censoring time of predictive
    draws (e.g. the study horizon; default none).  For predictions at new covariates call
    ``pm.set_data({"X": X_new, "survival": np.zeros((m, 2))}, coords={"record": range(m)})``.
    Choose the time unit so that β₀ is O(1).
    """
    time, event = check_survival(time, event)
    coords = {"record": np.arange(time.size), "outcome": ["time", "event"]}
    if X is not None:
        columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
        X = as_matrix(X)
        columns = columns or [f"x{j}" for j in range(X.shape[1])]
        if X.shape[0] != time.size or not np.isfinite(X).all():
            raise ValueError(f"X must be finite with {time.size} rows, got shape {X.shape}")
        coords["covariate"] = columns
    with pm.Model(coords=coords) as model:
        observed = pm.Data("survival", np.column_stack([time, event.astype(np.float64)]), dims=("record", "outcome"))
        log_p = pm.Normal("log_p", 0.0, log_p_sd)
        p = pm.Deterministic("p", pt.exp(log_p))
        intercept = pm.Normal("intercept", 0.0, intercept_sd)
        if X is None:
            lam = pm.Deterministic("lam", pt.exp(intercept))
        else:
            beta = pm.Normal("beta", 0.0, coef_sd, dims="covariate")
            lam = pt.exp(intercept + pm.Data("X", X, dims=("record", "covariate")) @ beta)
        WeibullSurvival("t", p, lam, censoring=censoring, observed=observed, dims=("record", "outcome"))
    return model


class WeibullMLE(NamedTuple):
    """Maximum-likelihood shape p and scale λ (λ in the units of the times)."""

    shape: float
    scale: float


def _shape_root(z, d, *, p_max: float = 1e4, rtol: float = 1e-13, max_iter: int = 200):
    """Root p of (4) for each row of z = ln t − max ln t ≤ 0 (shape (m, n)), events d (m, n).

    Safeguarded Newton: F(p) = f(p) − 1/p − z̄_d, F′(p) = tilted variance + 1/p² > 0.  The bracket
    starts at lo = 1/(1 + |z̄_d|), where F(lo) ≤ −1 because f ≤ 0, and hi is doubled until
    F(hi) > 0.  Rows with no event, or F ≤ 0 up to ``p_max`` (no finite root, e.g. every event at
    the largest time), get +inf: the likelihood then increases without bound in p.
    """
    z = np.atleast_2d(z)
    d = np.atleast_2d(d).astype(np.float64)
    events = d.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar = (d * z).sum(axis=1) / events

    def F(p):
        w = np.exp(p[:, None] * z)
        s0, s1, s2 = w.sum(axis=1), (w * z).sum(axis=1), (w * z * z).sum(axis=1)
        f = s1 / s0
        return f - 1.0 / p - zbar, s2 / s0 - f * f + 1.0 / p**2

    ok = events > 0
    lo = np.where(ok, 1.0 / (1.0 + np.abs(np.nan_to_num(zbar))), 1.0)
    hi = 2.0 * lo
    while True:
        grow = ok & (F(hi)[0] <= 0) & (hi < p_max)
        if not grow.any():
            break
        hi = np.where(grow, 2.0 * hi, hi)
    ok &= F(hi)[0] > 0
    p = np.sqrt(lo * hi)
    for _ in range(max_iter):
        value, slope = F(p)
        lo = np.where(value < 0, p, lo)
        hi = np.where(value < 0, hi, p)
        step = p - value / slope
        p_new = np.where((step > lo) & (step < hi), step, 0.5 * (lo + hi))
        done = (np.abs(p_new - p) <= rtol * p) | ~ok
        p = np.where(ok, p_new, p)
        if done.all():
            break
    return np.where(ok, p, np.inf)


def _scale_from_shape(z, d, p, z_max):
    """λ from (5): λ = t_max·(Σ e^{p z} / Σ d)^{1/p} with z = ln t − ln t_max."""
    z, d = np.atleast_2d(z), np.atleast_2d(d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_mean = np.log(np.exp(p[:, None] * z).sum(axis=1) / d.sum(axis=1))
        return np.exp(z_max + log_mean / p)


def _mle_rows(log_t, d):
    """(p, λ) per row of log times (m, n); +inf where no finite MLE exists."""
    log_t = np.atleast_2d(log_t)
    z_max = log_t.max(axis=1)
    z = log_t - z_max[:, None]
    p = _shape_root(z, d)
    lam = np.where(np.isfinite(p), _scale_from_shape(z, d, np.where(np.isfinite(p), p, 1.0), z_max), np.inf)
    return p, lam


def weibull_mle(time, event) -> WeibullMLE:
    """Maximum-likelihood (p, λ) of censored Weibull data: the root of (4), then (5).

    Times must be > 0; the result does not depend on the time unit except λ, which is in the
    units of ``time``.  Raises ValueError when the MLE does not exist (no event, or no finite root
    of (4), which happens when every event is at the longest time).
    """
    t, d = check_survival(time, event)
    if (t <= 0).any():
        raise ValueError(f"times must be > 0 for the Weibull MLE (first zero at index {np.flatnonzero(t <= 0)[0]})")
    if d.sum() == 0:
        raise ValueError("no events (all records censored): the Weibull MLE does not exist")
    p, lam = _mle_rows(np.log(t), d)
    if not np.isfinite(p[0]):
        raise ValueError("equation (4) has no finite root: every event is at the longest time")
    return WeibullMLE(float(p[0]), float(lam[0]))


def simulate_weibull(
    n: int,
    *,
    shape: float,
    scale: float,
    X=None,
    beta=None,
    censor=None,
    horizon: float | None = None,
    rng=None,
) -> SurvivalDataset:
    """Synthetic censored Weibull data with known parameters.

    Event times Tᵢ = λᵢ·(−ln Uᵢ)^{1/p} with λᵢ = scale·exp(xᵢᵀβ) (AFT; λᵢ = scale without X).
    Censoring: Cᵢ ~ Uniform(censor[0], censor[1]) if ``censor`` is given, and administrative
    censoring at ``horizon`` if given; tᵢ = min(Tᵢ, Cᵢ, horizon), dᵢ = [Tᵢ ≤ min(Cᵢ, horizon)].
    Returns a :class:`SurvivalDataset` (horizon = ``horizon`` or +inf).
    """
    n = _integer("n", n, 1)
    shape, scale = check_positive("shape", shape), check_positive("scale", scale)
    rng = np.random.default_rng(rng)
    if X is None:
        X = pd.DataFrame(index=pd.RangeIndex(n))
        lam = np.full(n, scale)
    else:
        X = pd.DataFrame(X)
        if X.shape[0] != n or beta is None or np.shape(beta) != (X.shape[1],):
            raise ValueError(f"X must have {n} rows and beta one entry per column")
        lam = scale * np.exp(X.to_numpy(dtype=np.float64) @ np.asarray(beta, dtype=np.float64))
    T = lam * rng.exponential(size=n) ** (1.0 / shape)
    C = np.full(n, np.inf)
    if censor is not None:
        low, high = censor
        if not 0 <= low <= high:
            raise ValueError(f"censor must be (low, high) with 0 ≤ low ≤ high, got {censor!r}")
        C = rng.uniform(low, high, size=n)
    if horizon is not None:
        C = np.minimum(C, check_positive("horizon", horizon))
    return SurvivalDataset(
        X=X,
        time=np.minimum(T, C),
        event=(T <= C).astype(np.int8),
        horizon=float(np.inf if horizon is None else horizon),
    )
