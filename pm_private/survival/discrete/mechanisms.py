"""Private discrete-time survival regression by perturbation (Nguyên & Hui 2017a, §4).

Both mechanisms fit the logit-link discrete-time hazard model of
:mod:`pm_private.survival.discrete.likelihood` with the
natural-spline baseline, J(f) = (1/n)Σᵢ ℓ(f; dᵢ) + (Λ/2)‖f‖², f = (α, β), and release f.

Privacy: ε-DP under **replace-one** neighbours (n public), or under **add/remove** (n private, the
objective normalised by a public size m in place of n, and G = Σ_s √(‖A_s‖² + 1), the bound on one
record's gradient, in place of L: :func:`record_gradient_bound`).  Public inputs: n (replace-one)
or m (add/remove), q (intervals), e (knots) and hence the basis A, the covariate bound ‖xᵢ‖ ≤ 1
(rows must already be projected, e.g. with :func:`pm_private.survival.data.scale_covariates`),
times scaled into [0, 1] with a public horizon, and Λ.  Both rest on Lemma 4.2 of Nguyên & Hui (2017a): for any f and any two records,

    ‖∇ℓ(f; d) − ∇ℓ(f; d′)‖ ≤ L = Σ_s √(4 + ‖A_s‖²) + max_s √(4‖A_s‖² + 4).

* Ext-Out-Pert (Alg. 1): f* = argmin J; by Lemma 4.1/4.3 its ℓ2 sensitivity is t = L/(nΛ);
  release f* + b with density ∝ exp(−ε‖b‖/t) (‖b‖ ~ Gamma(e + d, t/ε), uniform direction).
* Ext-Obj-Pert (Alg. 2): b with density ∝ exp(−ε′‖b‖/L), release
  argmin J(f) + ⟨b, f⟩/n + (Δ/2)‖f‖², where ε′ = ε − ε_J(Λ + Δ) pays for the Jacobian of the
  map f ↦ b and Δ ≥ 0 (found by bisection) keeps ε′ ≥ ε/2.

Correction to Nguyên & Hui's (2017a) proof of Theorem 4.4.  The Jacobian of
f ↦ b on D is −(B + Hₙ), on D′ −(B + Hₙ′), with B ⪰ n(Λ+Δ)I the part shared by both and
Hₙ = Σ_{s≤kₙ} c_s xˢxˢᵀ, 0 ≤ c_s ≤ ¼, the Hessian of the replaced record's loss.  Because
Hₙ′ ⪰ 0,

    det(B + Hₙ)/det(B + Hₙ′) ≤ det(B + Hₙ)/det(B) ≤ Π_s (1 + c_s xˢᵀB⁻¹xˢ) ≤ Π_s (1 + ‖xˢ‖²/(4n(Λ+Δ))),

and the same with D, D′ swapped.  The paper bounds the rank-one term's eigenvalue by ¼‖xˢ‖
(it is c_s‖xˢ‖²) and multiplies the factors of both records (one suffices).  With
‖xˢ‖² = ‖A_s‖² + ‖x‖² ≤ ‖A_s‖² + 1 the bound used here is

    ε_J(λ) = Σ_s log(1 + (‖A_s‖² + 1)/(4nλ))     (paper: 2 Σ_s log(1 + √(‖A_s‖² + 1)/(4nλ))).

It is attained for q = 1 (checked by the test suite).  Term by term it is below the
paper's wherever a = ‖A_s‖² + 1 ≤ 4 (1 + a·x ≤ (1 + √a·x)²), which holds for every interval
when e ≤ 4; for the bases used here (q = 200, e ≤ 8) even the totals stay below the paper's, so
the paper's ε′ is conservative in practice although its proof step is wrong.

Residual risks (the guarantees are those of the idealised real-valued mechanisms):

* the minimisers are computed to ‖∇J‖ ≤ 1e-9 (Newton), which moves f by at most 1e-9/(Λ + Δ),
  many orders below the noise.  Nothing about the solve (‖∇J‖, iterations, objective) is
  released: computed on the private data before or without the noise, such metadata tells
  neighbours apart.  If Newton's method does not converge, ConvergenceError is raised **after**
  ε is charged (budget reservation): the failure depends on the data and must not be
  retriable for free;
* Ext-Out-Pert adds float noise to a float f* (the least-significant-bit issue of naive Laplace
  noise, Mironov 2012), and :func:`pm_private.privacy.noise.l2_gamma_vector`'s radius is a sum of
  exponentials cut at 37.4 each (no uniform below 2⁻⁵⁴): a δ of about (e + d)·2⁻⁵³ ≈ 1e-15,
  not charged to the accountant.  OpenDP has no exact sampler for a density in the ℓ2 norm
  (its exact samplers are per-coordinate discrete Laplace and Gaussian), so this noise stays
  floating point.  Ext-Obj-Pert releases an optimiser's output, not f + b; its proof needs the
  continuous density of b (a change of variables through the minimiser), which discrete noise
  would not have.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._engine.docstrings import parameters_from
from ...privacy.accountant import PrivacyAccountant
from ...privacy.budget import L2_LAPLACE, PURE, NoiseEvent
from ...privacy.noise import as_noise_source, l2_gamma_vector
from ...privacy.relations import ADD_REMOVE, REPLACE_ONE, check_public_n, check_relation
from ...privacy.release import ConvergenceError, Release, constant, output, public, release_guard
from ...privacy.validation import (
    check_bound,
    check_count,
    check_epsilon,
    check_memory,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
)
from ..data import check_survival, person_records
from .data import BasisDimensions, private_records
from .fit import fit_discrete_time
from .sensitivity import (
    gradient_bound,
    objective_regularization,
    output_sensitivity,
)
from .spline import interval_basis

__all__ = [
    "OUTPUT_PERTURBATION",
    "OBJECTIVE_PERTURBATION",
    "DiscreteTimeRelease",
    "output_perturbation",
    "objective_perturbation",
]

#: Mechanism names of :func:`output_perturbation` and :func:`objective_perturbation`.
OUTPUT_PERTURBATION = "Ext-Out-Pert discrete-time survival (Nguyên & Hui 2017a, Alg. 1)"
OBJECTIVE_PERTURBATION = "Ext-Obj-Pert discrete-time survival (Nguyên & Hui 2017a, Alg. 2)"


@dataclass(frozen=True, eq=False, kw_only=True)
class DiscreteTimeRelease(Release, kind="discrete_time"):
    """A private f = (α, β) of the logit discrete-time model and what its release assumed.

    ``sensitivity`` is t of the noise density ∝ exp(−``noise_epsilon``·‖b‖/t), ``noise_scale``
    = t/``noise_epsilon`` the scale of ‖b‖ ~ Gamma(dim f, scale).  Out-Pert: t = L/(nΛ) under
    replace-one, G/(mΛ) under add/remove (m = ``public_size``), noise_epsilon = ε.  Obj-Pert:
    t = L (G under add/remove), noise_epsilon = ε′, ``extra_regularization`` = Δ.
    ``private`` is False when a seeded generator drew the noise (tests only).  No record and
    no solver metadata is kept.

    Parameters
    ----------
    delta : float, default 0.0
        0: the release is pure ε-DP.
    f : numpy.ndarray
        The private (α, β).
    noise_epsilon : float
        The ε of the noise density (ε for Out-Pert, ε′ for Obj-Pert).
    sensitivity : float
        t of the noise density.
    noise_scale : float
        t/``noise_epsilon``, the Gamma scale of ‖b‖.
    regularization : float
        The public ridge Λ.
    extra_regularization : float
        The extra ridge Δ of Obj-Pert (0 for Out-Pert).
    n : int or None
        The number of records: public under replace-one, None under add/remove (private).
    public_size : int, optional
        The public size m that normalises the objective in place of n under add/remove
        (None under replace-one: m = n).
    q : int
        The number of intervals.
    e : int
        The number of spline knots.
    d : int
        The number of covariates.
    link : str, default "logit"
        The link of the hazard.
    covariate_bound : float, default 1.0
        The bound on ‖xᵢ‖.
    """

    f: np.ndarray = output()
    noise_epsilon: float = public()
    sensitivity: float = public()
    noise_scale: float = public()
    regularization: float = public()
    extra_regularization: float = public(range="nonnegative")
    n: int | None = public()
    q: int = public()
    e: int = public()
    d: int = public()
    public_size: int | None = public(default=None)
    link: str = constant(default="logit")
    covariate_bound: float = constant(default=1.0)

    def __post_init__(self):
        check_release_guarantee(self)
        f = np.array(self.f, dtype=np.float64)
        f.flags.writeable = False
        object.__setattr__(self, "f", f)
        _check_release(self)

    @property
    def alpha(self) -> np.ndarray:
        """Spline coefficients of the baseline γ(t) = Σⱼ αⱼ bⱼ(t)."""
        return self.f[: self.e]

    @property
    def beta(self) -> np.ndarray:
        """Covariate effects (log odds ratios of the hazard)."""
        return self.f[self.e :]


#: The largest public size m of the objective: a count of persons, above any population.
MAX_PUBLIC_SIZE = 10**10

_NOT_CONVERGED = "Newton's method did not reach ‖∇J‖ ≤ 1e-9 in 100 steps; ε was spent (the failure depends on the data)"


def _check_noise_scale(*values) -> None:
    """Refuse, before any noise, public parameters whose noise scale or ridge is not finite."""
    if not all(np.isfinite(v) for v in values):
        raise ValueError("epsilon and regularization give a noise scale that overflows; raise them")


def _check_release(release: DiscreteTimeRelease) -> None:
    """The public fields of a release checked by the checks the mechanisms apply to their
    arguments (:func:`_check_inputs`), and the sensitivity, ε′, noise scale and extra ridge
    against what the mechanism named in ``mechanism`` (one of the two) derives from q, e, n, ε
    and Λ; ValueError naming the field."""
    regularization = check_release_field("regularization", check_bound, "regularization", release.regularization)
    q = check_release_field("q", check_count, "q", release.q)
    e = check_release_field("e", check_count, "e", release.e, 2)
    try:
        check_memory("q and e", 64.0 * q * (e + 2))
    except ValueError as error:
        raise ValueError(f"fields 'q' and 'e': {error}") from None
    if release.mechanism not in (OUTPUT_PERTURBATION, OBJECTIVE_PERTURBATION):
        raise ValueError(
            f"field 'mechanism' must name one of the mechanisms {[OUTPUT_PERTURBATION, OBJECTIVE_PERTURBATION]}, "
            f"got {release.mechanism!r:.60}"
        )
    n = _checked_size(release)
    d = check_release_field("d", check_count, "d", release.d, 0)
    if release.f.shape != (e + d,):
        raise ValueError(f"field 'f' must hold 'e' + 'd' values, got shape {release.f.shape}")
    if release.link != "logit":
        raise ValueError(f"field 'link' must be 'logit', got {release.link!r:.40}")
    if not (isinstance(release.covariate_bound, (int, float)) and release.covariate_bound == 1.0):
        raise ValueError(
            f"field 'covariate_bound' must be 1 (rows in the unit ball), got {release.covariate_bound!r:.40}"
        )
    noise_epsilon = check_release_field("noise_epsilon", check_epsilon, release.noise_epsilon)
    basis = interval_basis(q, e)
    if release.mechanism == OUTPUT_PERTURBATION:
        sensitivity = output_sensitivity(basis, n, regularization, release.neighbours)
        extra, expected_epsilon = 0.0, release.epsilon
    else:
        sensitivity = gradient_bound(basis, release.neighbours)
        extra, expected_epsilon = objective_regularization(basis, n, release.epsilon, regularization)
    check_release_consistent(
        "sensitivity",
        release.sensitivity,
        sensitivity,
        "the sensitivity of 'q', 'e', 'n' (or 'public_size'), 'regularization' and 'neighbours'",
    )
    check_release_consistent(
        "noise_epsilon",
        noise_epsilon,
        expected_epsilon,
        "the ε that 'epsilon', 'q', 'e', 'n' and 'regularization' leave for the noise",
    )
    if not (isinstance(release.extra_regularization, (int, float)) and release.extra_regularization >= 0):
        raise ValueError(f"field 'extra_regularization' must be ≥ 0, got {release.extra_regularization!r:.40}")
    if extra == 0.0 or release.extra_regularization == 0.0:
        if release.extra_regularization != extra:
            raise ValueError(
                f"field 'extra_regularization' must be Δ of Alg. 2 for 'epsilon', 'q', 'e', 'n' and 'regularization' "
                f"= {extra!r}, got {release.extra_regularization!r}"
            )
    else:
        check_release_consistent(
            "extra_regularization",
            release.extra_regularization,
            extra,
            "Δ of Alg. 2 for 'epsilon', 'q', 'e', 'n' and 'regularization'",
        )
    check_release_consistent(
        "noise_scale", release.noise_scale, sensitivity / noise_epsilon, "'sensitivity'/'noise_epsilon'"
    )
    check_release_field("noise_scale", _check_noise_scale, release.noise_scale, release.extra_regularization)


def _checked_size(release: DiscreteTimeRelease) -> int:
    """m, the public size of a release's objective: n under replace-one, ``public_size`` under
    add/remove; ValueError naming the field."""
    check_public_n(release)
    if release.neighbours == REPLACE_ONE:
        if release.public_size is not None:
            raise ValueError(
                f"field 'public_size' must be None under replace-one (n public), got {release.public_size!r:.40}"
            )
        return check_release_field("n", check_count, "n", release.n)
    if release.public_size is None:
        raise ValueError("field 'public_size' must be a count under add-remove neighbours (n private)")
    return check_release_field("public_size", check_count, "public_size", release.public_size, 1, MAX_PUBLIC_SIZE)


@dataclass(frozen=True, eq=False)
class _NoRecords(BasisDimensions):
    """The data set of no record, a neighbour of every one-record data set under add/remove: the
    public basis and d, n = 0."""

    basis: np.ndarray
    d: int
    n: int = 0


def _check_inputs(X, time, event, unit, epsilon, regularization, q, e, relation):
    """(records, ε, Λ, unit) of both mechanisms: the rows made one record per person
    (:func:`pm_private.survival.data.person_records`), ε, Λ, q and e checked, and the records
    validated where they live (Dask collections partition by partition); under add/remove, data
    of no record are taken (:func:`pm_private.privacy.relations.check_some_units`)."""
    empty = check_relation(relation) == ADD_REMOVE
    time, event, (X,), unit = person_records(unit, time, event, X, allow_empty=empty)
    epsilon = check_epsilon(epsilon)
    regularization = check_bound("regularization", regularization)
    q, e = check_count("q", q), check_count("e", e, 2)
    check_memory("q and e", 64.0 * q * (e + 2))  # the q × e spline basis and its products
    if any(hasattr(a, "__dask_graph__") for a in (X, time, event)):  # Dask collections: validated where they live
        from .dask_reduce import partitioned_records

        return partitioned_records(X, time, event, q=q, e=e), epsilon, regularization, unit
    if empty and np.size(time) == 0:
        check_survival(time, event, allow_empty=True)
        shape = np.shape(X)
        if len(shape) != 2 or shape[0] != 0 or shape[1] < 1:
            raise ValueError(f"X must be 2-D with one column per covariate and one row per time, got shape {shape}")
        return _NoRecords(interval_basis(q, e), shape[1]), epsilon, regularization, unit
    return private_records(X, time, event, q, e), epsilon, regularization, unit


def _public_size(public_size, n: int, relation: str) -> int:
    """m, the public size normalising the objective: n under replace-one (n public),
    ``public_size`` under add/remove; ValueError naming ``public_size``."""
    if relation == REPLACE_ONE:
        if public_size is not None:
            raise ValueError(
                "public_size is for add-remove neighbours only: under replace-one n is public and sizes the ridge"
            )
        return n
    if public_size is None:
        raise ValueError(
            "public_size must be given under add-remove neighbours: n is private and cannot size the ridge"
        )
    return check_count("public_size", public_size, 1, MAX_PUBLIC_SIZE)


def _output_noise_event(t: float, epsilon: float, basis, size: int, regularization: float, relation: str) -> tuple:
    """Out-Pert's noise, scale t/ε, as an ℓ2-Laplace event, so that a ledger composes it tightly:
    Δ = t under the release's relation; under add/remove, with the replace-one Δ of the same
    minimiser, L/(mΛ), or 2t = 2·G/(mΛ) (the triangle inequality) where that is smaller."""
    replace_one = None
    if relation == ADD_REMOVE:
        replace_one = min(output_sensitivity(basis, size, regularization), 2.0 * t)
    return (NoiseEvent(L2_LAPLACE, t / epsilon, t, replace_one),)


def _objective_event(epsilon: float, noise_epsilon: float, basis, relation: str) -> tuple:
    """Obj-Pert's guarantee as one pure event, so that a ledger of the other relation converts it
    by its own proof rather than by group privacy.  Under add/remove, for one output f, the noise
    vectors of two data sets differing in one replaced record differ by ∇ℓ(f; d′) − ∇ℓ(f; d), of
    norm at most min(L, 2G) (L the replace-one gradient bound, 2G the triangle inequality), where
    the noise density ∝ exp(−ε′‖b‖/G) was sized for G: a factor exp(ε′·min(L, 2G)/G).  Their
    Jacobians are Σ∇²ℓ + m(Λ + Δ)I with one record's Hessian removed and another's added; a
    Hessian is positive semi-definite, so removing it only lowers a determinant, and the ratio is
    at most that of adding one record, e^(ε − ε′) by the mechanism's choice of ε′.  Replace-one ε:
    ε′·min(L, 2G)/G + ε − ε′, at most ε + ε′ ≤ 2ε.  One event, not two: a pure mechanism is
    dominated by randomized response of its total ε, not by a composition of shares (Kairouz, Oh &
    Viswanath 2015)."""
    replace_one = None
    if relation == ADD_REMOVE:
        g = gradient_bound(basis, ADD_REMOVE)
        replace_one = noise_epsilon * min(gradient_bound(basis, REPLACE_ONE), 2.0 * g) / g + epsilon - noise_epsilon
    return (NoiseEvent(PURE, 1.0, epsilon, replace_one),)


def _minimiser(data, ridge: float, size: int, relation: str, linear=None) -> np.ndarray:
    """argmin (1/m)(Σᵢ ℓ(f; dᵢ) + ⟨linear, f⟩) + (ridge/2)‖f‖², m = ``size`` (n under replace-one),
    by :func:`pm_private.survival.discrete.fit.fit_discrete_time` (logit link) on the mean loss
    with ridge·m/n, which has the same minimiser; −linear/(m·ridge) for data of no record.
    ConvergenceError where Newton's method stops short."""
    if not data.n:
        return np.zeros(data.dim) if linear is None else -linear / (size * ridge)
    fit = fit_discrete_time(
        data, "logit", l2=ridge if relation == REPLACE_ONE else ridge * size / data.n, linear=linear
    )
    if not fit.converged:
        raise ConvergenceError(_NOT_CONVERGED)
    return fit.f


