"""The exit table of a survival study and its person-level private release.

Every person leaves a study once: by an event or by censoring, in one of J public intervals
(0, t₁], (t₁, t₂], …, (t_{J−1}, τ] up to a public horizon τ, or alive at τ (follow-up past τ is
administrative censoring at τ; a censoring at τ itself is follow-up to τ, event-free).  Per public cell c (an arm, a sex, an age band) the **exit table**
counts, over the people of that cell,

    events[c, j]     the events in interval j,
    censored[c, j]   the censorings in interval j,
    survivors[c]     the people still followed, event-free, at τ,

2J + 1 counts per cell that sum to the cell's size; over all cells they sum to n.  Under the
usual assumptions of grouped survival data (Kalbfleisch & Prentice 2002, §4.2) the table is one
multinomial draw whose probabilities a survival model and a censoring model give, which is what
:func:`pm_private.survival.survival_model` fits.

Replacing one person by another changes the table in at most two entries, each by one (the
first person's exit cell loses one, the second's gains one), however long the follow-up and
however many intervals and cells: ℓ1 sensitivity 2, ℓ2 sensitivity √2.  Adding or removing a
person changes one entry by one: sensitivity 1 in both norms, and n is then private (the
add/remove relation, :mod:`pm_private.privacy.relations`).  :func:`release_survival_stats` adds
Gaussian (default) or Laplace noise of the sensitivity of the chosen relation to every entry of
the table.  Gondara & Wang (2020) release a private Kaplan–Meier curve from noisy
counts; here the noisy table itself is the release, and the models of
:mod:`pm_private.survival.exits.model` carry its noise into the intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._engine.dask import is_dask
from ...privacy.accountant import PrivacyAccountant
from ...privacy.noise import as_noise_source
from ...privacy.primitives import (
    check_gaussian_epsilon,
    check_gaussian_scale_field,
    check_noise_scale,
    gaussian_mechanism,
    laplace_mechanism,
)
from ...privacy.relations import (
    ADD_REMOVE,
    REPLACE_ONE,
    check_public_n,
    check_some_units,
    histogram_sensitivity,
    with_replace_one,
)
from ...privacy.release import Release, constant, output, public, release_guard
from ...privacy.tails import check_counts_total, noise_sum_bound
from ...privacy.validation import (
    check_count,
    check_delta,
    check_epsilon,
    check_release_field,
    check_release_guarantee,
)
from ...released.noise_plan import NoisePlan, gaussian_query, laplace_query
from ..data import person_records
from .family import SURVIVAL
from .outcomes import ALL, check_cells, check_edges, dask_exit_counts, exit_counts

__all__ = [
    "NOISES",
    "SURVIVAL",
    "SURVIVAL_MECHANISM",
    "SurvivalStats",
    "SurvivalStatsRelease",
    "release_survival_stats",
    "survival_noise_plan",
    "survival_sensitivity",
    "survival_stats",
]


#: Mechanism name of :func:`release_survival_stats` (result and ledger entry).
SURVIVAL_MECHANISM = (
    "Exit table of a survival study (events and censorings per interval and cell, survivors at the "
    "horizon), person-level, Gaussian or Laplace noise (Gondara & Wang 2020)"
)

#: The noise distributions of the release.
NOISES = ("gaussian", "laplace")


def _freeze(record) -> None:
    """Checked read-only float arrays for the table fields; the public fields checked, naming the field."""
    ends = check_release_field("edges", check_edges, record.edges)
    cells = check_release_field("cells", check_cells, record.cells)
    n = None if record.n is None else check_release_field("n", check_count, "n", record.n)
    K, J = len(cells), ends.size
    arrays = {}
    for name, shape in (("events", (K, J)), ("censored", (K, J)), ("survivors", (K,))):
        try:
            value = np.array(getattr(record, name), dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"field '{name}' must hold counts") from None
        if value.shape != shape:
            raise ValueError(
                f"field '{name}' must have shape {shape}, as 'cells' ({K} cells) and 'edges' ({J} intervals) give, "
                f"got {value.shape}"
            )
        if not np.isfinite(value).all():
            raise ValueError(f"field '{name}' holds NaN or infinite counts")
        value.flags.writeable = False
        arrays[name] = value
    for name, value in {**arrays, "edges": ends, "cells": cells, "n": n}.items():
        object.__setattr__(record, name, value)


def _check_total(record, slack: float) -> None:
    """ValueError naming the fields unless the table's counts add up to n within ``slack``
    (:func:`~pm_private.privacy.tails.check_counts_total`); to at most n + ``slack`` when the
    table has public cells, since a person whose label is not among them is in no cell.  Nothing
    to check when n is private (None)."""
    if record.n is None:
        return
    total = float(record.events.sum() + record.censored.sum() + record.survivors.sum())
    fields = "fields 'events', 'censored' and 'survivors'"
    check_counts_total(fields, total, record.n, slack, short=record.cells != (ALL,))


class ExitTable:
    """What the exact table and its release share: sizes, the table as one vector, S(t) naively."""

    @property
    def J(self) -> int:
        """The number of intervals."""
        return self.edges.size

    @property
    def K(self) -> int:
        """The number of cells."""
        return len(self.cells)

    @property
    def horizon(self) -> float:
        """The public horizon τ (the last interval end)."""
        return float(self.edges[-1])

    def table(self) -> np.ndarray:
        """The table as one (K, 2J + 1) array: per cell the J events, the J censorings, the survivors.

        Returns
        -------
        numpy.ndarray
            The counts (noisy for a release).
        """
        return np.column_stack([self.events, self.censored, self.survivors])


@dataclass(frozen=True, kw_only=True)
class SurvivalStats(ExitTable):
    """The exact (not private) exit table of a survival study: for public data, and ε = ∞.

    Parameters
    ----------
    events : array_like, shape (K, J)
        Events per cell and interval.
    censored : array_like, shape (K, J)
        Censorings per cell and interval.
    survivors : array_like, shape (K,)
        People followed event-free to the horizon, per cell.
    n : int
        The number of people.
    edges : array_like, shape (J,)
        The interval ends; the last is the horizon τ.
    cells : tuple of str
        The cell labels.
    """

    family: ClassVar[str] = "survival"

    events: np.ndarray = output()
    censored: np.ndarray = output()
    survivors: np.ndarray = output()
    n: int = public()
    edges: np.ndarray = public()
    cells: tuple[str, ...] = public()

    def __post_init__(self):
        _freeze(self)
        _check_total(self, 0.0)

    def noise_variance(self) -> np.ndarray:
        """The noise variance of each entry of ``table()``: zero.

        Returns
        -------
        numpy.ndarray
            Zeros of shape (K, 2J + 1).
        """
        return np.zeros((self.K, 2 * self.J + 1))


@dataclass(frozen=True, kw_only=True)
class SurvivalStatsRelease(ExitTable, Release, kind="survival_stats"):
    """One private release of a survival study's exit table, and what it assumed.

    Parameters
    ----------
    delta : float, default 0.0
        The δ (0 for Laplace noise).
    events : numpy.ndarray, shape (K, J)
        Noisy events per cell and interval.
    censored : numpy.ndarray, shape (K, J)
        Noisy censorings per cell and interval.
    survivors : numpy.ndarray, shape (K,)
        Noisy survivors at the horizon per cell.
    n : int or None
        The number of people (public); None under add/remove neighbours, where it is private and
        the table's noisy total is its only trace.
    edges : numpy.ndarray, shape (J,)
        The public interval ends; the last is the horizon τ.
    cells : tuple of str
        The public cell labels.
    noise : {"gaussian", "laplace"}
        The noise distribution.
    sensitivity : float
        Under replace-one √2 (ℓ2, Gaussian) or 2 (ℓ1, Laplace), under add/remove 1:
        :func:`survival_sensitivity`.
    noise_scale : float
        The Gaussian s.d. σ or the Laplace scale b of the noise on every entry.
    """

    family: ClassVar[str] = "survival"

    events: np.ndarray = output()
    censored: np.ndarray = output()
    survivors: np.ndarray = output()
    n: int | None = public()
    edges: np.ndarray = public()
    cells: tuple[str, ...] = public()
    noise: str = public()
    sensitivity: float = public()
    noise_scale: float = public()
    mechanism: str = constant(default=SURVIVAL_MECHANISM)

    def __post_init__(self):
        _freeze(self)
        if not (isinstance(self.noise, str) and self.noise in NOISES):
            raise ValueError(f"field 'noise' must be one of {NOISES}, got {self.noise!r}")
        gaussian = self.noise == "gaussian"
        check_release_guarantee(self, needs_delta=gaussian)
        check_public_n(self)
        expected = survival_sensitivity(self.noise, self.neighbours)
        if self.sensitivity != expected:
            raise ValueError(
                f"field 'sensitivity' must be survival_sensitivity('noise', 'neighbours') = {expected!r}, "
                f"got {self.sensitivity!r}"
            )
        if gaussian:
            check_release_field("epsilon", check_gaussian_epsilon, self.epsilon)
            check_gaussian_scale_field("noise_scale", self.noise_scale, self.sensitivity, self.epsilon, self.delta)
        else:
            low = self.sensitivity / self.epsilon
            size = self.K * (2 * self.J + 1)
            if not (
                isinstance(self.noise_scale, float)
                and low * (1 - 1e-9) <= self.noise_scale <= low * (1 + size * 2.0**-39 + 1e-9)
            ):
                raise ValueError(
                    f"field 'noise_scale' must be 'sensitivity'/'epsilon' = {low!r}, got {self.noise_scale!r}"
                )
        # n bound to the counts: a sum of m draws lies beyond this with probability < 1e-9 (privacy.tails)
        _check_total(self, noise_sum_bound(self.noise, self.noise_scale, self.K * (2 * self.J + 1)))

    def noise_variance(self) -> np.ndarray:
        """The noise variance of each entry of ``table()``: σ² (Gaussian) or 2b² (Laplace).

        Returns
        -------
        numpy.ndarray
            Shape (K, 2J + 1).
        """
        variance = self.noise_scale**2 * (1.0 if self.noise == "gaussian" else 2.0)
        return np.full((self.K, 2 * self.J + 1), variance)


def survival_sensitivity(noise: str = "gaussian", relation: str = REPLACE_ONE) -> float:
    """Sensitivity of the exit table, the unit a person: under replace-one neighbours √2 in ℓ2
    (``"gaussian"``) and 2 in ℓ1 (``"laplace"``); under add/remove 1 in both.

    Proof.  A person falls in exactly one entry of the table (one cell, and in it an event or a
    censoring in one interval, or survival to the horizon).  Replacing person i by i′ removes one
    from i's entry and adds one to i′'s: the change is e_a − e_b for two entries a, b of the
    table, with norm √2 (ℓ2) and 2 (ℓ1) when a ≠ b and 0 when a = b.  Adding or removing person i
    changes i's entry by one: e_a, of norm 1.  The bounds are attained by any pair of people with
    different exits (replace-one), and by anyone (add/remove).  Neither the follow-up length, nor
    J, nor the number of cells enters (the table's row of
    :func:`pm_private.privacy.histogram_sensitivity`).

    Parameters
    ----------
    noise : {"gaussian", "laplace"}, default "gaussian"
        The mechanism's norm.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation.

    Returns
    -------
    float
        √2, 2 or 1.
    """
    return _table_row(noise).under(relation)


def _table_row(noise: str):
    """The exit table's sensitivity under both relations in the norm of ``noise`` (checked)."""
    if not (isinstance(noise, str) and noise in NOISES):
        raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
    return histogram_sensitivity(2 if noise == "gaussian" else 1)


