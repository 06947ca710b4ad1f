"""Censored Weibull survival (Nguyên & Hui 2017b, §III): the PyMC likelihood.

Data are (tᵢ, dᵢ) with dᵢ = 1 for an observed event and 0 for right-censoring.  With shape p and
scale λ, S(t) = exp(−(t/λ)^p) and h(t) = p t^(p−1)/λ^p, so the log-likelihood is

    ℓ(p, λ) = Σ dᵢ (ln p + (p−1) ln tᵢ − p ln λ) − (tᵢ/λ)^p          (Nguyên & Hui 2017b, §III)

i.e. log-density for events and log-survival for censored records, the same as
``pm.Censored(pm.Weibull(alpha=p, beta=λ), upper=c)`` with cᵢ = tᵢ for censored records.

Covariates act on the scale (accelerated failure time, AFT): ln λᵢ = β₀ + xᵢᵀβ, so
T = λᵢ·W with W ~ Weibull(p, 1), a covariate multiplies survival times by exp(xᵀβ).  This is
lifelines' ``WeibullAFTFitter`` parametrisation; the equivalent proportional-hazards form has
h(t | x) = h₀(t)·exp(−p·xᵀβ).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from ..._engine.compile_notice import announce_compilation
from ...privacy.validation import as_matrix
from ...released.family import record_fit
from ..data import check_survival
from .family import WEIBULL

__all__ = ["WeibullSurvival", "weibull_logp", "weibull_model"]


def weibull_logp(time, event, p, lam):
    """Per-record log-likelihood dᵢ·ln h(tᵢ) + ln S(tᵢ) as a PyTensor expression (broadcasting).

    ln h(t) = ln p − ln λ + (p − 1)(ln t − ln λ) and ln S(t) = −(t/λ)^p.  Censored records with
    t = 0 contribute 0 (no NaN from 0·ln 0).

    Parameters
    ----------
    time : tensor_like
        Times t > 0 (censored records may have t = 0).
    event : tensor_like
        1 for an observed event, 0 for right-censoring.
    p : tensor_like
        The shape p > 0.
    lam : tensor_like
        The scale λ > 0.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The per-record log-likelihood, broadcast over the arguments.
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
    alpha : tensor_like
        The shape α > 0, a scalar or one per record (positional or keyword, as in ``pm.Weibull``).
    beta : tensor_like
        The scale β > 0, a scalar or one per record, e.g. ``beta = pm.math.exp(b0 + X @ coef)``
        for the accelerated-failure-time model.
    censoring : tensor_like, default +inf
        Public censoring time(s) cᵢ of the random draws (scalar or one per record).
    observed : array (n, 2), optional
        Rows [tᵢ, dᵢ]; ``pm.Data`` and ``pm.Minibatch`` (with ``total_size``) are accepted.
    **kwargs
        Passed to ``pm.CustomDist`` (``dims``, ``shape``, ``total_size``, …).

    Raises
    ------
    ValueError
        If alpha and beta are not both given, or ``observed`` is not an (n, 2) array of valid
        [time, event] rows.

    Examples
    --------
    >>> with pm.Model():                                                  # doctest: +SKIP
    ...     alpha = pm.LogNormal("alpha", 0.0, 1.0)
    ...     beta = pm.math.exp(pm.Normal("b0", 0.0, 5.0) + X @ pm.Normal("coef", 0.0, 2.0, shape=d))
    ...     WeibullSurvival("t", alpha=alpha, beta=beta, censoring=horizon, observed=np.column_stack([t, d]))
    """

    def __new__(cls, name: str, alpha=None, beta=None, *, censoring=np.inf, observed=None, **kwargs):
        if alpha is None or beta is None:
            raise ValueError("WeibullSurvival needs alpha (shape) and beta (scale)")
        return pm.CustomDist(
            name, *cls._params(alpha, beta, censoring), observed=_check_observed(observed), **cls._options(), **kwargs
        )

    @classmethod
    def dist(cls, alpha, beta, *, censoring=np.inf, **kwargs):
        """The unnamed distribution (as ``pm.Weibull.dist``), e.g. for ``pm.draw`` or ``pm.logp``.

        Parameters
        ----------
        alpha : tensor_like
            The shape α > 0.
        beta : tensor_like
            The scale β > 0.
        censoring : tensor_like, default +inf
            Public censoring time(s) of the random draws.
        **kwargs
            Passed to ``pm.CustomDist.dist``.

        Returns
        -------
        pytensor.tensor.TensorVariable
            The distribution's random variable, one (time, event) row per draw.
        """
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
    log_p_sigma: float = 1.0,
    beta_sigma: float = 2.0,
    intercept_sigma: float = 5.0,
):
    """Bayesian accelerated-failure-time Weibull regression of right-censored survival times.

    The censored Weibull likelihood of Nguyên & Hui (2017b, §III) with covariates on the scale
    (accelerated failure time):

        ln p ~ N(0, log_p_sigma²),   β₀ ~ N(0, intercept_sigma²),   β ~ N(0, beta_sigma² I),
        ln λᵢ = β₀ + xᵢᵀβ,   Tᵢ ~ Weibull(shape p, scale λᵢ),

    observed as (tᵢ, dᵢ): the time and 1 for an event, 0 for right-censoring at tᵢ.  A covariate
    multiplies survival times by exp(xᵀβ) (lifelines' ``WeibullAFTFitter`` parametrisation).

    Parameters
    ----------
    time : array_like, shape (n,)
        Follow-up times, finite and ≥ 0.
    event : array_like, shape (n,)
        1 for an observed event, 0 for right-censoring.
    X : array_like or pandas.DataFrame, shape (n, d), optional
        Finite covariates; a data frame's column names become the ``feature`` coordinates (else
        ``x0``, ``x1``, …).  None (default): no covariates, one common scale ``lam``.
    censoring : float or array_like, default +inf
        The public censoring time(s) of predictive draws, e.g. the study horizon (the likelihood
        does not depend on it).
    log_p_sigma : float, default 1.0
        The prior standard deviation of ln p.
    beta_sigma : float, default 2.0
        The prior standard deviation of the coefficients β.
    intercept_sigma : float, default 5.0
        The prior standard deviation of the intercept β₀.

    Returns
    -------
    pymc.Model
        With coords ``record``, ``outcome`` (``time``, ``event``) and ``feature`` (with ``X``), the
        variables ``log_p``, ``p`` (deterministic e^(ln p)), ``intercept`` β₀, ``beta`` (dims
        ``feature``, with ``X``) or ``lam`` (deterministic e^β₀, without ``X``), the likelihood
        ``t`` (:class:`WeibullSurvival`, shape α = p, scale λᵢ, dims ``(record, outcome)``), and
        the data ``survival`` (rows [tᵢ, dᵢ]), ``X`` (with covariates) and ``fit_record`` (dim
        ``fit_field``: the model's family, checked by the predictors).

    Raises
    ------
    ValueError
        For invalid times or events, or covariates that are not finite or not n rows.

    Notes
    -----
    Privacy: the model conditions on the records themselves, so its posterior is not
    differentially private; the private Weibull fits are :func:`pm_private.survival.weibull_private`
    and its baselines.

    Contract: the names listed under Returns are public.  One value of the log-likelihood per
    record (``pm.compute_log_likelihood``, ``az.loo``).  Sample it with ``pm.sample()`` (NUTS).
    Choose the time unit so that β₀ is O(1).  For predictions at m new covariate rows, call
    ``pm.set_data({"X": X_new, "survival": np.zeros((m, 2))}, coords={"record": range(m)})`` and
    then ``pm.sample_posterior_predictive``.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.survival import weibull_model
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2))
    >>> t = rng.weibull(1.5, size=100) * np.exp(0.5 * X[:, 0])
    >>> event = (t < 2.0).astype(int)
    >>> model = weibull_model(np.minimum(t, 2.0), event, X, censoring=2.0)
    >>> [rv.name for rv in model.free_RVs]
    ['log_p', 'intercept', 'beta']
    >>> model.coords["feature"]
    ('x0', 'x1')
    """
    time, event = check_survival(time, event)
    coords = {"record": np.arange(time.size), "outcome": ["time", "event"]}
    if X is not None:
        columns = list(X.columns) if isinstance(X, pd.DataFrame) else None
        X = as_matrix(X)
        columns = columns or [f"x{j}" for j in range(X.shape[1])]
        if X.shape[0] != time.size or not np.isfinite(X).all():
            raise ValueError(f"X must be finite with {time.size} rows, got shape {X.shape}")
        coords["feature"] = columns
    with pm.Model(coords=coords) as model:
        record_fit(WEIBULL, "records")
        observed = pm.Data("survival", np.column_stack([time, event.astype(np.float64)]), dims=("record", "outcome"))
        log_p = pm.Normal("log_p", 0.0, log_p_sigma)
        p = pm.Deterministic("p", pt.exp(log_p))
        intercept = pm.Normal("intercept", 0.0, intercept_sigma)
        if X is None:
            lam = pm.Deterministic("lam", pt.exp(intercept))
        else:
            beta = pm.Normal("beta", 0.0, beta_sigma, dims="feature")
            lam = pt.exp(intercept + pm.Data("X", X, dims=("record", "feature")) @ beta)
        WeibullSurvival("t", p, lam, censoring=censoring, observed=observed, dims=("record", "outcome"))
    announce_compilation(model, WEIBULL.name)
    return model