def _guarded(accountant, mechanism, epsilon, data, regularization, unit, relation, public_size, noise=()):
    """The accountant's guard of one release (:func:`pm_private.privacy.release.release_guard`), labelled
    by the public sizes (n under replace-one only) and Λ, with the release's noise events."""
    sizes = f"n={data.n}" if relation == REPLACE_ONE else ""
    sizes += "" if public_size is None else f"{', ' if sizes else ''}m={public_size}"
    label = f"{sizes}, q={data.q}, e={data.e}, Λ={regularization:g}"
    return release_guard(accountant, mechanism, epsilon, neighbours=relation, label=label, unit=unit, noise=noise)


def _record(
    mechanism, data, epsilon, noise_epsilon, sensitivity, regularization, extra, source, unit,
    relation, public_size,
):  # fmt: skip
    """The record of a release: f ↦ its :class:`DiscreteTimeRelease`, with noise scale
    ``sensitivity / noise_epsilon``; the mechanisms build it once on zeros before they charge, so
    that a record its class's checks refuse spends nothing."""
    return lambda f: DiscreteTimeRelease(
        f=f,
        mechanism=mechanism,
        epsilon=epsilon,
        noise_epsilon=noise_epsilon,
        sensitivity=sensitivity,
        noise_scale=sensitivity / noise_epsilon,
        regularization=regularization,
        extra_regularization=extra,
        n=data.n if relation == REPLACE_ONE else None,
        q=data.q,
        e=data.e,
        d=data.d,
        public_size=public_size,
        private=source.secure,
        unit=unit,
        neighbours=relation,
    )