def _checked(epsilon, delta, noise, relation) -> tuple[float, float]:
    """(ε, δ) checked for ``noise`` and ``relation`` as the release checks them before reading
    any record."""
    survival_sensitivity(noise, relation)  # checks noise and relation
    epsilon = check_epsilon(epsilon)
    if noise == "gaussian":
        if delta is None:
            raise ValueError("delta is needed for Gaussian noise (or pass noise='laplace' for pure ε-DP)")
        return check_gaussian_epsilon(epsilon), check_delta(delta)
    if delta not in (None, 0, 0.0):
        raise ValueError(f"delta must be None with noise='laplace' (pure ε-DP), got {delta!r}")
    check_noise_scale(survival_sensitivity(noise, relation), epsilon)
    return epsilon, 0.0


def survival_noise_plan(
    edges,
    cells=None,
    *,
    epsilon: float,
    delta: float | None = None,
    noise: str = "gaussian",
    relation: str = REPLACE_ONE,
) -> NoisePlan:
    """The noise :func:`release_survival_stats` adds to an exit table, before any record is read.

    One query on the K(2J + 1) counts of the table, sensitivity √2 (ℓ2, Gaussian; σ by OpenDP's
    privacy map) or 2 (ℓ1, Laplace; b = 2/ε) under replace-one neighbours, 1 under add/remove:
    the same noise on every count.  Public: it depends only on its arguments.

    Parameters
    ----------
    edges : array_like, shape (J,)
        The public interval ends (the last is the horizon).
    cells : sequence of str, optional
        The public cell labels (None: one cell).
    epsilon : float
        ε > 0.
    delta : float, optional
        δ in (0, 1) for Gaussian noise; None for Laplace noise.
    noise : {"gaussian", "laplace"}, default "gaussian"
        The noise distribution.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:func:`survival_sensitivity`).

    Returns
    -------
    NoisePlan
        The query ``"exit table"``, its sensitivity and scale, and the noise s.d. per count.

    Raises
    ------
    ValueError
        Naming the argument, as the release would before spending anything.

    Examples
    --------
    >>> from pm_private.survival import survival_noise_plan
    >>> plan = survival_noise_plan([1.0, 2.0, 3.0], ["control", "treated"], epsilon=1.0, delta=1e-6)
    >>> plan.queries[0].size, round(plan.sensitivity["exit table"], 4)
    (14, 1.4142)
    >>> round(plan.noise_sd["every count"], 2)
    7.08
    """
    epsilon, delta = _checked(epsilon, delta, noise, relation)
    ends, labels = check_edges(edges), check_cells(cells)
    size = len(labels) * (2 * ends.size + 1)
    sensitivity = survival_sensitivity(noise, relation)
    if noise == "gaussian":
        query = gaussian_query("exit table", size, sensitivity, epsilon, delta)
        sd = query.scale
    else:
        query = laplace_query("exit table", size, sensitivity, epsilon)
        sd = math.sqrt(2.0) * query.scale
    return NoisePlan(
        mechanism=noise,
        epsilon=epsilon,
        delta=delta,
        queries=(query,),
        noise_sd={"every count": sd},
        notes=(
            f"{len(labels)} cells × (2·{ends.size} + 1) exits; n {'public' if relation == REPLACE_ONE else 'private'}, "
            "each person's cell and exit private",
        ),
        relation=relation,
    )


