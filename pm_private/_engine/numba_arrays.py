"""Array writes for Numba kernels, in loops that keep a kernel's first compile short.

Numba compiles an array assignment (``out[k] = array``) together with the formatting of its
shape-mismatch message, string code that took 2–3 s of a kernel's first compile on a 2-core
machine, and ``numpy.outer`` through its general implementation (about 1 s); both are optimised
again in every kernel that calls the one that holds them, since Numba links a callee's code into
its caller's module and optimises the whole.  :func:`copy_into` and :func:`outer` do the same work
in plain loops.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["copy_into", "outer"]


@numba.njit(cache=True)
def copy_into(out, source):  # pragma: no cover
    """``out[...] = source`` for C-contiguous arrays of one shape, by a loop over their entries."""
    flat_out, flat_source = out.reshape(out.size), source.reshape(source.size)
    for i in range(flat_out.size):
        flat_out[i] = flat_source[i]


@numba.njit(cache=True)
def outer(a, b):  # pragma: no cover
    """``numpy.outer(a, b)`` of two vectors, by loops."""
    out = np.empty((a.size, b.size))
    for i in range(a.size):
        for j in range(b.size):
            out[i, j] = a[i] * b[j]
    return out
