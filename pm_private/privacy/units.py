"""The unit of privacy: a record, or a person with all their records.

A release protects its **unit** under replace-one neighbours: two data sets are neighbours when
they hold the same units and differ in everything about one of them.  Without a person
identifier the unit is the record (one row), as every release of pm_private assumed so far; a
person with m rows then loses up to m·ε (group privacy, Dwork & Roth 2014, Thm. 2.2), which is
what registries, electronic health records and panels hold (a visit, a prescription, a
person-year per row).

With ``unit=`` (one identifier per row) a row-level mechanism keeps **one row per person**,
chosen uniformly at random among that person's rows, and releases what it releases on those rows:

* the rows kept are one per person, so the statistic of the kept rows changes as one row changes
  when one person's rows change: the mechanism's row-level sensitivity is its per-person
  sensitivity, with nothing to re-derive;
* the choice uses one uniform key per row from the mechanism's noise source (the person's row
  with the smallest key), so the choice for every other person has the same law in both
  neighbours and is independent of the changed person's rows; conditioning on it leaves two
  data sets that differ in one row, for which the mechanism is (ε, δ)-DP, and a mixture of
  (ε, δ)-indistinguishable pairs is (ε, δ)-indistinguishable;
* the number of rows the statistic sums is the number of persons, public under replace-one
  neighbours of persons, so every noise-aware model takes the release as it is.

The guarantee is exact (as exact as the row-level mechanism's).  Keeping one row per person
spends the person's other rows.  Keeping up to k > 1 (``max_rows=k``, the same uniform keys: each
person's k rows of smallest key) makes the number of rows summed private, so it needs add/remove
neighbours with n released with noise (the linear, logistic and Poisson releases offer it); the
sensitivity is then k times the row's under add/remove (:func:`check_max_rows`), and under
replace-one at most max(k·Δ_replace, Δ_replace + (k − 1)·Δ_add)
(:meth:`pm_private.privacy.relations.Sensitivity.of_units_with_rows`).

Survival data, in which a person's rows are the intervals of one history (counting-process or
start–stop form), are not a case for this choice: one interval of a history is not a survival
record.  Their releases make each person's history one record instead
(:func:`pm_private.survival.person_histories`), a function of that person's rows alone, so that
again one person's rows move one record.

A ledger records each entry's unit with its relation (``"replace-one person"``);
:func:`pm_private.privacy.person_epsilon` states what a ledger's releases give a person with m rows,
converting the record-level entries by group privacy (:func:`pm_private.privacy.person_entry`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
import pandas as pd

from .budget import LedgerEntry, grown_delta, tight_epsilon
from .noise import NoiseSource
from .relations import ADD_REMOVE
from .validation import check_count, check_nonnegative, check_release_field

__all__ = [
    "PERSON",
    "RECORD",
    "UNITS",
    "check_max_rows",
    "check_release_rows",
    "check_unit",
    "first_rows",
    "neighbour_text",
    "person_entry",
    "person_epsilon",
    "rows_kept_per_unit",
    "rows_per_unit",
    "take_rows",
]

#: The units a release protects: one row, or one person with all their rows.
RECORD, PERSON = "record", "person"
UNITS = (RECORD, PERSON)


def neighbour_text(neighbours: str, unit: str) -> str:
    """The neighbour relation with its unit, as the ledger records it: ``"replace-one"`` for a
    record (the text every earlier entry carries) and ``"replace-one person"`` for a person.

    Parameters
    ----------
    neighbours : str
        The relation (``"replace-one"``).
    unit : str
        ``"record"`` or ``"person"``.

    Returns
    -------
    str
    """
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    return neighbours if unit == RECORD else f"{neighbours} {unit}"


def check_unit(unit, n: int) -> np.ndarray | None:
    """The person of each row as integer codes, checked before anything is spent.

    Parameters
    ----------
    unit : array_like of shape (n,) or None
        One identifier per row (numbers, strings or any hashable values; a pandas Series or
        Index is read by position).  None: the unit is the record.
    n : int
        The number of rows of the data it identifies.

    Returns
    -------
    numpy.ndarray of int or None
        ``codes[i]`` the person of row i (0, 1, … in order of first appearance); None for None.

    Raises
    ------
    ValueError
        Naming ``unit``: not one-dimensional, not one identifier per row, or holding a missing
        identifier (None, NaN, NaT, pandas.NA) or an identifier that is not hashable.
    """
    if unit is None:
        return None
    try:
        array = unit.to_numpy() if isinstance(unit, (pd.Series, pd.Index)) else np.asarray(unit, dtype=object)
    except ValueError:  # a ragged nesting
        array = None
    if isinstance(unit, (str, bytes)) or array is None or array.ndim != 1:
        raise ValueError("unit must be a one-dimensional array of identifiers, one per row")
    values = pd.Series(array)
    if len(values) != n:
        raise ValueError(f"unit must hold one identifier per row: {n} rows, got {len(values)} identifiers")
    if values.isna().any():
        raise ValueError("unit holds a missing identifier (None, NaN or NA): every row needs its person")
    try:
        codes, _ = pd.factorize(values, sort=False)
    except TypeError:
        raise ValueError("unit must hold hashable identifiers (numbers or strings)") from None
    return codes.astype(np.int64)


def rows_kept_per_unit(codes: np.ndarray, source: NoiseSource, max_rows: int = 1) -> np.ndarray:
    """The rows kept: for every person the ``max_rows`` of their rows with the smallest uniform
    keys (all their rows when they have fewer).

    Each row gets a key from ``source`` (secure, or seeded and then not private), so each
    person's rows are chosen uniformly at random among their rows, independently of the other
    persons' rows (module notes).

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n,)
        The person of each row (:func:`check_unit`).
    source : NoiseSource
        The release's noise source.
    max_rows : int, default 1
        k ≥ 1, the most rows kept per person (:func:`check_max_rows`).

    Returns
    -------
    numpy.ndarray of int
        Row indices, at most k per person, in increasing order.
    """
    keys = source.uniform(codes.size)
    order = np.lexsort((keys, codes))  # by person, then by key
    first = _starts_of_persons(codes[order])
    position = np.arange(order.size)
    rank = position - np.maximum.accumulate(np.where(first, position, 0))  # 0, 1, … within a person
    return np.sort(order[rank < max_rows])


def check_max_rows(max_rows, relation: str) -> int:
    """k, the most rows a release keeps per person, checked before anything is read.

    With k = 1 the number of rows summed is the number of persons, public under replace-one
    neighbours of persons.  With k > 1 it depends on how many rows each person has, so it is
    private: k > 1 needs add/remove neighbours, under which n is released with noise.  A person
    then contributes up to k rows, and a sum of one bounded term per row has k times the row's
    add/remove sensitivity, attained by a person of k equal extreme rows; its replace-one
    sensitivity, which a ledger converts the release with, is
    :meth:`~pm_private.privacy.relations.Sensitivity.of_units_with_rows`'s.

    Parameters
    ----------
    max_rows : int
        k ≥ 1.
    relation : {"replace-one", "add-remove"}
        The release's neighbour relation.

    Returns
    -------
    int
        k.

    Raises
    ------
    ValueError
        Naming ``max_rows``: not an integer ≥ 1, or above 1 under replace-one neighbours.
    """
    max_rows = check_count("max_rows", max_rows)
    if max_rows > 1 and relation != ADD_REMOVE:
        raise ValueError(
            "max_rows above 1 makes the number of rows summed private: pass relation='add-remove', "
            "under which n is released with noise"
        )
    return max_rows


def check_release_rows(release) -> int:
    """A release record's row fields against its relation and unit, as a release writes them:
    ``max_rows`` (k, above 1 only for the unit ``"person"`` under add/remove), and ``n`` under
    replace-one or the finite ``n_noisy`` under add/remove (``n`` is then None: checked by
    :func:`pm_private.privacy.relations.check_public_n`).

    Parameters
    ----------
    release : object
        A release record with the fields ``max_rows``, ``unit``, ``neighbours``, ``n`` and ``n_noisy``.

    Returns
    -------
    int
        k.

    Raises
    ------
    ValueError
        Naming the first field that does not fit.
    """
    max_rows = check_release_field("max_rows", check_max_rows, release.max_rows, release.neighbours)
    if max_rows > 1 and release.unit != PERSON:
        raise ValueError("field 'max_rows' above 1 needs the unit 'person' (it bounds the rows of a person)")
    if release.neighbours == ADD_REMOVE:
        if not (isinstance(release.n_noisy, numbers.Real) and math.isfinite(release.n_noisy)):
            raise ValueError("field 'n_noisy' must be a number under add/remove neighbours (n private)")
    else:
        check_release_field("n", check_count, "n", release.n)
        if release.n_noisy is not None:
            raise ValueError("field 'n_noisy' must be None under replace-one neighbours (n is public)")
    return max_rows


def first_rows(codes: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The first row of each person in ``order``, rows grouped by person.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n,)
        The person of each row (:func:`check_unit`).
    order : numpy.ndarray of int
        Row indices, those of each person together (e.g. ``numpy.lexsort((key, codes))``).

    Returns
    -------
    numpy.ndarray of int
        For each person in ``order``, the first of their rows there, in the order of ``order``.
    """
    return order[_starts_of_persons(codes[order])]


