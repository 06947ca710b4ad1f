"""The mechanism of the elastic-net logistic regression by objective perturbation (Yu et al. 2014,
Alg. 1; Kifer, Smith & Thakurta 2012): the bounded design and its bounds, the smallest strong
convexity that keeps the guarantee, the perturbation noise, and the release record with its checks."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..privacy.noise import NoiseSource, l2_gamma_vector, laplace_vector
from ..privacy.primitives import project_rows
from ..privacy.release import Release, constant, output, public
from ..privacy.validation import (
    as_matrix,
    as_vector,
    check_bound,
    check_count,
    check_finite_rows,
    check_fraction,
    check_nonnegative,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
)
from .proximal import SolverResult, solve_elastic_net_logistic

__all__ = [
    "MECHANISM",
    "NOISE_KINDS",
    "ElasticNetRelease",
    "check_noise",
    "check_penalty",
    "convex_min",
    "design_bounds",
    "perturbation_noise",
    "prepare_design",
    "to_signed_labels",
]


#: Mechanism name of :meth:`~pm_private.logistic.elastic_net.DPElasticNetLogisticRegression.fit` (result and ledger entry).
MECHANISM = "elastic-net logistic objective perturbation (Yu et al. 2014, Alg. 1; Kifer, Smith & Thakurta 2012)"

#: Noise kinds of Alg. 1: "laplace" is B₁ (ℓ1 norm, rows clipped in ℓ1), "l2" is B₂ (ℓ2 norm).
NOISE_KINDS = {"laplace": 1, "l2": 2}
_NOISE_SCALE = 2.0  # densities ∝ exp(−‖b‖/2) in Yu et al. (2014)


def check_noise(noise: str) -> int:
    """The norm j ∈ {1, 2} of a noise kind, or ValueError."""
    if not isinstance(noise, str) or noise not in NOISE_KINDS:
        raise ValueError(f"noise must be one of {sorted(NOISE_KINDS)}, got {noise!r}")
    return NOISE_KINDS[noise]


def to_signed_labels(y, n: int) -> np.ndarray:
    """Labels in {0, 1} or {−1, 1} as ±1 floats; ValueError for anything else."""
    y = as_vector(y, n)
    values = set(np.unique(y).tolist())
    if not values <= {0.0, 1.0} and not values <= {-1.0, 1.0}:
        raise ValueError("labels y must be in {0, 1} or {-1, 1}")
    return np.where(y > 0, 1.0, -1.0)


def design_bounds(x_bound: float, norm: int, fit_intercept: bool) -> tuple[float, float]:
    """(κ_j, c): the ℓ_j bound on the gradient ‖x‖_j and the Hessian bound ‖x‖₂²/4 of a design row.

    The public constants of Yu et al. (2014) Alg. 1 for rows clipped to ‖x‖_j ≤ κ, with a
    constant 1 appended after clipping when there is an intercept (module docstring).

    Parameters
    ----------
    x_bound : float
        The public clipping bound κ > 0 of the rows.
    norm : {1, 2}
        The norm j of the clipping and of the noise (1 for B₁, 2 for B₂).
    fit_intercept : bool
        Whether a constant-1 column is appended to the clipped rows.

    Returns
    -------
    kappa_j : float
        The ℓ_j bound on a design row: κ + 1 (ℓ1) or √(κ² + 1) (ℓ2) with an intercept, κ
        without.  The noise factor φ of Alg. 1 is 2κ_j.
    c : float
        (κ² + 1)/4 (κ²/4 without intercept): a bound on the largest eigenvalue of the per-record
        Hessian σ(1−σ)xxᵀ of the logistic loss.

    Raises
    ------
    ValueError
        If κ² overflows.
    """
    extra = 1.0 if fit_intercept else 0.0
    square = x_bound * x_bound + extra
    if not math.isfinite(square):
        raise ValueError(f"x_bound = {x_bound!r} is too large: κ² overflows")
    kappa_j = x_bound + extra if norm == 1 else math.sqrt(square)
    # ‖x‖₂ ≤ ‖x‖₁ ≤ κ for ℓ1 clipping, so ‖x‖₂² ≤ κ² (+1 for the intercept) in both cases.
    return kappa_j, square / 4.0


def convex_min(epsilon: float, n: int, c: float) -> float:
    """Strong convexity Alg. 1 needs of the regulariser: c / (n(e^{ε/4} − 1)).

    Yu et al. (2014) Thm 3.1 gives ε-DP when the ridge part λ(1−α) of the penalty (plus any
    extra ridge Δ) is at least this value; it is the ``convex_min`` of the module docstring.

    Parameters
    ----------
    epsilon : float
        The ε of the release, > 0.
    n : int
        The number of records (public), ≥ 1.
    c : float
        The Hessian bound of a design row, as returned by :func:`design_bounds`.

    Returns
    -------
    float
        The smallest strong convexity of the regulariser the guarantee allows.  For ε beyond
        about 2800 (where e^{ε/4} overflows) the value for ε = 2800 is returned, already below
        10⁻³⁰⁰.
    """
    # e^{ε/4} overflows beyond ε ≈ 2800; the requirement is then below 1e-300 anyway.
    return c / (n * math.expm1(min(epsilon / 4.0, 700.0)))


def prepare_design(X, x_bound: float, norm: int, fit_intercept: bool) -> np.ndarray:
    """Validated float matrix, rows clipped to the public bound, intercept column appended.

    The design matrix of Yu et al. (2014) Alg. 1: every row with ‖x‖_j > κ is scaled onto the
    ball ‖x‖_j ≤ κ (other rows are unchanged), then a constant-1 column is appended if
    ``fit_intercept``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The records; every entry must be finite.
    x_bound : float
        The public clipping bound κ > 0.
    norm : {1, 2}
        The norm j the rows are clipped in.
    fit_intercept : bool
        Whether to append a constant-1 column after clipping.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_features + fit_intercept)
        The clipped rows (float64), with the intercept column last when there is one.

    Raises
    ------
    ValueError
        If ``X`` is not a non-empty 2-D array of real numbers, or a row holds a non-finite value.
    """
    X = as_matrix(X)
    check_finite_rows(X)
    X = project_rows(X, x_bound, norm)
    if fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    return X


def perturbation_noise(dim: int, noise: str, source: NoiseSource, size: int | None = None) -> np.ndarray:
    """b ~ B₁ (iid Laplace(0, 2)) or B₂ (density ∝ exp(−‖b‖₂/2)); shape (dim,) or (dim, size)."""
    check_noise(noise)
    draw = laplace_vector if noise == "laplace" else l2_gamma_vector
    if size is None:
        return draw(dim, _NOISE_SCALE, source)
    return np.column_stack([draw(dim, _NOISE_SCALE, source) for _ in range(size)])


def _minimise_perturbed_objective(
    design: np.ndarray,
    y: np.ndarray,
    lam,
    alpha: float,
    extra_ridge: float,
    linear_term: np.ndarray,
    *,
    fit_intercept: bool,
    hessian_bound: float,
    tol: float,
    max_iter: int,
) -> SolverResult:
    """Minimiser of the perturbed objective of Yu et al. (2014) Alg. 1, one per column of ``linear_term``.

    L(θ) = (1/n) Σᵢ log(1 + exp(−yᵢ θᵀxᵢ)) + ½(λ(1−α) + Δ)‖θ‖² + λα‖θ‖₁ + gᵀθ, with
    g = ``linear_term`` = (φ/(εn))·b and Δ = ``extra_ridge``; the intercept (the last column of
    ``design`` with ``fit_intercept``) is ridge- but not ℓ1-penalised.  ``lam`` is one λ, or an
    array of candidates with one column of ``linear_term`` each.  The step size is set by the
    public Hessian bound c (:func:`~pm_private.logistic.proximal.solve_elastic_net_logistic`,
    whose ConvergenceError propagates).
    """
    l1_mask = np.ones(design.shape[1], dtype=bool)
    if fit_intercept:
        l1_mask[-1] = False
    return solve_elastic_net_logistic(
        design,
        y,
        lam * (1 - alpha) + extra_ridge,
        lam * alpha,
        linear_term,
        l1_mask,
        tol=tol,
        max_iter=max_iter,
        hessian_bound=hessian_bound,
    )


@dataclass(frozen=True, eq=False, kw_only=True)
class ElasticNetRelease(Release, kind="elastic_net"):
    """One objective-perturbation release: the coefficients and what they assumed (no data, no noise vector).

    Held as ``privacy_`` by a fitted :class:`~pm_private.logistic.elastic_net.DPElasticNetLogisticRegression`, whether fitted
    directly or chosen by :func:`~pm_private.logistic.select_penalty` (then ``epsilon`` is the
    training part ε_T of the selection's budget and ``n`` the size of its training part).

    Parameters
    ----------
    epsilon : float
        The ε of the guarantee of Yu et al. (2014) Thm 3.1, as charged to the accountant.
    delta : float, default 0.0
        0: the release is pure ε-DP.
    coef : numpy.ndarray of shape (n_features,)
        The released coefficients θ without the intercept (the DP output; read-only).
    intercept : float
        The released intercept (0.0 without an intercept).
    noise : {"laplace", "l2"}
        The noise kind: B₁ (iid Laplace, rows clipped in ℓ1) or B₂ (rows clipped in ℓ2).
    x_bound : float
        The public clipping bound κ of the rows; predictions scale new rows onto the same ball.
    phi : float
        φ = 2κ_j, the factor of the random linear term (φ/(εn))·bᵀθ.
    hessian_bound : float
        c, the bound on the largest eigenvalue of a record's loss Hessian
        (:func:`design_bounds`).
    convex_min : float
        c/(n(e^{ε/4} − 1)), the strong convexity the guarantee needs of the regulariser
        (:func:`convex_min`).
    extra_ridge : float
        Δ, the ridge strength added to reach ``convex_min`` (0.0 when λ(1−α) sufficed).
    lam : float
        The penalty strength λ.
    alpha : float
        The ℓ1 share α of the penalty.
    n : int
        The number of records the coefficients were fitted on (public).
    """

    renamed_fields: ClassVar[dict[str, str]] = {"norm_bound": "x_bound"}  # the name before 2026-12

    coef: np.ndarray = output()
    intercept: float = output()
    noise: str = public()
    x_bound: float = public()
    phi: float = public()
    hessian_bound: float = public()
    convex_min: float = public()
    extra_ridge: float = public(range="nonnegative")
    lam: float = public()
    alpha: float = public(range="fraction")
    n: int = public()
    mechanism: str = constant(default=MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self)
        coef = np.array(self.coef, dtype=np.float64)
        coef.flags.writeable = False
        object.__setattr__(self, "coef", coef)
        _check_release(self)


def _check_release(release: ElasticNetRelease) -> None:
    """The public fields of a release checked by the checks
    :meth:`~pm_private.logistic.elastic_net.DPElasticNetLogisticRegression.fit` (and
    :func:`~pm_private.logistic.select_penalty`) apply to their arguments, φ, the Hessian
    bound and ``convex_min`` against what κ, the noise kind, n and ε imply (with or without an
    intercept: not recorded), and the guarantee's condition λ(1−α) + Δ ≥ ``convex_min``;
    ValueError naming the field."""
    norm = check_release_field("noise", check_noise, release.noise)
    kappa = check_release_field("x_bound", check_bound, "x_bound", release.x_bound)
    lam = check_release_field("lam", check_bound, "lam", release.lam)
    alpha = check_release_field("alpha", check_fraction, "alpha", release.alpha)
    n = check_release_field("n", check_count, "n", release.n)
    bounds = [check_release_field("x_bound", design_bounds, kappa, norm, intercept) for intercept in (False, True)]
    if not any(_close(release.phi, 2.0 * kappa_j) for kappa_j, _ in bounds):
        raise ValueError(
            f"field 'phi' must be 2κ_j (κ from 'x_bound') = {2.0 * bounds[0][0]!r} or {2.0 * bounds[1][0]!r}, got {release.phi!r:.40}"
        )
    c = next((c for _, c in bounds if _close(release.hessian_bound, c)), None)
    if c is None:
        raise ValueError(
            f"field 'hessian_bound' must be κ²/4 = {bounds[0][1]!r} or (κ² + 1)/4 = {bounds[1][1]!r}, "
            f"got {release.hessian_bound!r:.40}"
        )
    required = convex_min(release.epsilon, n, c)
    check_release_consistent("convex_min", release.convex_min, required, "'hessian_bound'/('n'(e^('epsilon'/4) − 1))")
    extra = check_release_field("extra_ridge", check_nonnegative, "extra_ridge", release.extra_ridge)
    if extra > required * (1.0 + 1e-9):  # Δ = max(0, convex_min − λ(1−α)), or c* − c_min of a grid
        raise ValueError(f"field 'extra_ridge' = {extra!r} must be ≤ convex_min = {required!r}")
    if lam * (1.0 - alpha) + extra < required * (1.0 - 1e-9):
        raise ValueError(
            f"field 'extra_ridge' = {extra!r} is too small: λ(1−α) + extra_ridge must be ≥ convex_min = {required!r} "
            "for ε-DP"
        )


def _close(value, expected: float) -> bool:
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and math.isclose(value, expected, rel_tol=1e-9)
    )


def check_penalty(lam, alpha) -> tuple[float, float]:
    """λ > 0 and α ∈ [0, 1], or ValueError."""
    return check_bound("lam", lam), check_fraction("alpha", alpha)
