"""The discrete-time hazard likelihood as a term of a ``pm.Model``."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from .discrete_data import DiscreteTimeData
from .hazard_ops import check_hazard_records, hazard_record_loss

__all__ = ["DiscreteTimeHazard", "discrete_time_model"]


def DiscreteTimeHazard(name: str, X, interval, event, *, beta, alpha=None, basis=None, baseline=None, link="logit"):
    """Add the discrete-time hazard log-likelihood −Σᵢ ℓᵢ to the current ``pm.Model``.

    Give either ``alpha`` (e,) with the public ``basis`` (q, e) (spline baseline γ = Aα), or
    ``baseline`` (q,), free per-interval effects γ_s.  ``beta`` (d,) are the covariate effects.
    Returns the ``pm.Potential`` named ``name``.
    """
    import pymc as pm

    if (baseline is None) == (alpha is None or basis is None):
        raise ValueError("give either alpha and basis (spline baseline) or baseline (free per-interval)")
    gamma = pt.as_tensor(basis) @ alpha if baseline is None else pt.as_tensor(baseline)
    X, interval, event = check_hazard_records(X, interval, event, gamma.type.shape[0])
    if pt.as_tensor(beta).type.shape[0] not in (None, X.shape[1]):
        raise ValueError(f"X has {X.shape[1]} columns and beta {pt.as_tensor(beta).type.shape[0]} entries")
    eta = pt.as_tensor(X) @ beta
    losses = hazard_record_loss(gamma, eta, interval, event, link)
    return pm.Potential(name, -losses.sum())


def discrete_time_model(
    data: DiscreteTimeData, *, link: str = "logit", alpha_sigma: float = 10.0, beta_sigma: float = 10.0, feature_names=None
):
    """PyMC model α ~ N(0, alpha_sigma²)ᵉ, β ~ N(0, beta_sigma²)ᵈ with :func:`DiscreteTimeHazard`
    named ``likelihood``; dims ``knot`` and ``feature``."""
    import pymc as pm

    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(data.d)]
    if len(names) != data.d:
        raise ValueError(f"feature_names has {len(names)} names for d = {data.d}")
    with pm.Model(coords={"knot": np.arange(data.e), "feature": names}) as model:
        alpha = pm.Normal("alpha", 0.0, alpha_sigma, dims="knot")
        beta = pm.Normal("beta", 0.0, beta_sigma, dims="feature")
        DiscreteTimeHazard("likelihood", data.X, data.interval, data.event, alpha=alpha, beta=beta, basis=data.basis, link=link)
    return model
