"""Splits of a table into public, test and private parts that keep identical rows together."""

from __future__ import annotations

import numpy as np

__all__ = ["split_keeping_identical_rows"]


def split_keeping_identical_rows(X, rng, sizes, *, count: str = "rows") -> list[np.ndarray]:
    """Random disjoint parts of the rows of ``X`` (indices), of about the given sizes, the last part
    holding the rest, in which identical rows always fall into the same part.

    Tables such as statsmodels' ``randhie`` hold one row per person-year with person-level
    covariates: a person's years are identical rows.  A plain random split puts some of a
    person's years in the "public" part and others in the private part, so the public rows are
    rows of private people (a release refuses such public rows).  Here the groups of identical
    rows are shuffled and dealt out whole: part k takes groups until it holds at least
    ``sizes[k]`` rows (or groups, with ``count="groups"``), so a part can exceed its size by less
    than one group.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The table whose identical rows stay together.
    rng : numpy.random.Generator
        The source of the shuffle.
    sizes : sequence of int
        The least number of rows (or groups) of each part but the last.
    count : {"rows", "groups"}, default "rows"
        What ``sizes`` count: rows, or groups of identical rows (distinct rows; people, where
        a person's rows are identical).

    Returns
    -------
    list of numpy.ndarray
        ``len(sizes) + 1`` arrays of row indices, each in shuffled group order.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, the sizes are negative or add up to more than its rows (groups), or
        ``count`` is neither.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [0.0], [2.0], [1.0], [3.0]])
    >>> public, private = split_keeping_identical_rows(X, np.random.default_rng(0), [2])
    >>> sorted(set(X[public, 0]) & set(X[private, 0]))
    []
    """
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {A.shape}")
    if count not in ("rows", "groups"):
        raise ValueError(f"count must be 'rows' or 'groups', got {count!r}")
    _, group = np.unique(A, axis=0, return_inverse=True)
    group = group.ravel()
    available = A.shape[0] if count == "rows" else int(group.max(initial=-1)) + 1
    sizes = [int(size) for size in sizes]
    if any(size < 0 for size in sizes) or sum(sizes) > available:
        raise ValueError(f"sizes must be ≥ 0 and add up to at most the {available} {count}, got {sizes}")
    members = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[members]) != 0])
    bunches = np.split(members, starts[1:])
    order = rng.permutation(len(bunches))
    parts, current, filled = [], [], 0
    targets = iter(sizes)
    target = next(targets, None)
    for index in order:
        if target is not None and filled >= target:
            parts.append(np.concatenate(current) if current else np.array([], dtype=int))
            current, filled, target = [], 0, next(targets, None)
        current.append(rng.permutation(bunches[index]))
        filled += len(bunches[index]) if count == "rows" else 1
    parts.append(np.concatenate(current) if current else np.array([], dtype=int))
    while len(parts) < len(sizes) + 1:
        parts.append(np.array([], dtype=int))
    return parts
