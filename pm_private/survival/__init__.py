"""Survival analysis: data with public bounds, the censored Weibull likelihood and its private release
(Nguyên & Hui 2017b), and the discrete-time hazard likelihood with its private mechanisms
(Nguyên & Hui 2017a)."""

from .._engine.lazy import attach

_NAMES = {
    "check_survival": ".data",
    "censor_at_horizon": ".data",
    "scale_times": ".data",
    "interval_index": ".data",
    "scale_covariates": ".data",
    "domain_unit_ball": ".data",
    "flchain_unit_ball": ".data",
    "WeibullMLE": ".weibull.fit",
    "WeibullSurvival": ".weibull.likelihood",
    "simulate_weibull": ".weibull.simulate",
    "weibull_logp": ".weibull.likelihood",
    "weibull_mle": ".weibull.fit",
    "weibull_model": ".weibull.likelihood",
    "WeibullLSP": ".weibull.mechanisms",
    "WeibullRelease": ".weibull.mechanisms",
    "lsp_ladder": ".weibull.mechanisms",
    "weibull_private": ".weibull.mechanisms",
    "weibull_laplace": ".weibull.mechanisms",
    "weibull_sample_aggregate": ".weibull.mechanisms",
    "natural_spline_basis": ".discrete.spline",
    "interval_basis": ".discrete.spline",
    "interval_midpoints": ".discrete.spline",
    "LINKS": ".discrete.data",
    "DiscreteTimeData": ".discrete.data",
    "check_hazard_records": ".discrete.ops",
    "hazard_record_loss": ".discrete.ops",
    "record_loss": ".discrete.ops",
    "DiscreteTimeHazard": ".discrete.likelihood",
    "discrete_time_model": ".discrete.likelihood",
    "record_loss_numpy": ".discrete.fit",
    "record_grad_numpy": ".discrete.fit",
    "loss_and_grad": ".discrete.fit",
    "FitResult": ".discrete.fit",
    "fit_discrete_time": ".discrete.fit",
    "SimulatedDiscreteTime": ".discrete.simulate",
    "expand_person_period": ".discrete.simulate",
    "simulate_discrete_time": ".discrete.simulate",
    "DiscreteTimeRelease": ".discrete.mechanisms",
    "gradient_sensitivity": ".discrete.mechanisms",
    "output_sensitivity": ".discrete.mechanisms",
    "jacobian_epsilon": ".discrete.mechanisms",
    "objective_regularization": ".discrete.mechanisms",
    "output_perturbation": ".discrete.mechanisms",
    "objective_perturbation": ".discrete.mechanisms",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
