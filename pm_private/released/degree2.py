"""The degree-2 statistic layout shared by the logistic and Poisson releases.

For rows xᵢ ∈ ℝᵈ and responses yᵢ the statistics are the entries of Σᵢ uᵢuᵢᵀ with
uᵢ = (1, xᵢ, yᵢ) ∈ ℝᵈ⁺² other than its constant entries: Σx, Σy, the upper triangle of
Sxx = Σ xxᵀ and Syx = Σ y·x, in the order of :func:`degree2_pairs`.  A Gaussian release of them
weights the off-diagonal entries by √2 so that the released vector's norm is the Frobenius norm
of the matrix (Kulkarni et al. 2021; Huggins, Adams & Broderick 2017).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._engine.docstrings import SharedParameterDocs
from ..privacy.primitives import check_gaussian_epsilon, check_gaussian_scale_field, gaussian_mechanism
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, Sensitivity, check_public_n, with_replace_one
from ..privacy.release import output, public, release_guard
from ..privacy.units import RECORD, check_release_rows
from ..privacy.validation import (
    as_float_array,
    check_delta,
    check_epsilon,
    check_release_consistent,
    check_release_field,
    check_symmetric,
)
from .preprocessing import check_glm_preprocessing

__all__ = [
    "Degree2Sums",
    "check_degree2_release",
    "release_degree2",
    "degree2_sums",
    "freeze_stats",
    "stat_labels",
    "degree2_pairs",
    "degree2_vector",
    "unpack_degree2",
]


def degree2_pairs(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (a, b) into u = (1, x, y) ∈ ℝᵈ⁺² of the released statistics, in release order:
    Σx (0, j+1), Σy (0, d+1), the upper triangle of Sxx (i+1, j+1), i ≤ j, then Syx (j+1, d+1).

    Parameters
    ----------
    d : int
        The number of covariates.

    Returns
    -------
    a, b : numpy.ndarray
        Row and column indices into uuᵀ, each of length 2d + 1 + d(d+1)/2.
    """
    upper = np.triu_indices(d)
    a = np.concatenate([np.zeros(d + 1, dtype=int), upper[0] + 1, np.arange(1, d + 1)])
    b = np.concatenate([np.arange(1, d + 2), upper[1] + 1, np.full(d, d + 1)])
    return a, b


def degree2_vector(x_sum, y_sum, xx, yx) -> np.ndarray:
    """The statistics (Σx, Σy, Sxx, Syx) as one vector in release order (:func:`degree2_pairs`).

    Parameters
    ----------
    x_sum : array_like
        Σx, length d.
    y_sum : float
        Σy.
    xx : array_like
        Sxx, d × d (its upper triangle is listed).
    yx : array_like
        Syx, length d.

    Returns
    -------
    numpy.ndarray
        The 2d + 1 + d(d+1)/2 statistics.
    """
    xx = np.asarray(xx)
    return np.concatenate([x_sum, [y_sum], xx[np.triu_indices(xx.shape[0])], yx])


def unpack_degree2(values: np.ndarray, d: int) -> dict:
    """The fields ``x_sum``, ``y_sum``, ``xx`` (symmetric) and ``yx`` of a vector in release order
    (the inverse of :func:`degree2_vector`).

    Parameters
    ----------
    values : numpy.ndarray
        The 2d + 1 + d(d+1)/2 statistics.
    d : int
        The number of covariates.

    Returns
    -------
    dict
        The four fields.
    """
    upper = np.triu_indices(d)
    xx = np.zeros((d, d))
    xx[upper] = values[d + 1 : d + 1 + upper[0].size]
    return {"x_sum": values[:d], "y_sum": values[d], "xx": xx + np.triu(xx, 1).T, "yx": values[-d:]}


@dataclass(frozen=True, kw_only=True)
class Degree2Sums(SharedParameterDocs):
    """The fields every degree-2 statistics record has, exact or released: Σx, Σy, Sxx, Syx and n.

    A family's exact statistics subclass it, ``class LogisticStats(Degree2Sums)``, and its release
    lists the release's own fields first, ``class LogisticStatsRelease(Degree2Sums, Release,
    kind=...)``; each adds its public bounds, and its docstring its own fields (these entries are
    appended to it).  Construction checks and freezes the arrays (:func:`freeze_stats`); a
    subclass's ``__post_init__`` adds its checks after this one's.

    Parameters
    ----------
    x_sum : array_like
        Σx, length d (noisy in a release).
    y_sum : float
        Σy, of the response as the release maps it: labels ±1, clipped counts (noisy in a release).
    xx : array_like
        Sxx = Σ xxᵀ, d × d, symmetric (noisy in a release).
    yx : array_like
        Syx = Σ y·x, length d (noisy in a release).
    n : int or None
        The number of records (public); None in a release under add/remove neighbours, where n is
        private and the release carries its noisy count (``n_noisy``).
    """

    x_sum: np.ndarray = output()
    y_sum: float = output()
    xx: np.ndarray = output()
    yx: np.ndarray = output()
    n: int | None = public()

    def __post_init__(self):
        freeze_stats(self)

    @property
    def d(self) -> int:
        """The number of covariates."""
        return self.x_sum.shape[0]

    @property
    def n_estimate(self) -> float:
        """n, or where n is private (a release under add/remove neighbours) its noisy count, at
        least 1: what post-processing of the statistics divides by."""
        return float(self.n) if self.n is not None else max(float(self.n_noisy), 1.0)

    def noise_variance(self) -> np.ndarray:
        """Variance of the noise on each statistic in release order (:func:`degree2_pairs`): zero for exact
        statistics (a release overrides it with its mechanism's).

        Returns
        -------
        numpy.ndarray
            One variance per statistic.
        """
        return np.zeros(degree2_pairs(self.d)[0].size)


