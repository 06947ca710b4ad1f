"""The noise plan of a release: what it will add, stated from public inputs before any data is read.

Each release mechanism of the model families has one public function that returns its
:class:`NoisePlan` (``linear_noise_plan``, ``logistic_noise_plan``, ``poisson_noise_plan``,
``weibull_noise_plan``) and uses it itself for its sensitivities, its ε split and its noise
scales, so that what a dry run of the command line prints is what the release adds.

A plan lists the noised *queries* (:class:`NoiseQuery`: one draw of additive noise, or one
exponential-mechanism choice, with its size, sensitivity, ε and scale) and, per released
statistic group, the standard deviation of the noise on each of its entries (``noise_sd``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..privacy.budget import NoiseEvent
from ..privacy.primitives import gaussian_noise_event, gaussian_scale, laplace_noise_event
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, check_relation

__all__ = ["NoiseQuery", "NoisePlan", "exponential_query", "gaussian_query", "laplace_query", "laplace_sd"]

#: The kinds of query a plan lists.
KINDS = ("laplace", "gaussian", "exponential")


@dataclass(frozen=True, kw_only=True)
class NoiseQuery:
    """One noised query of a release: ``size`` values noised together (or one choice).

    Parameters
    ----------
    name : str
        What is noised (e.g. ``"Sxx"``, ``"weighted vector"``).
    kind : {"laplace", "gaussian", "exponential"}
        The mechanism of the query.
    size : int
        The number of values noised together (1 for an exponential-mechanism choice).
    sensitivity : float
        Its ℓ1 (Laplace), ℓ2 (Gaussian) or utility (exponential) sensitivity Δ.
    epsilon : float
        The ε spent on it.
    delta : float, default 0.0
        The δ spent on it (Gaussian only).
    scale : float, optional
        The noise scale: Laplace b = Δ/ε (the secure sampler enlarges it by a relative ~2⁻⁴⁰ for
        its grid), Gaussian σ; None for an exponential-mechanism choice.
    replace_one : float, optional
        The same values' sensitivity when a unit is replaced, where a plan under add/remove
        states it (a ledger converts the release with it); None: not stated (2Δ).
    """

    name: str
    kind: str
    size: int
    sensitivity: float
    epsilon: float
    delta: float = 0.0
    scale: float | None = None
    replace_one: float | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def noise_event(self) -> NoiseEvent | None:
        """The query's noise for the ledger's tight composition (None for an exponential choice).

        Returns
        -------
        NoiseEvent or None
            ``pm_private.privacy.primitives.laplace_noise_event`` or
            ``pm_private.privacy.primitives.gaussian_noise_event`` of the query.
        """
        if self.kind == "laplace":
            return laplace_noise_event(self.sensitivity, self.epsilon)
        if self.kind == "gaussian":
            return gaussian_noise_event(self.size, self.sensitivity, self.epsilon, self.delta)
        return None


def laplace_query(name: str, size: int, sensitivity: float, epsilon: float) -> NoiseQuery:
    """A Laplace query: ``size`` values of ℓ1 sensitivity Δ at ε, scale b = Δ/ε.

    Parameters
    ----------
    name : str
        What is noised.
    size : int
        The number of values.
    sensitivity : float
        Their ℓ1 sensitivity Δ.
    epsilon : float
        The ε spent on them.

    Returns
    -------
    NoiseQuery
        The query, with the scale :func:`pm_private.privacy.primitives.laplace_mechanism` uses.

    Examples
    --------
    >>> from pm_private.released.noise_plan import laplace_query
    >>> laplace_query("counts", 2, 2.0, 0.05).scale
    40.0
    """
    return NoiseQuery(
        name=name, kind="laplace", size=int(size), sensitivity=sensitivity, epsilon=epsilon, scale=sensitivity / epsilon
    )


def gaussian_query(name: str, size: int, sensitivity: float, epsilon: float, delta: float) -> NoiseQuery:
    """A Gaussian query: ``size`` values of ℓ2 sensitivity Δ at (ε, δ), σ by OpenDP's privacy map.

    Parameters
    ----------
    name : str
        What is noised.
    size : int
        The number of values noised together.
    sensitivity : float
        Their ℓ2 sensitivity Δ.
    epsilon, delta : float
        The (ε, δ) spent on them.

    Returns
    -------
    NoiseQuery
        The query, with σ = :func:`pm_private.privacy.primitives.gaussian_scale`, the σ of
        :func:`pm_private.privacy.primitives.gaussian_mechanism`.

    Raises
    ------
    ValueError
        If σ overflows.

    Examples
    --------
    >>> from pm_private.released.noise_plan import gaussian_query
    >>> round(gaussian_query("values", 2, 1.0, 1.0, 1e-5).scale, 2)
    4.05
    """
    scale = gaussian_scale(size, sensitivity, epsilon, delta)
    return NoiseQuery(
        name=name,
        kind="gaussian",
        size=int(size),
        sensitivity=sensitivity,
        epsilon=epsilon,
        delta=delta,
        scale=scale,
    )


def exponential_query(name: str, sensitivity: float, epsilon: float) -> NoiseQuery:
    """An exponential-mechanism choice of utility sensitivity Δ at ε (no additive noise).

    Parameters
    ----------
    name : str
        What is chosen.
    sensitivity : float
        The utility's sensitivity Δ.
    epsilon : float
        The ε spent on the choice.

    Returns
    -------
    NoiseQuery
        The query (``scale`` None).

    Examples
    --------
    >>> from pm_private.released.noise_plan import exponential_query
    >>> exponential_query("level", 1.0, 0.5).scale is None
    True
    """
    return NoiseQuery(name=name, kind="exponential", size=1, sensitivity=sensitivity, epsilon=epsilon)


def _frozen(mapping) -> Mapping:
    return MappingProxyType({str(k): float(v) for k, v in dict(mapping).items()})


_TITLES = {
    "laplace": "Laplace mechanism, ε = {epsilon:g} (pure), {relation} neighbours",
    "gaussian": "Gaussian mechanism, (ε, δ) = ({epsilon:g}, {delta:g}), {relation} neighbours",
}


@dataclass(frozen=True, kw_only=True)
class NoisePlan:
    """What a release will add, from its public inputs only (no data value is needed).

    Parameters
    ----------
    mechanism : str
        ``"laplace"`` (pure ε-DP), ``"gaussian"`` ((ε, δ)-DP) or a composition such as
        ``"exponential + laplace"``.
    epsilon : float
        The total ε of the release.
    delta : float, default 0.0
        The total δ (0: pure ε-DP).
    queries : tuple of NoiseQuery
        The noised queries, in the order the release draws them.
    noise_sd : mapping of str to float
        Per released statistic group, the standard deviation of the noise on each of its
        entries (√2·b for Laplace noise of scale b; σ/w for Gaussian noise of s.d. σ on entries
        weighted by w).
    weights : mapping of str to float, default {}
        Per statistic group of a Gaussian plan, the weight w of its entries in the noised vector
        (the release divides the noisy vector by it); empty for a Laplace plan.
    d : int, optional
        The number of covariates the plan is for (None: no covariates).
    title : str, optional
        The first line of :meth:`lines` (default: the mechanism and its (ε, δ)).
    notes : tuple of str, default ()
        Further public facts of the noise, printed last by :meth:`lines`.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation the sensitivities are stated under
        (:mod:`pm_private.privacy.relations`).

    Attributes
    ----------
    sensitivity : mapping of str to float
        Per query, its ℓ1, ℓ2 or utility sensitivity.
    epsilon_parts : mapping of str to float
        Per query, the ε spent on it.
    noise_scale : mapping of str to float
        Per query with additive noise, its scale (Laplace b, Gaussian σ).

    Examples
    --------
    >>> from pm_private.released.noise_plan import NoisePlan, laplace_query
    >>> plan = NoisePlan(
    ...     mechanism="laplace",
    ...     epsilon=0.5,
    ...     queries=(laplace_query("count", 1, 1.0, 0.5),),
    ...     noise_sd={"count": 2.0 * 2**0.5},
    ... )
    >>> dict(plan.noise_scale)
    {'count': 2.0}
    >>> print("\\n".join(plan.lines()))
    Laplace mechanism, ε = 0.5 (pure), replace-one neighbours
    count: ε 0.5, ℓ1 sensitivity 1, Laplace scale 2
    """

    mechanism: str
    epsilon: float
    delta: float = 0.0
    queries: tuple[NoiseQuery, ...]
    noise_sd: Mapping[str, float]
    weights: Mapping[str, float] = field(default_factory=dict)
    d: int | None = None
    title: str | None = None
    notes: tuple[str, ...] = field(default=())
    relation: str = REPLACE_ONE

    def __post_init__(self):
        object.__setattr__(self, "queries", tuple(self.queries))
        object.__setattr__(self, "noise_sd", _frozen(self.noise_sd))
        object.__setattr__(self, "weights", _frozen(self.weights))
        object.__setattr__(self, "notes", tuple(self.notes))
        check_relation(self.relation)
        names = [q.name for q in self.queries]
        if len(set(names)) != len(names):
            raise ValueError(f"query names must be distinct, got {names}")

    __hash__ = None  # the mappings are read-only views, not hashable

    @property
    def sensitivity(self) -> Mapping[str, float]:
        """Per query, its ℓ1 (Laplace), ℓ2 (Gaussian) or utility (exponential) sensitivity."""
        return _frozen({q.name: q.sensitivity for q in self.queries})

    @property
    def epsilon_parts(self) -> Mapping[str, float]:
        """Per query, the ε spent on it."""
        return _frozen({q.name: q.epsilon for q in self.queries})

    @property
    def noise_scale(self) -> Mapping[str, float]:
        """Per query with additive noise, its scale: Laplace b = Δ/ε or Gaussian σ."""
        return _frozen({q.name: q.scale for q in self.queries if q.scale is not None})

    def query(self, name: str) -> NoiseQuery:
        """The query called ``name``.

        Parameters
        ----------
        name : str
            A query name of the plan.

        Returns
        -------
        NoiseQuery
            The query.

        Raises
        ------
        KeyError
            If the plan has no such query.
        """
        for q in self.queries:
            if q.name == name:
                return q
        raise KeyError(f"no query {name!r}; the plan has {[q.name for q in self.queries]}")

    def noise_events(self) -> tuple[NoiseEvent, ...]:
        """The additive noise of the plan's queries for the ledger (exponential choices left out);
        under add/remove each event states its query's replace-one sensitivity where the query
        gives one (``NoiseQuery.replace_one``), so that a ledger converts it with that, not 2Δ.

        Returns
        -------
        tuple of NoiseEvent
            One event per Laplace or Gaussian query, in order.
        """
        events = []
        for query in self.queries:
            event = query.noise_event()
            if event is not None and self.relation == ADD_REMOVE and query.replace_one is not None:
                event = dataclasses.replace(event, replace_one_sensitivity=query.replace_one)
            events.append(event)
        return tuple(e for e in events if e is not None)

    def lines(self) -> list[str]:
        """The plan as human-readable lines (what ``pm-private release … --dry-run`` prints).

        Returns
        -------
        list of str
            The title, one line per query, the noise s.d. of each statistic group where it
            differs from the query's scale, and the notes.
        """
        title = self.title or _TITLES.get(self.mechanism, "{mechanism}, ε = {epsilon:g}, δ = {delta:g}").format(
            mechanism=self.mechanism, epsilon=self.epsilon, delta=self.delta, relation=self.relation
        )
        if self.d is not None and self.title is None:
            title += f"; d = {self.d}"
        lines = [title]
        for q in self.queries:
            if q.kind == "laplace":
                lines.append(
                    f"{q.name}: ε {q.epsilon:.6g}, ℓ1 sensitivity {q.sensitivity:.6g}, Laplace scale {q.scale:.6g}"
                )
            elif q.kind == "gaussian":
                lines.append(
                    f"{q.name}: {q.size} values, ℓ2 sensitivity {q.sensitivity:.6g}; noise s.d. σ = {q.scale:.6g}"
                )
            else:
                lines.append(
                    f"{q.name}: ε {q.epsilon:.6g}, exponential mechanism, utility sensitivity {q.sensitivity:g}"
                )
        if any(q.kind == "gaussian" for q in self.queries):
            lines += [f"noise s.d. {sd:.6g} on {group}" for group, sd in self.noise_sd.items()]
        return [*lines, *self.notes]


def laplace_sd(scale: float) -> float:
    """Standard deviation √2·b of Laplace noise of scale b.

    Parameters
    ----------
    scale : float
        The Laplace scale b.

    Returns
    -------
    float
        √2·b.
    """
    return math.sqrt(2.0) * scale
