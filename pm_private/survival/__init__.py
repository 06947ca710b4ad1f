"""Survival analysis: data with public bounds, the censored Weibull likelihood and its private release
(Nguyên & Hui 2017b), and the discrete-time hazard likelihood with its private mechanisms
(Nguyên & Hui 2017a)."""

from .._lazy import attach

_NAMES = {
    "check_survival": ".data",
    "censor_at_horizon": ".data",
    "scale_times": ".data",
    "interval_index": ".data",
    "scale_covariates": ".data",
    "domain_unit_ball": ".data",
    "flchain_unit_ball": ".data",
    "WeibullMLE": ".weibull",
    "WeibullSurvival": ".weibull",
    "simulate_weibull": ".weibull",
    "weibull_logp": ".weibull",
    "weibull_mle": ".weibull",
    "weibull_model": ".weibull",
    "WeibullLSP": ".weibull_mechanisms",
    "WeibullRelease": ".weibull_mechanisms",
    "lsp_ladder": ".weibull_mechanisms",
    "weibull_private": ".weibull_mechanisms",
    "weibull_laplace": ".weibull_mechanisms",
    "weibull_sample_aggregate": ".weibull_mechanisms",
    "natural_spline_basis": ".spline",
    "interval_basis": ".spline",
    "interval_midpoints": ".spline",
    "LINKS": ".discrete_data",
    "DiscreteTimeData": ".discrete_data",
    "check_hazard_records": ".hazard_ops",
    "hazard_record_loss": ".hazard_ops",
    "record_loss": ".hazard_ops",
    "DiscreteTimeHazard": ".discrete_likelihood",
    "discrete_time_model": ".discrete_likelihood",
    "record_loss_numpy": ".discrete_numpy",
    "record_grad_numpy": ".discrete_numpy",
    "loss_and_grad": ".discrete_numpy",
    "FitResult": ".discrete_numpy",
    "fit_discrete_time": ".discrete_numpy",
    "SimulatedDiscreteTime": ".discrete_simulate",
    "expand_person_period": ".discrete_simulate",
    "simulate_discrete_time": ".discrete_simulate",
    "DiscreteTimeRelease": ".discrete_private",
    "gradient_sensitivity": ".discrete_private",
    "output_sensitivity": ".discrete_private",
    "jacobian_epsilon": ".discrete_private",
    "objective_regularization": ".discrete_private",
    "output_perturbation": ".discrete_private",
    "objective_perturbation": ".discrete_private",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
