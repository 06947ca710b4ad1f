"""DP elastic-net logistic regression (Yu et al. 2014), private penalty selection and the data-perturbation baseline (Kang et al. 2020)."""

from .._engine.lazy import attach

_NAMES = {
    "ElasticNetRelease": ".elastic_net",
    "DPElasticNetLogisticRegression": ".elastic_net",
    "convex_min": ".elastic_net",
    "design_bounds": ".elastic_net",
    "prepare_design": ".elastic_net",
    "SolverResult": ".proximal",
    "softplus": ".proximal",
    "solve_elastic_net_logistic": ".proximal",
    "PenaltySelectionRelease": ".penalty_selection",
    "StabilityConstants": ".penalty_selection",
    "select_penalty": ".penalty_selection",
    "DataPerturbationRelease": ".data_perturbation",
    "data_perturbation_sgd": ".data_perturbation",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
