"""Compiled graphs cached on disk are keyed by the source of pm_private's Numba kernels."""

import math
import sys
from pathlib import Path

import pytest
from pytensor.link.numba.dispatch.basic import default_hash_key_from_props, numba_funcify_and_cache_key

import pm_private
from pm_private._engine.numba_cache import source_version
from pm_private.linear import frobenius
from pm_private.poisson.moments import PoissonLognormal, _poisson_lognormal_kernel
from pm_private.released.likelihood import NormalLogp
from pm_private.survival.discrete import ops as hazard_ops

frobenius._register_numba()  # registered on first use


@pytest.mark.parametrize(
    "op",
    [
        NormalLogp(),
        PoissonLognormal(23),
        frobenius.FrobeniusStatsLogp(),
        frobenius._BlasGate(),
        hazard_ops._LogitHazardLoss(),
        hazard_ops._LogitHazardLossGrad(),
    ],
    ids=lambda op: type(op).__name__,
)
def test_cache_key_includes_the_source_of_the_ops_module(op):
    _, key = numba_funcify_and_cache_key(op)
    module = sys.modules[type(op).__module__]
    assert key == default_hash_key_from_props(op, cache_version=str(source_version(module, module)))
    assert key != default_hash_key_from_props(op, cache_version="None")  # PyTensor's key without a version


def test_every_numba_implementation_registers_through_the_versioned_decorator():
    package = Path(pm_private.__file__).parent
    direct = [
        path.relative_to(package)
        for path in package.rglob("*.py")
        if path.name != "numba_cache.py" and "register_funcify" in path.read_text(encoding="utf-8")
    ]
    assert direct == []


def test_source_version_follows_the_source():
    def one():
        return 1

    def two():
        return 2

    assert source_version(one) != source_version(two)
    assert source_version(one, two) != source_version(two, one)
    # a Numba dispatcher stands for its Python function
    assert source_version(_poisson_lognormal_kernel) == source_version(_poisson_lognormal_kernel.py_func)
    assert 0 <= source_version(one) < 2**64
    # no source (a built-in module): its name and pm_private's installed version stand for it
    assert source_version(math) != source_version(sys)
