"""Neighbour relations: replace-one (n public) and add/remove (n private), the sensitivity of the
library's statistics under each, and how one ledger counts releases made under either.

Two data sets are neighbours

* under **replace-one** (bounded DP) when they hold the same number n of units and differ in
  everything about one of them; n is public (every release of pm_private so far);
* under **add/remove** (unbounded DP) when one is the other with one unit added or removed; n is
  then private, and a release must not reveal it exactly (OpenDP's symmetric distance, Tumult's
  protections and dp-accounting's default speak this relation).

Sensitivity per relation
------------------------
For a statistic that sums one contribution g(z) per unit, the add/remove sensitivity is the
largest contribution, sup‖g(z)‖, and the replace-one sensitivity the largest difference of two,
sup‖g(z) − g(z′)‖, at most twice the first (the triangle inequality) and sometimes less:

=======================================  =====================  ==========================
statistic (one unit's contribution)       add/remove              replace-one
=======================================  =====================  ==========================
counts: one unit adds 1 to one cell       ℓ1 1, ℓ2 1              ℓ1 2, ℓ2 √2
sum of vectors with ‖g(z)‖ ≤ c            c                       2c
Gram matrix Σ zzᵀ, ‖z‖ ≤ R (Frobenius)    R²                      √2·R²
the number of units n                     1                       0 (n public)
=======================================  =====================  ==========================

(Gram: ‖zzᵀ − z′z′ᵀ‖²_F = ‖z‖⁴ + ‖z′‖⁴ − 2(zᵀz′)² ≤ 2R⁴, attained by orthogonal z, z′ of norm R.)
:class:`Sensitivity` holds both; :func:`histogram_sensitivity`, :func:`sum_sensitivity` and
:func:`gram_sensitivity` are the table's rows.

One ledger, one relation
------------------------
Every accountant of pm_private states its totals under replace-one (the relation of every release
that names n).  A release made under add/remove is counted on it converted, because a replacement
is a removal followed by an addition:

* a release that states its noise: each event's sensitivity becomes that of the same values
  under replace-one (the table's; 2Δ, the triangle inequality, when the event does not state it),
  and the entry's ε is that of the converted events at the release's δ (exact: the converted
  events are the replace-one privacy curve of the same noise);
* otherwise (or for a Poisson-subsampled event, whose amplification does not scale with Δ) by
  group privacy over the two steps (Dwork & Roth 2014, Thm 2.2 and its (ε, δ) form):
  an (ε, δ) add/remove guarantee is a (2ε, (1 + e^ε)·δ) replace-one one.

The converted entry records the relation it was made under (``"add-remove as replace-one"``), so
the ledger's totals, its tight (PLD) composition and an independent recomputation all compose
replace-one events.  The converse has no rule: a replace-one guarantee says nothing about data sets
of different sizes, so a replace-one release cannot be counted under add/remove.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from .budget import REPLACE_ONE, LedgerEntry, NoiseEvent, grown_delta, implied_epsilon

__all__ = [
    "ADD_REMOVE",
    "RELATIONS",
    "REPLACE_ONE",
    "Sensitivity",
    "as_replace_one",
    "check_public_n",
    "check_relation",
    "check_some_units",
    "gram_sensitivity",
    "histogram_sensitivity",
    "sum_sensitivity",
    "with_replace_one",
]

#: Unbounded DP: neighbouring data sets differ by one unit added or removed; n is private.
ADD_REMOVE = "add-remove"
RELATIONS = (REPLACE_ONE, ADD_REMOVE)
_AS = " as "
# What a ledger entry's relation may read: a relation with its unit, or an add/remove one converted.
_TEXTS = frozenset(
    [f"{relation}{unit}" for relation in RELATIONS for unit in ("", " person")]
    + [f"{ADD_REMOVE}{unit}{_AS}{REPLACE_ONE}{unit}" for unit in ("", " person")]
)


class Sensitivity(NamedTuple):
    """A statistic's sensitivity under each neighbour relation (the module's table).

    Parameters
    ----------
    add_remove : float
        sup‖f(D) − f(D′)‖ over D′ = D with one unit added or removed.
    replace_one : float
        sup‖f(D) − f(D′)‖ over D′ = D with one unit replaced.
    """

    add_remove: float
    replace_one: float

    def under(self, relation: str) -> float:
        """The sensitivity under one relation.

        Parameters
        ----------
        relation : {"replace-one", "add-remove"}
            The neighbour relation.

        Returns
        -------
        float
            :attr:`replace_one` or :attr:`add_remove`.
        """
        return self.replace_one if check_relation(relation) == REPLACE_ONE else self.add_remove

    def of_units_with_rows(self, rows: int) -> Sensitivity:
        """The sensitivity of the same sum when a unit contributes up to ``rows`` = k terms.

        Under add/remove a unit's k terms move the sum by at most k·``add_remove`` (the triangle
        inequality over its terms), attained by k equal extreme terms.  Under replace-one a unit
        of a ≤ k terms replaced by one of b ≤ k moves it by at most
        min(a, b)·``replace_one`` + |a − b|·``add_remove`` (pair min(a, b) of the terms, add or
        remove the rest), whose largest value over a, b is
        max(k·``replace_one``, ``replace_one`` + (k − 1)·``add_remove``): k·``replace_one``, attained
        by k equal extreme pairs, unless removing a term moves the sum more than replacing one
        (a sum that holds its count, at small bounds), where the bound may exceed what a unit can
        do: an upper bound either way, so a ledger converting with it never under-charges.

        Parameters
        ----------
        rows : int
            k ≥ 1.

        Returns
        -------
        Sensitivity
            The per-unit sensitivity under both relations (``self`` for k = 1).

        Examples
        --------
        >>> from pm_private.privacy.relations import Sensitivity
        >>> Sensitivity(1.0, 2.0).of_units_with_rows(3)
        Sensitivity(add_remove=3.0, replace_one=6.0)
        >>> Sensitivity(1.0, 0.5).of_units_with_rows(3)
        Sensitivity(add_remove=3.0, replace_one=2.5)
        """
        return Sensitivity(
            rows * self.add_remove, max(rows * self.replace_one, self.replace_one + (rows - 1) * self.add_remove)
        )


def check_relation(relation) -> str:
    """A neighbour relation, checked before anything is read or spent.

    Parameters
    ----------
    relation : str
        ``"replace-one"`` or ``"add-remove"``.

    Returns
    -------
    str
        ``relation``.

    Raises
    ------
    ValueError
        Naming ``relation``, for anything else.
    """
    if not (isinstance(relation, str) and relation in RELATIONS):
        raise ValueError(f"relation must be one of {RELATIONS}, got {relation!r}")
    return relation


def check_public_n(record) -> None:
    """A record's ``n`` against its ``neighbours``: the number of units under replace-one (n public),
    None under add/remove (n private); a record without ``neighbours`` (exact statistics) needs n.

    Parameters
    ----------
    record : object
        A release or statistics record with the field ``n`` (and ``neighbours`` for a release).

    Raises
    ------
    ValueError
        Naming the field ``n``.
    """
    if (record.n is None) != (getattr(record, "neighbours", REPLACE_ONE) == ADD_REMOVE):
        raise ValueError("field 'n' must be None exactly when 'neighbours' is 'add-remove' (n private)")


def check_some_units(n: int, relation: str, name: str = "time") -> None:
    """Refuse data of no unit where n is public, and only there.

    Under replace-one neighbours n is public, so data of no unit can be refused.  Under add/remove
    the empty data set is a neighbour of every data set of one unit, so it is released (noise
    alone) like any other: refusing it would tell the two apart with certainty, which no (ε, δ)
    guarantee with δ < 1 allows.

    Parameters
    ----------
    n : int
        The number of units in the data.
    relation : {"replace-one", "add-remove"}
        The release's neighbour relation.
    name : str, default "time"
        The data argument named in the message.

    Raises
    ------
    ValueError
        Naming ``name``, for n < 1 under replace-one.
    """
    if n < 1 and relation != ADD_REMOVE:
        raise ValueError(f"{name} must hold at least one person (n is public under replace-one neighbours)")


def histogram_sensitivity(norm: int) -> Sensitivity:
    """Counts in which each unit adds 1 to exactly one cell: 1 under add/remove; 2 (ℓ1) or √2 (ℓ2)
    under replace-one (one cell loses the unit, another gains it).

    Parameters
    ----------
    norm : {1, 2}
        The norm: ℓ1 (Laplace noise) or ℓ2 (Gaussian noise).

    Returns
    -------
    Sensitivity
    """
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    return Sensitivity(1.0, 2.0 if norm == 1 else math.sqrt(2.0))


def sum_sensitivity(bound: float) -> Sensitivity:
    """A sum of one vector per unit: c under add/remove, 2c under replace-one (attained by opposite
    vectors).

    Parameters
    ----------
    bound : float
        c, the largest norm of one unit's vector.

    Returns
    -------
    Sensitivity
    """
    return Sensitivity(float(bound), 2.0 * float(bound))


def gram_sensitivity(bound: float) -> Sensitivity:
    """The Gram matrix Σ zzᵀ of one row z per unit, in the Frobenius norm: R² under add/remove,
    √2·R² under replace-one (module notes).

    Parameters
    ----------
    bound : float
        R, the largest norm ‖z‖ of a row.

    Returns
    -------
    Sensitivity
    """
    square = float(bound) ** 2
    return Sensitivity(square, math.sqrt(2.0) * square)


def with_replace_one(events, sensitivity: Sensitivity, relation: str) -> tuple[NoiseEvent, ...]:
    """A release's noise events, each stating its replace-one sensitivity when ``relation`` is
    add/remove (the event's Δ times replace_one/add_remove of the table's ``sensitivity``), so that
    a ledger converts them with the statistic's own factor rather than the triangle inequality's 2.

    Parameters
    ----------
    events : iterable of NoiseEvent
        The events, stated under ``relation``.
    sensitivity : Sensitivity
        The noised statistic's row of the table.
    relation : {"replace-one", "add-remove"}
        The release's relation (replace-one: the events are returned as they are).

    Returns
    -------
    tuple of NoiseEvent
    """
    events = tuple(events)
    if check_relation(relation) == REPLACE_ONE:
        return events
    factor = sensitivity.replace_one / sensitivity.add_remove
    return tuple(dataclasses.replace(e, replace_one_sensitivity=e.sensitivity * factor) for e in events)


def as_replace_one(entry: LedgerEntry) -> LedgerEntry:
    """The replace-one entry a ledger counts for ``entry`` (module notes); a replace-one entry, or
    one converted already, is returned as it is.

    Parameters
    ----------
    entry : LedgerEntry
        An entry whose ``neighbours`` is ``"replace-one"`` or ``"add-remove"``, each optionally
        followed by ``" person"``; its noise events (if any) state Δ under that relation, and an
        add/remove event may state its replace-one Δ (``NoiseEvent.replace_one_sensitivity``).

    Returns
    -------
    LedgerEntry
        For an add/remove entry: the converted ε, δ and noise events, ``neighbours``
        ``"add-remove as replace-one"`` (``" person"`` after each relation for a person).

    Raises
    ------
    ValueError
        If ``neighbours`` names no relation and unit of the library.
    """
    if entry.neighbours not in _TEXTS:
        raise ValueError(
            f"neighbours must be one of {RELATIONS}, each optionally followed by ' person', got {entry.neighbours!r}"
        )
    if not entry.neighbours.startswith(ADD_REMOVE) or _AS in entry.neighbours:
        return entry
    unit = entry.neighbours[len(ADD_REMOVE) :]
    text = f"{entry.neighbours}{_AS}{REPLACE_ONE}{unit}"
    if entry.noise and all(e.sampling_rate == 1 for e in entry.noise):
        noise = tuple(NoiseEvent(e.kind, e.scale, e.replace_one, count=e.count) for e in entry.noise)
        epsilon = implied_epsilon(noise, entry.delta)
        return dataclasses.replace(entry, epsilon=epsilon, neighbours=text, noise=noise)
    delta = grown_delta(entry.delta, np.logaddexp(0.0, entry.epsilon))  # (1 + e^ε)·δ
    return dataclasses.replace(entry, epsilon=2.0 * entry.epsilon, delta=delta, neighbours=text, noise=())
