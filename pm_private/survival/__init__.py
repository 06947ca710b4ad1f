"""Survival analysis for pm_private: data preparation with public bounds, the censored Weibull
likelihood (paper 003) and the discrete-time hazard likelihood (paper 000), with their private
mechanisms."""

from .data import censor_at_horizon, check_survival, interval_index, scale_covariates, scale_times

__all__ = [
    "censor_at_horizon",
    "check_survival",
    "interval_index",
    "scale_covariates",
    "scale_times",
]

# --- Weibull (paper 003): weibull.py, weibull_private.py ---
from .weibull import WeibullMLE, WeibullSurvival, simulate_weibull, weibull_logp, weibull_mle, weibull_model

from .weibull_private import WeibullRelease, lsp_ladder, weibull_laplace, weibull_private, weibull_sample_aggregate

__all__ += ["WeibullMLE", "WeibullSurvival", "simulate_weibull", "weibull_logp", "weibull_mle", "weibull_model"]
__all__ += ["WeibullRelease", "lsp_ladder", "weibull_laplace", "weibull_private", "weibull_sample_aggregate"]

# --- discrete-time hazard (paper 000): spline.py, discrete_time.py, discrete_private.py ---
from .discrete_private import (
    DiscreteTimeRelease,
    gradient_sensitivity,
    jacobian_epsilon,
    objective_perturbation,
    objective_regularization,
    output_perturbation,
    output_sensitivity,
)
from .discrete_time import (
    LINKS,
    DiscreteTimeData,
    DiscreteTimeHazard,
    FitResult,
    SimulatedDiscreteTime,
    discrete_time_model,
    expand_person_period,
    fit_discrete_time,
    hazard_record_loss,
    loss_and_grad,
    record_grad_numpy,
    record_loss,
    record_loss_numpy,
    simulate_discrete_time,
)
from .spline import interval_basis, interval_midpoints, natural_spline_basis

__all__ += [
    "DiscreteTimeRelease",
    "gradient_sensitivity",
    "jacobian_epsilon",
    "objective_perturbation",
    "objective_regularization",
    "output_perturbation",
    "output_sensitivity",
    "LINKS",
    "DiscreteTimeData",
    "DiscreteTimeHazard",
    "FitResult",
    "SimulatedDiscreteTime",
    "discrete_time_model",
    "expand_person_period",
    "fit_discrete_time",
    "hazard_record_loss",
    "loss_and_grad",
    "record_grad_numpy",
    "record_loss",
    "record_loss_numpy",
    "simulate_discrete_time",
    "interval_basis",
    "interval_midpoints",
    "natural_spline_basis",
]