def freeze_stats(stats) -> None:
    """Checked, read-only float arrays for the fields of a statistics record.

    x_sum and yx must have length d ≥ 1 and xx be d × d and symmetric, all finite; d is the size
    most of the three agree on, so a ValueError names the field ('x_sum', 'xx', 'yx') that
    disagrees (a release file with one field shortened is refused naming that field).
    """
    arrays = {}
    for name in ("x_sum", "xx", "yx"):
        try:
            arrays[name] = np.array(as_float_array(getattr(stats, name), name), dtype=np.float64)
        except ValueError:
            raise ValueError(f"{name!r} must be an array of numbers (a ragged or non-numeric {name} given)") from None
    x_sum, xx, yx = arrays["x_sum"], arrays["xx"], arrays["yx"]
    sizes = {
        "x_sum": x_sum.shape[0] if x_sum.ndim == 1 else None,
        "xx": xx.shape[0] if xx.ndim == 2 and xx.shape[0] == xx.shape[1] else None,
        "yx": yx.shape[0] if yx.ndim == 1 else None,
    }
    known = [size for size in sizes.values() if size is not None]
    d = max(set(known), key=known.count) if known else None
    for name, size in sizes.items():
        if size is None or size != d or size < 1:
            shape = "d × d" if name == "xx" else "length d"
            raise ValueError(
                f"{name!r} must be {shape} (d = {d}, from the other statistics), got shape {arrays[name].shape}"
            )
    for name, value in arrays.items():
        if not np.isfinite(value).all():
            raise ValueError(f"{name!r} must be finite (NaN or infinite entries given)")
    try:
        check_symmetric("xx", xx)
    except ValueError as error:
        raise ValueError(f"'xx': {error}") from None
    for name, value in (("x_sum", x_sum), ("xx", xx), ("yx", yx)):
        value.flags.writeable = False
        object.__setattr__(stats, name, value)
    object.__setattr__(stats, "y_sum", float(stats.y_sum))
    check_public_n(stats)
    if stats.n is not None:
        object.__setattr__(stats, "n", int(stats.n))


