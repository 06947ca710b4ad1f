"""The compile worker compiles a kernel into Numba's disk cache in a second process, starts only
where a core is free and it is not turned off, and is waited for."""

import pytest

from pm_private._engine import compile_worker
from pm_private._engine.compile_worker import TASKS, start_compile_worker, wait_for_compile_worker


def test_an_unknown_task_is_refused_by_name():
    with pytest.raises(ValueError, match="task must be one of"):
        start_compile_worker("no_such_kernel")


def test_no_worker_where_it_is_turned_off_or_no_core_is_free(monkeypatch):
    started = []
    monkeypatch.setattr(compile_worker.subprocess, "Popen", lambda *a, **k: started.append(a))
    monkeypatch.setattr(compile_worker, "free_core", lambda: True)
    monkeypatch.setenv(compile_worker.SWITCH, "0")
    assert not start_compile_worker("degree2_moments_vjp")
    monkeypatch.setenv(compile_worker.SWITCH, "1")
    monkeypatch.setattr(compile_worker, "free_core", lambda: False)
    assert not start_compile_worker("degree2_moments_vjp")
    assert started == []


def test_a_free_core_needs_two_cores_and_a_load_that_leaves_one(monkeypatch):
    monkeypatch.setattr(compile_worker.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(compile_worker.os, "getloadavg", lambda: (0.4, 0.0, 0.0))
    assert compile_worker.free_core()
    monkeypatch.setattr(compile_worker.os, "getloadavg", lambda: (1.6, 0.0, 0.0))
    assert not compile_worker.free_core()
    monkeypatch.setattr(compile_worker.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(compile_worker.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert not compile_worker.free_core()


def test_the_worker_writes_the_kernel_to_the_disk_cache_and_is_waited_for(monkeypatch, tmp_path):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))  # the worker inherits it: an empty cache
    monkeypatch.setenv(compile_worker.SWITCH, "1")
    monkeypatch.setattr(compile_worker, "free_core", lambda: True)
    assert start_compile_worker("degree2_moments_vjp")
    worker = compile_worker._running["degree2_moments_vjp"]
    assert start_compile_worker("degree2_moments_vjp")  # running: no second process
    assert compile_worker._running["degree2_moments_vjp"] is worker
    wait_for_compile_worker("degree2_moments_vjp")
    assert worker.returncode == 0
    assert "degree2_moments_vjp" not in compile_worker._running
    cached = [p.name for p in tmp_path.rglob("*.nbc")]
    assert any(name.startswith("moment_ops.degree2_moments_vjp_kernel") for name in cached), cached


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_names_a_function_that_exists(task):
    import importlib

    module, function = TASKS[task].split(":")
    assert callable(getattr(importlib.import_module(module), function))
