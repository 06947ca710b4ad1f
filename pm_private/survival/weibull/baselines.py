"""The baselines of Nguyên & Hui (2017b, §VI-A): the Laplace mechanism on the clipped maximum-likelihood
estimate, and sample-and-aggregate (Smith 2008) over random subsets of the records."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..._engine.docstrings import parameters_from
from ...privacy.accountant import PrivacyAccountant
from ...privacy.noise import as_noise_source
from ...privacy.primitives import laplace_mechanism, laplace_noise_event
from ...privacy.relations import (
    ADD_REMOVE,
    REPLACE_ONE,
    Sensitivity,
    check_relation,
    check_some_units,
    with_replace_one,
)
from ...privacy.release import release_guard
from ...privacy.validation import check_count
from .fit import mle_rows
from .release import LAPLACE_MLE, SAMPLE_AGGREGATE, WeibullRelease, _prepare


def _clipped_mle(log_t, d, gamma):
    """(p, λ) per row, clipped to [0, γ]; rows without a finite MLE get γ (the limit p, λ → ∞),
    a data set of no record among them."""
    if np.size(log_t) == 0:
        return np.full(1, gamma), np.full(1, gamma)
    p, lam = mle_rows(log_t, d)
    return np.minimum(p, gamma), np.minimum(lam, gamma)


def _record(
    mechanism, *, sensitivity, epsilon, gamma, horizon, omega, n, source, unit, neighbours=REPLACE_ONE, **fields
):
    """The record of a release: its Laplace releases of p and of λ ↦ the :class:`WeibullRelease`
    (each clipped to [0, γ], λ scaled back by the horizon; ``fields``: the mechanism's own).  Built
    once here on placeholder releases (0 at the planned scale 2·sensitivity/ε), so that a record
    its class's checks refuse is refused before anything is spent."""

    def record(releases):
        shape, scale = (float(np.clip(r.values[0], 0.0, gamma)) for r in releases)
        return WeibullRelease(
            shape=shape,
            scale=scale * horizon,
            epsilon=epsilon,
            epsilon_shape=releases[0].epsilon,
            epsilon_scale=releases[1].epsilon,
            mechanism=mechanism,
            horizon=float(horizon),
            omega=omega,
            gamma=gamma,
            n=n,
            noise_scales=tuple(r.scale for r in releases),
            private=source.secure,
            unit=unit,
            neighbours=neighbours,
            **fields,
        )

    placeholder = SimpleNamespace(values=np.zeros(1), scale=2 * sensitivity / epsilon, epsilon=epsilon / 2)
    record((placeholder, placeholder))
    return record


def _laplace_pair(p, lam, *, sensitivity, epsilon, source) -> list:
    """Laplace(sensitivity/(ε/2)) on p and on λ separately."""
    return [laplace_mechanism([v], sensitivity=sensitivity, epsilon=epsilon / 2, source=source) for v in (p, lam)]


def weibull_laplace(
    time,
    event,
    *,
    epsilon: float,
    horizon: float,
    gamma: float = 10.0,
    omega: float = 6.0,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    relation: str = REPLACE_ONE,
) -> WeibullRelease:
    """Baseline (Nguyên & Hui 2017b, §VI-A): Laplace mechanism on the MLE p and λ/horizon, each clipped
    to [0, γ] (global sensitivity γ) and released with ε/2, i.e. Laplace(2γ/ε).

    The sensitivity is the range γ under either neighbour relation: a clipped estimate of any data
    set, of no record included (no finite MLE: γ), lies in [0, γ].

    Outputs are clipped to [0, γ] (post-processing).

    Parameters
    ----------
    time : array_like, shape (n,)
        Private follow-up times, ≥ 0; times beyond ``horizon`` are censored there.
    event : array_like, shape (n,)
        Private event indicators (1 = event, 0 = censored).
    epsilon : float
        Total ε > 0.
    horizon : float
        Public horizon; times are divided by it, and later times are censored at it
        (administrative censoring: a refusal would tell whether anyone's time exceeds it).
    gamma : float, default 10.0
        Public range [0, γ] of p and of λ/horizon.
    omega : float, default 6.0
        Public floor e^−ω of the scaled times.
    accountant : PrivacyAccountant, optional
        Charged ε before any noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests (``private=False``).
    unit : array_like, shape (n,), optional
        The person of each row, when rows are intervals of persons' follow-up (``time`` each
        interval's end): each person's history becomes one record, their first exit
        (:func:`pm_private.survival.person_histories`), n the number of persons, and the release
        protects a person with all their rows.  None: each row is one person's record.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): under add/remove n is
        private (the release records none, and data of no record are released as any other),
        and the ledger charges the same ε, the sensitivity γ being the same under replace-one.

    Returns
    -------
    WeibullRelease
        The private shape p and scale λ (in the units of ``time``) and what they assumed.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, horizon, γ, ω or data (times not finite,
        negative; events other than 0 or 1).
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), or with
    ``relation="add-remove"`` under add/remove neighbours (n private); the unit a person's
    record, or with ``unit`` a person with all their rows, made one record; by sequential
    composition of two Laplace mechanisms with ε/2 each on the clipped MLEs (sensitivity γ under
    either relation).  Public: ``horizon``, ω, γ, and n under replace-one.  Exact.
    Floating-point safe (OpenDP's exact discrete Laplace) for the secure default ``rng=None``; a
    seeded ``rng`` gives ``private=False``.  Reference: Nguyên & Hui 2017b.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_weibull, weibull_laplace
    >>> data = simulate_weibull(400, shape=1.5, scale=100.0, horizon=250.0, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = weibull_laplace(
    ...     data.time, data.event, epsilon=1.0, horizon=250.0, accountant=accountant, rng=0
    ... )
    >>> release.noise_scales  # Laplace(2γ/ε)
    (20.0, 20.0)
    >>> 0.0 <= release.shape <= release.gamma
    True
    """
    relation = check_relation(relation)
    epsilon, gamma, omega, t, d, unit = _prepare(
        time, event, unit, epsilon, horizon, gamma, omega, allow_empty=relation == ADD_REMOVE
    )
    check_some_units(t.size, relation)
    n = t.size if relation == REPLACE_ONE else None
    source = as_noise_source(rng)
    record = _record(
        LAPLACE_MLE, sensitivity=gamma, epsilon=epsilon, gamma=gamma, horizon=horizon, omega=omega, n=n,
        source=source, unit=unit, neighbours=relation,
    )  # fmt: skip
    events = (laplace_noise_event(gamma, epsilon / 2),) * 2  # on p and on λ
    with release_guard(
        accountant, LAPLACE_MLE, epsilon, label="Laplace on p, λ" + ("" if n is None else f"; n={n}"), unit=unit,
        neighbours=relation, noise=with_replace_one(events, Sensitivity(gamma, gamma), relation),
    ):  # fmt: skip
        p, lam = _clipped_mle(np.log(t), d, gamma)
        return record(_laplace_pair(p[0], lam[0], sensitivity=gamma, epsilon=epsilon, source=source))


@parameters_from(weibull_laplace, sections=("Returns",))
def weibull_sample_aggregate(
    time,
    event,
    *,
    epsilon: float,
    horizon: float,
    subset_size: int | None = None,
    gamma: float = 10.0,
    omega: float = 6.0,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    subsets: int | None = None,
    relation: str = REPLACE_ONE,
) -> WeibullRelease:
    """Baseline (Nguyên & Hui 2017b, §VI-A; Smith 2008): sample-and-aggregate.

    Under replace-one the records are randomly partitioned (a permutation drawn from the noise
    source, independent of the data) into m = max(1, round(n/subset_size)) subsets (or m =
    ``subsets``) of ⌊n/m⌋ records (the n mod m left over are not used).  Under add/remove, where
    n is private and cannot size the subsets, m = ``subsets`` is public and each record is dealt to
    one of them by its own uniform draw, so subsets differ in size and may be empty.  The MLE of
    each subset is clipped to [0, γ] (γ if it does not exist, an empty subset among them); the
    means of p and of λ/horizon over the subsets have sensitivity γ/m (one record is in one
    subset) and are released with ε/2 each, Laplace(2γ/(mε)), then clipped to [0, γ].

    Parameters
    ----------
    subset_size : int, optional
        The public target number of records per subset, in [1, n] (replace-one only; 500 where
        neither it nor ``subsets`` is given).
    subsets : int, optional
        The public number of subsets m ≥ 1 (at most n under replace-one), instead of
        ``subset_size``; needed under add/remove.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): under add/remove n is
        private (the release records none, and data of no record are released as any other).

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, horizon, γ, ω, subset_size, subsets or data (times not
        finite, negative; events other than 0 or 1), both ``subset_size`` and ``subsets``, or
        add/remove without ``subsets``.
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), or with
    ``relation="add-remove"`` under add/remove neighbours (n private); the unit a person's record,
    or with ``unit`` a person with all their rows, made one record.  One record is in one subset,
    so the subset means have sensitivity γ/m, released by two Laplace mechanisms with ε/2 each.
    Under add/remove, the draws of the records two neighbours share are coupled (the same law
    either way), and for each value of them the neighbours differ in the one subset of the added
    record: a mixture, with the same weights, of mechanisms that are ε-DP, and the same holds of
    a replaced record (its draw and its replacement's coupled), so γ/m is the sensitivity under
    both relations.  Public: ``horizon``, ω, γ, ``subset_size`` or ``subsets``, and n under
    replace-one.  Exact.  Floating-point safe (OpenDP's exact discrete Laplace) for the secure
    default ``rng=None``; a seeded ``rng`` gives ``private=False``.  References: Nguyên & Hui
    2017b; Smith 2008.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_weibull, weibull_sample_aggregate
    >>> data = simulate_weibull(400, shape=1.5, scale=100.0, horizon=250.0, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = weibull_sample_aggregate(
    ...     data.time, data.event, epsilon=1.0, horizon=250.0, subset_size=100, accountant=accountant, rng=0
    ... )
    >>> release.subsets, release.noise_scales  # m = 4 subsets: Laplace(2γ/(mε))
    (4, (5.0, 5.0))
    """
    relation = check_relation(relation)
    epsilon, gamma, omega, t, d, unit = _prepare(
        time, event, unit, epsilon, horizon, gamma, omega, allow_empty=relation == ADD_REMOVE
    )
    check_some_units(t.size, relation)
    m = _subset_count(t.size, subset_size, subsets, relation)
    n = t.size if relation == REPLACE_ONE else None
    source = as_noise_source(rng)
    label = f"{m} subsets" + (", records dealt at random" if n is None else f" of {n // m}, n={n}")
    record = _record(
        SAMPLE_AGGREGATE, sensitivity=gamma / m, epsilon=epsilon, gamma=gamma, horizon=horizon, omega=omega, n=n,
        source=source, unit=unit, subsets=m, neighbours=relation,
    )  # fmt: skip
    events = (laplace_noise_event(gamma / m, epsilon / 2),) * 2  # on the means of p and of λ
    with release_guard(
        accountant, SAMPLE_AGGREGATE, epsilon, label=label, unit=unit, neighbours=relation,
        noise=with_replace_one(events, Sensitivity(gamma / m, gamma / m), relation),
    ):  # fmt: skip
        if n is None:
            p, lam = _dealt_subset_mles(np.log(t), d, m, gamma, source)
        else:
            order = np.argsort(source.uniform(n))[: m * (n // m)].reshape(m, n // m)
            p, lam = (estimate.mean() for estimate in _clipped_mle(np.log(t)[order], d[order], gamma))
        return record(_laplace_pair(p, lam, sensitivity=gamma / m, epsilon=epsilon, source=source))


#: The records per subset of :func:`weibull_sample_aggregate` where neither size nor count is given.
DEFAULT_SUBSET_SIZE = 500


def _subset_count(n: int, subset_size, subsets, relation: str) -> int:
    """The public number of subsets m of :func:`weibull_sample_aggregate` (checked before anything
    is spent)."""
    if subset_size is not None and subsets is not None:
        raise ValueError("give subset_size or subsets, not both")
    if subsets is not None:  # under add/remove no refusal may depend on n
        return check_count("subsets", subsets, maximum=n if relation == REPLACE_ONE else None)
    if relation == ADD_REMOVE:
        raise ValueError(
            "subsets is needed under relation='add-remove': n is private there and cannot size the subsets"
        )
    size = check_count("subset_size", DEFAULT_SUBSET_SIZE if subset_size is None else subset_size, maximum=n)
    return max(1, round(n / size))


def _dealt_subset_mles(log_t, d, m: int, gamma: float, source):
    """The means over m subsets, to which each record is dealt by its own uniform draw, of their
    clipped MLEs of p and λ/horizon: an empty subset's are γ, so only the non-empty ones (at most
    n, whatever m) are fitted."""
    subset = np.minimum(np.floor(source.uniform(log_t.size) * m), m - 1)
    order = np.argsort(subset, kind="stable")  # the records of each subset together, in their order
    labels, starts = np.unique(subset[order], return_index=True)
    sums = np.full(2, (m - labels.size) * gamma)
    for members in np.split(order, starts[1:]):
        p, lam = _clipped_mle(log_t[members], d[members], gamma)
        sums += (p[0], lam[0])
    return sums / m
