"""The degree-2 statistic layout shared by the logistic and Poisson releases.

For rows xᵢ ∈ ℝᵈ and responses yᵢ the statistics are the entries of Σᵢ uᵢuᵢᵀ with
uᵢ = (1, xᵢ, yᵢ) ∈ ℝᵈ⁺² other than its constant entries: Σx, Σy, the upper triangle of
Sxx = Σ xxᵀ and Syx = Σ y·x, in the order of :func:`degree2_pairs`.  A Gaussian release of them
weights the off-diagonal entries by √2 so that the released vector's norm is the Frobenius norm
of the matrix (Kulkarni et al. 2021; Huggins, Adams & Broderick 2017).
"""

from __future__ import annotations

import numpy as np

from ..privacy.validation import as_float_array, check_symmetric

__all__ = ["degree2_sums", "freeze_stats", "stat_labels", "degree2_pairs", "degree2_vector", "unpack_degree2"]


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
