"""AdaSSP: adaptive sufficient-statistics perturbation for linear regression (a point-estimate baseline).

Wang (2018), "Revisiting differentially private linear regression: optimal and adaptive
prediction & estimation in unbounded domain", UAI, Algorithm 2 ("Peer baseline
AdaSSP").  It releases three things with the Gaussian mechanism, (ε/3, δ/3) each, and solves a
ridge regression on them:

1. projection (public bounds): every row with ‖xᵢ‖₂ > B_X is scaled onto the ball,
   xᵢ ← xᵢ·B_X/‖xᵢ‖₂ (a **row-norm** bound, unlike Honkela et al.'s (2018) per-entry clipping), and
   yᵢ ← clip(yᵢ, −B_Y, B_Y);
2. λ̃_min = max(0, λ_min(XᵀX) + σ_λ·Z − σ_λ·√log(6/δ)), Z ~ N(0, 1);
3. λ = max(0, σ_XX·√(d·log(2d²/ρ)) − λ̃_min)  (post-processing: the ridge that covers the
   noise's operator norm with probability ≈ 1 − ρ, less what the data already provide);
4. XᵀX̂ = XᵀX + σ_XX·W, W symmetric with iid N(0, 1) upper triangle (diagonal included);
5. Xᵀŷ = Xᵀy + σ_Xy·z, z ~ N(0, I_d);
6. θ̂ = (XᵀX̂ + λI)⁻¹ Xᵀŷ (post-processing).

Privacy statement (what pm_private guarantees)
----------------------------------------------
:func:`adassp` is **(ε, δ)-DP under replace-one neighbours** (bounded DP: n, d, B_X, B_Y and
ρ are public), for the idealised mechanism in real arithmetic (see "Floating point" below).
Proof: each of the three releases (λ̃_min, the d(d+1)/2 upper-triangle entries of XᵀX̂, Xᵀŷ) is
a Gaussian mechanism with σ_k = c(ε/3, δ/3)·Δ_k, hence (ε/3, δ/3)-DP; basic sequential
composition (Dwork & Roth 2014, Thm 3.16) gives (ε, δ); everything else is post-processing.

Replace-one ℓ2 sensitivities Δ_k of the projected statistics (x, x′ the old and new row,
‖x‖, ‖x′‖ ≤ B_X, |y|, |y′| ≤ B_Y):

- Δ_λ = B_X².  A′ = A − xxᵀ + x′x′ᵀ ≽ A − xxᵀ, so λ_min(A′) ≥ λ_min(A) − ‖x‖² (Weyl), and
  symmetrically λ_min(A) ≥ λ_min(A′) − ‖x′‖².  (Same as add/remove-one.)
- Δ_XX = √2·B_X² for d ≥ 2 (B_X² for d = 1), for the released upper-triangle vector and for
  the Frobenius norm alike: with M = xxᵀ − x′x′ᵀ, ‖M‖_F² = ‖x‖⁴ + ‖x′‖⁴ − 2(xᵀx′)² ≤ 2B_X⁴ and
  Σ_{i≤j} M_ij² = ½(‖M‖_F² + Σ_i (x_i² − x′_i²)²) ≤ ½(2B_X⁴ + 2B_X⁴); attained by orthogonal
  rows on the sphere.  (Add/remove-one: B_X².)
- Δ_Xy = 2·B_X·B_Y: ‖xy − x′y′‖ ≤ ‖x‖|y| + ‖x′‖|y′|; attained by x′ = −x, y′ = y.
  (Add/remove-one: B_X·B_Y.)

The noise multiplier c(ε′, δ′) = σ/Δ is the analytic Gaussian mechanism's (Balle & Wang 2018,
"Improving the Gaussian mechanism for differential privacy", Thm 8): adding N(0, σ²I) to a
query of ℓ2 sensitivity Δ is (ε′, δ′)-DP **if and only if**
Φ(Δ/(2σ) − ε′σ/Δ) − e^ε′·Φ(−Δ/(2σ) − ε′σ/Δ) ≤ δ′; c is the smallest multiplier that satisfies
it (bisection, :func:`pm_private.privacy.primitives.gaussian_noise_multiplier`).  It holds for every ε′ > 0, whereas the
classic σ = Δ·√(2 ln(1.25/δ′))/ε′ (Dwork & Roth 2014, Thm A.1) is proven only for ε′ < 1.

Deviations from Wang's constants, and why
---------------------------------------------------
Wang's Algorithm 2 uses σ = s·B_X², s·B_X² and s·B_X·B_Y with s = √log(6/δ)/(ε/3), i.e. a
multiplier √log(2/δ′)/ε′ on the add/remove-one sensitivities (B_X², B_X², B_X·B_Y).

1. Neighbour relation.  pm_private's convention is replace-one.  Under replace-one the
   sensitivities of XᵀX and Xᵀy are √2·B_X² and 2·B_X·B_Y (above), so with Wang's constants the
   XᵀX release would lose a factor √2 and the Xᵀy release a factor 2 of privacy.  pm_private
   uses the replace-one sensitivities.
2. Calibration.  √log(2/δ′)/ε′ does not make the Gaussian mechanism (ε′, δ′)-DP once ε′ is
   moderate, even for add/remove-one: by the exact condition above, at ε = 1, δ = 10⁻⁶ (ε′ = 1/3,
   δ′ = 3.3·10⁻⁷) it gives δ ≈ 8.8·10⁻⁷ per release, and at ε = 10 about 110·δ′ (it is valid,
   and conservative, for small ε′, e.g. ε ≤ 0.3).  pm_private uses the exact multiplier
   c(ε/3, δ/3) instead; e.g. c = 12.47 versus Wang's 11.85 at ε = 1, δ = 10⁻⁶, and 91.99 versus
   109.43 at ε = 0.1, δ = 10⁻⁵.
3. The λ̃_min shift and the ridge λ keep Wang's form with Wang's s·B_X² replaced by the noise
   scales actually used: shift σ_λ·√log(6/δ) (Wang: s·B_X²·√log(6/δ) = B_X²·log(6/δ)/(ε/3)) and
   λ = σ_XX·√(d·log(2d²/ρ)) − λ̃_min (Wang: √(d·log(6/δ)·log(2d²/ρ))·B_X²/(ε/3)).  With
   σ_λ = σ_XX = s·B_X² they are Wang's formulas verbatim; both are post-processing, so this
   changes utility only.
4. Solve.  θ̂ uses ``numpy.linalg.solve``; if XᵀX̂ + λI is exactly singular (possible only
   when λ = 0), it falls back to the minimum-norm least-squares solution (``numpy.linalg.lstsq``)
   and records ``solver="lstsq"``.  A nearly singular matrix is solved as is (large θ̂), as in
   Wang's algorithm.

Floating point (residual risk)
------------------------------
With the secure source (``rng=None``) the noise of the three releases is OpenDP's exact
discrete Gaussian of the same σ, on a grid of 2^k with k = ⌊log₂ σ⌋ − 40
(:func:`pm_private.privacy.noise.add_gaussian_noise`; Canonne, Kamath & Steinke 2020): each
statistic is rounded to the grid (a move of at most 2⁻⁴¹·σ) and integer multiples of 2^k are
added, so the set of possible outputs no longer depends on the unnoised value (the
least-significant-bit attack on float noise, Mironov 2012) and the tails are not cut.  What
remains idealised is the calibration: c(ε/3, δ/3) is the analytic bound of the *continuous*
Gaussian (Balle & Wang 2018), kept so that the noise scales are what they were.  For the
discrete Gaussian OpenDP certifies each release ρ-zero-concentrated DP with ρ = Δ′²/(2σ²)
(Δ′ = Δ plus the grid rounding, a relative 2⁻⁴⁰·√m for m values), the continuous Gaussian's ρ;
OpenDP's conversion of that ρ to (ε, δ) is looser than the analytic bound (7–11 % above ε/3 at
δ/3 for ε ∈ [0.1, 10]), and the analytic bound itself is proven for the continuous Gaussian,
which a discrete Gaussian on a grid 2⁴⁰ times finer than σ matches to within that grid.  Use
:func:`pm_private.linear.release_linear_stats` for a release whose (ε, δ) OpenDP
certifies for the discrete noise itself.  A seeded ``rng`` draws Box–Muller noise of the same
σ (floating point) and marks the result ``private=False``.

Public: n, d, B_X, B_Y, ρ, ε, δ.  Released: λ̃_min, XᵀX̂, Xᵀŷ (kept in the result with the
noise scales) and everything computed from them (λ, θ̂).  No raw rows are kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.accountant import PrivacyAccountant
from ..privacy.noise import add_gaussian_noise, as_noise_source
from ..privacy.primitives import gaussian_noise_multiplier, project_rows
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, check_public_n, check_relation
from ..privacy.release import Release, constant, output, public, release_guard
from ..privacy.units import rows_per_unit
from ..privacy.validation import (
    as_matrix,
    as_vector,
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
    raise_non_finite,
)
from .release import finite_sensitivities

__all__ = [
    "MECHANISM",
    "AdaSSPRelease",
    "adassp",
    "adassp_sensitivities",
]

# Rows per chunk hold about this many float64 values (2 MiB): projection works in cache.
CHUNK_VALUES = 1 << 18

#: Mechanism name of :func:`adassp` (result and ledger entry).
MECHANISM = "AdaSSP (Wang 2018, Alg. 2) with the analytic Gaussian mechanism (Balle & Wang 2018)"


# --------------------------------------------------------------------------------------------
# Projection and statistics
# --------------------------------------------------------------------------------------------


def adassp_sensitivities(
    d: int, x_bound: float, y_bound: float, relation: str = REPLACE_ONE
) -> tuple[float, float, float]:
    """ℓ2 sensitivities (λ_min(XᵀX), upper triangle of XᵀX, Xᵀy) after projection.

    Under replace-one (B_X², √2·B_X², 2·B_X·B_Y) for d ≥ 2 and (B_X², B_X², 2·B_X·B_Y) for d = 1;
    under add/remove (B_X², B_X², B_X·B_Y); the module docstring has the proofs.

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound : float
        The bound B_X on the ℓ2 norm of a covariate row.
    y_bound : float
        The bound B_Y on |y|.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`).

    Returns
    -------
    tuple of float
        The three ℓ2 sensitivities.

    Raises
    ------
    ValueError
        If a sensitivity overflows or underflows to 0, or the relation is unknown.
    """
    square = x_bound * x_bound
    if check_relation(relation) == ADD_REMOVE:
        return finite_sensitivities((square, square, x_bound * y_bound), "x_bound and y_bound")
    values = (square, square if d == 1 else math.sqrt(2.0) * square, 2.0 * x_bound * y_bound)
    return finite_sensitivities(values, "x_bound and y_bound")


def _check_finite(X: np.ndarray) -> None:
    rows = max(1, CHUNK_VALUES // X.shape[1])
    for start in range(0, X.shape[0], rows):
        chunk = X[start : start + rows]
        if not np.isfinite(chunk).all():
            raise_non_finite(chunk, start)


def _projected_stats(X: np.ndarray, y: np.ndarray, x_bound: float, y_bound: float):
    """XᵀX (exactly symmetric) and Xᵀy of the projected rows and clipped responses, in chunks."""
    n, d = X.shape
    rows = max(1, CHUNK_VALUES // d)
    xx = np.zeros((d, d))
    xy = np.zeros(d)
    y = np.clip(y, -y_bound, y_bound)
    for start in range(0, n, rows):
        chunk = project_rows(X[start : start + rows], x_bound)
        xx += chunk.T @ chunk
        xy += chunk.T @ y[start : start + rows]
    upper = np.triu(xx)
    return upper + np.triu(upper, 1).T, xy


def _ridge_solve(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, str]:
    """Solve A θ = b; if A is exactly singular, the minimum-norm least-squares solution."""
    try:
        return np.linalg.solve(A, b), "solve"
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0], "lstsq"


def _check_rho(rho) -> float:
    try:
        value = float(rho)
    except (TypeError, ValueError):
        raise ValueError(f"rho must be a number, got {rho!r}") from None
    if not (math.isfinite(value) and 0.0 < value < 1.0):
        raise ValueError(f"rho must be in (0, 1), got {rho!r}")
    return value


# --------------------------------------------------------------------------------------------
# Result and release
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, kw_only=True)
class AdaSSPRelease(Release, kind="adassp"):
    """An AdaSSP estimate with what it released and assumed.

    ``coef`` is θ̂ (read-only); ``ridge`` the λ used.  ``lambda_min_noisy``, ``xx_noisy`` and
    ``xy_noisy`` are the three private releases (λ̃_min after its max(0, ·), XᵀX̂, Xᵀŷ);
    ``sensitivities`` and ``noise_scales`` are (Δ, σ) for (λ_min, XᵀX, Xᵀy) and
    ``noise_multiplier`` the c = σ/Δ of each (ε/3, δ/3) release.  ``private`` is False when a
    seeded generator drew the noise (testing only).  ``solver`` is "solve" or, for an exactly
    singular system, "lstsq" (a function of the noisy releases only).

    Parameters
    ----------
    epsilon : float
        The total ε of the three releases.
    delta : float, default 0.0
        The total δ of the three releases.
    coef : numpy.ndarray
        The estimate θ̂.
    ridge : float
        The ridge λ used.
    lambda_min_noisy : float
        The private λ̃_min(XᵀX), after its max(0, ·).
    xx_noisy : numpy.ndarray
        The private XᵀX̂.
    xy_noisy : numpy.ndarray
        The private Xᵀŷ.
    solver : str, default "solve"
        "solve", or "lstsq" for an exactly singular system.
    x_bound, y_bound : float
        The public bounds B_X and B_Y.
    rho : float
        The public failure probability ρ of the ridge rule.
    n : int or None
        The number of records (public); None under add/remove neighbours (n private).
    sensitivities : tuple of float
        The ℓ2 sensitivities of (λ_min, XᵀX, Xᵀy) under ``neighbours``.
    noise_scales : tuple of float
        The noise standard deviations of (λ_min, XᵀX, Xᵀy).
    noise_multiplier : float
        c = σ/Δ of each (ε/3, δ/3) release.
    """

    coef: np.ndarray = output()
    ridge: float = output()
    lambda_min_noisy: float = output()
    xx_noisy: np.ndarray = output()
    xy_noisy: np.ndarray = output()
    solver: str = output(default="solve")
    x_bound: float = public()
    y_bound: float = public()
    rho: float = public()
    n: int | None = public()
    sensitivities: tuple[float, float, float] = public()
    noise_scales: tuple[float, float, float] = public()
    noise_multiplier: float = public()
    mechanism: str = constant(default=MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=True)
        for name in ("coef", "xx_noisy", "xy_noisy"):
            array = np.array(getattr(self, name), dtype=np.float64)
            array.flags.writeable = False
            object.__setattr__(self, name, array)
        _check_release(self)

    @property
    def d(self) -> int:
        """Number of features."""
        return self.coef.shape[0]

    def predict(self, X) -> np.ndarray:
        """x̃ᵀθ̂ for new rows, each mapped as the released rows were: projected onto the public
        ball ‖x̃‖ ≤ B_X (rows inside it are unchanged).  The library's one rule for predictors:
        :func:`pm_private.linear.predict_linear` and the logistic estimators map new rows the same way.

        Parameters
        ----------
        X : array_like, shape (m, d)
            New covariate rows.

        Returns
        -------
        numpy.ndarray
            The m predictions.

        Raises
        ------
        ValueError
            If ``X`` does not have d columns.
        """
        X = as_matrix(X)
        if X.shape[1] != self.d:
            raise ValueError(f"X must have {self.d} columns, got shape {X.shape}")
        return project_rows(X, self.x_bound) @ self.coef

    def __repr__(self) -> str:
        mode = "private" if self.private else "NOT private (seeded)"
        return (
            f"AdaSSPRelease(d={self.d}, n={'private' if self.n is None else self.n}, ε={self.epsilon:g}, "
            f"δ={self.delta:g}, "
            f"ridge={self.ridge:.4g}, {mode})"
        )


def _check_release(release: AdaSSPRelease) -> None:
    """The public fields of a release checked by the checks :func:`adassp` applies to its
    arguments, and the derived ones (sensitivities, multiplier, noise scales) against what those
    imply; ValueError naming the field."""
    shape = release.xx_noisy.shape
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] < 1:
        raise ValueError(f"field 'xx_noisy' must be a d × d matrix, d ≥ 1, got shape {shape}")
    d = shape[0]
    for name in ("coef", "xy_noisy"):
        if getattr(release, name).shape != (d,):
            raise ValueError(
                f"field {name!r} must be a vector of length d = {d}, got shape {getattr(release, name).shape}"
            )
    x_bound = check_release_field("x_bound", check_bound, "x_bound", release.x_bound)
    y_bound = check_release_field("y_bound", check_bound, "y_bound", release.y_bound)
    rho = check_release_field("rho", _check_rho, release.rho)
    check_public_n(release)
    if release.n is not None:
        check_release_field("n", check_count, "n", release.n)
    sens = check_release_field("x_bound", adassp_sensitivities, d, x_bound, y_bound, release.neighbours)
    multiplier = gaussian_noise_multiplier(release.epsilon / 3.0, release.delta / 3.0)
    check_release_consistent("noise_multiplier", release.noise_multiplier, multiplier, "c('epsilon'/3, 'delta'/3)")
    stated = (("λ_min", "'x_bound'²"), ("XᵀX", "√2·'x_bound'²"), ("Xᵀy", "2·'x_bound'·'y_bound'"))
    if release.neighbours == ADD_REMOVE:
        stated = (("λ_min", "'x_bound'²"), ("XᵀX", "'x_bound'²"), ("Xᵀy", "'x_bound'·'y_bound'"))
    for i, (name, what) in enumerate(stated):
        check_release_consistent("sensitivities", release.sensitivities[i], sens[i], f"{what} at [{i}] ({name})")
        check_release_consistent(
            "noise_scales", release.noise_scales[i], multiplier * sens[i], f"'noise_multiplier'·'sensitivities'[{i}]"
        )
    if not math.isfinite(math.log(2.0 * d * d / rho)):
        raise ValueError(f"field 'rho' = {rho!r} is too small: log(2d²/rho) of the ridge overflows")


def adassp(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    x_bound: float,
    y_bound: float,
    rho: float = 0.05,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    relation: str = REPLACE_ONE,
) -> AdaSSPRelease:
    """(ε, δ)-DP linear regression by AdaSSP (Wang 2018, Alg. 2), replace-one or add/remove neighbours.

    Three Gaussian releases with (ε/3, δ/3) each: a noisy λ_min(XᵀX) that sets the ridge,
    XᵀX + σ_XX·W and Xᵀy + σ_Xy·z; then θ̂ = (XᵀX̂ + λI)⁻¹Xᵀŷ.  Noise scales
    σ = c(ε/3, δ/3)·Δ with the replace-one sensitivities Δ = (B_X², √2·B_X², 2·B_X·B_Y) and the
    analytic Gaussian multiplier c; see the module docstring for the proof and for how this
    deviates from Wang's constants (which assume add/remove-one and under-calibrate at
    moderate ε).

    Parameters
    ----------
    X : array-like, shape (n, d)
        Private covariates; rows with ‖xᵢ‖₂ > x_bound are projected onto the ball.
    y : array-like, shape (n,)
        Private responses; clipped to [−y_bound, y_bound].
    epsilon : float
        Total ε, > 0 (ε/3 per release).
    delta : float
        Total δ, in (0, 1) (δ/3 per release).
    x_bound, y_bound : float
        Public bounds B_X (row ℓ2 norm) and B_Y (|y|), > 0; never computed from the private data.
    rho : float, default 0.05
        Failure probability in the ridge rule λ = σ_XX·√(d·log(2d²/ρ)) − λ̃_min (Wang's ρ);
        public, in (0, 1); affects utility only.
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) once under the mechanism name ``MECHANISM``; an over-budget call raises
        :class:`~pm_private.privacy.accountant.BudgetExceededError` before anything is computed.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests (``private=False``).
    unit : array-like, shape (n,), optional
        The person of each row (any hashable identifiers): the release then protects a person
        with all their rows by keeping one row per person, chosen at random, and n is the number
        of persons (:func:`pm_private.privacy.rows_kept_per_unit`).  None: the unit is the row.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): replace-one, n public and
        recorded; or add/remove, n private (the estimate needs no n: the record's ``n`` is None),
        with the add/remove sensitivities (B_X², B_X², B_X·B_Y).  Its three releases are
        composed basically, not stated as noise events, so a ledger converts an add/remove
        release by group privacy, (2ε, (1 + e^ε)·δ) (:mod:`pm_private.privacy.relations`).

    Returns
    -------
    AdaSSPRelease
        The estimate θ̂, the three private releases and what they assumed.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, bounds or ρ, input that is not numeric,
        mismatched shapes, or a NaN or infinite value.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours (n is public; the unit a row, or with
    ``unit`` a person with all their rows, n persons), or with ``relation="add-remove"`` under
    add/remove neighbours (n private; data of no row are released, not refused), by sequential
    composition of three Gaussian releases with (ε/3, δ/3).  Public inputs: ``x_bound``,
    ``y_bound``, ``rho``, ``relation``, d, and n under replace-one.  Exact: θ̂ is post-processing
    of the three releases.  Floating point: with the secure source the noise is OpenDP's exact
    discrete Gaussian of σ on a 2^k grid (Canonne, Kamath & Steinke 2020), which closes the least-significant-bit leak; σ keeps the analytic
    calibration of the continuous Gaussian (module docstring, "Floating point").  A seeded
    ``rng`` gives a result marked ``private=False``.  References: Wang 2018; Balle & Wang 2018
    (analytic Gaussian calibration).

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import adassp
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = X @ [1.0, -0.5] + 0.1 * rng.normal(size=200)
    >>> result = adassp(X, y, epsilon=0.4, delta=1e-7, x_bound=1.5, y_bound=2.0, rng=0)
    >>> result
    AdaSSPRelease(d=2, n=200, ε=0.4, δ=1e-07, ridge=..., NOT private (seeded))
    >>> result.predict(X[:3]).shape
    (3,)
    """
    private_n = check_relation(relation) == ADD_REMOVE
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    rho = _check_rho(rho)
    X = as_matrix(X, allow_empty=private_n)
    n, d = X.shape
    y = as_vector(y, n)
    if not math.isfinite(math.log(2.0 * d * d / rho)):
        raise ValueError(f"rho = {rho!r} is too small: log(2d²/rho) of the ridge overflows")
    _check_finite(X)
    source = as_noise_source(rng)
    (X, y), unit = rows_per_unit(unit, source, X, y)
    n = X.shape[0]

    eps3, delta3 = epsilon / 3.0, delta / 3.0
    multiplier = gaussian_noise_multiplier(eps3, delta3)
    sens = adassp_sensitivities(d, x_bound, y_bound, relation)
    sigma_lam, sigma_xx, sigma_xy = (multiplier * s for s in sens)
    log6 = math.log(6.0 / delta)

    def record(lam_min_noisy, ridge, xx_noisy, xy_noisy):
        coef, solver = _ridge_solve(xx_noisy + ridge * np.eye(d), xy_noisy)
        return AdaSSPRelease(
            coef=coef,
            ridge=ridge,
            epsilon=epsilon,
            delta=delta,
            x_bound=x_bound,
            y_bound=y_bound,
            private=source.secure,
            rho=rho,
            n=None if private_n else n,
            neighbours=relation,
            lambda_min_noisy=lam_min_noisy,
            xx_noisy=xx_noisy,
            xy_noisy=xy_noisy,
            sensitivities=sens,
            noise_scales=(sigma_lam, sigma_xx, sigma_xy),
            noise_multiplier=multiplier,
            solver=solver,
            unit=unit,
        )

    record(0.0, 1.0, np.zeros((d, d)), np.zeros(d))  # the record's own checks, before anything is spent
    label = f"d={d}" if private_n else f"n={n}, d={d}"
    with release_guard(accountant, MECHANISM, epsilon, delta, neighbours=relation, label=label, unit=unit):
        xx, xy = _projected_stats(X, y, x_bound, y_bound)
        lam_min = float(np.linalg.eigvalsh(xx)[0])

        # Release 1: λ̃_min (ε/3, δ/3).
        lam_min_noisy = max(
            0.0, float(add_gaussian_noise([lam_min], sigma_lam, source)[0]) - sigma_lam * math.sqrt(log6)
        )
        ridge = max(0.0, sigma_xx * math.sqrt(d * math.log(2.0 * d * d / rho)) - lam_min_noisy)

        # Release 2: XᵀX̂, symmetric noise with iid upper triangle (ε/3, δ/3).
        upper = np.triu_indices(d)
        xx_noisy = np.zeros((d, d))
        xx_noisy[upper] = add_gaussian_noise(xx[upper], sigma_xx, source)
        xx_noisy = xx_noisy + np.triu(xx_noisy, 1).T

        # Release 3: Xᵀŷ (ε/3, δ/3).
        return record(lam_min_noisy, ridge, xx_noisy, add_gaussian_noise(xy, sigma_xy, source))