def output_perturbation(
    X,
    time,
    event,
    *,
    epsilon: float,
    regularization: float,
    q: int = 200,
    e: int = 3,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    public_size: int | None = None,
    relation: str = REPLACE_ONE,
) -> DiscreteTimeRelease:
    """Ext-Out-Pert (Nguyên & Hui 2017a, Alg. 1): f* = argmin J(f), released as f* + b, ε-DP.

    J(f) = (1/m)Σᵢ ℓ(f; dᵢ) + (Λ/2)‖f‖² (m = n under replace-one, ``public_size`` under
    add/remove) is minimised to
    ‖∇J‖ ≤ 1e-9, and f* gets noise with density ∝ exp(−ε‖b‖/t), t = L/(mΛ) under replace-one
    and G/(mΛ) under add/remove (:func:`output_sensitivity`), drawn by
    :func:`pm_private.privacy.noise.l2_gamma_vector`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Private covariates with ‖xᵢ‖ ≤ 1 (project them with public bounds first, e.g.
        :func:`~pm_private.survival.scale_covariates`; longer rows raise).
    time : array_like, shape (n,)
        Private times scaled into [0, 1] with a public horizon.
    event : array_like, shape (n,)
        Private event indicators, 1 = event, 0 = censored.  X, time and event may be Dask
        collections partitioned alike (dask arrays, or columns of one dask DataFrame): the
        partitions are validated and kept where they live, each Newton step of the fit is one
        pass that returns per-partition loss, gradient and Hessian sums, and the noise is drawn
        once, on the client.
    epsilon : float
        Total ε > 0.
    regularization : float
        The public ridge Λ > 0.
    q : int, default 200
        The public number of intervals.
    e : int, default 3
        The public number of spline knots, ≥ 2.
    accountant : PrivacyAccountant, optional
        Charged ε before noise is drawn; bad input or a refused budget spends nothing, a
        minimiser that does not converge spends ε (ConvergenceError).
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests (``private=False``).
    unit : array_like, shape (n,), optional
        The person of each row, when rows are intervals of persons' follow-up (``time`` each
        interval's end): each person's history becomes one record, their first exit with the
        covariates of their earliest interval (:func:`pm_private.survival.person_histories`), n
        the number of persons, and the release protects a person with all their rows.  None:
        each row is one person's record.
    public_size : int, optional
        Under add/remove, where n is private, the public size m ≥ 1 that normalises the objective
        in place of n, fixed before the data are seen (e.g. the expected number of persons; at
        most 10¹⁰).  Required there, and None under replace-one (m = n).
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): under add/remove n is
        private (the release records ``n=None``), data of no record are released like any other,
        and the ledger counts the release as the replace-one release it also is
        (:mod:`pm_private.privacy.relations`).

    Returns
    -------
    DiscreteTimeRelease
        The private f = (α, β) and what its release assumed.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, Λ, q, e, ``public_size`` or ``relation``; no
        ``public_size`` under add/remove; covariate rows outside the unit ball; times outside
        [0, 1]; events other than 0 or 1; a noise scale that overflows.
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).
    ConvergenceError
        If Newton's method does not reach ‖∇J‖ ≤ 1e-9 (ε is spent).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), or with
    ``relation="add-remove"`` under add/remove neighbours (n private; the sensitivity G/(mΛ) of
    :func:`output_sensitivity`, whose proof adds one record's loss to a Λ-strongly convex
    objective); the unit a person's record, or with ``unit`` a person with all their rows.
    Public inputs: q, e (hence the basis), the covariate bound ‖xᵢ‖ ≤ 1, times scaled with a
    public horizon, Λ = ``regularization``, m = ``public_size``, and n under replace-one.  Exact
    up to the minimiser's tolerance ‖∇J‖ ≤ 1e-9.  Not
    floating-point safe: float noise is added to a float minimiser (a truncation δ of about
    (e + d)·2⁻⁵³ is not charged; see the module docstring).  No exact sampler exists for this
    noise: OpenDP has none for a density in the ℓ2 norm (see
    :func:`pm_private.privacy.noise.l2_gamma_vector`).  A seeded ``rng`` gives
    ``private=False``.  References: Nguyên & Hui 2017a (Alg. 1); Chaudhuri, Monteleoni &
    Sarwate 2011.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_discrete_time, output_perturbation
    >>> sim = simulate_discrete_time(300, alpha=[-3.0, -2.5, -2.0], beta=[1.0, -0.5], q=20, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = output_perturbation(
    ...     sim.data.X, sim.time, sim.data.event, epsilon=1.0, regularization=0.1, q=20,
    ...     accountant=accountant, rng=0,
    ... )
    >>> release.alpha.shape, release.beta.shape, release.private
    ((3,), (2,), False)
    >>> round(release.sensitivity, 4)  # t = L/(nΛ)
    1.6767
    >>> accountant.spent
    Budget(epsilon=1.0, delta=0.0)
    """
    relation = check_relation(relation)
    data, epsilon, regularization, unit = _check_inputs(X, time, event, unit, epsilon, regularization, q, e, relation)
    size = _public_size(public_size, data.n, relation)
    source = as_noise_source(rng)
    t = output_sensitivity(data.basis, size, regularization, relation)
    _check_noise_scale(t / epsilon)
    record = _record(
        OUTPUT_PERTURBATION, data, epsilon, epsilon, t, regularization, 0.0, source, unit, relation, public_size
    )
    record(np.zeros(data.dim))  # the record's own checks, before anything is spent
    event = _output_noise_event(t, epsilon, data.basis, size, regularization, relation)
    with _guarded(accountant, OUTPUT_PERTURBATION, epsilon, data, regularization, unit, relation, public_size, event):
        f = _minimiser(data, regularization, size, relation)
        return record(f + l2_gamma_vector(data.dim, t / epsilon, source))


