"""DP elastic-net logistic regression (Yu et al. 2014), private penalty selection and the data-perturbation baseline (Kang et al. 2020)."""

from .._engine.lazy import attach

_NAMES = {
    "NOISE_KINDS": ".elastic_net",
    "ElasticNetRelease": ".elastic_net",
    "DPElasticNetLogisticRegression": ".elastic_net",
    "check_noise": ".elastic_net",
    "check_penalty": ".elastic_net",
    "convex_min": ".elastic_net",
    "design_bounds": ".elastic_net",
    "perturbation_noise": ".elastic_net",
    "prepare_design": ".elastic_net",
    "to_signed_labels": ".elastic_net",
    "SolverResult": ".proximal",
    "kkt_residual": ".proximal",
    "logistic_objective": ".proximal",
    "softplus": ".proximal",
    "solve_elastic_net_logistic": ".proximal",
    "PenaltySelectionRelease": ".penalty_selection",
    "StabilityConstants": ".penalty_selection",
    "noise_norm_bound": ".penalty_selection",
    "select_penalty": ".penalty_selection",
    "stability_constants": ".penalty_selection",
    "DataPerturbationRelease": ".data_perturbation",
    "accounted_epsilon": ".data_perturbation",
    "calibrate_noise_multiplier": ".data_perturbation",
    "data_perturbation_sgd": ".data_perturbation",
    "perturbed_batch": ".data_perturbation",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
