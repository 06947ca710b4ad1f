"""BLAS thread control for the library's own kernels.

Several kernels running at once (threads of a pool, Dask's threaded scheduler), or one kernel on a
machine whose cores are busy, each calling a multi-threaded BLAS oversubscribe the cores: on a loaded
2-core machine a small Cholesky factorisation ran 30–200 times slower with OpenBLAS's default
threads than with one.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from contextlib import contextmanager

__all__ = ["hold_one_blas_thread", "hold_one_blas_thread_while", "single_threaded_blas"]

# Several kernels in threads of one process share one process-wide limit (threadpoolctl's), set by
# the first to enter and restored by the last to leave.  The libraries are found once per process
# (a fresh threadpoolctl limiter inspects every loaded library, about 2 ms a call), so entering
# and leaving costs a few microseconds.  A BLAS loaded later (SciPy's own OpenBLAS arrives with
# ``scipy.linalg``, after numpy's) comes with new modules, so the search runs again whenever the
# count of imported modules has changed.
_blas_lock = threading.Lock()
_blas_libraries: list = []
_blas_key: tuple[int, int] | None = None  # (process, imported modules) of the last search
_held: list[tuple[object, int]] | None = None  # (library, original threads) while the process limit holds
_held_pid: int | None = None
_holders_alive = 0
_call_users = 0
_call_saved: list[tuple[object, int]] = []


def _libraries() -> list:
    global _blas_libraries, _blas_key
    key = (os.getpid(), len(sys.modules))
    if _blas_key != key:
        from threadpoolctl import ThreadpoolController

        _blas_libraries = ThreadpoolController().select(user_api="blas").lib_controllers
        _blas_key = (os.getpid(), len(sys.modules))  # threadpoolctl's own imports counted
    return _blas_libraries


def _limit(libraries) -> list[tuple[object, int]]:
    saved = [(lib, lib.get_num_threads()) for lib in libraries]
    for lib, threads in saved:
        if threads != 1:
            lib.set_num_threads(1)
    return saved


def _restore(saved) -> None:
    for lib, threads in saved:
        if threads != 1:
            lib.set_num_threads(threads)


def _process_limit_held() -> bool:
    return _held is not None and _held_pid == os.getpid()


def hold_one_blas_thread() -> None:
    """Limit BLAS to one thread in this process (until the last model is collected); applied
    again if the threads were raised since, the original counts kept for the restore."""
    global _held, _held_pid
    with _blas_lock:
        if _process_limit_held():  # limit again; a library loaded since joins the restore list
            known = {lib.filepath for lib, _ in _held}
            _held += [entry for entry in _limit(_libraries()) if entry[0].filepath not in known]
        else:
            _held, _held_pid = _limit(_libraries()), os.getpid()


def hold_one_blas_thread_while(obj) -> None:
    """Hold the process limit while ``obj`` is alive (and while other held objects are)."""
    global _holders_alive
    hold_one_blas_thread()
    with _blas_lock:
        _holders_alive += 1
    weakref.finalize(obj, _release_holder)


def _release_holder() -> None:
    """Finaliser of a held object: the last one alive restores the original BLAS threads."""
    global _holders_alive, _held
    with _blas_lock:
        _holders_alive -= 1
        if _holders_alive == 0 and _process_limit_held():
            _restore(_held)
            _held = None


@contextmanager
def single_threaded_blas():
    """Context in which BLAS (numpy's and SciPy's OpenBLAS, MKL, …) uses one thread; nests across
    threads, and costs nothing while :func:`hold_one_blas_thread` holds the process limit.

    The limit is the process's: other threads' BLAS calls made meanwhile run on one thread too,
    and the original counts are back when the last context exits."""
    global _call_users, _call_saved
    if _process_limit_held():
        yield
        return
    with _blas_lock:
        if _call_users == 0:
            _call_saved = _limit(_libraries())
        _call_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _call_users -= 1
            if _call_users == 0:
                _restore(_call_saved)
