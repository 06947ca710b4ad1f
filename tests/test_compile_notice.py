"""The first build of a model shape says that its first fit compiles; later builds stay quiet."""

import logging
import uuid
from pathlib import Path

import numpy as np
import pymc as pm
import pytensor

from pm_private._engine.compile_notice import announce_compilation, model_key


def _model(size: int, data: float = 1.0):
    with pm.Model() as model:
        x = pm.Data("x", np.full(size, data))
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("y", mu, 1.0, observed=x)
    return model


def test_announces_once_per_shape(caplog):
    size = 1000 + uuid.uuid4().int % 10**6  # a shape no earlier run built
    marker = Path(pytensor.config.compiledir) / "pm_private_models" / model_key(_model(size))
    try:
        with caplog.at_level(logging.INFO, logger="pm_private"):
            assert announce_compilation(_model(size), "toy")
            assert not announce_compilation(_model(size, data=2.0), "toy")  # other values, same shape
        assert len(caplog.records) == 1 and "first fit of this toy model compiles" in caplog.text
        assert model_key(_model(size + 1)) != model_key(_model(size))
    finally:
        marker.unlink(missing_ok=True)
