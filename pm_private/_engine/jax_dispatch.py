"""JAX implementations of pm_private's Ops, registered with PyTensor without importing JAX.

PyTensor turns a graph into JAX code (for numpyro, blackjax and nutpie's JAX backend) through the
single-dispatch function ``pytensor.link.jax.dispatch.jax_funcify``; an Op without a registration
fails there with ``NotImplementedError: No JAX conversion for the given Op``.  Registering needs
that module, and importing it imports JAX (more than a second), which most users of the library
never need.  :func:`register_jax_funcify` therefore keeps the registrations until PyTensor's JAX
dispatch module is imported — by a JAX sampler, by ``mode="JAX"``, or earlier — and registers them
right after it (a post-import hook on ``sys.meta_path``), or at once where it already is.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading

__all__ = ["register_jax_funcify", "register_jax_vjp"]

_DISPATCH = "pytensor.link.jax.dispatch"
_pending: list[tuple[type, object]] = []
_lock = threading.Lock()


def register_jax_funcify(op_type: type):
    """Decorator: register ``factory(op, node=None, **kwargs) -> function`` as the JAX
    implementation of ``op_type`` once PyTensor's JAX dispatch is imported.

    Parameters
    ----------
    op_type : type
        The PyTensor Op class.

    Returns
    -------
    callable
        The decorator; it returns the factory unchanged.
    """

    def decorator(factory):
        with _lock:
            _pending.append((op_type, factory))
        if _DISPATCH in sys.modules and hasattr(sys.modules[_DISPATCH], "jax_funcify"):
            _register_pending()
        else:
            _install_hook()
        return factory

    return decorator


def register_jax_vjp(vjp_op_type: type, forward, n_inputs: int, n_primals: int | None = None) -> None:
    """Register the JAX implementation of a vector–Jacobian-product Op as JAX's own VJP of the
    forward function.

    The Op's inputs are the forward's ``n_inputs`` inputs, then one cotangent per forward output;
    its outputs are the gradients with respect to the first ``n_primals`` inputs (default: all).

    Parameters
    ----------
    vjp_op_type : type
        The VJP Op class.
    forward : callable
        The forward function in ``jax.numpy``, returning a tuple of arrays.
    n_inputs : int
        The number of the forward's inputs.
    n_primals : int, optional
        How many of them (the first) the gradients are taken with respect to; default all.
    """
    primals = n_inputs if n_primals is None else n_primals

    def factory(op, node=None, **kwargs):
        import jax

        def vjp_op(*args):
            inputs, cotangents = args[:n_inputs], args[n_inputs:]
            rest = inputs[primals:]
            _, pull = jax.vjp(lambda *p: forward(*p, *rest), *inputs[:primals])
            grads = pull(tuple(cotangents))
            return grads[0] if len(grads) == 1 else grads  # one output: the array itself

        return vjp_op

    register_jax_funcify(vjp_op_type)(factory)


def _register_pending() -> None:
    from pytensor.link.jax.dispatch import jax_funcify

    with _lock:
        while _pending:
            op_type, factory = _pending.pop()
            jax_funcify.register(op_type)(factory)


class _AfterDispatchImport(importlib.abc.MetaPathFinder):
    """Finds PyTensor's JAX dispatch package as the path finder does and, once its code has run,
    registers the pending implementations."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _DISPATCH:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_then_register(module):
            run(module)
            _register_pending()

        spec.loader.exec_module = exec_then_register
        return spec


_hook = _AfterDispatchImport()


def _install_hook() -> None:
    with _lock:
        if _hook not in sys.meta_path:
            sys.meta_path.insert(0, _hook)
