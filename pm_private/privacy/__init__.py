"""General differential-privacy building blocks: accounting, randomness, primitives (Laplace,
Gaussian calibration, exponential mechanism, row projection), validation and the release protocol."""

from .._engine.lazy import attach

_NAMES = {
    "REPLACE_ONE": ".budget",
    "BudgetExceededError": ".budget",
    "LedgerEntry": ".budget",
    "PrivacyAccountant": ".accountant",
    "Reservation": ".accountant",
    "charge": ".accountant",
    "check_accountant": ".accountant",
    "note_noise_drawn": ".accountant",
    "NoiseSource": ".noise",
    "as_noise_source": ".noise",
    "LaplaceRelease": ".primitives",
    "GaussianRelease": ".primitives",
    "gaussian_mechanism": ".primitives",
    "gaussian_scale": ".primitives",
    "exponential_mechanism": ".primitives",
    "gaussian_delta": ".primitives",
    "gaussian_noise_multiplier": ".primitives",
    "laplace_mechanism": ".primitives",
    "project_rows": ".primitives",
    "ConvergenceError": ".release",
    "Release": ".release",
    "field_kinds": ".release",
    "release_guard": ".release",
    "laplace_vector": ".noise",
    "l2_gamma_vector": ".noise",
    "MIN_EPSILON": ".validation",
    "check_epsilon": ".validation",
    "check_delta": ".validation",
    "check_positive": ".validation",
    "as_matrix": ".validation",
    "as_float_array": ".validation",
    "as_vector": ".validation",
    "check_finite_rows": ".validation",
    "check_count": ".validation",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
