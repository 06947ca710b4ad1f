"""Survival data preparation with public bounds.

Every bound here is a **public input**: the time horizon that scales times into [0, 1], the
covariate norm bound and the centre.  None is computed from the data, because a maximum, a mean
or a standard deviation of private records is itself a release.  Records outside a bound are
censored at it (times beyond the horizon: :func:`censor_at_horizon`, which the Weibull mechanisms
apply themselves, since a refusal would tell whether any private time exceeds the horizon the
caller chose; :func:`scale_times` alone refuses them) or projected onto it (covariate rows longer
than the bound, times below a floor), and projection is what makes the sensitivity bounds of the
private mechanisms hold.
"""

from __future__ import annotations

import numpy as np

from .._engine.dask import is_dask
from .._engine.docstrings import parameters_from
from ..privacy.primitives import project_rows
from ..privacy.units import PERSON, RECORD, check_unit, first_rows, take_rows
from ..privacy.validation import as_float_array, as_matrix, check_count, check_finite_rows, check_positive

__all__ = [
    "check_survival",
    "person_histories",
    "person_records",
    "censor_at_horizon",
    "scale_times",
    "interval_index",
    "interval_ends",
    "scale_covariates",
    "domain_unit_ball",
    "flchain_unit_ball",
]


def _refuse_dates(values, name: str) -> None:
    """Refuse dates and durations (``datetime64``, ``timedelta64``, pandas' tz-aware dates) by dtype.

    numpy converts them to float as counts of their unit (nanoseconds for pandas), which a
    release would take as times on the scale of its public edges.  The check reads the dtype, a
    property of the schema, and no value.

    Parameters
    ----------
    values : array_like
        The times (numpy, pandas, dask or a list).
    name : str
        The argument's name, quoted in the error message.

    Raises
    ------
    ValueError
        If ``values`` hold dates or durations.
    """
    dtype = getattr(values, "dtype", None)
    if dtype is None and isinstance(values, (list, tuple)):
        try:
            dtype = np.asarray(values).dtype
        except (TypeError, ValueError):
            return  # not an array: as_float_array says so
    if getattr(dtype, "kind", None) in ("M", "m"):
        raise ValueError(
            f"{name} holds dates or durations ({dtype}): convert them to numbers, the durations in the "
            "units of the public edges (or horizon), e.g. (exit - entry) / np.timedelta64(1, 'D') for days; "
            "as they are they would be read as counts of their unit"
        )


