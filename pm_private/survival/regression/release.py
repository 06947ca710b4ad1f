"""The exit table with covariate moments, and its person-level private release.

The exit table of :mod:`pm_private.survival.exits.release` counts, per public cell c, the people
whose exit is k: an event in interval j (k = j), a censoring in it (k = J + j), or event-free at
the horizon τ (k = 2J); J intervals, 2J + 1 exits.  For a regression on covariates x (d of them,
on a public scale, each row projected onto the ball ‖x‖ ≤ Bx) the table is extended with the
covariates of the people in each exit:

    counts[c, k]   = #{i in c : exit_i = k},
    x_sums[c, k]   = Σ_{i in c, exit_i = k} xᵢ                       (d values),
    xx[c]          = Σ_{i in c} xᵢxᵢᵀ                                (d × d, symmetric),
    projected      = #{i : ‖xᵢ‖ > Bx before projection}              (the clip count).

The counts are those of the exit table; the x sums over an exit are what a hazard regression
needs (as Σ y·x in a GLM, Kulkarni et al. 2021), and the cell's second moments inform the
covariates' law.  Summed over k, ``x_sums`` gives each cell's Σx.

Release.  Each person contributes the vector v = (e_ck, e_ck ⊗ x̃, e_c ⊗ F(x̃x̃ᵀ), π), x̃ = x/Bx
(‖x̃‖ ≤ 1), F the upper triangle with off-diagonal entries weighted √2 (so ‖F(A)‖ = ‖A‖_F),
π = 1 when the row was projected; the released vector is Σᵢ vᵢ plus independent N(0, σ²) noise
on every entry, σ for ℓ2 sensitivity √7 (:func:`survival_regression_sensitivity`), and the
entries are mapped back: the x sums carry noise of s.d. σBx, the diagonal of xx σBx², its other
entries σBx²/√2, the counts and the clip count σ.  The per-block weights (1, 1/Bx, 1/Bx²) make
every block of a person's contribution at most 1 in norm, whatever Bx.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._engine.docstrings import parameters_from
from ...privacy.accountant import PrivacyAccountant
from ...privacy.noise import as_noise_source
from ...privacy.primitives import (
    check_gaussian_epsilon,
    check_gaussian_scale_field,
    gaussian_mechanism,
    symmetric_entry_weights,
)
from ...privacy.relations import (
    ADD_REMOVE,
    REPLACE_ONE,
    Sensitivity,
    check_public_n,
    check_some_units,
    with_replace_one,
)
from ...privacy.release import Release, constant, output, public, release_guard
from ...privacy.tails import check_counts_total, noise_sum_bound
from ...privacy.validation import (
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
    check_feature_names,
    check_release_field,
    check_release_guarantee,
    column_names,
)
from ...released.noise_plan import NoisePlan, gaussian_query
from ...released.preprocessing import Preprocessing, check_glm_preprocessing
from ..data import person_records
from ..exits.outcomes import ALL, check_cells, check_edges
from ..exits.release import ExitTable, survival_noise_plan
from .family import SURVIVAL_REGRESSION
from .statistics import statistics_of

__all__ = [
    "SURVIVAL_REGRESSION",
    "SURVIVAL_REGRESSION_MECHANISM",
    "SurvivalRegressionStats",
    "SurvivalRegressionStatsRelease",
    "release_survival_regression_stats",
    "survival_regression_noise_plan",
    "survival_regression_sensitivity",
    "survival_regression_stats",
]


#: Mechanism name of :func:`release_survival_regression_stats` (result and ledger entry).
SURVIVAL_REGRESSION_MECHANISM = (
    "Exit table with covariate moments (counts, covariate sums per exit, second moments per cell, "
    "clip count), norm-bounded rows, person-level, Gaussian noise"
)


def survival_regression_sensitivity(relation: str = REPLACE_ONE) -> float:
    """ℓ2 sensitivity of the weighted released vector, the unit a person: √7 under replace-one, 2
    under add/remove.

    Proof.  Person i contributes vᵢ = (e_ck, e_ck ⊗ x̃, e_c ⊗ F(x̃x̃ᵀ), π) (module notes), with
    ‖x̃‖ ≤ 1, ‖F(x̃x̃ᵀ)‖ = ‖x̃‖² ≤ 1 and π ∈ {0, 1}.  Replace person i (cell c, exit k, row x̃,
    flag π) by i′ (c′, k′, x̃′, π′); n is public and unchanged.  The change v − v′ has four parts:

    * counts and x sums.  If (c, k) ≠ (c′, k′) the two people occupy different blocks:
      1 + 1 + ‖x̃‖² + ‖x̃′‖² ≤ 4.  If (c, k) = (c′, k′): 0 + ‖x̃ − x̃′‖² ≤ 4.
    * second moments.  If c ≠ c′: ‖x̃‖⁴ + ‖x̃′‖⁴ ≤ 2.  If c = c′:
      ‖x̃x̃ᵀ − x̃′x̃′ᵀ‖_F² = ‖x̃‖⁴ + ‖x̃′‖⁴ − 2(x̃ᵀx̃′)² ≤ 2.
    * the clip flag: (π − π′)² ≤ 1.

    So ‖v − v′‖² ≤ 4 + 2 + 1 = 7.  It is attained by two people of different exits (any cells)
    with orthogonal rows on the sphere ‖x̃‖ = ‖x̃′‖ = 1, one of them projected onto it and the
    other not.  Neither n, J, the number of cells nor d enters.

    Add/remove: adding or removing person i moves the vector by vᵢ, of norm² 1 + ‖x̃‖² + ‖x̃‖⁴ + π²
    ≤ 4, attained by a person whose row was projected onto the sphere (‖x̃‖ = 1, π = 1).  (A person
    whose cell is not among the public cells moves nothing.)

    Parameters
    ----------
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation.

    Returns
    -------
    float
        √7, or 2 under add/remove.

    Raises
    ------
    ValueError
        For an unknown relation.
    """
    return _SENSITIVITY.under(relation)


#: The weighted vector's sensitivity under both relations (:func:`survival_regression_sensitivity`).
_SENSITIVITY = Sensitivity(2.0, math.sqrt(7.0))


def _freeze(record) -> None:
    """Checked read-only float arrays; the public fields checked, naming the field."""
    ends = check_release_field("edges", check_edges, record.edges)
    cells = check_release_field("cells", check_cells, record.cells)
    check_public_n(record)
    n = None if record.n is None else check_release_field("n", check_count, "n", record.n)
    K, J = len(cells), ends.size
    try:
        x_sums = np.array(record.x_sums, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("field 'x_sums' must hold numbers") from None
    if x_sums.ndim != 3 or x_sums.shape[:2] != (K, 2 * J + 1) or x_sums.shape[2] < 1:
        raise ValueError(
            f"field 'x_sums' must have shape ({K}, {2 * J + 1}, d) as 'cells' and 'edges' give, got {x_sums.shape}"
        )
    d = x_sums.shape[2]
    arrays = {"x_sums": x_sums}
    for name, shape in (("counts", (K, 2 * J + 1)), ("xx", (K, d, d)), ("projected", ())):
        try:
            value = np.array(getattr(record, name), dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"field '{name}' must hold numbers") from None
        if value.shape != shape:
            raise ValueError(f"field '{name}' must have shape {shape}, got {value.shape}")
        arrays[name] = value
    for name, value in arrays.items():
        if not np.isfinite(value).all():
            raise ValueError(f"field '{name}' holds NaN or infinite values")
    if not np.array_equal(arrays["xx"], np.swapaxes(arrays["xx"], 1, 2)):
        raise ValueError("field 'xx' must be symmetric in its last two axes")
    arrays["projected"] = float(arrays["projected"])
    for value in arrays.values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    for name, value in {**arrays, "edges": ends, "cells": cells, "n": n}.items():
        object.__setattr__(record, name, value)
    x_bound = record.x_bound
    if x_bound is not None:
        object.__setattr__(record, "x_bound", check_release_field("x_bound", check_bound, "x_bound", x_bound))
    check_feature_names(record, d)
    # as the release function checks its argument: the covariates' map only (no response to rescale)
    check_release_field("preprocessing", check_glm_preprocessing, record.preprocessing)


@dataclass(frozen=True, kw_only=True)
class _CovariateExitTable(ExitTable):
    """What the exact statistics and their release share: the fields of the table and its layout
    (``counts`` to ``cells``, which a subclass's own fields follow), the exit table's sizes and
    table, the number of covariates, and the table's parts by kind of exit.  Each subclass
    describes these fields in its own words (exact or noisy)."""

    family: ClassVar[str] = "survival_regression"

    counts: np.ndarray = output()
    x_sums: np.ndarray = output()
    xx: np.ndarray = output()
    projected: float = output()
    n: int | None = public()
    edges: np.ndarray = public()
    cells: tuple[str, ...] = public()

    @property
    def d(self) -> int:
        """The number of covariates."""
        return self.x_sums.shape[2]

    @property
    def events(self) -> np.ndarray:
        """Events per cell and interval, (K, J): the first J exits."""
        return self.counts[:, : self.J]

    @property
    def censored(self) -> np.ndarray:
        """Censorings per cell and interval, (K, J)."""
        return self.counts[:, self.J : 2 * self.J]

    @property
    def survivors(self) -> np.ndarray:
        """People event-free at the horizon per cell, (K,)."""
        return self.counts[:, 2 * self.J]

    def clip_lines(self) -> list[str]:
        """What the release says about its clipping: the share of rows projected onto the ball
        ‖x‖ ≤ Bx, from the released count (post-processing, no budget).

        Returns
        -------
        list of str
            One sentence.
        """
        if self.x_bound is None:
            return ["rows not projected (no bound)"]
        n = self.n if self.n is not None else max(float(self.counts.sum()), 1.0)  # n private: the noisy total
        share = min(max(float(self.projected), 0.0) / n, 1.0)
        sd = float(np.sqrt(self.noise_variance()["projected"])) / n
        return [f"about {share:.1%} of the rows projected onto ‖x‖ ≤ Bx (privacy noise s.d. {sd:.1%})"]


def _check_total(record, slack: float) -> None:
    """ValueError unless the counts add up to n within ``slack`` (at most n + ``slack`` with public
    cells); nothing to check where n is private."""
    if record.n is None:
        return
    check_counts_total("field 'counts'", float(record.counts.sum()), record.n, slack, short=record.cells != (ALL,))


@dataclass(frozen=True, kw_only=True)
class SurvivalRegressionStats(_CovariateExitTable):
    """The exact (not private) exit table with covariate moments: for public data, and ε = ∞.

    Parameters
    ----------
    counts : array_like, shape (K, 2J + 1)
        People per cell and exit (J events, J censorings, event-free at the horizon).
    x_sums : array_like, shape (K, 2J + 1, d)
        Covariate sums per cell and exit.
    xx : array_like, shape (K, d, d)
        Σ xxᵀ per cell.
    projected : float
        The number of rows projected onto the ``x_bound`` ball (0 without a bound).
    n : int
        The number of people.
    edges : array_like, shape (J,)
        The interval ends; the last is the horizon τ.
    cells : tuple of str
        The cell labels.
    x_bound : float, optional
        The row-norm bound the rows were projected onto (None: not projected).
    features : tuple of str, optional
        The covariates' names.
    preprocessing : Preprocessing, optional
        The public map applied to the rows before the projection.
    """

    x_bound: float | None = public(default=None)
    features: tuple[str, ...] | None = public(default=None)
    preprocessing: Preprocessing | None = public(default=None)

    def __post_init__(self):
        _freeze(self)
        _check_total(self, 0.0)

    def noise_variance(self) -> dict[str, np.ndarray]:
        """The noise variance of every released entry: zeros.

        Returns
        -------
        dict of str to numpy.ndarray
            ``counts``, ``x_sums``, ``xx`` and ``projected``, each of its field's shape.
        """
        return {name: np.zeros(np.shape(getattr(self, name))) for name in ("counts", "x_sums", "xx", "projected")}


@parameters_from(SurvivalRegressionStats)
@dataclass(frozen=True, kw_only=True)
class SurvivalRegressionStatsRelease(_CovariateExitTable, Release, kind="survival_regression_stats"):
    """One private release of an exit table with covariate moments, and what it assumed.

    Parameters
    ----------
    epsilon, delta : float
        The (ε, δ) certified.
    counts : numpy.ndarray, shape (K, 2J + 1)
        Noisy people per cell and exit.
    x_sums : numpy.ndarray, shape (K, 2J + 1, d)
        Noisy covariate sums per cell and exit.
    xx : numpy.ndarray, shape (K, d, d)
        Noisy Σ xxᵀ per cell, symmetric.
    projected : float
        The noisy number of rows projected onto the ball.
    n : int or None
        The number of people (public); None under add/remove neighbours, where it is private
        (the noisy counts' total estimates it).
    edges : numpy.ndarray, shape (J,)
        The public interval ends; the last is the horizon τ.
    cells : tuple of str
        The public cell labels.
    x_bound : float
        The public bound Bx on a row's ℓ2 norm.
    sensitivity : float
        √7, or 2 under add/remove neighbours (:func:`survival_regression_sensitivity`).
    noise_scale : float
        The noise s.d. σ on the weighted entries (module notes).
    x_sums_noise_scale : float
        σ·Bx, the noise s.d. on each covariate sum (recorded with Bx and σ, and checked against
        them, so that neither can be changed alone in a release file).
    features : tuple of str, optional
        The covariates' names (the public schema of a data frame ``X``).
    """

    x_bound: float = public()
    sensitivity: float = public()
    noise_scale: float = public()
    x_sums_noise_scale: float = public()
    features: tuple[str, ...] | None = public(default=None)
    preprocessing: Preprocessing | None = public(default=None)
    mechanism: str = constant(default=SURVIVAL_REGRESSION_MECHANISM)

    def __post_init__(self):
        _freeze(self)
        check_release_guarantee(self, needs_delta=True)
        check_release_field("epsilon", check_gaussian_epsilon, self.epsilon)
        expected = survival_regression_sensitivity(self.neighbours)
        if self.sensitivity != expected:
            raise ValueError(f"field 'sensitivity' must be {expected!r} under {self.neighbours} neighbours")
        check_gaussian_scale_field("noise_scale", self.noise_scale, self.sensitivity, self.epsilon, self.delta)
        expected = self.noise_scale * self.x_bound
        if not (
            isinstance(self.x_sums_noise_scale, float) and math.isclose(self.x_sums_noise_scale, expected, rel_tol=1e-9)
        ):
            raise ValueError(
                f"field 'x_sums_noise_scale' must be 'noise_scale'·'x_bound' = {expected!r}, got {self.x_sums_noise_scale!r}"
            )
        # n bound to the counts: a sum of K(2J + 1) draws lies beyond this with probability < 1e-9
        _check_total(self, noise_sum_bound("gaussian", self.noise_scale, self.counts.size))

    def noise_variance(self) -> dict[str, np.ndarray]:
        """The noise variance of every released entry: σ² on the counts and the clip count, σ²Bx²
        on the covariate sums, σ²Bx⁴ on the diagonal of xx and σ²Bx⁴/2 off it.

        Returns
        -------
        dict of str to numpy.ndarray
            ``counts``, ``x_sums``, ``xx`` and ``projected``, each of its field's shape.
        """
        var, b2 = self.noise_scale**2, self.x_bound**2
        xx = np.full((self.d, self.d), var * b2 * b2 / 2.0)
        np.fill_diagonal(xx, var * b2 * b2)
        return {
            "counts": np.full(self.counts.shape, var),
            "x_sums": np.full(self.x_sums.shape, var * b2),
            "xx": np.broadcast_to(xx, self.xx.shape).copy(),
            "projected": np.array(var),
        }


def survival_regression_stats(
    time, event, X, cell=None, *, edges, cells=None, x_bound=None, preprocessing=None
) -> SurvivalRegressionStats:
    """The exact exit table with covariate moments of public records: no noise, no budget.

    Parameters
    ----------
    time, event, cell, edges, cells
        As in :func:`release_survival_regression_stats`.
    X : array_like or pandas.DataFrame, shape (n, d)
        Covariates (public records).
    x_bound : float, optional
        Project the rows onto this ball first (None: no projection).
    preprocessing : Preprocessing, optional
        A public map applied to the rows first.

    Returns
    -------
    SurvivalRegressionStats
        The statistics (module notes).

    Raises
    ------
    ValueError
        For invalid times, events, labels, rows, ``edges``, ``cells`` or ``x_bound``.

    Examples
    --------
    >>> from pm_private.survival import survival_regression_stats
    >>> stats = survival_regression_stats([0.5, 1.5, 2.5, 4.0], [1, 0, 1, 1], [[1.0], [2.0], [3.0], [4.0]],
    ...                                   edges=[1.0, 2.0, 3.0])
    >>> stats.counts.tolist(), stats.x_sums[0, :, 0].tolist()
    ([[1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]], [1.0, 0.0, 3.0, 0.0, 2.0, 0.0, 4.0])
    """
    ends, labels = check_edges(edges), check_cells(cells)
    bound = None if x_bound is None else check_bound("x_bound", x_bound)
    features = column_names(X)
    # public records: the check of their rows against the public ones protects nothing here
    _, (counts, x_sums, xx, projected, n), _ = statistics_of(time, event, X, cell, ends, labels, bound, preprocessing)
    return SurvivalRegressionStats(
        counts=counts,
        x_sums=x_sums,
        xx=xx,
        projected=float(projected),
        n=n,
        edges=ends,
        cells=labels,
        x_bound=bound,
        features=features,
        preprocessing=preprocessing,
    )


def _checked(epsilon, delta, x_bound):
    epsilon = check_gaussian_epsilon(check_epsilon(epsilon))
    if delta is None:
        raise ValueError("delta is needed: the release adds Gaussian noise")
    return epsilon, check_delta(delta), check_bound("x_bound", x_bound)


@parameters_from(survival_noise_plan, sections=("Raises",))
def survival_regression_noise_plan(
    edges, cells=None, *, d: int, x_bound: float, epsilon: float, delta: float, relation: str = REPLACE_ONE
) -> NoisePlan:
    """The noise :func:`release_survival_regression_stats` adds, before any record is read.

    One Gaussian query on the K(2J + 1)(d + 1) + K·d(d + 1)/2 + 1 weighted entries, ℓ2
    sensitivity √7 (2 under add/remove), σ by OpenDP's privacy map; on the original scale the noise s.d. is σ on the
    counts and the clip count, σBx on the covariate sums, σBx² on the diagonal of Σ xxᵀ and
    σBx²/√2 off it.  Public: it depends only on its arguments.

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound : float
        The public bound Bx on a row's ℓ2 norm.
    delta : float
        δ in (0, 1).
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:func:`survival_regression_sensitivity`).

    Returns
    -------
    NoisePlan
        The query, its sensitivity and σ, and the noise s.d. of each kind of entry.

    Examples
    --------
    >>> from pm_private.survival import survival_regression_noise_plan
    >>> plan = survival_regression_noise_plan([1.0, 2.0], d=3, x_bound=2.0, epsilon=1.0, delta=1e-6)
    >>> plan.queries[0].size, round(plan.sensitivity["exit table with covariate moments"], 4)
    (27, 2.6458)
    >>> {k: round(v, 1) for k, v in plan.noise_sd.items()}["covariate sums"]
    24.0
    """
    epsilon, delta, x_bound = _checked(epsilon, delta, x_bound)
    ends, labels = check_edges(edges), check_cells(cells)
    d = check_count("d", d)
    K, exits = len(labels), 2 * ends.size + 1
    size = K * exits * (d + 1) + K * d * (d + 1) // 2 + 1
    sensitivity = survival_regression_sensitivity(relation)
    query = gaussian_query("exit table with covariate moments", size, sensitivity, epsilon, delta)
    sigma = query.scale
    return NoisePlan(
        mechanism="gaussian",
        epsilon=epsilon,
        delta=delta,
        queries=(query,),
        noise_sd={
            "counts": sigma,
            "covariate sums": sigma * x_bound,
            "xx diagonal": sigma * x_bound**2,
            "xx off-diagonal": sigma * x_bound**2 / math.sqrt(2.0),
            "clip count": sigma,
        },
        notes=(
            f"{K} cells × (2·{ends.size} + 1) exits × (1 + {d}) + {K} × {d}·{d + 1}/2 + 1 entries; "
            f"n {'public' if relation == REPLACE_ONE else 'private'}",
        ),
        relation=relation,
    )


def release_survival_regression_stats(
    time,
    event,
    X,
    cell=None,
    *,
    edges,
    cells=None,
    x_bound: float,
    epsilon: float,
    delta: float,
    preprocessing: Preprocessing | None = None,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    relation: str = REPLACE_ONE,
) -> SurvivalRegressionStatsRelease:
    """Private release of a survival study's exit table with the covariate moments of each exit,
    person-level, for survival regression on continuous covariates.

    The statistics of the module notes (per cell and exit: people and Σx; per cell Σxxᵀ; the
    number of projected rows), of rows mapped by ``preprocessing`` and projected onto the ball
    ‖x‖ ≤ ``x_bound``, with Gaussian noise calibrated to the ℓ2 sensitivity √7 of the weighted
    vector (:func:`survival_regression_sensitivity`, which proves it).

    Parameters
    ----------
    time : array_like or dask collection, shape (n,)
        Private follow-up times, finite and ≥ 0, on the scale of ``edges``.
    event : array_like or dask collection, shape (n,)
        Private event flags: 1 (or True) for an observed event, 0 for censoring.
    X : array_like, pandas.DataFrame or dask collection, shape (n, d)
        Private covariates, one row per person (a data frame's column names are carried as
        ``features``).  With Dask, give time, event, X (and cell) all as dask arrays chunked
        alike along the rows, or as columns of one dask DataFrame: each partition projects its
        rows and computes its statistics where it lives, the client adds them and draws the noise
        once (``preprocessing`` is not applied to partitions: transform them first).
    cell : array_like or dask collection, shape (n,), optional
        Each person's cell label (private), one of ``cells`` (a person with another label is in
        no cell: counted in n only, since a refusal would tell whether anyone has it).
    edges : array_like, shape (J,)
        Public interval ends t₁ < … < t_J = τ (the first interval starts at 0), chosen without
        looking at the private times.
    cells : sequence of str, optional
        The public cell labels (None: one cell, ``"all"``).
    x_bound : float
        Public bound Bx on a row's ℓ2 norm after ``preprocessing``; rows beyond are projected
        onto the ball, and their number is released (``projected``).
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1); choose it well below 1/n.
    preprocessing : Preprocessing, optional
        Public affine map of the covariates (``Preprocessing.from_public(X_public)``); it travels
        with the release, and its kept public rows are checked against the private ones.  The
        map saturates at ±1.8e308 instead of overflowing, so no choice of its constants makes
        the outcome depend on a private value.
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) before noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests.
    unit : array_like, shape (n,), optional
        The person of each row, when rows are intervals of persons' follow-up (counting-process
        or start–stop form, ``time`` each interval's end): each person's history becomes one
        record, their first exit with the cell and covariates of their earliest interval
        (:func:`pm_private.survival.person_histories`), n is the number of persons and the
        release protects a person with all their rows.  None: each row is one person's record.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): replace-one, n public and
        recorded in the release; or add/remove, n private (the release's ``n`` is None, the
        noise that of sensitivity 2, and the model takes n as latent).

    Returns
    -------
    SurvivalRegressionStatsRelease
        The noisy ``counts``, ``x_sums``, ``xx`` and ``projected``, and the public fields.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, ``relation``, ``x_bound``, ``edges``, ``cells``
        or ``preprocessing``; times that are not finite or negative, events not 0 or 1, a
        categorical ``cell`` declaring a category not among ``cells``, rows that are not finite
        (on the original scale) or not one per person.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).
    ChargedRefusal
        After (ε, δ) is spent, when the public rows kept by ``preprocessing`` include rows of
        ``X`` (the message names no row and no count; a free refusal would be a membership test).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours, or add/remove ones (``relation``; the ledger
    charges the replace-one ε of the same noise), the unit a person with their whole follow-up
    and covariates (a row, each person's one record; with ``unit`` a person with all their
    rows).  Public: n (under replace-one), ``edges``, ``cells`` (the set of labels), ``x_bound``,
    the preprocessing (its constants and kept public rows), ε, δ; each person's time, event,
    cell and covariates are private.  Exact: the (ε, δ) is certified by OpenDP's privacy map for
    the returned values, and the secure default ``rng=None`` draws OpenDP's exact discrete
    noise (Canonne, Kamath & Steinke 2020); a seeded ``rng`` gives continuous noise of the same
    scale and a result marked ``private=False``.  References: Kalbfleisch & Prentice 2002
    (grouped survival data); Kulkarni et al. 2021 (released degree-2 statistics).

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import release_survival_regression_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> time = rng.exponential(2.0 * np.exp(-X @ [0.5, -0.3]))
    >>> event = rng.uniform(size=500) < 0.8
    >>> accountant = PrivacyAccountant(1.0, 1e-6)
    >>> release = release_survival_regression_stats(time, event, X, edges=[1.0, 2.0, 4.0], x_bound=3.0,
    ...                                             epsilon=1.0, delta=1e-6, accountant=accountant, rng=0)
    >>> release.counts.shape, release.x_sums.shape, release.n, release.private
    ((1, 7), (1, 7, 2), 500, False)
    """
    epsilon, delta, x_bound = _checked(epsilon, delta, x_bound)
    sensitivity = survival_regression_sensitivity(relation)  # checks the relation
    ends, labels = check_edges(edges), check_cells(cells)
    features = column_names(X)
    empty = relation == ADD_REMOVE  # the empty data set is released as any other (check_some_units)
    time, event, (X, cell), unit = person_records(unit, time, event, X, cell, allow_empty=empty)
    d, (counts, x_sums, xx, projected, n), refusal = statistics_of(
        time, event, X, cell, ends, labels, x_bound, preprocessing, allow_empty=empty
    )
    check_some_units(n, relation)
    K, exits = counts.shape[0], counts.shape[1]
    source = as_noise_source(rng)
    plan = survival_regression_noise_plan(
        ends, labels, d=d, x_bound=x_bound, epsilon=epsilon, delta=delta, relation=relation
    )
    vector = _weighted_vector(counts, x_sums, xx, projected, x_bound)
    public_n = n if relation == REPLACE_ONE else None
    label = f"{'' if public_n is None else f'n={n}, '}cells={K}, intervals={ends.size}, d={d}"

    def record(values, noise_scale, spent):
        return SurvivalRegressionStatsRelease(
            **_unweighted(np.asarray(values, dtype=np.float64), K, exits, d, x_bound),
            n=public_n,
            edges=ends,
            cells=labels,
            x_bound=x_bound,
            sensitivity=sensitivity,
            noise_scale=float(noise_scale),
            x_sums_noise_scale=float(noise_scale) * x_bound,
            features=features,
            preprocessing=preprocessing,
            epsilon=spent,
            delta=delta,
            private=source.secure,
            unit=unit,
            neighbours=relation,
        )

    (scale,) = plan.noise_scale.values()
    placeholder = np.zeros(vector.size)
    placeholder[exits - 1] = public_n or 0  # a table of public size only: everyone event-free in the first cell
    record(placeholder, scale, plan.epsilon)  # the record's own checks, before anything is spent
    with release_guard(
        accountant,
        SURVIVAL_REGRESSION_MECHANISM,
        plan.epsilon,
        plan.delta,
        neighbours=relation,
        label=label,
        noise=with_replace_one(plan.noise_events(), _SENSITIVITY, relation),
        refusal=refusal,
        unit=unit,
    ):
        part = gaussian_mechanism(vector, sensitivity=sensitivity, epsilon=epsilon, delta=delta, source=source)
        return record(part.values, part.scale, part.epsilon)


def _weighted_vector(counts, x_sums, xx, projected, x_bound) -> np.ndarray:
    """The vector the mechanism noises (module notes): counts, x sums over Bx, the upper triangles
    of Σxxᵀ weighted (1 on the diagonal, √2 off it) over Bx², and the clip count."""
    upper = np.triu_indices(xx.shape[-1])
    weights = symmetric_entry_weights(*upper)
    parts = [counts.ravel(), (x_sums / x_bound).ravel(), (xx[:, upper[0], upper[1]] * weights / x_bound**2).ravel()]
    return np.concatenate([*parts, [projected]])


def _unweighted(noisy, K, exits, d, x_bound) -> dict:
    """The release's ``counts``, ``x_sums``, ``xx`` and ``projected`` from the noisy weighted vector
    (the inverse of :func:`_weighted_vector`)."""
    upper = np.triu_indices(d)
    sizes = np.cumsum([K * exits, K * exits * d, K * upper[0].size])
    counts, sums, upper_part, projected = np.split(noisy, sizes)
    xx = np.zeros((K, d, d))
    xx[:, upper[0], upper[1]] = upper_part.reshape(K, -1) / symmetric_entry_weights(*upper) * x_bound**2
    xx[:, upper[1], upper[0]] = xx[:, upper[0], upper[1]]
    return {
        "counts": counts.reshape(K, exits),
        "x_sums": sums.reshape(K, exits, d) * x_bound,
        "xx": xx,
        "projected": float(projected[0]),
    }
