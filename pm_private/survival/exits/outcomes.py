"""Each person's exit from a survival study: the public intervals and cells, and the outcome.

The shared first step of the exit table (:mod:`pm_private.survival.exits.release`) and of the
survival regression's statistics: public ``edges`` and ``cells`` checked without reading a
record, then each person's cell index and exit outcome (event or censoring in interval j, or
alive at the horizon), and the counts of an exit table, in memory or partition by partition.
A cell label outside the public cells puts its person in no cell (see :func:`exit_outcomes`).
"""

from __future__ import annotations

import numpy as np

from ..data import check_survival

__all__ = ["ALL", "check_cells", "check_edges", "dask_exit_counts", "exit_counts", "exit_outcomes"]

#: The label of the single cell of a table without cells.
ALL = "all"


def check_edges(edges) -> np.ndarray:
    """The public interval ends t₁ < t₂ < … < t_J = τ, checked: finite, > 0, strictly increasing.

    Parameters
    ----------
    edges : array_like, shape (J,)
        The right ends of the J intervals; the last is the horizon τ.  The first interval starts at 0.

    Returns
    -------
    numpy.ndarray
        float64 ends, read-only.

    Raises
    ------
    ValueError
        Naming ``edges``: empty, not 1-D, not finite, not > 0 or not strictly increasing.
    """
    try:
        ends = np.array(edges, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("edges must be numbers: the right ends of the public intervals") from None
    if ends.ndim != 1 or ends.size == 0:
        raise ValueError(f"edges must be a non-empty 1-D sequence of interval ends, got shape {ends.shape}")
    if not np.isfinite(ends).all() or ends[0] <= 0 or np.any(np.diff(ends) <= 0):
        raise ValueError("edges must be finite, > 0 and strictly increasing (the first interval starts at 0)")
    ends.flags.writeable = False
    return ends


def check_cells(cells) -> tuple[str, ...]:
    """The public cell labels, checked: distinct strings, at least one; None gives the one cell ``"all"``.

    Parameters
    ----------
    cells : sequence of str or None
        The labels.

    Returns
    -------
    tuple of str
        The labels.

    Raises
    ------
    ValueError
        Naming ``cells``.
    """
    if cells is None:
        return (ALL,)
    if isinstance(cells, str):
        raise ValueError("cells must be a sequence of public cell labels, not one string")
    try:
        labels = tuple(c if isinstance(c, str) else None for c in cells)
    except TypeError:
        raise ValueError(f"cells must be a sequence of public cell labels, got {type(cells).__name__}") from None
    if None in labels:
        raise ValueError("cells must be strings: the public cell labels")
    if not labels or len(set(labels)) != len(labels):
        raise ValueError(f"cells must be distinct public labels, at least one, got {list(labels)}")
    return labels


def _cell_codes(cell, cells: tuple[str, ...], n: int) -> np.ndarray:
    """Index into ``cells`` of each person's (private) cell label; −1 for a label not among them.

    A label outside the public ``cells`` is not refused: whether the data hold one is a fact
    about the private data, and ``cells`` is chosen by the caller, so a refusal would answer
    "is anyone in the left-out cell" for free.  Such a person is in no cell (each count of the
    release is over the people of its cell; n still counts everyone), as OpenDP's counts by
    category and Tumult's group-by keys drop records outside the public keys.  Only the schema is
    checked: a categorical ``cell`` whose declared categories are not all among ``cells`` is
    refused from its dtype, without reading a row.
    """
    if cell is None:
        if cells != (ALL,):
            raise ValueError("cell is needed when cells are given: each person's cell label")
        return np.zeros(n, dtype=np.int64)
    if cells == (ALL,):
        raise ValueError("cells: give the public cell labels when cell is given")
    categories = getattr(getattr(cell, "dtype", None), "categories", None)  # a pandas categorical's schema
    if categories is not None and not {str(c) for c in categories} <= set(cells):
        raise ValueError("cell: its categorical dtype declares categories that are not among the public cells")
    try:
        labels = np.asarray(cell).astype(str)
    except (TypeError, ValueError):
        raise ValueError(f"cell must hold one label per person ({n})") from None
    if labels.shape != (n,):
        raise ValueError(f"cell must hold one label per person ({n}), got shape {labels.shape}")
    lookup = {label: k for k, label in enumerate(cells)}
    return np.fromiter((lookup.get(v, -1) for v in labels), dtype=np.int64, count=n)


def exit_outcomes(
    time, event, cell, ends: np.ndarray, cells: tuple[str, ...], *, allow_empty: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Each person's cell index (−1: a label not among ``cells``, in no cell) and exit outcome:
    j (event in interval j), J + j (censoring in interval j) or 2J (event-free at the horizon),
    0-based.

    A time t ≤ τ falls in the interval j with t_{j−1} < t ≤ t_j (t = 0 in the first); t > τ counts
    as alive at τ whatever its event flag (administrative censoring at the horizon), and so does a
    censoring at t = τ (followed event-free to the horizon, as a censoring at τ means; an event at
    τ is an event of the last interval).  ``allow_empty`` as for :func:`check_survival`."""
    time, event = check_survival(time, event, allow_empty=allow_empty)
    codes = _cell_codes(cell, cells, time.size)
    J = ends.size
    interval = np.searchsorted(ends, time, side="left")  # t_{j-1} < t <= t_j -> j (0-based)
    beyond = (interval >= J) | ((time >= ends[-1]) & (event == 0))
    return codes, np.where(beyond, 2 * J, np.where(event == 1, interval, J + interval))


def exit_counts(time, event, cell, ends: np.ndarray, cells: tuple[str, ...], *, allow_empty: bool = False):
    """(events, censored, survivors) of the records, one pass of counting (see the module notes and
    :func:`exit_outcomes`; people in no cell are not counted)."""
    codes, outcome = exit_outcomes(time, event, cell, ends, cells, allow_empty=allow_empty)
    kept = codes >= 0
    codes, outcome = codes[kept], outcome[kept]
    K, J = len(cells), ends.size
    counts = np.bincount(codes * (2 * J + 1) + outcome, minlength=K * (2 * J + 1)).reshape(K, 2 * J + 1)
    return counts[:, :J], counts[:, J : 2 * J], counts[:, 2 * J]


def _partition_counts(block, width, ends, cells, partition):
    from ..._engine.dask import split_block

    parts = split_block(block, width, 3)
    time = np.ravel(parts[0])
    if time.size == 0:
        return np.zeros((len(cells), 2 * ends.size + 1), dtype=np.int64), 0
    try:
        events, censored, survivors = exit_counts(time, parts[1], parts[2] if len(parts) > 2 else None, ends, cells)
    except ValueError as error:
        raise ValueError(f"{error} (in partition {partition})") from None
    return np.column_stack([events, censored, survivors]), time.size


def _add_counts(*parts):
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def dask_exit_counts(time, event, cell, ends, cells):
    """Exit counts of Dask collections: each partition counts its people, the client adds the tables."""
    import dask
    from dask import delayed

    from ..._engine.dask import aligned_blocks, tree_sum

    columns = {"time": time, "event": event} | ({} if cell is None else {"cell": cell})
    if cell is None and cells != (ALL,):
        raise ValueError("cell is needed when cells are given: each person's cell label")
    blocks, width = aligned_blocks(columns)
    parts = [delayed(_partition_counts, pure=True)(b, width, ends, cells, k) for k, b in enumerate(blocks)]
    ((table, n),) = dask.compute(tree_sum(parts, _add_counts))
    J = ends.size
    return table[:, :J], table[:, J : 2 * J], table[:, 2 * J], int(n)
