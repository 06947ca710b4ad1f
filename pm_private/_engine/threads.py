"""BLAS thread control for the library's own kernels.

Several kernels running at once (threads of a pool, Dask's threaded scheduler), or one kernel on a
machine whose cores are busy, each calling a multi-threaded BLAS oversubscribe the cores: on a loaded
2-core machine a small Cholesky factorisation ran 30–200 times slower with OpenBLAS's default
threads than with one.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

__all__ = ["single_threaded_blas"]

# BLAS runs on one thread while the chunk kernels run, one kernel per core: a multi-threaded BLAS
# call inside each of several threads oversubscribes the cores.  threadpoolctl's limit is
# process-wide, so concurrent kernels (threads of a thread pool or of Dask's threaded scheduler)
# share one limit, set by the first to enter and restored by the last to leave.
_blas_lock = threading.Lock()
_blas_users = 0
_blas_limiter = None


@contextmanager
def single_threaded_blas():
    """Context in which BLAS (numpy's OpenBLAS, MKL, …) uses one thread; nests across threads.

    The limit is the process's (threadpoolctl): other threads' BLAS calls made meanwhile run
    on one thread too, and the original limit is back when the last context exits.
    """
    global _blas_users, _blas_limiter
    from threadpoolctl import threadpool_limits

    with _blas_lock:
        if _blas_users == 0:
            _blas_limiter = threadpool_limits(1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None
