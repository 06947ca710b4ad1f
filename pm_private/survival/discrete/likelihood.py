"""The discrete-time hazard likelihood (Nguyên & Hui 2017a, §2.2–3.3) as a PyMC distribution."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytensor.tensor as pt
from pytensor.tensor.type_other import NoneTypeT

from ..._engine.compile_notice import announce_compilation
from ...released.family import record_fit
from .data import DiscreteTimeData, check_link
from .family import DISCRETE_TIME
from .ops import hazard_record_loss

__all__ = ["DiscreteTimeHazard", "discrete_time_model"]


def _inverse_link(z, link: str):
    """h = g⁻¹(z) for the links of :data:`LINKS`."""
    if link == "logit":
        return pt.sigmoid(z)
    if link == "cloglog":
        return -pt.expm1(-pt.exp(z))
    return 0.5 * pt.erfc(-z / np.sqrt(2.0))


@cache
def _functions(link: str):
    """(dist, logp) of :class:`DiscreteTimeHazard` for one link (cached: one class per link)."""
    import pymc as pm

    def dist(baseline, eta, censoring, size):
        # event interval Tᵢ = first s with Uᵢₛ < hᵢₛ (q: none), then censored at cᵢ
        if size is not None and not isinstance(size.type, NoneTypeT):
            eta = eta + pt.zeros(size)  # the batch shape
        z = baseline + eta[..., None]
        fails = pt.lt(pm.Uniform.dist(0.0, 1.0, size=z.shape), _inverse_link(z, link))
        q = baseline.shape[-1]
        event_at = pt.switch(fails.any(axis=-1), pt.argmax(fails, axis=-1), q)
        interval = pt.minimum(event_at, censoring)
        return pt.stack([interval, pt.le(event_at, censoring)], axis=-1).astype("int32")

    def logp(value, baseline, eta, censoring):
        interval, event = value[..., 0], value[..., 1]
        eta = pt.broadcast_to(eta, interval.shape)
        losses = hazard_record_loss(baseline, eta.ravel(), interval.ravel(), event.ravel(), link)
        return -losses.reshape(interval.shape)

    return dist, logp


def _check_observed(observed):
    """Validate a NumPy observed (n, 2) array [interval, event]; symbolic values pass unchanged."""
    if observed is None or isinstance(observed, pt.Variable):
        return observed
    value = np.asarray(observed)
    if value.ndim != 2 or value.shape[1] != 2 or not np.issubdtype(value.dtype, np.integer):
        raise ValueError(
            f"observed must be an integer (n, 2) array of [interval, event] rows, got {value.dtype} {value.shape}"
        )
    if (value[:, 0] < 0).any():
        raise ValueError("observed intervals must be ≥ 0")
    if not np.isin(value[:, 1], (0, 1)).all():
        raise ValueError("observed events must be 0 or 1")
    return value.astype(np.int32)


class DiscreteTimeHazard:
    """Discrete-time hazard regression (Nguyên & Hui 2017a, Eq. 3) as a PyMC distribution.

    Record i is a row (kᵢ, δᵢ) of the observed (n, 2) integer array: the interval kᵢ ∈ 0 … q−1 in
    which it died (δᵢ = 1) or was censored (δᵢ = 0).  With baseline γ (q,) and linear predictor
    ηᵢ = xᵢᵀβ, the hazard in interval s is g⁻¹(γ_s + ηᵢ) and

        log p(kᵢ, δᵢ) = −ℓᵢ = −Σ_{s<kᵢ} c(γ_s + ηᵢ) − δᵢ a(γ_kᵢ + ηᵢ) − (1 − δᵢ) c(γ_kᵢ + ηᵢ),

    a = −log h, c = −log(1 − h), one value per record (``pm.compute_log_likelihood``, ``az.loo``).
    The logit link uses the compiled Op of :func:`hazard_record_loss` (memory O(n + q)).  Random
    draws (prior and posterior predictive) follow the model's own simulator: Tᵢ = first s with
    Uᵢₛ < hᵢₛ (q if none), censored at the public interval cᵢ: (min(Tᵢ, cᵢ), [Tᵢ ≤ cᵢ]) (an
    (n, q) uniform table per draw).  The likelihood does not depend on cᵢ.

    Parameters
    ----------
    name : str
        Name of the variable.
    baseline : tensor_like, shape (q,)
        γ: ``basis @ alpha`` for a spline baseline (:func:`interval_basis`) or free effects.
    eta : tensor_like, default 0
        ηᵢ, scalar or one per record, e.g. ``X @ beta`` with ``X = pm.Data(...)`` or a
        ``pm.Minibatch`` (then pass ``total_size=n``).  Check raw records with
        :func:`check_hazard_records` first.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link g of the hazard.
    censoring : tensor_like of int, optional
        Public censoring interval(s) cᵢ of the random draws; default q − 1 (followed to the end).
    observed : integer array (n, 2), optional
        Rows [kᵢ, δᵢ]; ``pm.Data`` and ``pm.Minibatch`` are accepted.  PyMC stores integer observed
        data as int32: give ``pm.Minibatch`` an int32 array (an int64 one would be cast outside
        the minibatch, which PyMC refuses).
    **kwargs
        Passed to ``pm.CustomDist`` (``dims``, ``shape``, ``total_size``, …).

    Raises
    ------
    ValueError
        For a missing baseline, a baseline that is not a vector, an unknown link, or observed rows
        that are not valid [kᵢ, δᵢ].
    """

    def __new__(
        cls, name: str, baseline=None, eta=0.0, *, link: str = "logit", censoring=None, observed=None, **kwargs
    ):
        import pymc as pm

        if baseline is None:
            raise ValueError("DiscreteTimeHazard needs baseline and, optionally, eta")
        params = cls._params(baseline, eta, censoring)
        return pm.CustomDist(name, *params, observed=_check_observed(observed), **cls._options(link), **kwargs)

    @classmethod
    def dist(cls, baseline, eta=0.0, *, link: str = "logit", censoring=None, **kwargs):
        """The unnamed distribution, e.g. for ``pm.draw`` or ``pm.logp``.

        Parameters
        ----------
        baseline : tensor_like, shape (q,)
            The baseline γ.
        eta : tensor_like, default 0.0
            The linear predictor(s) ηᵢ.
        link : {"logit", "cloglog", "probit"}, default "logit"
            The link g of the hazard.
        censoring : tensor_like of int, optional
            Public censoring interval(s) of the random draws; default q − 1.
        **kwargs
            Passed to ``pm.CustomDist.dist``.

        Returns
        -------
        pytensor.tensor.TensorVariable
            The distribution's random variable, one (interval, event) row per draw.
        """
        import pymc as pm

        return pm.CustomDist.dist(*cls._params(baseline, eta, censoring), **cls._options(link), **kwargs)

    @staticmethod
    def _params(baseline, eta, censoring):
        # NumPy first: PyTensor would make a Python float a float32 constant
        baseline, eta = (x if isinstance(x, pt.Variable) else np.asarray(x, dtype=np.float64) for x in (baseline, eta))
        baseline, eta = pt.as_tensor(baseline).astype("float64"), pt.as_tensor(eta).astype("float64")
        if baseline.ndim != 1:
            raise ValueError(f"baseline must be a vector of q interval effects, got {baseline.ndim} dimensions")
        censoring = baseline.shape[0] - 1 if censoring is None else censoring
        return baseline, eta, pt.as_tensor(censoring).astype("int64")

    @staticmethod
    def _options(link):
        dist, logp = _functions(check_link(link))
        return {
            "dist": dist,
            "logp": logp,
            "signature": "(q),(),()->(2)",
            "dtype": "int32",
            "class_name": "DiscreteTimeHazard",
        }


def discrete_time_model(
    data: DiscreteTimeData,
    *,
    link: str = "logit",
    alpha_sigma: float = 10.0,
    beta_sigma: float = 10.0,
    feature_names=None,
):
    """Bayesian discrete-time hazard regression of interval-censored survival records.

    The discrete-time hazard model of Nguyên & Hui (2017a, Eq. 3): with the public spline basis A
    (q intervals × e knots) of ``data``,

        α ~ N(0, alpha_sigma² I),   β ~ N(0, beta_sigma² I),   γ = Aα,   ηᵢ = xᵢᵀβ,

    and the hazard of record i in interval s is g⁻¹(γ_s + ηᵢ) for the link g.  Record i is observed
    as (kᵢ, δᵢ): the interval in which it had the event (δᵢ = 1) or was censored (δᵢ = 0).

    Parameters
    ----------
    data : DiscreteTimeData
        The records (X, interval, event) and the basis A.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link g of the hazard.
    alpha_sigma : float, default 10.0
        The prior standard deviation of the spline coefficients α.
    beta_sigma : float, default 10.0
        The prior standard deviation of the coefficients β.
    feature_names : sequence of str, optional
        The d names of the covariates, coordinates of the ``feature`` dim (default ``x0``, ``x1``,
        …).

    Returns
    -------
    pymc.Model
        With coords ``knot``, ``feature``, ``record`` and ``outcome`` (``interval``, ``event``), the
        variables ``alpha`` (dims ``knot``) and ``beta`` (dims ``feature``), the likelihood
        ``likelihood`` (:class:`DiscreteTimeHazard`, dims ``(record, outcome)``), and the data ``X``,
        ``survival`` (integer rows [kᵢ, δᵢ]) and ``fit_record`` (dim ``fit_field``: the model's
        family, checked by the predictors).

    Raises
    ------
    ValueError
        If ``feature_names`` does not have d names, or the link is unknown.

    Notes
    -----
    Privacy: the model conditions on the records themselves, so its posterior is not
    differentially private; the private fits are :func:`pm_private.survival.output_perturbation`
    and :func:`pm_private.survival.objective_perturbation`.

    Contract: the names listed under Returns are public.  One value of the log-likelihood per
    record (``pm.compute_log_likelihood``, ``az.loo``); the logit link uses the compiled Op of
    :func:`hazard_record_loss` (memory O(n + q)).  Sample it with ``pm.sample()`` (NUTS).  For
    predictions at m new covariate rows, call
    ``pm.set_data({"X": X_new, "survival": np.zeros((m, 2), np.int32)}, coords={"record": range(m)})``
    and then ``pm.sample_posterior_predictive``, which draws (interval, event) for the new records.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.survival import DiscreteTimeData, discrete_time_model
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 2))
    >>> time = rng.uniform(size=100)
    >>> event = (rng.uniform(size=100) < 0.7).astype(int)
    >>> data = DiscreteTimeData.from_times(X, time, event, q=10, e=3)
    >>> model = discrete_time_model(data)
    >>> [rv.name for rv in model.free_RVs]
    ['alpha', 'beta']
    >>> model.coords["feature"], len(model.coords["knot"])
    (('x0', 'x1'), 3)
    """
    import pymc as pm

    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(data.d)]
    if len(names) != data.d:
        raise ValueError(f"feature_names has {len(names)} names for d = {data.d}")
    coords = {
        "knot": np.arange(data.e),
        "feature": names,
        "record": np.arange(data.n),
        "outcome": ["interval", "event"],
    }
    with pm.Model(coords=coords) as model:
        record_fit(DISCRETE_TIME, "records")
        X = pm.Data("X", data.X, dims=("record", "feature"))
        observed = pm.Data(
            "survival", np.column_stack([data.interval, data.event]).astype(np.int32), dims=("record", "outcome")
        )
        alpha = pm.Normal("alpha", 0.0, alpha_sigma, dims="knot")
        beta = pm.Normal("beta", 0.0, beta_sigma, dims="feature")
        DiscreteTimeHazard(
            "likelihood",
            pt.as_tensor(data.basis) @ alpha,
            X @ beta,
            link=link,
            observed=observed,
            dims=("record", "outcome"),
        )
    announce_compilation(model, DISCRETE_TIME.name)
    return model
