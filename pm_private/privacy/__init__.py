"""General differential-privacy building blocks: accounting, secure noise, input validation."""

from .._lazy import attach

_NAMES = {
    "REPLACE_ONE": ".accounting",
    "BudgetExceededError": ".accounting",
    "LedgerEntry": ".accounting",
    "PrivacyAccountant": ".accounting",
    "Reservation": ".accounting",
    "charge": ".accounting",
    "check_accountant": ".accounting",
    "note_noise_drawn": ".accounting",
    "NoiseSource": ".noise",
    "as_noise_source": ".noise",
    "laplace_mechanism": ".noise",
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
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)
