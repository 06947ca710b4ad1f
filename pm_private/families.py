"""The registry of model families: one :class:`~pm_private.released.family.Family` object per family.

Each family declares its object in its own ``family`` module (its hooks: release, builder, setter,
predictor, noise plan, link, NUTS start, command-line command); this module
lists them, and everything that needs every family reads it: the command line (``pm-private
release`` and ``pm-private fit``), the contract tests and the documentation.  Reading it imports no
model code (the hooks import on first use).

A new family joins with one ``family`` module and one line in ``FAMILIES`` (and its import).  A family
that fits another family's release with another link declares ``statistics_of`` and no release: its
``family`` module may also hold its three verbs, importing the model code inside them.

Examples
--------
>>> from pm_private.families import FAMILIES, family_of_kind
>>> FAMILIES["logistic"].builder
Hook('pm_private.logistic.model:logistic_model')
>>> family_of_kind("poisson_stats").command
'poisson-stats'
"""

from __future__ import annotations

from .linear.family import LINEAR
from .logistic.family import LOGISTIC
from .poisson.family import POISSON
from .released.family import Family
from .survival.discrete.family import DISCRETE_TIME
from .survival.exits.family import SURVIVAL
from .survival.regression.family import SURVIVAL_REGRESSION
from .survival.weibull.family import WEIBULL

__all__ = ["FAMILIES", "family_of_kind", "released_families"]

#: Every model family, by name.
FAMILIES: dict[str, Family] = {
    family.name: family for family in (LINEAR, LOGISTIC, POISSON, SURVIVAL, SURVIVAL_REGRESSION, WEIBULL, DISCRETE_TIME)
}


def released_families() -> dict[str, Family]:
    """The families fitted to released statistics (those with a release kind), by release kind.

    Returns
    -------
    dict of str to Family
        E.g. ``{"linear_stats": LINEAR, "logistic_stats": LOGISTIC, …}``.
    """
    return {family.kind: family for family in FAMILIES.values() if family.kind is not None}


def family_of_kind(kind: str) -> Family:
    """The family whose model fits releases of ``kind``.

    Parameters
    ----------
    kind : str
        The ``kind`` of a release-file entry.

    Returns
    -------
    Family

    Raises
    ------
    KeyError
        If no family fits that kind.
    """
    return released_families()[kind]