@parameters_from(output_perturbation, sections=("Returns", "Raises"))
def objective_perturbation(
    X,
    time,
    event,
    *,
    epsilon: float,
    regularization: float,
    q: int = 200,
    e: int = 3,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    public_size: int | None = None,
    relation: str = REPLACE_ONE,
) -> DiscreteTimeRelease:
    """Ext-Obj-Pert (Nguyên & Hui 2017a, Alg. 2): argmin J(f) + ⟨b, f⟩/m + (Δ/2)‖f‖², ε-DP.

    J(f) = (1/m)Σᵢ ℓ(f; dᵢ) + (Λ/2)‖f‖² with m = n under replace-one and m = ``public_size``
    under add/remove.  ε′ = ε − ε_J(Λ + Δ) with Δ from :func:`objective_regularization` at m (ε_J
    corrected, see the module docstring); b has density ∝ exp(−ε′‖b‖/L) under replace-one,
    L = :func:`gradient_sensitivity`, and ∝ exp(−ε′‖b‖/G) under add/remove,
    G = :func:`record_gradient_bound`.

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), or with
    ``relation="add-remove"`` under add/remove neighbours (n private); the unit a person's record,
    or with ``unit`` a person with all their rows; with the corrected Jacobian term ε_J (module
    docstring).  Under add/remove the proof is the module's with one record added: for the same
    output f the noise vectors of D and of D with a record d added differ by ∇ℓ(f; d), of norm at
    most G, and the Jacobians by d's Hessian, the factor bounded by ε_J at m.  The same release is
    (ε′·min(L, 2G)/G + ε − ε′)-DP under replace-one (one record removed and another added: the
    noise vectors differ by at most min(L, 2G), and removing a Hessian only lowers the
    determinant), which is what a replace-one ledger counts.  Public inputs: q, e
    (hence the basis), the covariate bound ‖xᵢ‖ ≤ 1, times scaled with a public horizon,
    Λ = ``regularization``, m = ``public_size``, and n under replace-one.  Exact for
    the exact minimiser (solved to ‖∇J‖ ≤ 1e-9).  Floating point: the noise is inside the
    objective and only the minimiser is released, which the bit-level attack on released noise
    does not reach directly but which no proof covers bit for bit either.  A seeded ``rng``
    gives ``private=False``.  References: Nguyên & Hui 2017a (Alg. 2); Chaudhuri, Monteleoni &
    Sarwate 2011.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_discrete_time, objective_perturbation
    >>> sim = simulate_discrete_time(300, alpha=[-3.0, -2.5, -2.0], beta=[1.0, -0.5], q=20, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = objective_perturbation(
    ...     sim.data.X, sim.time, sim.data.event, epsilon=1.0, regularization=0.1, q=20,
    ...     accountant=accountant, rng=0,
    ... )
    >>> release.alpha.shape, release.beta.shape, release.private
    ((3,), (2,), False)
    >>> round(release.noise_epsilon, 3), release.extra_regularization  # ε′ = ε − ε_J(Λ), Δ = 0
    (0.599, 0.0)
    """
    relation = check_relation(relation)
    data, epsilon, regularization, unit = _check_inputs(X, time, event, unit, epsilon, regularization, q, e, relation)
    size = _public_size(public_size, data.n, relation)
    source = as_noise_source(rng)
    bound = gradient_bound(data.basis, relation)
    extra, noise_epsilon = objective_regularization(data.basis, size, epsilon, regularization)
    _check_noise_scale(bound / noise_epsilon, extra)
    record = _record(
        OBJECTIVE_PERTURBATION, data, epsilon, noise_epsilon, bound, regularization, extra, source, unit,
        relation, public_size,
    )  # fmt: skip
    record(np.zeros(data.dim))  # the record's own checks, before anything is spent
    event = _objective_event(epsilon, noise_epsilon, data.basis, relation)
    with _guarded(
        accountant, OBJECTIVE_PERTURBATION, epsilon, data, regularization, unit, relation, public_size, event
    ):
        noise = l2_gamma_vector(data.dim, bound / noise_epsilon, source)
        return record(_minimiser(data, regularization + extra, size, relation, linear=noise))
