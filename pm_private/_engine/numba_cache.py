"""Numba implementations of pm_private's Ops, cached on disk under keys that follow their source.

PyTensor caches the compiled function of a graph under a key built from each Op's class name and
props; an Op registered with ``register_funcify_default_op_cache_key`` adds only what its
implementation returns.  :func:`register_numba_funcify` adds a digest of the package's source.

A kernel called from an Op's Numba implementation is compiled (and cached) for the types of the
call, and the same kernel called from the Op's ``perform`` (the C and Python backends) for the
types of that call: the implementations pass C-contiguous arrays and run-time flags
(:func:`runtime_value`), not a graph's layouts or compile-time literals, so that one compiled
kernel on disk serves every backend and every variant of an Op.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numba
import numpy as np

__all__ = ["register_numba_funcify", "runtime_value", "source_version"]


@numba.njit(cache=True)
def runtime_value(value):  # pragma: no cover
    """``value`` (a bool or an int) as a run-time value: an Op's property closed over by its Numba
    implementation is a compile-time literal, for which Numba would compile the kernel it is passed
    to once per value (and once more for ``perform``'s run-time value)."""
    return np.array([value])[0]


def source_version(root: Path | None = None) -> int:
    """A 64-bit digest of the source of every module of pm_private (or of the ``.py`` files under
    ``root``).

    A compiled graph inlines the Numba kernels its Ops call, wherever they are defined, so its key
    follows the whole package's source: a change in any kernel (or in a helper it calls) is a new
    key.  An install without sources stands for pm_private's installed version.

    Parameters
    ----------
    root : pathlib.Path, optional
        The folder whose ``.py`` files are read; default the installed pm_private package.

    Returns
    -------
    int
        The first 8 bytes of the SHA-256 of the files' relative paths and contents, little-endian.
    """
    root = Path(__file__).resolve().parents[1] if root is None else Path(root)
    digest = hashlib.sha256()
    files = sorted(root.rglob("*.py"))
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    if not files:
        digest.update(_installed_version().encode())
    return int.from_bytes(digest.digest()[:8], "little")


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pm_private")
    except PackageNotFoundError:
        return "unknown"


@functools.cache
def _package_version() -> int:
    return source_version()


def register_numba_funcify(op_type):
    """Register a Numba implementation of ``op_type`` for PyTensor's default backend, cached on
    disk under a key that changes with pm_private's source.

    PyTensor keys the compiled function of a graph by each Op's class name and props
    (``register_funcify_default_op_cache_key``), not by its implementation: after an upgrade that
    changes a kernel, a graph compiled by the old code would be loaded from the cache (at best
    failing to type, at worst computing the old function).  This decorator adds the
    :func:`source_version` of the package to the key: the compiled graph inlines kernels from
    other modules too.
    Every pm_private Op with a Numba implementation registers through it.

    Parameters
    ----------
    op_type : type
        The Op class.

    Returns
    -------
    callable
        A decorator for ``funcify(op, node=None, **kwargs)``, which returns the Numba function.
    """
    from pytensor.link.numba.dispatch.basic import register_funcify_default_op_cache_key

    def decorator(funcify):
        @functools.wraps(funcify)
        def versioned(op, node=None, **kwargs):
            return funcify(op, node=node, **kwargs), _package_version()

        register_funcify_default_op_cache_key(op_type)(versioned)
        return funcify

    return decorator