def degree2_sums(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    return X.sum(axis=0), float(y.sum()), X.T @ X, X.T @ y


def stat_labels(names) -> list[str]:
    """Labels of the statistics in release order (:func:`degree2_pairs`): ``Σx0``, …, ``Σy``,
    ``x0·x0``, ``x0·x1``, …, ``y·x0``, … for covariates named ``names``.

    Parameters
    ----------
    names : sequence of str
        The d covariate names.

    Returns
    -------
    list of str
        2d + 1 + d(d+1)/2 labels.
    """
    names = [str(v) for v in names]
    d = len(names)
    upper = np.triu_indices(d)
    return (
        [f"Σ{v}" for v in names]
        + ["Σy"]
        + [f"{names[i]}·{names[j]}" for i, j in zip(*upper, strict=True)]
        + [f"y·{v}" for v in names]
    )


def check_degree2_release(release, sensitivity_of, sensitivity_name: str) -> None:
    """The public fields of a Gaussian degree-2 release (``epsilon``, ``delta``, ``x_bound``, ``n``,
    ``n_noisy``, ``max_rows``, ``sensitivity``, ``noise_scale``, ``preprocessing``) checked by the checks its
    mechanism applies to its arguments, so that a release, built or read from a file, lies within
    the mechanism's limits (a logistic or Poisson release maps the covariates only: its
    preprocessing leaves the labels or counts as they are).  n is a count under replace-one
    neighbours and None under add/remove, where ``n_noisy`` holds the noisy count instead; the
    sensitivity is ``max_rows`` times the row's, and ``max_rows`` above 1 needs add/remove and
    the person as unit.

    Parameters
    ----------
    release : Release
        A logistic or Poisson statistics release.
    sensitivity_of : callable
        The mechanism's sensitivity of ``x_bound`` and the relation (which checks the bound).
    sensitivity_name : str
        Its name, for the message.

    Raises
    ------
    ValueError
        Naming the field.
    """
    check_release_field("epsilon", lambda e: check_gaussian_epsilon(check_epsilon(e)), release.epsilon)
    check_release_field("delta", check_delta, release.delta)
    max_rows = check_release_rows(release)  # n is None under add/remove (freeze_stats)
    sensitivity = max_rows * check_release_field("x_bound", sensitivity_of, release.x_bound, release.neighbours)
    relation_text = "" if release.neighbours == REPLACE_ONE else f", {release.neighbours!r}"
    rows_text = "" if max_rows == 1 else f"{max_rows} × "
    check_release_consistent(
        "sensitivity", release.sensitivity, sensitivity, f"{rows_text}{sensitivity_name}('x_bound'{relation_text})"
    )
    check_gaussian_scale_field("noise_scale", release.noise_scale, sensitivity, release.epsilon, release.delta)
    check_release_field("preprocessing", check_glm_preprocessing, release.preprocessing)


def release_degree2(
    X, y, *, weights, plan, mechanism: str, accountant, source, build, refusal=None, unit=RECORD, sensitivity=None
):
    """The Gaussian release of the degree-2 statistics of prepared rows: the core that the logistic
    and Poisson releases share, after their own checks and preparation.

    Charges (ε, δ) through :func:`pm_private.privacy.release.release_guard` with the plan's noise
    events, then releases r = s + ξ/w, ξ ~ N(0, σ²I), by the Gaussian mechanism on w ⊙ s
    (s the statistics of :func:`degree2_pairs`, w ``weights``, σ for the plan's sensitivity).
    Under add/remove neighbours (the plan's ``relation``) the count n = Σ 1 leads s with weight 1
    and is released with the same noise; the release then records n as None, its noisy count as
    ``n_noisy``, and the ledger label names no n.

    Parameters
    ----------
    X : numpy.ndarray, shape (n, d)
        The rows, already projected onto the public ball.
    y : numpy.ndarray, shape (n,)
        The responses, already mapped (labels ±1, clipped counts).
    weights : numpy.ndarray
        The weight of each statistic in the noised vector (without the count's).
    plan : NoisePlan
        The release's noise plan (one Gaussian query).
    mechanism : str
        The mechanism's name, for the ledger.
    accountant : PrivacyAccountant or None
        Charged before any noise is drawn.
    source : NoiseSource
        The noise source (secure or seeded).
    build : callable
        Makes the release from the noisy ``x_sum``, ``y_sum``, ``xx``, ``yx`` and
        ``sensitivity``, ``noise_scale``, ``epsilon`` (what OpenDP certifies), ``delta``, ``n``,
        ``n_noisy``, ``neighbours`` and ``private``.
    refusal : str, optional
        A refusal decided by a check of the private data, raised inside the reservation and
        charged (``release_guard``'s ``refusal``).
    unit : {"record", "person"}
        The unit the release protects (``"person"``: the rows are one per person).
    sensitivity : Sensitivity, optional
        The weighted vector's sensitivity under both relations, which the ledger's conversion of
        an add/remove release uses (needed under add/remove).

    Returns
    -------
    Release
        What ``build`` returns.
    """
    n, d = X.shape
    query, relation = plan.queries[0], plan.relation
    private_n = relation == ADD_REMOVE
    if private_n and not isinstance(sensitivity, Sensitivity):
        raise ValueError("sensitivity: a release under add/remove neighbours needs both relations' sensitivity")
    noise = with_replace_one(plan.noise_events(), sensitivity, relation)  # as they are under replace-one

    def record(values, noise_scale, epsilon):
        return build(
            **unpack_degree2(values[1:] if private_n else values, d),
            n=None if private_n else n,
            n_noisy=float(values[0]) if private_n else None,
            neighbours=relation,
            sensitivity=query.sensitivity,
            noise_scale=noise_scale,
            epsilon=epsilon,
            delta=plan.delta,
            private=source.secure,
            unit=unit,
        )

    record(np.zeros(query.size), query.scale, plan.epsilon)  # the record's own checks, before anything is spent
    with release_guard(
        accountant,
        mechanism,
        plan.epsilon,
        plan.delta,
        neighbours=relation,
        label=f"d={d}" if private_n else f"n={n}, d={d}",
        noise=noise,
        refusal=refusal,
        unit=unit,
    ):
        exact = degree2_vector(*degree2_sums(X, y))
        weights = np.concatenate([[1.0], weights]) if private_n else weights
        exact = np.concatenate([[float(n)], exact]) if private_n else exact
        part = gaussian_mechanism(
            weights * exact, sensitivity=query.sensitivity, epsilon=plan.epsilon, delta=plan.delta, source=source
        )
        return record(part.values / weights, part.scale, part.epsilon)
