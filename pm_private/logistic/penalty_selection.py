"""Private choice of the elastic-net penalty by stability-based validation (Yu et al. 2014, Thm 2.1).

The data set is split at random (a public split of public sizes) into training T (n records)
and validation V (m records).  For each candidate λᵢ of the public grid (k values, α fixed)

    θᵢ = argmin (1/n) Σ_T l(θ; d) + ½λᵢ(1−α)‖θ‖² + λᵢα‖θ‖₁ + (Δ/2)‖θ‖² + (φ/(ε_T n)) bᵢᵀθ,

with independent noise bᵢ (B₁ or B₂), Δ = max{0, c* − c_min}, c* = c/(n(e^{ε_T/4} − 1)) and
c_min = minᵢ λᵢ(1−α) (Thm 2.1's extra ridge term: every candidate is ε_T-DP by Alg. 1).  The
score is q(θ, V) = −(1/m) Σ_V h(θ; d) with h the logistic loss, and the released candidate i*
is drawn by the exponential mechanism, P(i) ∝ exp(ε_S qᵢ / (2Δq)), Δq = max(β₁/n, β₂/m),

    β₁ = 2γκ / max(c*, c_min),   β₂ = κ(γ + φξ/(ε_T n)) / max(c*, c_min),

γ = κ = the ℓ2 bound √(κ_x² + 1) of a design row (Lipschitz constants of l and h), and ξ with
P(‖bᵢ‖₂ > ξ) ≤ δ/k.  Chaudhuri & Vinterbo (2013, Thm 1) with Yu et al. (2014) Thm 2.1 give

    **(ε_T + ε_S, δ)-DP** for the release (i*, θ_{i*}) under replace-one neighbours of the whole
    data set (the replaced record lies in T or in V; n, m public).  Public: κ, the λ grid, α,
    the noise kind, the split sizes.  δ covers the event that some ‖bᵢ‖₂ exceeds ξ (union
    bound over the k candidates).  Only θ_{i*} and i* are released: the validation scores,
    the candidates' fits and the solver's iteration counts are computed without noise and are
    **not** returned.  The selection is :func:`pm_private.privacy.primitives.exponential_mechanism`
    (OpenDP's exact Gumbel sampler with the secure source).  If a candidate's fit does not
    converge, ConvergenceError is raised **after** (ε, δ) is charged (budget reservation: the
    failure depends on the data and must not be retriable for free).

Departures from Yu et al. (2014), and why:

* ξ is the exact (1 − δ/k) quantile of Gamma(s, 2).  ‖B₂‖₂ ~ Gamma(s, 2) (Prop. 1) and
  ‖B₁‖₂ ≤ ‖B₁‖₁ ~ Gamma(s, 2), so it is valid for both and tighter than Prop. 2.  Prop. 3's
  ξ = (√s + √log(k/δ))² + log(k/δ) is the Laurent–Massart bound for χ²(s), not χ²(2s): it is
  too small (s = 16, δ/k = 0.01: tail probability 0.10, not 0.01; tested).
* The proof of Thm 2.1 bounds h_max ≤ κ‖θ‖₂, false for the logistic loss (h(0; d) = log 2).
  The validation stability still holds: both losses lie in [softplus(−κ‖θ‖), softplus(κ‖θ‖)]
  and softplus(a) − softplus(−a) = a, so |h(θ; v) − h(θ; v')| ≤ κ‖θ‖₂ (tested).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._engine.keywords import renamed_keywords
from ..privacy.noise import NoiseSource, as_noise_source
from ..privacy.primitives import exponential_mechanism
from ..privacy.release import Release, constant, output, public, release_guard
from ..privacy.validation import (
    as_float_array,
    as_matrix,
    check_bool,
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
    check_fraction,
    check_positive,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
)
from .elastic_net import DPElasticNetLogisticRegression, _encoding_classes, _fitted_model, _split_theta
from .objective_perturbation import (
    ElasticNetRelease,
    _minimise_perturbed_objective,
    check_noise,
    check_penalty,
    convex_min,
    design_bounds,
    perturbation_noise,
    prepare_design,
    to_signed_labels,
)
from .proximal import softplus

__all__ = [
    "MECHANISM",
    "PenaltySelectionRelease",
    "StabilityConstants",
    "noise_norm_bound",
    "select_penalty",
    "stability_constants",
]


#: Mechanism name of :func:`select_penalty` (result and ledger entry).
MECHANISM = "stability-based penalty selection (Chaudhuri & Vinterbo 2013; Yu et al. 2014, Thm 2.1)"


def noise_norm_bound(dim: int, tail: float) -> float:
    """ξ with P(‖b‖₂ > ξ) ≤ tail for b ~ B₁ or B₂ in dimension ``dim``: Gamma(dim, 2) quantile."""
    return float(stats.gamma.isf(tail, dim, scale=2.0))


@dataclass(frozen=True)
class StabilityConstants:
    """Public constants of Thm 2.1 for one grid: β₁, β₂, the score sensitivity Δq and their inputs.

    The stability bounds of Yu et al. (2014) Thm 2.1 for the logistic training and validation
    losses (module docstring), computed from public quantities only: the grid, α, ε_T, δ,
    the clipping bound, the noise kind, the split sizes and the dimension.

    Parameters
    ----------
    beta1 : float
        β₁ = 2γκ / max(c*, c_min): β₁/n bounds the change of a candidate's validation score
        when one training record is replaced.
    beta2 : float
        β₂ = κ(γ + φξ/(ε_T n)) / max(c*, c_min): β₂/m bounds that change when one validation
        record is replaced.
    sensitivity : float
        Δq = max(β₁/n, β₂/m), the sensitivity of the validation scores used by the exponential
        mechanism.
    xi : float
        ξ, the (1 − δ/k) quantile of Gamma(s, 2): every noise vector has ‖bᵢ‖₂ ≤ ξ except with
        probability δ/k.
    c_star : float
        c* = c/(n(e^{ε_T/4} − 1)), the strong convexity each candidate's regulariser needs.
    c_min : float
        minᵢ λᵢ(1−α), the weakest ridge strength of the grid.
    extra_ridge : float
        Δ = max{0, c* − c_min}, the ridge strength added to every candidate.
    lipschitz : float
        The ℓ2 bound on a design row, √(κ² + 1) with an intercept and κ without (for ℓ1
        clipping too, as ‖x‖₂ ≤ ‖x‖₁): the Lipschitz constant γ of the training loss and κ of
        the validation loss.
    phi : float
        φ = 2κ_j, the factor of each candidate's random linear term.
    """

    beta1: float
    beta2: float
    sensitivity: float
    xi: float
    c_star: float
    c_min: float
    extra_ridge: float
    lipschitz: float
    phi: float


def stability_constants(
    *, lams, alpha, epsilon_train, delta, x_bound, noise, fit_intercept, n_train, n_valid, dim
) -> StabilityConstants:
    """β₁, β₂ and Δq = max(β₁/n, β₂/m) of Thm 2.1 for the logistic loss and logistic validation loss."""
    lams = np.asarray(lams, dtype=np.float64)
    norm = check_noise(noise)
    kappa_j, c = design_bounds(x_bound, norm, fit_intercept)
    lipschitz = 2.0 * math.sqrt(c)  # ‖x‖₂ of a design row: γ of l and κ of h
    phi = 2.0 * kappa_j
    c_star = convex_min(epsilon_train, n_train, c)
    c_min = float(lams.min()) * (1.0 - alpha)
    strength = max(c_star, c_min)
    xi = noise_norm_bound(dim, delta / len(lams))
    beta1 = 2.0 * lipschitz * lipschitz / strength
    beta2 = lipschitz * (lipschitz + phi * xi / (epsilon_train * n_train)) / strength
    return StabilityConstants(
        beta1=beta1,
        beta2=beta2,
        sensitivity=max(beta1 / n_train, beta2 / n_valid),
        xi=xi,
        c_star=c_star,
        c_min=c_min,
        extra_ridge=max(0.0, c_star - c_min),
        lipschitz=lipschitz,
        phi=phi,
    )


@dataclass(frozen=True, kw_only=True)
class PenaltySelectionRelease(Release, kind="penalty_selection"):
    """Result of :func:`select_penalty`: the released model and λ, and the public constants used.

    ``model`` is a fitted :class:`DPElasticNetLogisticRegression` holding θ_{i*} (its
    ``privacy_`` describes the ε_T part); ``index`` is i* on the grid ``lams``.

    Parameters
    ----------
    epsilon : float
        The total ε = ε_T + ε_S of the guarantee (Chaudhuri & Vinterbo 2013, Thm 1), as charged
        to the accountant.
    delta : float
        The δ of the guarantee: it covers the event that some noise vector is longer than ξ.
    private : bool
        True when the split and the noise came from secure OS randomness (``rng=None``); False
        for a seeded ``rng``, whose output carries no privacy guarantee.
    model : DPElasticNetLogisticRegression
        The fitted classifier holding the chosen candidate's coefficients (the DP output).
    lam : float
        The chosen penalty strength λ_{i*} (a DP output).
    index : int
        i*, the position of ``lam`` on the grid ``lams`` (a DP output).
    lams : tuple of float
        The public grid of penalty strengths.
    epsilon_train : float
        ε_T = (1 − selection_share)·ε, the ε of each candidate's fit.
    epsilon_select : float
        ε_S = selection_share·ε, the ε of the exponential mechanism.
    n_train : int
        The number of training records n (public).
    n_valid : int
        The number of validation records m (public).
    constants : StabilityConstants
        The public constants of the selection: ξ, β₁, β₂, the score sensitivity and the extra
        ridge term.
    """

    model: DPElasticNetLogisticRegression = output()
    lam: float = output()
    index: int = output(range="nonnegative")
    lams: tuple[float, ...] = public()
    epsilon_train: float = public()
    epsilon_select: float = public()
    n_train: int = public()
    n_valid: int = public()
    constants: StabilityConstants = public()
    mechanism: str = constant(default=MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=True)
        _check_release(self)


def _check_release(release: PenaltySelectionRelease) -> None:
    """The public fields of a release checked by the checks :func:`select_penalty` applies to its
    arguments, the ε split, and the stability constants recomputed by :func:`stability_constants`
    from the grid, the split sizes and the public settings of the fitted model; ValueError naming
    the field."""
    lams = tuple(check_release_field("lams", check_bound, "lams", lam) for lam in release.lams)
    if not lams:
        raise ValueError("field 'lams' must be a non-empty grid")
    eps_train = check_release_field("epsilon_train", check_epsilon, release.epsilon_train)
    eps_select = check_release_field("epsilon_select", check_epsilon, release.epsilon_select)
    check_release_consistent("epsilon_select", eps_train + eps_select, release.epsilon, "epsilon − epsilon_train")
    n_train = check_release_field("n_train", check_count, "n_train", release.n_train)
    n_valid = check_release_field("n_valid", check_count, "n_valid", release.n_valid)
    index = check_release_field("index", check_count, "index", release.index, 0, len(lams) - 1)
    check_release_consistent("lam", release.lam, lams[index], "lams[index]")
    model = release.model
    chosen = getattr(model, "privacy_", None)
    if not (isinstance(model, DPElasticNetLogisticRegression) and isinstance(chosen, ElasticNetRelease)):
        raise ValueError("field 'model' must be a fitted DPElasticNetLogisticRegression")
    check_release_consistent("epsilon_train", chosen.epsilon, eps_train, "the ε of the fitted model")
    if chosen.n != n_train:
        raise ValueError(f"field 'n_train' must be the n of the fitted model, {chosen.n!r}, got {n_train!r}")
    alpha = check_release_field("model", check_fraction, "alpha", model.alpha)
    fit_intercept = check_release_field("model", check_bool, "fit_intercept", model.fit_intercept)
    expected = check_release_field(
        "constants",
        stability_constants,
        lams=lams,
        alpha=alpha,
        epsilon_train=eps_train,
        delta=release.delta,
        x_bound=chosen.x_bound,
        noise=chosen.noise,
        fit_intercept=fit_intercept,
        n_train=n_train,
        n_valid=n_valid,
        dim=chosen.coef.size + int(fit_intercept),
    )
    constants = release.constants
    if not isinstance(constants, StabilityConstants):
        raise ValueError(f"field 'constants' must be StabilityConstants, got {type(constants).__name__}")
    for name in StabilityConstants.__dataclass_fields__:
        check_release_consistent(
            "constants",
            getattr(constants, name),
            getattr(expected, name),
            f"{name} of stability_constants('lams', 'epsilon_train', 'delta', 'n_train', 'n_valid', 'model')",
        )


def _split(N: int, n_valid: int, source: NoiseSource) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(source.uniform((N,)))
    return order[n_valid:], order[:n_valid]


@renamed_keywords(norm_bound="x_bound")
def select_penalty(
    X,
    y,
    *,
    lams,
    alpha: float,
    epsilon: float,
    delta: float,
    x_bound: float,
    selection_share: float = 0.5,
    validation_fraction: float = 0.3,
    noise: str = "laplace",
    fit_intercept: bool = True,
    tol: float = 1e-10,
    max_iter: int = 100_000,
    accountant=None,
    rng=None,
) -> PenaltySelectionRelease:
    """Choose λ from the public grid ``lams`` and release its model, (ε, δ)-DP in total.

    The records are split at random into training and validation parts; every λ of the grid
    gets an objective-perturbation fit on the training part (ε_T = (1 − selection_share)·ε),
    and the exponential mechanism (ε_S = selection_share·ε) picks one by its validation loss
    (module docstring).  Only the chosen λ and its model are released.

    Privacy: **(ε, δ)-DP** for the secure default ``rng=None`` under replace-one neighbours of
    the whole data set (n and the split sizes are public), by Chaudhuri & Vinterbo (2013,
    Thm 1) with Yu et al. (2014) Thm 2.1 and Alg. 1; δ covers the event that a noise vector is
    longer than the bound ξ.  Public: ``lams``, ``alpha``, ``x_bound``, ``noise``,
    ``fit_intercept``, ``selection_share``, ``validation_fraction``, n, the number of features
    and the label coding.  Exact for the exact minimisers (the solver stops at a KKT residual
    ≤ ``tol``); the exponential mechanism is OpenDP's exact sampler, the objective noise is
    drawn from 53-bit uniforms of the operating system's generator (not hardened against
    floating-point attacks, Mironov 2012).  A seeded ``rng`` gives **no** guarantee
    (``private`` is False).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Private records (finite); rows are scaled onto the public ``x_bound`` ball.
    y : array-like of shape (n_samples,)
        Private labels in {0, 1} or {−1, 1}.
    lams : array-like of shape (k,)
        Public grid of penalty strengths λ > 0.
    alpha : float
        ℓ1 share α ∈ [0, 1] of the penalty (the same for every λ).
    epsilon : float
        Total ε ≥ 10⁻⁶ of the training fits and the selection.
    delta : float
        δ ∈ (0, 1).
    x_bound : float
        Public κ > 0 (ℓ1 bound for ``noise="laplace"``, ℓ2 bound for ``"l2"``).
    selection_share : float, default 0.5
        Share of ε spent on the selection, in (0, 1).
    validation_fraction : float, default 0.3
        Share of the records used for validation, in (0, 1); both parts must be non-empty.
    noise : {"laplace", "l2"}, default "laplace"
        Objective noise B₁ or B₂ (Yu et al. 2014).
    fit_intercept : bool, default True
        Append a constant-1 column (ridge- but not ℓ1-penalised).
    tol : float, default 1e-10
        KKT tolerance of the solver, > 0.
    max_iter : int, default 100000
        Iteration cap of the solver, ≥ 1.
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) once, refused before any noise is drawn if over budget.
    rng : None, int, numpy.random.Generator or NoiseSource, optional
        None (default) draws secure noise; anything else is seeded and not private.

    Returns
    -------
    PenaltySelectionRelease
        ``lam`` and ``index`` (the chosen λ), ``model`` (a fitted
        :class:`DPElasticNetLogisticRegression` holding its coefficients; its ``classes_`` is
        [−1, 1] if ``y`` uses −1, else [0, 1]), and the public constants.

    Raises
    ------
    ValueError
        Invalid arguments, records or labels; raised before (ε, δ) is charged.
    BudgetExceededError
        The accountant's remaining budget is below (ε, δ); nothing is charged.
    ConvergenceError
        A candidate's fit did not reach ``tol`` in ``max_iter`` iterations; (ε, δ) **was**
        charged.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.logistic import select_penalty
    >>> from pm_private.privacy import PrivacyAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 3))
    >>> y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=1000) > 0).astype(int)
    >>> accountant = PrivacyAccountant(epsilon=2.0, delta=1e-5)
    >>> release = select_penalty(
    ...     X, y, lams=[0.01, 0.1, 1.0], alpha=0.5, epsilon=2.0, delta=1e-6,
    ...     x_bound=3.0, accountant=accountant, rng=1,
    ... )
    >>> release.lam in (0.01, 0.1, 1.0), release.n_train, release.n_valid
    (True, 700, 300)
    >>> bool(release.model.score(X, y) > 0.7), accountant.spent
    (True, Budget(epsilon=2.0, delta=1e-06))
    """
    X_given, y_given = X, y
    X = as_matrix(X)
    N = X.shape[0]
    y = to_signed_labels(y, N)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    share = check_fraction("selection_share", selection_share, closed=False)
    fraction = check_fraction("validation_fraction", validation_fraction, closed=False)
    lams, alpha = _checked_grid(lams, alpha)
    settings = _checked_fit_settings(alpha, x_bound, noise, fit_intercept, tol, max_iter)
    n_train, n_valid = _split_sizes(N, fraction)
    eps_train, eps_select = (1.0 - share) * epsilon, share * epsilon
    design = prepare_design(X, settings.x_bound, settings.norm, settings.fit_intercept)
    constants = _finite_constants(lams, settings, eps_train, delta, (n_train, n_valid), design.shape[1])
    source = as_noise_source(rng)

    def record(theta, index):
        model = _chosen_model(
            X_given,
            y_given,
            theta,
            float(lams[index]),
            settings,
            epsilon_train=eps_train,
            constants=constants,
            n_train=n_train,
            private=source.secure,
        )
        return PenaltySelectionRelease(
            model=model,
            lam=float(lams[index]),
            index=index,
            lams=tuple(lams.tolist()),
            epsilon=epsilon,
            epsilon_train=eps_train,
            epsilon_select=eps_select,
            delta=delta,
            n_train=n_train,
            n_valid=n_valid,
            constants=constants,
            private=source.secure,
        )

    record(np.zeros(design.shape[1]), 0)  # the record's own checks, before anything is spent
    with release_guard(accountant, MECHANISM, epsilon, delta, label="elastic-net λ selection"):
        result, index = _fit_and_select(
            design, y, lams, settings, constants, (eps_train, eps_select), (n_train, n_valid), source
        )
        return record(result.theta[:, index], index)


def _checked_grid(lams, alpha) -> tuple[np.ndarray, float]:
    """The grid ``lams`` as a non-empty 1-D float array, each λ checked with ``alpha``
    (:func:`~pm_private.logistic.elastic_net.check_penalty`), and α checked."""
    lams = as_float_array(lams, "lams")
    if lams.ndim != 1 or lams.size == 0:
        raise ValueError(f"lams must be a non-empty 1-D grid, got shape {lams.shape}")
    for lam in lams:
        _, alpha = check_penalty(lam, alpha)
    return lams, alpha


@dataclass(frozen=True)
class _FitSettings:
    """The public settings of :func:`select_penalty` that every candidate fit and the released
    estimator share: ℓ1 share α, clipping bound κ, noise kind and its norm j, intercept, and the
    solver's tolerance and iteration cap."""

    alpha: float
    x_bound: float
    noise: str
    norm: int
    fit_intercept: bool
    tol: float
    max_iter: int


