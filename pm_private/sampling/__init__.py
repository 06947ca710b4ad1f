"""Sampling private posteriors: the sanitized-loss exponential mechanism (Nguyên & Hui 2017a), pSGLD (Li et al. 2016) and refittable ADVI and NUTS (PyMC's and nutpie's, and ``sample``, which compiles a model once)."""

from .._engine.lazy import attach

_NAMES = {
    "SanitizedLoss": ".sanitized",
    "logistic_loss": ".sanitized",
    "sanitizer": ".sanitized",
    "sanitized_loss": ".sanitized",
    "sanitized_utility": ".sanitized",
    "bounded_terms": ".sanitized",
    "publishable": ".publish",
    "secure_sample": ".publish",
    "PSGLD": ".psgld",
    "RefittableADVI": ".advi",
    "RefittableNUTS": ".refit_nuts",
    "RefittableNutpie": ".refit_nutpie",
    "sample": ".compiled_nuts",
    "DPSGLDPlan": ".private_langevin",
    "dp_sgld": ".private_langevin",
    "plan_dp_sgld": ".private_langevin",
    "ClippingWarning": ".clipped_share",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
