"""The build of a model shape says that its first fit compiles until a sampler has compiled one;
later builds stay quiet."""

import json
import logging
import uuid
from pathlib import Path

import numpy as np
import pymc as pm
import pytensor

from pm_private._engine.compile_notice import announce_compilation, model_key, record_compiled


def _model(size: int, data: float = 1.0):
    with pm.Model() as model:
        x = pm.Data("x", np.full(size, data))
        mu = pm.Normal("mu", 0.0, 1.0)
        pm.Normal("y", mu, 1.0, observed=x)
    return model


def test_announces_until_a_model_of_the_shape_is_compiled(caplog):
    size = 1000 + uuid.uuid4().int % 10**6  # a shape no earlier run built
    marker = Path(pytensor.config.compiledir) / "pm_private_models" / model_key(_model(size))
    try:
        with caplog.at_level(logging.INFO, logger="pm_private"):
            first = _model(size)
            assert announce_compilation(first, "toy")
            assert announce_compilation(_model(size), "toy")  # built, never compiled: said again
            assert not marker.exists()
            first.logp_dlogp_function(ravel_inputs=True)  # what PyMC's NUTS compiles
            assert marker.exists()
            assert not announce_compilation(_model(size, data=2.0), "toy")  # other values, same shape
        assert len(caplog.records) == 2 and "first fit of this toy model compiles" in caplog.text
        assert model_key(_model(size + 1)) != model_key(_model(size))
    finally:
        marker.unlink(missing_ok=True)


def test_a_sampler_that_compiles_outside_pymc_records_it(caplog):
    size = 1000 + uuid.uuid4().int % 10**6
    marker = Path(pytensor.config.compiledir) / "pm_private_models" / model_key(_model(size))
    try:
        with caplog.at_level(logging.INFO, logger="pm_private"):
            assert announce_compilation(_model(size), "toy")
            record_compiled(_model(size))  # as pm_private.sample does after nutpie compiled
            assert not announce_compilation(_model(size), "toy")
    finally:
        marker.unlink(missing_ok=True)


def test_the_notice_quotes_the_benchmark_for_a_measured_family_only(tmp_path, monkeypatch):
    from pm_private._engine import compile_notice

    record = tmp_path / "first_fit_seconds.json"
    entry = {"cold": 61.0, "plain_cold": 12.0, "plain": "linear regression", "machine": "2 cores"}
    record.write_text(json.dumps({"families": {"linear": entry}}), encoding="utf-8")
    monkeypatch.setattr(compile_notice, "RECORD", record)
    compile_notice._first_fit_record.cache_clear()
    try:
        clause = compile_notice.expected_first_fit("linear")
        assert "61 s" in clause and "12 s" in clause and "plain PyMC linear regression" in clause
        assert compile_notice.expected_first_fit("weibull") == compile_notice._UNMEASURED
        record.write_text("not json", encoding="utf-8")  # an unreadable record gives no figures
        compile_notice._first_fit_record.cache_clear()
        assert compile_notice.expected_first_fit("linear") == compile_notice._UNMEASURED
    finally:
        compile_notice._first_fit_record.cache_clear()


def test_the_shipped_record_names_registered_families():
    from pm_private._engine.compile_notice import RECORD
    from pm_private.families import FAMILIES

    families = json.loads(RECORD.read_text(encoding="utf-8"))["families"]
    assert families and set(families) <= set(FAMILIES)
    for entry in families.values():
        assert entry["cold"] > 0 and entry["plain_cold"] > 0


def test_a_variant_the_benchmark_did_not_measure_quotes_no_figure(caplog):
    size = 1000 + uuid.uuid4().int % 10**6
    marker = Path(pytensor.config.compiledir) / "pm_private_models" / model_key(_model(size))
    try:
        with caplog.at_level(logging.INFO, logger="pm_private"):
            assert announce_compilation(_model(size), "linear", variant="Wishart covariates")
        assert "this linear (Wishart covariates) model compiles" in caplog.text
        assert "can take minutes" in caplog.text and "benchmark" not in caplog.text
    finally:
        marker.unlink(missing_ok=True)
