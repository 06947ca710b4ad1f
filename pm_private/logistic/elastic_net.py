"""ε-DP elastic-net logistic regression by objective perturbation (Yu et al. 2014, Alg. 1, Thm 3.1).

The released coefficients minimise (Yu et al. 2014, §2–§4)

    L(θ) = (1/n) Σᵢ log(1 + exp(−yᵢ θᵀxᵢ)) + ½λ(1−α)‖θ‖² + λα‖θ‖₁ + (Δ/2)‖θ‖² + (φ/(εn)) bᵀθ

over θ ∈ ℝˢ, with yᵢ ∈ {−1, 1} and the public quantities

* κ: rows are clipped to ‖x‖_j ≤ κ (j = 1 for noise B₁, j = 2 for B₂); with an intercept a
  constant 1 is appended after clipping, so the gradient bound is κ_j = κ + 1 (ℓ1) or
  √(κ² + 1) (ℓ2);
* φ = 2κ_j, the smallest value Alg. 1 allows (φ ≥ 2κ_j);
* c = (κ² + 1)/4 (κ²/4 without intercept), the bound on the largest singular value of the
  per-record Hessian σ(1−σ)xxᵀ;
* convex_min = c / (n(e^{ε/4} − 1)), the strong convexity Alg. 1 requires of the regulariser;
* Δ = max{0, convex_min − λ(1−α)}, the extra ridge term of Yu et al. (2014) Thm 2.1, added only
  with ``too_weak="add_ridge"``; by default a too weak penalty is refused (ValueError);
* b ~ B₁ (iid Laplace(0, 2), density ∝ exp(−‖b‖₁/2), the default and more accurate, §3.1)
  or B₂ (density ∝ exp(−‖b‖₂/2): uniform direction times a Gamma(s, 2) = χ²(2s) radius, Prop 1).

Privacy (Thm 3.1, proof in Yu et al. (2014) App. A.2): the output density ratio of two data sets that
differ in one record is at most exp(κ_jε/φ)·(1 + c/(nλ'))² ≤ e^{ε/2}·e^{ε/2} = e^ε, where λ' is
the regulariser's strong convexity λ(1−α) + Δ ≥ convex_min.  **ε-DP** under replace-one
neighbours (bounded DP: n is public); κ, λ, α, the noise kind and n are public.  The ℓ1 term
is not differentiable; the proof covers it by the successive-approximation argument of Kifer,
Smith & Thakurta (2012) that the paper cites.  The intercept is ridge-penalised (strong
convexity needs it) but not ℓ1-penalised.

Where this module departs from the paper, and why:

* c = κ²/4, not κ²: the Hessian of the logistic loss is σ(1−σ)xxᵀ with σ(1−σ) ≤ 1/4, so its
  largest singular value is ≤ ‖x‖₂²/4 (Chaudhuri, Monteleoni & Sarwate 2011 use c = 1/4 for
  ‖x‖ ≤ 1).  Yu et al. (2014) §4 bounds the nuclear norm of xxᵀ without the 1/4; that is valid but
  four times more conservative.  The test suite checks the bound and its tightness.
* The guarantee is for the exact minimiser.  The solver (:mod:`pm_private.logistic.proximal`) stops when
  the KKT residual is ≤ ``tol`` (default 1e-10), with a step size set by the public Hessian
  bound c; the remaining float-level gap is not covered by the theorem.  If it does not converge
  within ``max_iter`` iterations it raises :class:`~pm_private.privacy.release.ConvergenceError`
  **after charging ε** (budget reservation): the failure depends on the data and the noise, so
  it must not be retriable for free.  Nothing else about the solve (iterations, residual) is
  released.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..privacy.noise import NoiseSource, as_noise_source, l2_gamma_vector, laplace_vector
from ..privacy.primitives import project_rows
from ..privacy.release import Release, constant, output, public, release_guard
from ..privacy.validation import as_matrix, as_vector, check_epsilon, check_finite_rows, check_positive
from .proximal import solve_elastic_net_logistic

__all__ = [
    "MECHANISM",
    "NOISE_KINDS",
    "ElasticNetRelease",
    "DPElasticNetLogisticRegression",
    "check_noise",
    "check_penalty",
    "convex_min",
    "design_bounds",
    "perturbation_noise",
    "prepare_design",
    "to_signed_labels",
]

#: Mechanism name of :meth:`DPElasticNetLogisticRegression.fit` (result and ledger entry).
MECHANISM = "elastic-net logistic objective perturbation (Yu et al. 2014, Alg. 1; Kifer, Smith & Thakurta 2012)"

#: Noise kinds of Alg. 1: "laplace" is B₁ (ℓ1 norm, rows clipped in ℓ1), "l2" is B₂ (ℓ2 norm).
NOISE_KINDS = {"laplace": 1, "l2": 2}
_NOISE_SCALE = 2.0  # densities ∝ exp(−‖b‖/2) in Yu et al. (2014)


def check_noise(noise: str) -> int:
    """The norm j ∈ {1, 2} of a noise kind, or ValueError."""
    if noise not in NOISE_KINDS:
        raise ValueError(f"noise must be one of {sorted(NOISE_KINDS)}, got {noise!r}")
    return NOISE_KINDS[noise]


def to_signed_labels(y, n: int) -> np.ndarray:
    """Labels in {0, 1} or {−1, 1} as ±1 floats; ValueError for anything else."""
    y = as_vector(y, n)
    values = set(np.unique(y).tolist())
    if not values <= {0.0, 1.0} and not values <= {-1.0, 1.0}:
        raise ValueError("labels y must be in {0, 1} or {-1, 1}")
    return np.where(y > 0, 1.0, -1.0)


def design_bounds(norm_bound: float, norm: int, fit_intercept: bool) -> tuple[float, float]:
    """(κ_j, c): the ℓ_j bound on the gradient ‖x‖_j and the Hessian bound ‖x‖₂²/4 of a design row."""
    extra = 1.0 if fit_intercept else 0.0
    square = norm_bound * norm_bound + extra
    if not math.isfinite(square):
        raise ValueError(f"norm_bound = {norm_bound!r} is too large: κ² overflows")
    kappa_j = norm_bound + extra if norm == 1 else math.sqrt(square)
    # ‖x‖₂ ≤ ‖x‖₁ ≤ κ for ℓ1 clipping, so ‖x‖₂² ≤ κ² (+1 for the intercept) in both cases.
    return kappa_j, square / 4.0


def convex_min(epsilon: float, n: int, c: float) -> float:
    """Strong convexity Alg. 1 needs of the regulariser: c / (n(e^{ε/4} − 1))."""
    # e^{ε/4} overflows beyond ε ≈ 2800; the requirement is then below 1e-300 anyway.
    return c / (n * math.expm1(min(epsilon / 4.0, 700.0)))


def prepare_design(X, norm_bound: float, norm: int, fit_intercept: bool) -> np.ndarray:
    """Validated float matrix, rows clipped to the public bound, intercept column appended."""
    X = as_matrix(X)
    check_finite_rows(X)
    X = project_rows(X, norm_bound, norm)
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


@dataclass(frozen=True, eq=False, kw_only=True)
class ElasticNetRelease(Release, kind="elastic_net"):
    """One objective-perturbation release: the coefficients and what they assumed (no data, no noise vector)."""

    coef: np.ndarray = output()
    intercept: float = output()
    noise: str = public()
    norm_bound: float = public()
    phi: float = public()
    hessian_bound: float = public()
    convex_min: float = public()
    extra_ridge: float = public()
    lam: float = public()
    alpha: float = public()
    n: int = public()
    mechanism: str = constant(default=MECHANISM)

    def __post_init__(self):
        coef = np.array(self.coef, dtype=np.float64)
        coef.flags.writeable = False
        object.__setattr__(self, "coef", coef)


def check_penalty(lam, alpha) -> tuple[float, float]:
    """λ > 0 and α ∈ [0, 1], or ValueError."""
    lam = check_positive("lam", lam)
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}") from None
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    return lam, alpha


class DPElasticNetLogisticRegression:
    """ε-DP logistic regression with elastic-net penalty ½λ(1−α)‖θ‖² + λα‖θ‖₁ (Yu et al. 2014, Alg. 1).

    See the module docstring for the objective, the public constants and the privacy proof.
    ``fit`` is the release: ε-DP (pure) under replace-one neighbours, n public; κ
    (``norm_bound``), λ, α and the noise kind are public.  ``accountant`` (optional) is charged
    ε once per successful ``fit``; ``rng=None`` draws secure noise, a seed makes the fit
    reproducible and marks it ``privacy_.private = False``.  After ``fit`` the estimator holds
    only the release: ``coef_``, ``intercept_`` and ``privacy_`` (an :class:`ElasticNetRelease`);
    a fit that does not converge raises ConvergenceError with ε spent (module docstring).

    Parameters
    ----------
    epsilon : float
        Privacy budget of one fit, > 0.
    lam, alpha : float
        Penalty strength λ > 0 and ℓ1 share α ∈ [0, 1].
    norm_bound : float
        Public κ: rows are clipped to ‖x‖₁ ≤ κ ("laplace") or ‖x‖₂ ≤ κ ("l2").
    noise : {"laplace", "l2"}
        B₁ (default) or B₂.
    fit_intercept : bool
        Append a constant-1 column (ridge- but not ℓ1-penalised).
    too_weak : {"raise", "add_ridge"}
        If λ(1−α) < convex_min: refuse with ValueError, or add the ridge term of Thm 2.1.
    tol, max_iter : solver's KKT tolerance and iteration cap.
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        lam: float = 1.0,
        alpha: float = 0.5,
        norm_bound: float = 1.0,
        noise: str = "laplace",
        fit_intercept: bool = True,
        too_weak: str = "raise",
        tol: float = 1e-10,
        max_iter: int = 100_000,
        accountant=None,
        rng=None,
    ):
        self.epsilon = epsilon
        self.lam = lam
        self.alpha = alpha
        self.norm_bound = norm_bound
        self.noise = noise
        self.fit_intercept = fit_intercept
        self.too_weak = too_weak
        self.tol = tol
        self.max_iter = max_iter
        self.accountant = accountant
        self.rng = rng

    # scikit-learn style parameter access -------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters as a dict (scikit-learn convention)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params) -> DPElasticNetLogisticRegression:
        """Set constructor parameters; unknown names raise ValueError."""
        for name, value in params.items():
            if name not in self._param_names():
                raise ValueError(f"unknown parameter {name!r} for {type(self).__name__}")
            setattr(self, name, value)
        return self

    # release ---------------------------------------------------------------------------------
    def _checked(self, n: int) -> tuple:
        """Validate the public parameters; return (ε, λ, α, κ, j, κ_j, c, convex_min, Δ)."""
        epsilon = check_epsilon(self.epsilon)
        lam, alpha = check_penalty(self.lam, self.alpha)
        kappa = check_positive("norm_bound", self.norm_bound)
        norm = check_noise(self.noise)
        if self.too_weak not in ("raise", "add_ridge"):
            raise ValueError(f"too_weak must be 'raise' or 'add_ridge', got {self.too_weak!r}")
        kappa_j, c = design_bounds(kappa, norm, self.fit_intercept)
        required = convex_min(epsilon, n, c)
        strength = lam * (1.0 - alpha)
        if strength < required and self.too_weak == "raise":
            floor = "no λ works with alpha = 1" if alpha == 1 else f"λ ≥ {required / (1 - alpha):.6g}"
            raise ValueError(
                f"penalty too weak for ε-DP: λ(1−α) = {strength:.6g} < c/(n(e^(ε/4)−1)) = {required:.6g} "
                f"(c = {c:g}, n = {n}, ε = {epsilon:g}); need {floor}, or too_weak='add_ridge'"
            )
        extra = max(0.0, required - strength)
        return epsilon, lam, alpha, kappa, norm, kappa_j, c, required, extra

    def fit(self, X, y) -> DPElasticNetLogisticRegression:
        """Release ε-DP coefficients for (X, y); labels in {0, 1} or {−1, 1}."""
        X = as_matrix(X)
        n = X.shape[0]
        y = to_signed_labels(y, n)
        epsilon, lam, alpha, kappa, norm, kappa_j, c, required, extra = self._checked(n)
        design = prepare_design(X, kappa, norm, self.fit_intercept)
        source = as_noise_source(self.rng)
        phi = 2.0 * kappa_j
        l1_mask = np.ones(design.shape[1], dtype=bool)
        if self.fit_intercept:
            l1_mask[-1] = False
        with release_guard(self.accountant, MECHANISM, epsilon, label="DP elastic-net logistic"):
            b = perturbation_noise(design.shape[1], self.noise, source)
            result = solve_elastic_net_logistic(
                design,
                y,
                lam * (1 - alpha) + extra,
                lam * alpha,
                phi / (epsilon * n) * b,
                l1_mask,
                tol=self.tol,
                max_iter=self.max_iter,
                hessian_bound=c,
            )
        theta = result.theta[:, 0]
        self._set_fitted(theta)
        self.privacy_ = ElasticNetRelease(
            coef=self.coef_,
            intercept=self.intercept_,
            epsilon=epsilon,
            noise=self.noise,
            norm_bound=kappa,
            phi=phi,
            hessian_bound=c,
            convex_min=required,
            extra_ridge=extra,
            lam=lam,
            alpha=alpha,
            n=n,
            private=source.secure,
        )
        return self

    def _set_fitted(self, theta: np.ndarray) -> None:
        if self.fit_intercept:
            self.coef_, self.intercept_ = theta[:-1].copy(), float(theta[-1])
        else:
            self.coef_, self.intercept_ = theta.copy(), 0.0

    # prediction --------------------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """θᵀx + intercept for the rows of X, clipped to the public bound as in training."""
        if not hasattr(self, "coef_"):
            raise ValueError("estimator is not fitted; call fit first")
        X = as_matrix(X)
        if X.shape[1] != self.coef_.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features, the model was fitted with {self.coef_.shape[0]}")
        return project_rows(X, float(self.norm_bound), NOISE_KINDS[self.noise]) @ self.coef_ + self.intercept_

    def predict_proba(self, X) -> np.ndarray:
        """n × 2 array of P(y = 0), P(y = 1) (scikit-learn column order)."""
        p = expit(self.decision_function(X))
        return np.column_stack([1 - p, p])

    def predict(self, X) -> np.ndarray:
        """Predicted labels in {0, 1}."""
        return (self.decision_function(X) > 0).astype(int)