def check_survival(time, event, *, allow_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Validated (time, event): finite times ≥ 0 and flags in {0, 1} of equal length.

    Booleans are accepted as events.

    Parameters
    ----------
    time : array_like, shape (n,)
        Follow-up times, finite and ≥ 0.
    event : array_like, shape (n,)
        1 (or True) where the event was observed, 0 where the follow-up was censored.
    allow_empty : bool, default False
        Take records of zero length: a release under add/remove neighbours, where n is private,
        releases an empty data set as it does any other.

    Returns
    -------
    time : numpy.ndarray
        float64 times.
    event : numpy.ndarray
        int8 events (1 = event observed, 0 = right-censored).

    Raises
    ------
    ValueError
        Naming the first offending record: a time that is not finite or negative, an event
        other than 0 or 1, or arrays of different or zero length (zero unless ``allow_empty``); or
        times given as dates or durations (``datetime64``, ``timedelta64``: refused by their
        dtype, reading no value).
    """
    _refuse_dates(time, "time")
    t = as_float_array(time, "time")
    d = event if isinstance(event, np.ndarray) and event.dtype == bool else as_float_array(event, "event")
    if t.ndim != 1 or (t.size == 0 and not allow_empty):
        raise ValueError(f"time must be a {'' if allow_empty else 'non-empty '}1-D array, got shape {t.shape}")
    if d.shape != t.shape:
        raise ValueError(f"time and event must have the same length, got {t.shape} and {d.shape}")
    bad = ~np.isfinite(t)
    if bad.any():
        raise ValueError(f"time contains NaN or infinite values (first at index {np.flatnonzero(bad)[0]})")
    if (t < 0).any():
        raise ValueError(f"time must be ≥ 0 (first negative at index {np.flatnonzero(t < 0)[0]})")
    if d.dtype != bool:
        d_float = d.astype(np.float64)
        bad = ~np.isin(d_float, (0.0, 1.0))
        if bad.any():
            first = np.flatnonzero(bad)[0]
            raise ValueError(f"event must be 0 or 1 (first other value at index {first})")
    return t, d.astype(np.int8)


@parameters_from(check_survival)
def censor_at_horizon(time, event, horizon: float, *, allow_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Administrative censoring at a public horizon: min(t, horizon), and events after it censored.

    This is how a study with fixed follow-up treats later records; it keeps every record inside
    the bound that :func:`scale_times` requires.

    Parameters
    ----------
    horizon : float
        The public horizon, > 0.
    allow_empty : bool, default False
        Take records of zero length (:func:`check_survival`).

    Returns
    -------
    time : numpy.ndarray
        min(t, horizon), float64.
    event : numpy.ndarray
        The events, 0 for those after the horizon, int8.

    Raises
    ------
    ValueError
        For invalid times, events (see :func:`check_survival`) or horizon.
    """
    t, d = check_survival(time, event, allow_empty=allow_empty)
    horizon = check_positive("horizon", horizon)
    late = t > horizon
    return np.where(late, horizon, t), np.where(late, 0, d).astype(np.int8)


def scale_times(time, *, horizon: float, floor: float = 0.0) -> np.ndarray:
    """Times divided by the public ``horizon`` and raised to ``floor``: values in [floor, 1].

    Times above the horizon raise ValueError (censor them first with :func:`censor_at_horizon`
    if that is the intended design).  Nguyên & Hui (2017b) needs times in [e^(−ω), 1]: pass
    ``floor=np.exp(-omega)``; raising the shortest times to the floor is a projection onto the
    public domain, not a data-dependent step.

    Parameters
    ----------
    time : array_like
        Times, finite, in [0, horizon].
    horizon : float
        The public horizon, > 0.
    floor : float, default 0.0
        The smallest scaled time, in [0, 1).

    Returns
    -------
    numpy.ndarray
        max(t/horizon, floor), in [floor, 1].

    Raises
    ------
    ValueError
        For a time that is not finite, negative or above the horizon, times given as dates or
        durations, or an invalid horizon or floor.
    """
    horizon = check_positive("horizon", horizon)
    try:
        floor = float(floor)
    except (TypeError, ValueError):
        raise ValueError(f"floor must be a number in [0, 1), got {floor!r}") from None
    if not 0.0 <= floor < 1.0:
        raise ValueError(f"floor must be in [0, 1), got {floor!r}")
    _refuse_dates(time, "time")
    t = as_float_array(time, "time")
    bad = ~np.isfinite(t) | (t < 0)
    if bad.any():
        first = np.flatnonzero(bad)[0]
        raise ValueError(f"time must be finite and ≥ 0 (first other value at index {first})")
    late = t > horizon
    if late.any():
        raise ValueError(
            f"time exceeds the public horizon {horizon:g} (first at index {int(np.argmax(late))}); "
            "choose a longer horizon or censor them with censor_at_horizon"
        )
    return np.maximum(t / horizon, floor)


def interval_ends(q: int) -> np.ndarray:
    """The right ends 1/q, 2/q, …, q/q of the ``q`` intervals of [0, 1], each the double nearest s/q.

    These are the boundaries of :func:`interval_index`: one home, so that every function that
    asks "in which interval" or "how many intervals have ended" compares against the same numbers.

    Parameters
    ----------
    q : int
        The number of intervals, ≥ 1.

    Returns
    -------
    numpy.ndarray
        float64 ends of length q, increasing, the last one exactly 1.

    Raises
    ------
    ValueError
        If ``q`` is not a positive integer.
    """
    q = check_count("q", q)
    return np.arange(1, q + 1, dtype=np.float64) / q  # IEEE division: correctly rounded s/q


def interval_index(t_scaled, q: int) -> np.ndarray:
    """Interval of each scaled time in [0, 1] cut into ``q`` equal intervals, as 0 … q−1.

    Interval s (0-based) is (s/q, (s+1)/q]: a time exactly on a boundary s/q belongs to the
    interval that **ends** there, s − 1, and t = 0 belongs to interval 0.  A record with index s
    was at risk in intervals 0 … s and had its event (or censoring) in interval s; a week-w
    record of a study followed weekly, scaled by a horizon of q weeks, is in interval w − 1.

    The boundaries are the doubles nearest s/q (:func:`interval_ends`) and each time is compared
    with them exactly, without tolerance (``ceil(t·q)`` is not used: 27/52·52 rounds to
    27.000000000000004).  The rule is exact for times on an integer grid: if t and the horizon
    H are integers (days, weeks; or integer multiples of one binary unit such as ¼) with
    H·q < 2⁵², then ``interval_index(scale_times(t, horizon=H), q)`` equals the integer rule
    ⌈t·q/H⌉ − 1 (0 for t = 0), because the correctly rounded t/H equals the double nearest s/q
    exactly when t/H = s/q, and differs from it otherwise.  Times that carry their own rounding
    error (a decimal fraction such as 0.1, or k·w/q computed in floating point) are placed by
    the double they are.

    Parameters
    ----------
    t_scaled : array_like
        Scaled times in [0, 1] (:func:`scale_times`).
    q : int
        The number of intervals, ≥ 1.

    Returns
    -------
    numpy.ndarray
        int64 interval indices in 0 … q−1.

    Raises
    ------
    ValueError
        If a time lies outside [0, 1] or ``q`` is not a positive integer.

    Examples
    --------
    >>> from pm_private.survival import interval_index, scale_times
    >>> interval_index(scale_times([26, 27, 28], horizon=52), 52).tolist()
    [25, 26, 27]
    >>> interval_index([0.0, 0.25, 0.5, 1.0], 4).tolist()
    [0, 0, 1, 3]
    """
    ends = interval_ends(q)
    t = as_float_array(t_scaled, "scaled times")
    bad = ~np.isfinite(t) | (t < 0) | (t > 1)
    if bad.any():
        first = np.flatnonzero(bad)[0]
        raise ValueError(f"scaled times must lie in [0, 1] (first other value at index {first})")
    return np.searchsorted(ends[:-1], t, side="left").astype(np.int64)


def scale_covariates(X, *, bound, center=None) -> np.ndarray:
    """Rows (xᵢ − center)/bound, each projected into the unit ball: ‖xᵢ‖₂ ≤ 1.

    ``bound`` (a number, or one per column) and ``center`` (default zero) are public.  Rows whose
    norm exceeds 1 after scaling are shrunk to norm 1 (projection onto the ball), so no record
    leaves the domain the mechanisms' sensitivities assume.  Accepts numpy arrays and pandas
    DataFrames.

    Parameters
    ----------
    X : array_like or pandas.DataFrame, shape (n, d)
        Covariates, finite.
    bound : float or array_like
        The public scale, one number or one per column, > 0.
    center : float or array_like, optional
        The public centre, one number or one per column (default 0).

    Returns
    -------
    numpy.ndarray
        The scaled rows, each of ℓ2 norm ≤ 1.

    Raises
    ------
    ValueError
        For NaN or infinite entries, a ``bound`` or ``center`` of the wrong length or not
        finite, a ``bound`` ≤ 0, or a scaling that overflows.
    """
    X = as_matrix(X)
    d = X.shape[1]
    check_finite_rows(X)
    bound = _public_vector("bound", bound, d)
    if (bound <= 0).any():
        raise ValueError(f"bound must be > 0, got {bound}")
    center = np.zeros(d) if center is None else _public_vector("center", center, d)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
        Z = (X - center) / bound
    if not np.isfinite(Z).all():
        raise ValueError("bound is too small for X: (X − center)/bound overflows")
    return project_rows(Z, 1.0)


def _public_vector(name: str, value, d: int) -> np.ndarray:
    vector = as_float_array(value, name)
    vector = np.broadcast_to(vector, (d,)) if vector.ndim == 0 else vector
    if vector.shape != (d,) or not np.isfinite(vector).all():
        raise ValueError(f"{name} must be a finite number or {d} finite values, got {value!r}")
    return vector


def domain_unit_ball(X, domain: dict) -> np.ndarray:
    """Covariates mapped into the unit ball with public per-column ranges ``domain[column] = (low, high)``.

    Each column is centred at the middle of its range and divided by half the range times √d, so
    a record inside the domain has ‖x‖₂ ≤ 1; records outside are projected onto the ball.

    Parameters
    ----------
    X : pandas.DataFrame
        Covariates whose columns are keys of ``domain``.
    domain : dict of str to (float, float)
        The public range (low, high) of each column.

    Returns
    -------
    numpy.ndarray
        The rows mapped into the unit ball.

    Raises
    ------
    ValueError
        If a column of ``X`` has no range in ``domain``, or for the reasons of
        :func:`scale_covariates`.
    """
    missing = [c for c in X.columns if c not in domain]
    if missing:
        raise ValueError(f"domain has no public range for the columns {missing}")
    low, high = np.array([domain[c] for c in X.columns], dtype=np.float64).T
    half = (high - low) / 2
    return scale_covariates(X, bound=half * np.sqrt(X.shape[1]), center=low + half)


def flchain_unit_ball(X) -> np.ndarray:
    """FL covariates mapped into the unit ball with the public
    :data:`~pm_private.datasets.FLCHAIN_DOMAIN` (see :func:`domain_unit_ball`).

    Parameters
    ----------
    X : pandas.DataFrame
        The covariates of :func:`pm_private.datasets.load_flchain`.

    Returns
    -------
    numpy.ndarray
        The rows mapped into the unit ball.
    """
    from ..datasets.flchain import FLCHAIN_DOMAIN

    return domain_unit_ball(X, FLCHAIN_DOMAIN)


def person_histories(
    unit, time, event, *, allow_empty: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One survival record per person from rows that are intervals of persons' follow-up.

    The rows of a person (same ``unit``) are the intervals of their history in counting-process
    (start–stop) form, ``time`` each interval's end and ``event`` whether it ended in the event.
    The person's record is their first exit: the end of their earliest interval with an event
    (event 1), or, with none, the end of their latest interval (censored, event 0).  Their
    covariates and cell are those of their earliest interval (the baseline, as at entry).  The
    record is a function of that person's rows alone, so under replace-one neighbours of persons
    one record changes, and every person-level mechanism keeps its sensitivity.  The record
    counts the person at risk from time 0 to their exit: gaps between intervals and a late entry
    (left truncation) are not modelled, and later events (recurrences) are not counted.

    Parameters
    ----------
    unit : array_like, shape (n,)
        The person of each row (:func:`pm_private.privacy.check_unit`).
    time : array_like, shape (n,)
        Each interval's end (stop), finite and ≥ 0.
    event : array_like, shape (n,)
        1 (or True) where the interval ended in the event, else 0.
    allow_empty : bool, default False
        Take rows of zero length (:func:`check_survival`).

    Returns
    -------
    time, event : numpy.ndarray
        One exit time and event flag per person, in order of first appearance of the persons.
    exit_rows, baseline_rows : numpy.ndarray of int
        Each person's row of the exit, and of their earliest interval (for covariates and cells).

    Raises
    ------
    ValueError
        Naming ``time``, ``event`` or ``unit`` (:func:`check_survival`, :func:`pm_private.privacy.check_unit`).

    Examples
    --------
    >>> time, event, _, baseline = person_histories([7, 7, 9], [2.0, 5.0, 3.0], [0, 1, 0])
    >>> time.tolist(), event.tolist(), baseline.tolist()
    ([5.0, 3.0], [1, 0], [0, 2])
    """
    time, event = check_survival(time, event, allow_empty=allow_empty)
    codes = check_unit(unit, time.size)
    order = np.lexsort((time, codes))  # by person, then by interval end
    person = codes[order]
    last = np.ones(person.size, dtype=bool)  # each person's last row in the order
    last[:-1] = person[1:] != person[:-1]
    baseline_rows, exit_rows = first_rows(codes, order), order[last]
    first_events = first_rows(codes, order[event[order] == 1])  # each person's earliest event, if any
    exit_rows[codes[first_events]] = first_events
    return time[exit_rows], event[exit_rows], exit_rows, baseline_rows


def person_records(unit, time, event, *columns, allow_empty: bool = False):
    """The records a survival release counts and the unit it protects: the rows as they are and
    ``"record"`` without ``unit``; one record per person (:func:`person_histories`, which
    ``allow_empty`` is passed to), with ``columns`` (covariates, cells; None stays None) at each
    person's earliest interval, and ``"person"`` with it.  ValueError naming ``unit`` for Dask
    collections."""
    if unit is None:
        return time, event, columns, RECORD
    if any(is_dask(v) for v in (time, event, unit, *columns)):
        raise ValueError("unit is not taken with Dask collections: make each person's history one record first")
    time, event, _, baseline = person_histories(unit, time, event, allow_empty=allow_empty)
    return time, event, tuple(take_rows(column, baseline) for column in columns), PERSON