def _starts_of_persons(person: np.ndarray) -> np.ndarray:
    """Where each person's run starts in ``person`` (codes with each person's rows together)."""
    first = np.ones(person.size, dtype=bool)
    first[1:] = person[1:] != person[:-1]
    return first


def rows_per_unit(
    unit, source: NoiseSource, *arrays: np.ndarray, max_rows: int = 1
) -> tuple[tuple[np.ndarray, ...], str]:
    """The rows a release sums and the unit it protects: all rows and ``"record"`` without
    ``unit``; at most ``max_rows`` rows per person (:func:`rows_kept_per_unit`) and ``"person"``
    with it.

    Parameters
    ----------
    unit : array_like of shape (n,) or None
        The person of each row (:func:`check_unit`, which refuses bad identifiers).
    source : NoiseSource
        The release's noise source (draws the keys only with ``unit``).
    *arrays : numpy.ndarray
        The release's row arrays (covariates, responses), n rows each, checked already.
    max_rows : int, default 1
        k, checked already (:func:`check_max_rows`); above 1 it needs ``unit``.

    Returns
    -------
    arrays : tuple of numpy.ndarray
        The arrays at the rows kept.
    unit : {"record", "person"}

    Raises
    ------
    ValueError
        Naming ``unit``: bad identifiers, or none given with ``max_rows`` above 1.
    """
    codes = check_unit(unit, arrays[0].shape[0])
    if codes is None:
        if max_rows > 1:
            raise ValueError("unit is needed with max_rows above 1: max_rows bounds the rows of each person")
        return arrays, RECORD
    kept = rows_kept_per_unit(codes, source, max_rows)
    return tuple(array[kept] for array in arrays), PERSON