def _checked_fit_settings(alpha: float, x_bound, noise, fit_intercept, tol, max_iter) -> _FitSettings:
    """The fit settings of :func:`select_penalty`, checked (``alpha`` already is, with the grid)."""
    return _FitSettings(
        alpha=alpha,
        x_bound=check_bound("x_bound", x_bound),
        noise=noise,
        norm=check_noise(noise),
        fit_intercept=check_bool("fit_intercept", fit_intercept),
        tol=check_positive("tol", tol),
        max_iter=check_count("max_iter", max_iter),
    )


def _chosen_model(
    X_given, y_given, theta, lam: float, settings: _FitSettings, *, epsilon_train, constants, n_train, private
):
    """The fitted estimator of :func:`select_penalty`: the chosen λ's perturbed solution ``theta``
    held as an :class:`~pm_private.logistic.elastic_net.ElasticNetRelease` of the training part."""
    coef, intercept = _split_theta(theta, settings.fit_intercept)
    chosen = ElasticNetRelease(
        coef=coef,
        intercept=intercept,
        epsilon=epsilon_train,
        noise=settings.noise,
        x_bound=settings.x_bound,
        phi=constants.phi,
        hessian_bound=constants.lipschitz**2 / 4,
        convex_min=constants.c_star,
        extra_ridge=constants.extra_ridge,
        lam=lam,
        alpha=settings.alpha,
        n=n_train,
        private=private,
    )
    return _fitted_model(
        X_given,
        chosen,
        _encoding_classes(y_given),
        epsilon=epsilon_train,
        lam=lam,
        alpha=settings.alpha,
        x_bound=settings.x_bound,
        noise=settings.noise,
        fit_intercept=settings.fit_intercept,
        too_weak="add_ridge",
        tol=settings.tol,
        max_iter=settings.max_iter,
    )