def survival_stats(time, event, cell=None, *, edges, cells=None) -> SurvivalStats:
    """The exact exit table of public records: no noise, no budget.

    Parameters
    ----------
    time : array_like, shape (n,)
        Follow-up times, finite and ≥ 0 (on the scale of ``edges``).
    event : array_like, shape (n,)
        1 (or True) for an observed event, 0 for censoring.
    cell : array_like, shape (n,), optional
        Each person's cell label, one of ``cells``.
    edges : array_like, shape (J,)
        The interval ends t₁ < … < t_J = τ.
    cells : sequence of str, optional
        The cell labels (None: one cell, ``"all"``).

    Returns
    -------
    SurvivalStats
        The counts (see the module notes).

    Raises
    ------
    ValueError
        For invalid times, events, labels, ``edges`` or ``cells``.

    Examples
    --------
    >>> from pm_private.survival import survival_stats
    >>> stats = survival_stats([0.5, 1.5, 2.5, 4.0], [1, 0, 1, 1], edges=[1.0, 2.0, 3.0])
    >>> stats.events.tolist(), stats.censored.tolist(), stats.survivors.tolist()
    ([[1.0, 0.0, 1.0]], [[0.0, 1.0, 0.0]], [1.0])
    """
    ends, labels = check_edges(edges), check_cells(cells)
    events, censored, survivors = exit_counts(time, event, cell, ends, labels)
    n = int(events.sum() + censored.sum() + survivors.sum())
    return SurvivalStats(events=events, censored=censored, survivors=survivors, n=n, edges=ends, cells=labels)