def take_rows(values, rows: np.ndarray):
    """``values`` at the positions ``rows``, keeping its kind: a pandas object by position, a
    categorical as a categorical, anything else as a numpy array; None stays None."""
    if values is None:
        return None
    if isinstance(values, (pd.Series, pd.DataFrame)):
        return values.iloc[rows]
    if isinstance(values, pd.Categorical):
        return values[rows]
    return np.asarray(values)[rows]


def person_entry(entry: LedgerEntry, rows: int) -> LedgerEntry:
    """The guarantee a ledger entry gives a person with ``rows`` rows.

    An entry whose unit is the person (``"replace-one person"``) is returned as it is.  A
    record-level entry is converted by group privacy over a path of ``rows`` single-record changes
    (Dwork & Roth 2014, Thm 2.2 and its (ε, δ) form): ε·m and m·e^{(m−1)ε}·δ, and each stated noise
    event's sensitivity Δ becomes m·Δ (the triangle inequality along the path), so that the tight
    totals compose the converted events.

    The path exists when replacing a person's rows is m replacements of one record, i.e. when
    every person has m rows (a balanced panel), or when the release's guarantee also holds for
    adding or removing a record, with the same Δ bounding that change (the library's sums over
    rows: the linear, logistic and Poisson statistics and the exit tables, whose replace-one Δ
    bounds the change a record's addition or removal makes).  For another record-level release of
    persons with different numbers of rows the conversion does not apply: a replace-one guarantee
    says nothing about data sets of different sizes.

    Parameters
    ----------
    entry : LedgerEntry
        A ledger entry.
    rows : int
        m ≥ 1, the most rows a person has (a public declaration).

    Returns
    -------
    LedgerEntry
        The entry as a person-level one (``neighbours`` ``"replace-one person"``).
    """
    m = check_count("rows", rows)
    if entry.neighbours.endswith(f" {PERSON}") or m == 1:
        return entry
    delta = grown_delta(entry.delta, math.log(m) + (m - 1) * entry.epsilon)
    # a subsampled sum's amplification does not scale with Δ: such an entry counts by (ε, δ) alone
    subsampled = any(e.sampling_rate < 1 for e in entry.noise)
    noise = () if subsampled else tuple(dataclasses.replace(e, sensitivity=e.sensitivity * m) for e in entry.noise)
    relation = neighbour_text(entry.neighbours, PERSON)
    return dataclasses.replace(entry, epsilon=m * entry.epsilon, delta=delta, neighbours=relation, noise=noise)


def person_epsilon(entries, rows: int, delta: float) -> float:
    """The ε at ``delta`` that ledger entries give together to a person with ``rows`` rows: each
    entry converted by :func:`person_entry`, then the tight totals (the better of basic and PLD
    composition).

    Parameters
    ----------
    entries : iterable of LedgerEntry
        The counted entries of a ledger (``PrivacyAccountant.ledger``).
    rows : int
        m ≥ 1, the most rows a person has (public).
    delta : float
        The δ at which ε is stated.

    Returns
    -------
    float
        The composed ε (inf when no composition reaches ``delta``).
    """
    delta = check_nonnegative("delta", delta)
    return tight_epsilon([person_entry(entry, rows) for entry in entries], delta)