def _fit_and_select(design, y, lams, settings: _FitSettings, constants, budget, sizes, source):
    """Inside :func:`select_penalty`'s charge: the random split of the records, one
    objective-perturbation fit per λ on the training part (``budget`` = (ε_T, ε_S)), and the
    exponential mechanism's choice by validation loss.  Returns (the fits, the chosen index)."""
    eps_train, eps_select = budget
    n_train, n_valid = sizes
    N, dim = design.shape
    train, valid = _split(N, n_valid, source)
    noise_draws = perturbation_noise(dim, settings.noise, source, size=lams.size)
    result = _minimise_perturbed_objective(
        design[train],
        y[train],
        lams,
        settings.alpha,
        constants.extra_ridge,
        constants.phi / (eps_train * n_train) * noise_draws,
        fit_intercept=settings.fit_intercept,
        hessian_bound=constants.lipschitz**2 / 4,
        tol=settings.tol,
        max_iter=settings.max_iter,
    )
    margins = y[valid, None] * (design[valid] @ result.theta)
    scores = -softplus(-margins).mean(axis=0)
    index = exponential_mechanism(scores, epsilon=eps_select, sensitivity=constants.sensitivity, source=source)
    return result, index


def _finite_constants(lams, settings: _FitSettings, eps_train, delta, sizes, dim):
    """:func:`stability_constants` of :func:`select_penalty`'s settings (``sizes`` = (training,
    validation) records), or ValueError when one is not finite."""
    n_train, n_valid = sizes
    constants = stability_constants(
        lams=lams,
        alpha=settings.alpha,
        epsilon_train=eps_train,
        delta=delta,
        x_bound=settings.x_bound,
        noise=settings.noise,
        fit_intercept=settings.fit_intercept,
        n_train=n_train,
        n_valid=n_valid,
        dim=dim,
    )
    if not all(np.isfinite(getattr(constants, f)).all() for f in constants.__dataclass_fields__):
        raise ValueError("epsilon, delta, lams and x_bound give non-finite stability constants; raise delta")
    return constants


def _split_sizes(N: int, fraction: float) -> tuple[int, int]:
    """(training, validation) sizes of N records with ``fraction`` of them held out, each ≥ 1."""
    n_valid = int(round(fraction * N))
    n_train = N - n_valid
    if n_valid < 1 or n_train < 1:
        raise ValueError(f"{N} records cannot be split into training and validation with fraction {fraction}")
    return n_train, n_valid
