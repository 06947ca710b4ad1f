"""Machinery shared by the released-statistics families (linear, logistic, Poisson): the degree-2
statistic layout, public preprocessing, covariate models, the Gaussian likelihood Op, the
noise-aware GLM template, Laplace-started NUTS, the Laplace approximation, the replicate check and
the lifelines-style summary of a fit."""

from .._engine.lazy import attach

_NAMES = {
    "degree2_pairs": ".degree2",
    "GLMBounds": ".bounds",
    "partial_correlation_cholesky": ".covariates",
    "lkj_partial_shapes": ".covariates",
    "describe_family": ".family",
    "record_fit": ".family",
    "check_posterior": ".family",
    "check_stats": ".family",
    "NoiseQuery": ".noise_plan",
    "recorded_fit": ".family",
    "recorded_warnings": ".family",
    "Family": ".family",
    "Hook": ".family",
    "Link": ".family",
    "NoisePlan": ".noise_plan",
    "Preprocessing": ".preprocessing",
    "preprocess": ".preprocessing",
    "lkj_cholesky": ".covariates",
    "lkj_factor_and_covariance": ".covariates",
    "wishart_cholesky": ".covariates",
    "laplace_nuts": ".sampling",
    "laplace_approximation": ".sampling",
    "ApproximationWarning": ".sampling",
    "laplace_covariance": ".sampling",
    "laplace_restart": ".sampling",
    "laplace_start": ".sampling",
    "normal_logp": ".likelihood",
    "binary_response_moments": ".moments",
    "glm_signal_to_noise": ".glm",
    "CovariateLawWarning": ".glm",
    "ReferenceLaw": ".copula_law",
    "reference_law": ".copula_law",
    "reference_size": ".copula_law",
    "shared_row_count": ".preprocessing",
    "glm_signal_to_noise_warning": ".glm",
    "public_rows_law_warning": ".glm",
    "release_check": ".checking",
    "fit_summary": ".summary",
    "print_summary": ".summary",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
