"""Compiled graphs cached on disk are keyed by the source of pm_private's Numba kernels."""

from pathlib import Path

import pytest
from pytensor.link.numba.dispatch.basic import default_hash_key_from_props, numba_funcify_and_cache_key

import pm_private
from pm_private._engine.numba_cache import source_version
from pm_private.linear import frobenius
from pm_private.poisson.moments import PoissonLognormal
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
def test_cache_key_includes_the_source_of_the_package(op):
    _, key = numba_funcify_and_cache_key(op)
    assert key == default_hash_key_from_props(op, cache_version=str(source_version()))
    assert key != default_hash_key_from_props(op, cache_version="None")  # PyTensor's key without a version


def test_every_numba_implementation_registers_through_the_versioned_decorator():
    package = Path(pm_private.__file__).parent
    direct = [
        path.relative_to(package)
        for path in package.rglob("*.py")
        if path.name != "numba_cache.py" and "register_funcify" in path.read_text(encoding="utf-8")
    ]
    assert direct == []


def test_source_version_follows_every_file(tmp_path):
    """A kernel's module is not the Op's: a change anywhere in the package is a new key."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "ops.py").write_text("class Op: ...\n")
    (tmp_path / "sub" / "kernels.py").write_text("def kernel(x):\n    return x / 2\n")
    before = source_version(tmp_path)
    assert source_version(tmp_path) == before and 0 <= before < 2**64
    (tmp_path / "sub" / "kernels.py").write_text("def kernel(x):\n    return x / 3\n")
    assert source_version(tmp_path) != before
    # a file moved is a change too
    (tmp_path / "sub" / "kernels.py").rename(tmp_path / "kernels.py")
    assert source_version(tmp_path) not in (before, source_version(tmp_path / "sub"))