def release_survival_stats(
    time,
    event,
    cell=None,
    *,
    edges,
    cells=None,
    epsilon: float,
    delta: float | None = None,
    noise: str = "gaussian",
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    relation: str = REPLACE_ONE,
) -> SurvivalStatsRelease:
    """Private release of a survival study's exit table, person-level.

    Each person's exit (event or censoring in one of the J public intervals, or alive at the
    horizon τ; times past τ count as alive at τ) is counted in their cell, and every count of the
    K × (2J + 1) table gets independent noise:

        released = counts + ξ,   ξ ~ N(0, σ²) (``noise="gaussian"``) or Laplace(b) (``"laplace"``),

    with σ for ℓ2 sensitivity √2 at (ε, δ) (OpenDP's privacy map) or b = 2/ε, the sensitivities of
    :func:`survival_sensitivity`, which proves them.  The fit of the release is
    :func:`pm_private.survival.survival_model`.

    Parameters
    ----------
    time : array_like or dask collection, shape (n,)
        Private follow-up times, finite and ≥ 0, on the scale of ``edges``.
    event : array_like or dask collection, shape (n,)
        Private event flags: 1 (or True) for an observed event, 0 for censoring.
    cell : array_like or dask collection, shape (n,), optional
        Each person's cell label (private), one of ``cells``: a person with another label is in
        no cell (counted in n only; a refusal would tell whether anyone has it), and a pandas
        categorical whose categories are not all among ``cells`` is refused from its dtype.
        Dask collections are counted one partition at a time (one pass; nothing but the table
        leaves a partition).
    edges : array_like, shape (J,)
        Public interval ends t₁ < … < t_J = τ (the first interval starts at 0).  Choose them
        without looking at the private times (study visits, years, quantiles of public data).
    cells : sequence of str, optional
        The public cell labels, every one a person may have (None: one cell, ``"all"``).
    epsilon : float
        ε > 0.
    delta : float, optional
        δ in (0, 1) for Gaussian noise (choose it well below 1/n); None for Laplace noise.
    noise : {"gaussian", "laplace"}, default "gaussian"
        (ε, δ)-DP Gaussian noise or pure ε-DP Laplace noise.
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) before noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests.
    unit : array_like, shape (n,), optional
        The person of each row, when rows are intervals of persons' follow-up (counting-process
        or start–stop form, ``time`` each interval's end): each person's history becomes one
        record, their first exit with the cell of their earliest interval
        (:func:`pm_private.survival.person_histories`), n is the number of persons and the
        release protects a person with all their rows.  None: each row is one person's record.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): replace-one, n public and
        in the release; or add/remove, n private (the release's ``n`` is None, the noise is that
        of sensitivity 1, and :func:`pm_private.survival.survival_model` takes n as latent, seen
        through the table's noisy total).

    Returns
    -------
    SurvivalStatsRelease
        The noisy ``events``, ``censored``, ``survivors`` and the public ``n`` (None under
        add/remove), ``edges``, ``cells``, ``noise``, ``sensitivity`` and ``noise_scale``.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, ``noise``, ``relation``, ``edges`` or ``cells``; times that are
        not finite or negative, events not 0 or 1, or a categorical ``cell`` declaring a
        category not among ``cells``.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).

    Notes
    -----
    Privacy: (ε, δ)-DP (Gaussian) or ε-DP (Laplace) under replace-one neighbours (default) or
    add/remove neighbours (``relation``), the unit a person with their whole follow-up (a row,
    each person's one record; with ``unit`` a person with all their rows).  Public: n (under
    replace-one only), ``edges`` (so the horizon), ``cells`` (the set of labels, not who is in
    which), ε, δ and the noise distribution; each person's time, event and cell are private, so
    the cell sizes reach a model only through the noisy table.
    Exact: the (ε, δ) is certified by OpenDP's privacy map for the returned counts, and the
    secure default ``rng=None`` draws OpenDP's exact discrete noise (Canonne, Kamath & Steinke
    2020); a seeded ``rng`` gives reproducible continuous noise of the same scale and a result
    marked ``private=False``.  References: Gondara & Wang 2020; Kalbfleisch & Prentice 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import PrivacyAccountant, release_survival_stats
    >>> rng = np.random.default_rng(0)
    >>> time, event = rng.exponential(2.0, 500), rng.uniform(size=500) < 0.8
    >>> arm = rng.choice(["control", "treated"], 500)
    >>> accountant = PrivacyAccountant(1.0, 1e-6)
    >>> release = release_survival_stats(time, event, arm, edges=[1.0, 2.0, 3.0, 4.0], cells=["control", "treated"],
    ...                                  epsilon=1.0, delta=1e-6, accountant=accountant, rng=0)
    >>> release.events.shape, release.n, release.private
    ((2, 4), 500, False)
    """
    epsilon, delta = _checked(epsilon, delta, noise, relation)
    ends, labels = check_edges(edges), check_cells(cells)
    empty = relation == ADD_REMOVE  # the empty data set is released as any other (check_some_units)
    time, event, (cell,), unit = person_records(unit, time, event, cell, allow_empty=empty)
    if any(is_dask(v) for v in (time, event, cell)):
        events, censored, survivors, n = dask_exit_counts(time, event, cell, ends, labels)
    else:
        events, censored, survivors = exit_counts(time, event, cell, ends, labels, allow_empty=empty)
        n = int(np.size(np.asarray(time)))
    check_some_units(n, relation)
    source = as_noise_source(rng)
    gaussian_delta = delta if noise == "gaussian" else None
    plan = survival_noise_plan(ends, labels, epsilon=epsilon, delta=gaussian_delta, noise=noise, relation=relation)
    counts = np.column_stack([events, censored, survivors]).astype(np.float64)
    J = ends.size
    public_n = n if relation == REPLACE_ONE else None
    label = f"{'' if public_n is None else f'n={n}, '}cells={len(labels)}, intervals={J}"
    sensitivity = survival_sensitivity(noise, relation)

    def record(values, noise_scale, spent):
        noisy = np.asarray(values, dtype=np.float64).reshape(counts.shape)
        return SurvivalStatsRelease(
            events=noisy[:, :J],
            censored=noisy[:, J : 2 * J],
            survivors=noisy[:, 2 * J],
            n=public_n,
            edges=ends,
            cells=labels,
            noise=noise,
            sensitivity=sensitivity,
            noise_scale=float(noise_scale),
            epsilon=spent,
            delta=delta,
            private=source.secure,
            unit=unit,
            neighbours=relation,
        )

    (scale,) = plan.noise_scale.values()
    placeholder = np.zeros(counts.shape)
    placeholder[0, -1] = public_n or 0  # a table of public size only: everyone event-free in the first cell
    record(placeholder, scale, plan.epsilon)  # the record's own checks, before anything is spent
    with release_guard(
        accountant,
        SURVIVAL_MECHANISM,
        plan.epsilon,
        plan.delta,
        neighbours=relation,
        label=label,
        noise=with_replace_one(plan.noise_events(), _table_row(noise), relation),
        unit=unit,
    ):
        if noise == "gaussian":
            part = gaussian_mechanism(counts, sensitivity=sensitivity, epsilon=epsilon, delta=delta, source=source)
        else:
            part = laplace_mechanism(counts, sensitivity=sensitivity, epsilon=epsilon, source=source)
        return record(part.values, part.scale, part.epsilon)
