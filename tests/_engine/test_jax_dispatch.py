"""The JAX implementations are registered when PyTensor's JAX dispatch is imported, not before."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("jax")


def test_building_a_model_leaves_jax_unimported_and_importing_the_dispatch_registers_every_op():
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import pm_private as pp
        from pm_private.released.likelihood import NormalLogp
        from pm_private.poisson.moments import PoissonLognormal
        from pm_private.linear.frobenius import FrobeniusStatsLogp, _BlasGate
        from pm_private.survival.discrete.ops import _LogitHazardLoss, _LogitHazardLossGrad

        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 2))
        y = rng.uniform(size=300) < 0.5
        pp.logistic_model(pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, rng=0))
        assert "jax" not in sys.modules, "building a model imported JAX"

        from pytensor.link.jax.dispatch import jax_funcify

        default = jax_funcify.dispatch(object)
        ops = (NormalLogp, PoissonLognormal, FrobeniusStatsLogp, _BlasGate, _LogitHazardLoss, _LogitHazardLossGrad)
        missing = [op.__name__ for op in ops if jax_funcify.dispatch(op) is default]
        assert not missing, missing
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
