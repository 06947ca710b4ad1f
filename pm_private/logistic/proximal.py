"""Elastic-net logistic regression solved by accelerated proximal gradient (FISTA with restart).

Each column k of the batch is the convex problem

    F_k(θ) = (1/n) Σᵢ log(1 + exp(−yᵢ xᵢᵀθ)) + ½ l2_k ‖θ‖² + l1_k Σ_{j ∈ J} |θⱼ| + g_kᵀθ,

with yᵢ ∈ {−1, 1}, J the ℓ1-penalised coordinates (an intercept column is left out of J) and
g_k a linear term (the objective-perturbation noise of Yu et al. (2014), zero when non-private).
The smooth part has gradient Lipschitz constant L_k ≤ ‖X‖₂²/(4n) + l2_k ≤ c + l2_k, with c a
public bound on ‖xᵢ‖₂²/4 when one is given (the private mechanisms pass it, so that the
solver's path depends on the data only through the gradients), so FISTA with step
1/L_k and the gradient-based adaptive restart of O'Donoghue & Candès (2015) converges
linearly when l2_k > 0.  The prox of the ℓ1 term is soft thresholding.  Solving several
columns at once shares the X @ Θ products (penalty grids, private selection).

Convergence is certified by the KKT conditions: the minimum-norm subgradient

    sⱼ = ∇ⱼf + l1 sign(θⱼ)            if θⱼ ≠ 0 (or j ∉ J, with l1 = 0),
    sⱼ = max(|∇ⱼf| − l1, 0)           if θⱼ = 0,

must satisfy max_j |sⱼ| ≤ tol for every column; otherwise :class:`~pm_private.privacy.ConvergenceError`, whose
message carries no data-dependent value (a private mechanism charges its budget before it
propagates, see :mod:`pm_private.privacy.release`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log1p

from ..privacy.release import ConvergenceError

__all__ = [
    "ConvergenceError",
    "SolverResult",
    "kkt_residual",
    "logistic_objective",
    "softplus",
    "solve_elastic_net_logistic",
]

_CHECK_EVERY = 10


class SolverResult:
    """Minimisers ``theta`` (s × k), iterations used and the final KKT residual of each column.

    What :func:`solve_elastic_net_logistic` returns.  The iteration count and the residuals
    depend on the data: a private mechanism keeps them to itself and releases only the
    minimiser.

    Parameters
    ----------
    theta : numpy.ndarray of shape (s, k)
        The minimiser of each of the k problems, one per column.
    n_iter : int
        The number of iterations run (a multiple of the interval at which convergence is
        checked).
    residual : numpy.ndarray of shape (k,)
        The final KKT residual max_j |sⱼ| of each column (module docstring), ≤ ``tol``.
    """

    def __init__(self, theta: np.ndarray, n_iter: int, residual: np.ndarray):
        self.theta = theta
        self.n_iter = n_iter
        self.residual = residual


def softplus(z: np.ndarray) -> np.ndarray:
    """log(1 + e^z) without overflow.

    Evaluated as max(z, 0) + log1p(e^{−|z|}), accurate for every finite z.

    Parameters
    ----------
    z : numpy.ndarray
        Real values (any shape; a scalar gives a scalar).

    Returns
    -------
    numpy.ndarray
        log(1 + e^z), elementwise, of the shape of ``z``.
    """
    return np.maximum(z, 0.0) + log1p(np.exp(-np.abs(z)))


def logistic_objective(theta, X, y, l2, l1, linear=None, l1_mask=None) -> np.ndarray:
    """F_k(θ_k) of the module docstring for each column of ``theta`` (s × k)."""
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64).T).T
    l2, l1, linear, l1_mask = _broadcast(theta.shape, l2, l1, linear, l1_mask)
    margins = y[:, None] * (X @ theta)
    loss = softplus(-margins).mean(axis=0)
    return (
        loss
        + 0.5 * l2 * np.einsum("jk,jk->k", theta, theta)
        + l1 * np.abs(theta[l1_mask]).sum(axis=0)
        + np.einsum("jk,jk->k", linear, theta)
    )


def _broadcast(shape, l2, l1, linear, l1_mask):
    s, k = shape
    l2 = np.broadcast_to(np.asarray(l2, dtype=np.float64), (k,))
    l1 = np.broadcast_to(np.asarray(l1, dtype=np.float64), (k,))
    linear = np.zeros((s, k)) if linear is None else np.asarray(linear, dtype=np.float64).reshape(s, -1)
    linear = np.broadcast_to(linear, (s, k))
    l1_mask = np.ones(s, dtype=bool) if l1_mask is None else np.asarray(l1_mask, dtype=bool)
    return l2, l1, linear, l1_mask


def _smooth_gradient(theta, X, y, l2, linear):
    """∇ of (1/n)Σ log(1+exp(−y xᵀθ)) + ½ l2‖θ‖² + gᵀθ, column-wise."""
    weights = -y[:, None] * expit(-y[:, None] * (X @ theta))
    return X.T @ weights / X.shape[0] + l2 * theta + linear


def _kkt(theta, grad, l1, l1_mask):
    """Minimum-norm subgradient, column-wise (see module docstring)."""
    penalty = np.where(l1_mask[:, None], l1, 0.0)
    at_zero = (theta == 0) & l1_mask[:, None]
    sub = np.where(at_zero, np.maximum(np.abs(grad) - penalty, 0.0), grad + penalty * np.sign(theta))
    return np.abs(sub).max(axis=0)


def kkt_residual(theta, X, y, l2, l1, linear=None, l1_mask=None) -> np.ndarray:
    """max_j |minimum-norm subgradient of F_k at θ_k| per column: 0 exactly at the minimiser."""
    theta = np.atleast_2d(np.asarray(theta, dtype=np.float64).T).T
    l2, l1, linear, l1_mask = _broadcast(theta.shape, l2, l1, linear, l1_mask)
    return _kkt(theta, _smooth_gradient(theta, X, y, l2, linear), l1, l1_mask)


def solve_elastic_net_logistic(
    X: np.ndarray,
    y: np.ndarray,
    l2,
    l1,
    linear=None,
    l1_mask=None,
    *,
    tol: float = 1e-10,
    max_iter: int = 100_000,
    hessian_bound: float | None = None,
) -> SolverResult:
    """Minimise F_k for every column k (module docstring); X is n × s, y ∈ {−1, 1}ⁿ.

    Accelerated proximal gradient (FISTA) with the adaptive restart of O'Donoghue & Candès
    (2015), stopped when the KKT residual of every column is ≤ ``tol``.  The k problems share
    the data and are solved together; k is the largest of the number of columns of
    ``linear`` and the lengths of ``l2`` and ``l1``.

    Parameters
    ----------
    X : numpy.ndarray of shape (n, s)
        The design matrix (an intercept is a constant-1 column, left out of ``l1_mask``).
    y : numpy.ndarray of shape (n,)
        The labels, in {−1, 1}.
    l2 : float or numpy.ndarray of shape (k,)
        The ridge strength of each problem; every one must be > 0 (strong convexity, so the
        minimiser is unique).
    l1 : float or numpy.ndarray of shape (k,)
        The ℓ1 strength of each problem, ≥ 0.
    linear : numpy.ndarray of shape (s, k) or (s,), optional
        The linear term g_k of each problem (the objective-perturbation noise); zero by
        default.
    l1_mask : numpy.ndarray of shape (s,), optional
        Boolean: the coordinates the ℓ1 term penalises (default: all).
    tol : float, default 1e-10
        The KKT tolerance every column must reach.
    max_iter : int, default 100000
        The iteration cap.
    hessian_bound : float, optional
        A public c ≥ ‖xᵢ‖₂²/4 for every row: the step is then 1/(c + l2), set without looking
        at ``X``.  By default the step is 1/(‖X‖₂²/(4n) + l2).

    Returns
    -------
    SolverResult
        The minimisers (s × k), the number of iterations and the final KKT residuals.

    Raises
    ------
    ValueError
        If some ``l2`` is not > 0.
    ConvergenceError
        If the KKT residual of some column is still above ``tol`` after ``max_iter``
        iterations; the message carries no data-dependent value.
    """
    n, s = X.shape
    k = 1 if linear is None else np.asarray(linear).reshape(s, -1).shape[1]
    k = max(k, np.size(l2), np.size(l1))
    l2, l1, linear, l1_mask = _broadcast((s, k), l2, l1, linear, l1_mask)
    if np.any(l2 <= 0):
        raise ValueError(f"l2 must be > 0 for every problem (strong convexity), got {l2}")
    curvature = np.linalg.norm(X, 2) ** 2 / (4 * n) if hessian_bound is None else float(hessian_bound)
    lipschitz = curvature + l2
    step = 1.0 / lipschitz
    threshold = np.where(l1_mask[:, None], l1 * step, 0.0)

    theta = np.zeros((s, k))
    point = theta.copy()
    momentum = np.ones(k)
    residual = np.full(k, np.inf)
    for iteration in range(1, max_iter + 1):
        grad = _smooth_gradient(point, X, y, l2, linear)
        moved = point - step * grad
        new = np.sign(moved) * np.maximum(np.abs(moved) - threshold, 0.0)
        # Restart where the momentum direction opposes the gradient mapping.
        restart = np.einsum("jk,jk->k", point - new, new - theta) > 0
        next_momentum = 0.5 * (1 + np.sqrt(1 + 4 * momentum**2))
        beta = np.where(restart, 0.0, (momentum - 1) / next_momentum)
        momentum = np.where(restart, 1.0, next_momentum)
        point = new + beta * (new - theta)
        theta = new
        if iteration % _CHECK_EVERY == 0:
            residual = _kkt(theta, _smooth_gradient(theta, X, y, l2, linear), l1, l1_mask)
            if np.all(residual <= tol):
                return SolverResult(theta, iteration, residual)
    raise ConvergenceError(f"elastic-net solver did not converge to the KKT tolerance {tol:g} in {max_iter} iterations")
