"""Compile a model's largest cached kernels in a second process while the first compiles its graph.

Numba compiles under one lock per process, so the first fit of a model compiles its parts one
after another: PyTensor's graph (its nodes, then the function that calls them), and the kernels the
graph calls.  The kernels are compiled with ``cache=True`` and written to Numba's disk cache, where
any process finds them when it next compiles a call of theirs.  On a machine with a free core,
:func:`start_compile_worker` hands a kernel the first fit will need *late* to a second Python
process, which compiles it into that cache while the first compiles what it needs first; the first
then loads the kernel instead of compiling it (:func:`wait_for_compile_worker` waits for the worker
where the kernel is a separately compiled C entry, rather than compiling it a second time).

The worker is given a task name and nothing else: no data, no release, no shape.  It prints
nothing (its output goes to the null device), and what it writes is Numba's cache of code that
depends on the package's source only.  Where it cannot start, fails, or is not done in time, the
first process compiles the kernel itself, as it would without a worker.

A worker starts only where a core is free: at least two usable cores and a one-minute load average
that leaves one (on a machine whose cores are all busy it would slow the fit it is meant to
shorten), and not where the environment variable ``PM_PRIVATE_COMPILE_WORKER`` is ``0``.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import threading

__all__ = ["TASKS", "free_core", "start_compile_worker", "wait_for_compile_worker"]

#: The worker's tasks: a name and the function (``module:function``, called with no argument) that
#: compiles or loads the task's kernels into Numba's disk cache.
TASKS = {
    "survival_regression": "pm_private.survival.regression.kernel_likelihood:logp_grad_entry",
    "degree2_moments_vjp": "pm_private.released.moment_ops:compile_vjp_kernel",
}

#: The variable that turns the worker off where it is ``0``.
SWITCH = "PM_PRIVATE_COMPILE_WORKER"

_lock = threading.Lock()
_running: dict[str, subprocess.Popen] = {}


def free_core() -> bool:
    """Whether a second process would find a core free: at least two cores usable by this process
    and a one-minute load average below that count less one half."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # not available on this system
        load = 0.0
    return cores >= 2 and load < cores - 0.5


def start_compile_worker(task: str) -> bool:
    """Start a process that compiles ``task``'s kernels into Numba's disk cache, unless one is
    running or no core is free.

    Parameters
    ----------
    task : str
        A key of :data:`TASKS`.

    Returns
    -------
    bool
        True when a worker for ``task`` runs (started now or before).

    Raises
    ------
    ValueError
        If ``task`` is not a key of :data:`TASKS`.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    with _lock:
        running = _running.get(task)
        if running is not None and running.poll() is None:
            return True
        if os.environ.get(SWITCH, "1") == "0" or not free_core():
            return False
        try:
            _running[task] = subprocess.Popen(
                [sys.executable, "-m", __name__, task],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError:
            return False
        return True


def wait_for_compile_worker(task: str, timeout: float = 600.0) -> None:
    """Wait until the worker of ``task`` (if this process started one) has finished, at most
    ``timeout`` seconds: then compiling its kernels here loads them from the disk cache."""
    with _lock:
        running = _running.pop(task, None)
    if running is not None:
        try:
            running.wait(timeout)
        except subprocess.TimeoutExpired:
            pass


def _run(task: str) -> None:
    module, function = TASKS[task].split(":")
    getattr(importlib.import_module(module), function)()


if __name__ == "__main__":  # pragma: no cover  (the worker process; its tests run it)
    _run(sys.argv[1])
