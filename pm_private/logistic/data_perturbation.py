"""Data-perturbation DP-ERM for logistic regression: a **comparison baseline** (Kang et al. 2020).

Kang et al. (2020) add Gaussian noise to training records and runs minibatch SGD on
them; its noise constants were lost in extraction, and its argument (a first-order Taylor
expansion of the gradient in the noise, the same noise reused in every step, labels left
clean) is not a proof.  This module keeps the scheme — Gaussian noise on the records that
minibatch SGD reads — and makes the guarantee exact:

* Logistic loss depends on a record (x, y), y ∈ {−1, 1}, only through u = y·[x, 1] (with an
  intercept) or u = y·x: l(θ; u) = log(1 + e^{−θᵀu}).  The record is u, so the label is
  perturbed too.  Rows x are clipped to ‖x‖₂ ≤ C (public), hence ‖u‖₂ ≤ R = √(C² + 1) (or C).
* Step t draws a batch of b records uniformly without replacement and adds **fresh**
  N(0, σ²I) noise to each: ũᵢ = uᵢ + zᵢ.  The update θ ← θ − η_t((1/b)Σ ∇l(θ; ũᵢ) + μθ) is
  post-processing of the noisy batch.
* Sensitivity: replacing one record changes the batch's stacked records by at most
  ‖u − u'‖₂ ≤ 2R, so each step is the Gaussian mechanism with ℓ2 sensitivity 2R and noise
  multiplier z = σ/(2R), subsampled without replacement at rate b/n.
* (ε, δ) is computed by Google's ``dp_accounting`` RDP accountant (REPLACE_ONE relation,
  ``SampledWithoutReplacementDpEvent``, Wang, Balle & Kasiviswanathan 2019) over the T steps;
  z is the smallest multiplier whose accounted ε is ≤ the target.

Guarantee: **(ε, δ)-DP** for every iterate and the output, replace-one neighbours (n public);
public: C, b, T, η, μ, n.  The averaged iterate released is post-processing.  Floating-point
Gaussian sampling (Box–Muller on 53-bit uniforms) is not hardened against Mironov-type
attacks; the noise never leaves the process except through the model.  It stays floating
point: the RDP accounting of the subsampled steps is for the continuous Gaussian, and an exact
discrete Gaussian (OpenDP) for every noised record of every step would need its own subsampled
analysis.

``influence_threshold`` reproduces Kang et al.'s (2020) "performance improving" variant (Alg. 2):
records whose Koh–Liang influence ‖H⁻¹∇l(θ̂; uᵢ)‖₂ / n at a non-private fit θ̂ is below the
threshold are used **without noise**.  This variant is **NOT differentially private**: an
unnoised record enters the update exactly, and which records are unnoised is decided from the
private data (θ̂, H and uᵢ all are).  Its result is marked ``private=False`` and its ε, δ
describe only the noised records' mechanism, not a guarantee.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import dp_accounting
import numpy as np
from scipy.special import expit

from .._engine.keywords import renamed_keywords
from ..privacy.noise import as_noise_source
from ..privacy.primitives import project_rows
from ..privacy.release import Release, constant, output, public, release_guard
from ..privacy.units import rows_per_unit
from ..privacy.validation import (
    as_matrix,
    check_bool,
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
    check_finite_rows,
    check_positive,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
)
from .elastic_net import _predict, _predict_proba, _split_theta, clip_to_release, to_signed_labels
from .proximal import solve_elastic_net_logistic

__all__ = [
    "MULTIPLIER_RANGE",
    "MECHANISM",
    "DataPerturbationRelease",
    "accounted_epsilon",
    "calibrate_noise_multiplier",
    "data_perturbation_sgd",
    "perturbed_batch",
]


#: Mechanism name of :func:`data_perturbation_sgd` (result and ledger entry).
MECHANISM = "record-perturbation minibatch SGD (baseline after Kang et al. 2020)"


def _event(noise_multiplier: float, n: int, batch_size: int, steps: int) -> dp_accounting.DpEvent:
    step = dp_accounting.SampledWithoutReplacementDpEvent(
        n, batch_size, dp_accounting.GaussianDpEvent(noise_multiplier)
    )
    return dp_accounting.SelfComposedDpEvent(step, steps)


# Integer RDP orders only: the without-replacement bound is evaluated exactly there, and any set
# of orders gives a valid ε (fewer orders: possibly a slightly larger ε); orders above 128 cost
# seconds and only matter for ε far below the range used here.
_ORDERS = tuple(range(2, 65)) + (128,)


def _accountant() -> dp_accounting.rdp.RdpAccountant:
    return dp_accounting.rdp.RdpAccountant(
        orders=_ORDERS, neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE
    )


def accounted_epsilon(noise_multiplier: float, *, n: int, batch_size: int, steps: int, delta: float) -> float:
    """ε of T subsampled Gaussian steps (RDP accountant, replace-one, sampling without replacement)."""
    accountant = _accountant()
    accountant.compose(_event(noise_multiplier, n, batch_size, steps))
    return float(accountant.get_epsilon(delta))


#: Noise multipliers searched by :func:`calibrate_noise_multiplier`.
MULTIPLIER_RANGE = (1e-2, 1e4)

_ZERO_ONE = np.array([0, 1])  # the labels a release predicts, the positive one last


@lru_cache(maxsize=256)
def calibrate_noise_multiplier(*, epsilon: float, delta: float, n: int, batch_size: int, steps: int) -> float:
    """Smallest noise multiplier z in [10⁻², 10⁴] (to 1e-3) with accounted ε ≤ ``epsilon``.

    Cached (public inputs only).  If even z = 10⁴ accounts for more than ``epsilon`` (small ε
    with small n or many steps) a ValueError says so; if z = 10⁻² already stays within
    ``epsilon``, 10⁻² is returned.
    """
    low, high = MULTIPLIER_RANGE
    floor = accounted_epsilon(high, n=n, batch_size=batch_size, steps=steps, delta=delta)
    if floor > epsilon:
        raise ValueError(
            f"epsilon = {epsilon:g} is out of reach for n = {n}, batch_size = {batch_size}, {steps} steps "
            f"and delta = {delta:g}: even the noise multiplier {high:g} accounts for ε = {floor:.3g}; "
            "raise epsilon or delta, or use fewer epochs"
        )
    if accounted_epsilon(low, n=n, batch_size=batch_size, steps=steps, delta=delta) <= epsilon:
        return low
    z = dp_accounting.calibrate_dp_mechanism(
        _accountant,
        lambda m: _event(m, n, batch_size, steps),
        epsilon,
        delta,
        dp_accounting.ExplicitBracketInterval(low, high),
        tol=1e-3,
    )
    if accounted_epsilon(z, n=n, batch_size=batch_size, steps=steps, delta=delta) > epsilon:
        raise RuntimeError(f"noise calibration failed: multiplier {z} does not reach ε = {epsilon}")
    return float(z)


@dataclass(frozen=True, eq=False, kw_only=True)
class DataPerturbationRelease(Release, kind="data_perturbation"):
    """Coefficients and what was assumed and added; ``private`` is False for seeded or thresholded runs.

    With ``influence_threshold`` the run is not DP (``private=False``, see the module docstring);
    which records went unnoised is decided on the private data and is not reported.

    Parameters
    ----------
    epsilon : float
        The target ε, as charged to the accountant; the RDP accountant's ε for the calibrated
        noise is ≤ this value.
    delta : float
        The δ of the guarantee.
    private : bool
        True when the noise came from secure OS randomness (``rng=None``) and every record was
        noised; False for a seeded ``rng`` or an ``influence_threshold`` run, whose output
        carries no privacy guarantee.
    coef : numpy.ndarray of shape (n_features,)
        The released coefficients (the average of the second half of the SGD iterates, without
        the intercept).
    intercept : float
        The released intercept (0.0 without an intercept).
    x_bound : float
        The public ℓ2 bound C on the rows; predictions scale new rows onto the same ball.
    noise_multiplier : float
        z = σ/(2R), the smallest multiplier (to 10⁻³) whose accounted ε is ≤ ``epsilon``.
    noise_std : float
        σ, the standard deviation of the Gaussian noise added to each coordinate of a record
        in every step.
    sensitivity : float
        2R, the ℓ2 sensitivity of a step's batch of records (R = √(C² + 1) with an intercept,
        C without).
    steps : int
        T = ⌈epochs·n/b⌉, the number of SGD steps.
    batch_size : int
        b, the number of records drawn (without replacement) in each step.
    """

    renamed_fields: ClassVar[dict[str, str]] = {"norm_bound": "x_bound"}  # the name before 2026-12

    coef: np.ndarray = output()
    intercept: float = output()
    x_bound: float = public()
    noise_multiplier: float = public()
    noise_std: float = public()
    sensitivity: float = public()
    steps: int = public()
    batch_size: int = public()
    mechanism: str = constant(default=MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=True)
        _check_release(self)

    def decision_function(self, X) -> np.ndarray:
        """θᵀx̃ + intercept, with x̃ the row scaled onto the public ball ‖x‖₂ ≤ ``x_bound``.

        Rows are mapped as the training rows were (the prediction rule of every logistic
        release); post-processing, no privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite rows.

        Returns
        -------
        numpy.ndarray of shape (n_samples,)
            Scores; positive means label 1.

        Raises
        ------
        ValueError
            Rows that are not finite, or a number of features other than the release's.
        """
        X = as_matrix(X)
        if X.shape[1] != self.coef.shape[0]:
            raise ValueError(f"X has {X.shape[1]} features, the release has {self.coef.shape[0]}")
        check_finite_rows(X)
        return clip_to_release(X, self) @ self.coef + self.intercept

    predict_proba = _predict_proba
    predict = _predict

    def _labels(self) -> np.ndarray:
        """The two labels, the positive one last: 0 and 1 (also when training used −1 and 1)."""
        return _ZERO_ONE


def perturbed_batch(records: np.ndarray, batch_size: int, sigma: float, noised: np.ndarray, source) -> tuple:
    """(indices, records) of one step: b rows drawn without replacement, fresh N(0, σ²I) on the noised ones."""
    batch = np.argsort(source.uniform((records.shape[0],)))[:batch_size]
    noise = source.normal((batch_size, records.shape[1]))
    return batch, records[batch] + noised[batch, None] * sigma * noise


def _influence(U: np.ndarray, l2: float) -> np.ndarray:
    """Koh–Liang influence norms ‖H⁻¹∇l(θ̂; uᵢ)‖₂/n at the non-private ridge fit θ̂ (private data!)."""
    n = U.shape[0]
    theta = solve_elastic_net_logistic(U, np.ones(n), l2, 0.0).theta[:, 0]
    p = expit(-U @ theta)
    grads = -p[:, None] * U
    hessian = (U * (p * (1 - p))[:, None]).T @ U / n + l2 * np.eye(U.shape[1])
    return np.linalg.norm(np.linalg.solve(hessian, grads.T), axis=0) / n


def _check_release(release: DataPerturbationRelease) -> None:
    """The public fields of a release checked by the checks :func:`data_perturbation_sgd` applies
    to its arguments, the sensitivity against the norm bound (2κ, or 2√(κ² + 1) with an
    intercept: not recorded) and the noise s.d. against multiplier × sensitivity; ValueError
    naming the field.  The multiplier itself depends on n (not recorded) and is only checked > 0."""
    bound = check_release_field("x_bound", check_bound, "x_bound", release.x_bound)
    if not math.isfinite(bound * bound + 1):
        raise ValueError(f"field 'x_bound' = {bound!r} is too large: the record radius overflows")
    multiplier = check_release_field("noise_multiplier", check_positive, "noise_multiplier", release.noise_multiplier)
    check_release_field("steps", check_count, "steps", release.steps)
    check_release_field("batch_size", check_count, "batch_size", release.batch_size)
    given = check_release_field("sensitivity", check_positive, "sensitivity", release.sensitivity)
    radii = (2.0 * bound, 2.0 * math.sqrt(bound * bound + 1))
    sensitivity = next((r for r in radii if math.isclose(given, r, rel_tol=1e-9)), None)
    if sensitivity is None:
        raise ValueError(
            f"field 'sensitivity' must be 2·x_bound = {radii[0]!r} or 2√(x_bound² + 1) = {radii[1]!r}, "
            f"got {release.sensitivity!r:.40}"
        )
    check_release_consistent(
        "noise_std", release.noise_std, multiplier * sensitivity, "'noise_multiplier'·'sensitivity'"
    )


@renamed_keywords(norm_bound="x_bound")
def data_perturbation_sgd(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    x_bound: float,
    batch_size: int = 64,
    epochs: int = 10,
    learning_rate: float = 0.5,
    l2: float = 1e-3,
    fit_intercept: bool = True,
    influence_threshold: float | None = None,
    accountant=None,
    rng=None,
    unit=None,
) -> DataPerturbationRelease:
    """(ε, δ)-DP logistic regression by per-step Gaussian record perturbation: a comparison baseline.

    Runs T = ⌈epochs·n/b⌉ minibatch SGD steps with η_t = learning_rate/√(t+1) on records
    perturbed afresh in every step, and returns the average of the second half of the iterates
    (module docstring).

    Privacy: **(ε, δ)-DP** for the secure default ``rng=None`` under replace-one neighbours
    (n public; the unit a row, or with ``unit`` a person with all their rows, n persons), for
    every iterate and the output: each step is a Gaussian mechanism of ℓ2
    sensitivity 2R on a batch sampled without replacement, and the T steps are composed by
    Google's ``dp_accounting`` RDP accountant (Wang, Balle & Kasiviswanathan 2019); the scheme
    follows Kang et al. (2020), whose own argument is not a proof.  Public: ``x_bound``,
    ``batch_size``, ``epochs``, ``learning_rate``, ``l2``, ``fit_intercept``, n, the number of
    features.  Exact up to the accountant's bound (the calibrated ε is ≤ the target); the
    Gaussian noise is drawn by Box–Muller from 53-bit uniforms of the operating system's
    generator, not hardened against floating-point attacks (Mironov 2012).  A seeded ``rng``
    gives **no** guarantee.  With ``influence_threshold`` the run is **not** DP at all (module
    docstring); the result says so with ``private=False``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Private records (finite); rows are scaled onto ‖x‖₂ ≤ ``x_bound``.
    y : array-like of shape (n_samples,)
        Private labels in {0, 1} or {−1, 1}.
    epsilon : float
        Target ε ≥ 10⁻⁶.
    delta : float
        δ ∈ (0, 1).
    x_bound : float
        Public ℓ2 bound C > 0 on the rows.
    batch_size : int, default 64
        Records per step, in [1, n].
    epochs : int, default 10
        Passes over the data, ≥ 1.
    learning_rate : float, default 0.5
        η > 0; ``learning_rate``·``l2`` must be ≤ 2 (the ridge step 1 − η_t·l2 would expand
        the iterates until they overflow).
    l2 : float, default 1e-3
        Ridge strength μ > 0.
    fit_intercept : bool, default True
        Append a constant-1 column.
    influence_threshold : float, optional
        > 0: the **not private** variant of Kang et al. (2020) Alg. 2 (module docstring).
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) once, refused before any noise is drawn if over budget.
    rng : None, int, numpy.random.Generator or NoiseSource, optional
        None (default) draws secure noise; anything else is seeded and not private.
    unit : array-like, shape (n,), optional
        The person of each row (repeated observations): one row per person, chosen uniformly at
        random from the noise source, enters the run, and the release protects a person with all
        their rows, n the number of persons (:func:`pm_private.privacy.rows_kept_per_unit`).
        None: the unit is the row.

    Returns
    -------
    DataPerturbationRelease
        Coefficients, intercept, the calibrated noise and the public constants; its
        ``predict`` methods scale new rows onto the same ℓ2 ball.

    Raises
    ------
    ValueError
        Invalid arguments, records or labels, or an ε out of reach of the noise multipliers
        searched; raised before (ε, δ) is charged.  Also if the averaged iterate is not finite:
        that one is raised **after** the charge (noise was drawn; a retry is a new release).
    BudgetExceededError
        The accountant's remaining budget is below (ε, δ); nothing is charged.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.logistic import data_perturbation_sgd
    >>> from pm_private.privacy import PrivacyAccountant
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=2000) > 0).astype(int)
    >>> accountant = PrivacyAccountant(epsilon=4.0, delta=1e-5)
    >>> release = data_perturbation_sgd(
    ...     X, y, epsilon=4.0, delta=1e-5, x_bound=3.0, accountant=accountant, rng=1
    ... )
    >>> bool(np.mean(release.predict(X) == y) > 0.7), accountant.spent
    (True, Budget(epsilon=4.0, delta=1e-05))
    """
    X = as_matrix(X)
    n, d = X.shape
    y = to_signed_labels(y, n)
    check_finite_rows(X)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    bound = check_bound("x_bound", x_bound)
    rate = check_positive("learning_rate", learning_rate)
    l2 = check_positive("l2", l2)
    if rate * l2 > 2.0:
        raise ValueError(
            f"learning_rate·l2 = {rate * l2:g} > 2: the ridge step 1 − η·l2 would expand the iterates; "
            "lower learning_rate"
        )
    if not math.isfinite(bound * bound + 1):
        raise ValueError(f"x_bound = {bound!r} is too large: the record radius overflows")
    source = as_noise_source(rng)
    (X, y), unit = rows_per_unit(unit, source, X, y)
    n = X.shape[0]
    batch_size = check_count("batch_size", batch_size, 1, n)
    epochs = check_count("epochs", epochs)
    fit_intercept = check_bool("fit_intercept", fit_intercept)
    if influence_threshold is not None:
        influence_threshold = check_bound("influence_threshold", influence_threshold)
    steps = math.ceil(epochs * n / batch_size)
    records, radius = _signed_records(X, y, bound, fit_intercept)
    sensitivity = 2.0 * radius
    multiplier = calibrate_noise_multiplier(epsilon=epsilon, delta=delta, n=n, batch_size=batch_size, steps=steps)
    sigma = multiplier * sensitivity
    noised = np.ones(n, dtype=bool) if influence_threshold is None else _influence(records, l2) > influence_threshold

    label = "data-perturbation baseline" + ("" if influence_threshold is None else " (influence-thresholded: NOT DP)")

    def record(average):
        coef, intercept = _split_theta(average, fit_intercept)
        return DataPerturbationRelease(
            coef=coef,
            intercept=intercept,
            x_bound=bound,
            epsilon=epsilon,
            delta=delta,
            noise_multiplier=multiplier,
            noise_std=sigma,
            sensitivity=sensitivity,
            steps=steps,
            batch_size=batch_size,
            private=source.secure and influence_threshold is None,
            unit=unit,
        )

    record(np.zeros(records.shape[1]))  # the record's own checks, before anything is spent
    with (
        release_guard(accountant, MECHANISM, epsilon, delta, label=label, unit=unit),
        np.errstate(over="ignore", invalid="ignore"),
    ):
        average = _averaged_sgd(records, batch_size, sigma, noised, source, rate=rate, l2=l2, steps=steps)

    if not np.isfinite(average).all():
        raise ValueError(
            "the SGD iterates overflowed (learning_rate too large for the noisy records); the release "
            "was charged because noise was drawn"
        )
    return record(average)


def _signed_records(X, y, bound: float, fit_intercept: bool):
    """The records yᵢ·(x̃ᵢ, 1) of :func:`data_perturbation_sgd` (x̃ᵢ the row projected onto the ball
    of radius ``bound``; the 1 with an intercept only) and the radius of their ball."""
    records = project_rows(X, bound, 2)
    if fit_intercept:
        records = np.hstack([records, np.ones((records.shape[0], 1))])
    return records * y[:, None], math.sqrt(bound**2 + 1) if fit_intercept else bound


def _averaged_sgd(records, batch_size, sigma, noised, source, *, rate, l2, steps) -> np.ndarray:
    """The SGD of :func:`data_perturbation_sgd` on freshly perturbed batches (step η/√(t+1), ridge
    ``l2``), averaged over its second half (Polyak–Ruppert)."""
    theta = np.zeros(records.shape[1])
    average = np.zeros_like(theta)
    burn_in = steps // 2
    for t in range(steps):
        _, noisy = perturbed_batch(records, batch_size, sigma, noised, source)
        grad = -(expit(-noisy @ theta)[:, None] * noisy).mean(axis=0) + l2 * theta
        theta = theta - rate / math.sqrt(t + 1) * grad
        if t >= burn_in:
            average += (theta - average) / (t - burn_in + 1)
    return average
