"""Private logistic regression: released degree-2 statistics and the noise-aware PyMC model of them
(Kulkarni et al. 2021; Huggins, Adams & Broderick 2017), and DP point estimators: objective-
perturbation elastic net with private penalty selection (Yu et al. 2014) and the data-perturbation
baseline (Kang et al. 2020)."""

from .._engine.lazy import attach

_NAMES = {
    "logistic_bounds": ".release",
    "logistic_noise_plan": ".release",
    "LogisticStats": ".release",
    "LogisticStatsRelease": ".release",
    "logistic_sensitivity": ".release",
    "logistic_stats": ".release",
    "release_logistic_stats": ".release",
    "logistic_model": ".model",
    "set_logistic_stats": ".model",
    "predict_logistic": ".predict",
    "logistic_stat_moments": ".moments",
    "probit_mixture": ".moments",
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
