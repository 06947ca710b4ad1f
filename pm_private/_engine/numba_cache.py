"""Numba implementations of pm_private's Ops, cached on disk under keys that follow their source.

PyTensor caches the compiled function of a graph under a key built from each Op's class name and
props; an Op registered with ``register_funcify_default_op_cache_key`` adds only what its
implementation returns.  :func:`register_numba_funcify` adds a digest of the source.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import sys

__all__ = ["register_numba_funcify", "source_version"]


def source_version(*objects) -> int:
    """A 64-bit digest of the source code of ``objects`` (modules, classes or functions).

    Parameters
    ----------
    *objects
        Anything ``inspect.getsource`` reads; a Numba dispatcher stands for its Python function.
        An object without source (a bytecode-only install, a built-in) stands for its name and
        the installed version of pm_private.

    Returns
    -------
    int
        The first 8 bytes of the SHA-256 of the sources, little-endian: it changes whenever any
        of the sources does.
    """
    digest = hashlib.sha256()
    for obj in objects:
        obj = getattr(obj, "py_func", obj)
        try:
            source = inspect.getsource(obj)
        except (OSError, TypeError):
            source = f"{getattr(obj, '__name__', repr(obj))} {_installed_version()}"
        digest.update(source.encode())
    return int.from_bytes(digest.digest()[:8], "little")


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pm_private")
    except PackageNotFoundError:
        return "unknown"


def register_numba_funcify(op_type):
    """Register a Numba implementation of ``op_type`` for PyTensor's default backend, cached on
    disk under a key that changes with pm_private's source.

    PyTensor keys the compiled function of a graph by each Op's class name and props
    (``register_funcify_default_op_cache_key``), not by its implementation: after an upgrade that
    changes a kernel, a graph compiled by the old code would be loaded from the cache (at best
    failing to type, at worst computing the old function).  This decorator adds the
    :func:`source_version` of the modules that define the Op and the implementation to the key.
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
        @functools.cache
        def version() -> int:
            return source_version(sys.modules[op_type.__module__], sys.modules[funcify.__module__])

        @functools.wraps(funcify)
        def versioned(op, node=None, **kwargs):
            return funcify(op, node=node, **kwargs), version()

        register_funcify_default_op_cache_key(op_type)(versioned)
        return funcify

    return decorator
