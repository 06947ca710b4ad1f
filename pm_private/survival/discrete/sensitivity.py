"""Sensitivities of the discrete-time perturbations (Nguyên & Hui 2017a, §4) under both neighbour
relations: the bounds L (Lemma 4.2, a difference of two records' gradients, replace-one) and G (one
record's gradient, add/remove), the output perturbation's t, and the objective perturbation's
Jacobian share ε_J and extra ridge Δ (corrected, see
:mod:`pm_private.survival.discrete.mechanisms`)."""

from __future__ import annotations

import numpy as np

from ..._engine.docstrings import parameters_from
from ...privacy.relations import REPLACE_ONE, check_relation

__all__ = [
    "gradient_bound",
    "gradient_sensitivity",
    "jacobian_epsilon",
    "objective_regularization",
    "output_sensitivity",
    "record_gradient_bound",
]


def gradient_sensitivity(basis) -> float:
    """L = Σ_s √(4 + ‖A_s‖²) + max_s √(4‖A_s‖² + 4): bound on ‖∇ℓ(f; d) − ∇ℓ(f; d′)‖ (Lemma 4.2).

    Parameters
    ----------
    basis : array_like, shape (q, e)
        The public basis A.

    Returns
    -------
    float
        L.
    """
    sq = np.sum(np.asarray(basis, dtype=np.float64) ** 2, axis=1)
    return float(np.sum(np.sqrt(4.0 + sq)) + np.sqrt(4.0 * sq.max() + 4.0))


@parameters_from(gradient_sensitivity)
def record_gradient_bound(basis) -> float:
    """G = Σ_s √(‖A_s‖² + 1): bound on one record's ‖∇ℓ(f; d)‖, at every f.

    The gradient of a record's loss (logit link) is Σ_{s ≤ k} w_s·(A_s, x) with w_s =
    h_s − y_s in (−1, 1) over the k ≤ q intervals it was at risk in, and ‖(A_s, x)‖ ≤ √(‖A_s‖² + 1)
    for ‖x‖ ≤ 1 (the triangle inequality).

    Returns
    -------
    float
        G.

    Examples
    --------
    >>> from pm_private.survival import gradient_sensitivity, record_gradient_bound
    >>> from pm_private.survival.discrete.spline import interval_basis
    >>> basis = interval_basis(20, 3)
    >>> record_gradient_bound(basis) < gradient_sensitivity(basis)
    True
    """
    sq = np.sum(np.asarray(basis, dtype=np.float64) ** 2, axis=1)
    return float(np.sum(np.sqrt(sq + 1.0)))


def output_sensitivity(basis, n: int, regularization: float, relation: str = REPLACE_ONE) -> float:
    """ℓ2 sensitivity of argmin J, J(f) = (1/m)Σᵢ ℓ(f; dᵢ) + (Λ/2)‖f‖² with a public m: t = L/(mΛ)
    under replace-one (Lemma 4.3, Alg. 1 line 3), t = G/(mΛ) under add/remove.

    Add/remove: the objectives of D and of D with one record d added differ by ℓ(f; d)/m, and
    J is Λ-strongly convex, so their minimisers differ by at most ‖∇ℓ(f; d)‖/(mΛ) ≤ G/(mΛ)
    (Chaudhuri, Monteleoni & Sarwate 2011, Lemma 7, with one loss added instead of one replaced;
    G of :func:`record_gradient_bound`).

    Parameters
    ----------
    basis : array_like, shape (q, e)
        The public basis A.
    n : int
        m, the public size that normalises the objective (the number of records under
        replace-one, unless a public size is given).
    regularization : float
        The ridge Λ > 0.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation.

    Returns
    -------
    float
        t.
    """
    return gradient_bound(basis, relation) / (int(n) * float(regularization))


def gradient_bound(basis, relation: str) -> float:
    """The bound on how much one unit moves the summed gradient: L of Lemma 4.2 under replace-one
    (one record's gradient against another's), G of :func:`record_gradient_bound` under
    add/remove (one record's gradient)."""
    return gradient_sensitivity(basis) if check_relation(relation) == REPLACE_ONE else record_gradient_bound(basis)


def jacobian_epsilon(basis, n: int, regularization: float) -> float:
    """ε_J(λ) = Σ_s log(1 + (‖A_s‖² + 1)/(4nλ)), the Jacobian share of Alg. 2 (corrected, see module).

    Parameters
    ----------
    basis : array_like, shape (q, e)
        The public basis A.
    n : int
        m, the public size that normalises the objective (n under replace-one).
    regularization : float
        The total ridge λ > 0.

    Returns
    -------
    float
        ε_J(λ).
    """
    sq = np.sum(np.asarray(basis, dtype=np.float64) ** 2, axis=1)
    return float(np.sum(np.log1p((sq + 1.0) / (4.0 * int(n) * float(regularization)))))


@parameters_from(jacobian_epsilon)
def objective_regularization(basis, n: int, epsilon: float, regularization: float) -> tuple[float, float]:
    """(Δ, ε′) of Alg. 2 lines 1–4: Δ = 0, ε′ = ε − ε_J(Λ) if that is ≥ ε/2; else Δ > 0 by
    bisection with ε_J(Λ + Δ) ≤ ε/2 (to relative 1e-12, from above) and ε′ = ε/2.

    Parameters
    ----------
    epsilon : float
        The total ε.
    regularization : float
        The ridge Λ > 0.

    Returns
    -------
    extra : float
        The extra ridge Δ ≥ 0.
    noise_epsilon : float
        ε′, the ε left for the noise.
    """
    epsilon, regularization = float(epsilon), float(regularization)
    if jacobian_epsilon(basis, n, regularization) <= epsilon / 2:
        return 0.0, epsilon - jacobian_epsilon(basis, n, regularization)
    low, high = 0.0, regularization
    while jacobian_epsilon(basis, n, regularization + high) > epsilon / 2:
        low, high = high, 2.0 * high
    while high - low > 1e-12 * high:
        middle = 0.5 * (low + high)
        if jacobian_epsilon(basis, n, regularization + middle) > epsilon / 2:
            low = middle
        else:
            high = middle
    return high, epsilon / 2
