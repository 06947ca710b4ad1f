"""Discrete-time survival sums (Nguyên & Hui 2017a) on Dask collections.

The records are validated once per partition and kept where they live; every Newton step of the
fit is one pass in which each partition returns its loss, gradient (and Hessian) sums and the
client adds them in a tree.  Nothing here draws noise or touches an accountant.
"""

from __future__ import annotations

import dask
import numpy as np
from dask import delayed

from ..._engine.dask import aligned_blocks, column_count, split_block, tree_sum
from ..._engine.threads import single_threaded_blas
from .data import BasisDimensions, private_records
from .fit import loss_sums
from .spline import interval_basis

__all__ = ["PartitionedRecords", "partitioned_records"]


def _partition_records(block, width, q, e, partition):
    """Validated records of one partition (rows in the unit ball, times in [0, 1], events 0/1)."""
    X, time, event = split_block(block, width, 3)
    if len(X) == 0:
        return None
    try:
        return private_records(X, time, event, q, e)
    except ValueError as error:
        raise ValueError(f"{error} (in partition {partition})") from None


def _record_count(records) -> int:
    return 0 if records is None else records.n


def _partition_loss_sums(f, records, link, hessian):
    with single_threaded_blas():
        return loss_sums(f, records, link, hessian)


def _add_loss_sums(*parts):
    return tuple(sum(values) for values in zip(*parts, strict=True))


class PartitionedRecords(BasisDimensions):
    """Discrete-time records held as validated Dask partitions, with the public basis A (q, e).

    Built by :func:`partitioned_records`; :func:`pm_private.survival.loss_and_grad` and
    :func:`pm_private.survival.fit_discrete_time` accept it in place of a
    :class:`pm_private.survival.DiscreteTimeData`: each evaluation is one pass in which every
    partition returns its loss, gradient (and Hessian) sums and the client adds them.
    """

    def __init__(self, parts: list, n: int, d: int, basis: np.ndarray):
        self.parts, self.n, self.d, self.basis = parts, n, d, basis

    def loss_sums(self, f, link: str, hessian: bool):
        """(Σℓᵢ, Σ∇ℓᵢ[, Σ∇²ℓᵢ]) over all partitions: per-partition sums, added in a tree."""
        f = np.asarray(f, dtype=np.float64)
        parts = [delayed(_partition_loss_sums, pure=True)(f, part, link, hessian) for part in self.parts]
        with single_threaded_blas():
            (total,) = dask.compute(tree_sum(parts, _add_loss_sums))
        return total


def partitioned_records(X, time, event, *, q: int, e: int) -> PartitionedRecords:
    """Validate Dask collections of discrete-time records once and keep them where they live.

    X (n, d) with rows in the unit ball, ``time`` in [0, 1] and ``event`` in {0, 1}, partitioned
    alike.  Every partition is validated as :func:`pm_private.survival.output_perturbation`
    validates an in-memory array; the validated partitions are persisted (in the workers'
    memory, or the local process's with the local schedulers) for the Newton iterations of the
    fit, each of which is one pass.  Raises ValueError naming the partition of a bad record.
    """
    d = column_count(X)
    blocks, width = aligned_blocks({"X": X, "time": time, "event": event})
    parts = [delayed(_partition_records, pure=True)(block, width, q, e, k) for k, block in enumerate(blocks)]
    parts = list(dask.persist(*parts))
    counts = dask.compute(*[delayed(_record_count, pure=True)(part) for part in parts])
    parts = [part for part, count in zip(parts, counts, strict=True) if count]
    if not parts:
        raise ValueError("X must have at least one row, got 0")
    return PartitionedRecords(parts, int(sum(counts)), d, interval_basis(int(q), int(e)))
