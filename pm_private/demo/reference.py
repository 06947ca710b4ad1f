"""The non-private answers the demo prints beside the private ones, in plain NumPy: ordinary least
squares, the Kaplan–Meier estimator (Kaplan & Meier 1958) and Cox's proportional-hazards
regression (Cox 1972) with Breslow's handling of tied times (Breslow 1974).

They read the records themselves, so they are what a data holder could compute and must not
publish; the demo prints them only because its data are public.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cox_regression", "kaplan_meier", "least_squares"]


def least_squares(X, y) -> np.ndarray:
    """Ordinary least squares with an intercept.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)

    Returns
    -------
    numpy.ndarray, shape (d + 1,)
        The intercept, then one slope per column of ``X``.
    """
    X = np.asarray(X, float)
    design = np.column_stack([np.ones(len(X)), X])
    return np.linalg.lstsq(design, np.asarray(y, float), rcond=None)[0]


def kaplan_meier(time, event) -> tuple[np.ndarray, np.ndarray]:
    """The Kaplan–Meier estimate of the survival function.

    Parameters
    ----------
    time : array_like, shape (n,)
        Follow-up times.
    event : array_like, shape (n,)
        1 where the event was observed, 0 where the follow-up was censored.

    Returns
    -------
    times, survival : numpy.ndarray
        The distinct event times (with 0 first) and S just after each (1 at 0): a step function.
    """
    time, event = np.asarray(time, float), np.asarray(event, bool)
    times = np.unique(time)
    at_risk = len(time) - np.searchsorted(np.sort(time), times)
    deaths = np.bincount(np.searchsorted(times, time[event]), minlength=len(times))
    keep = deaths > 0
    survival = np.cumprod(1.0 - deaths[keep] / at_risk[keep])
    return np.concatenate([[0.0], times[keep]]), np.concatenate([[1.0], survival])


def cox_regression(time, event, X, *, steps: int = 50, tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Cox's proportional-hazards regression by Newton's method on Breslow's partial likelihood.

    Parameters
    ----------
    time, event : array_like, shape (n,)
        Follow-up times and event flags (1 = event observed).
    X : array_like, shape (n, d)
        Covariates.
    steps : int, default 50
        The most Newton steps.
    tol : float, default 1e-10
        Stop once a step changes no coefficient by more than this.

    Returns
    -------
    beta, se : numpy.ndarray, shape (d,)
        The log hazard ratios and their standard errors (the inverse observed information).
    """
    order = np.argsort(np.asarray(time, float), kind="stable")[::-1]  # latest first: risk sets accumulate
    t = np.asarray(time, float)[order]
    d = np.asarray(event, bool)[order]
    X = np.asarray(X, float).reshape(len(t), -1)[order]
    last = np.r_[t[1:] != t[:-1], True]  # the last row of each tied time holds its whole risk set
    beta = np.zeros(X.shape[1])
    for _ in range(steps):
        w = np.exp(X @ beta)
        s0 = np.cumsum(w)[last]
        s1 = np.cumsum(w[:, None] * X, axis=0)[last]
        s2 = np.cumsum(w[:, None, None] * X[:, :, None] * X[:, None, :], axis=0)[last]
        deaths = np.add.reduceat(d.astype(float), np.flatnonzero(np.r_[True, last[:-1]]))
        mean = s1 / s0[:, None]
        gradient = X[d].sum(axis=0) - deaths @ mean
        information = np.einsum("k,kij->ij", deaths / s0, s2) - np.einsum("k,ki,kj->ij", deaths, mean, mean)
        step = np.linalg.solve(information, gradient)
        beta = beta + step
        if np.max(np.abs(step)) < tol:
            break
    return beta, np.sqrt(np.diag(np.linalg.inv(information)))
