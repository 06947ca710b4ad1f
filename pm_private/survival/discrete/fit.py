"""NumPy loss, gradient and Hessian of the discrete-time hazard model, and its Newton fit."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import special

from ..._engine.docstrings import parameters_from
from .data import DiscreteTimeData, check_link

__all__ = ["record_loss_numpy", "record_grad_numpy", "loss_and_grad", "FitResult", "fit_discrete_time"]


def _log1mexp_neg(u):
    """log(1 − e^(−u)) for u > 0, accurate for small and large u (Mächler 2012)."""
    with np.errstate(divide="ignore"):  # np.where evaluates both branches
        return np.where(u < np.log(2.0), np.log(-np.expm1(-u)), np.log1p(-np.exp(-u)))


def _survive_terms(z, link: str, order: int) -> list:
    """c(z) = −log(1 − h(z)) and its derivatives in z up to ``order`` (≤ 2)."""
    if link == "logit":
        p = special.expit(z)
        out = [np.logaddexp(0.0, z), p]
        if order >= 2:
            out.append(p * (1.0 - p))
        return out[: order + 1]
    if link == "cloglog":
        u = np.exp(z)
        return [u] * (order + 1)
    # probit: c(z) = −log Φ(−z), c′ = m(−z), c″ = m(−z)(m(−z) − z), Mills ratio m(x) = φ(x)/Φ(x)
    log_cdf = special.log_ndtr(-z)
    out = [-log_cdf]
    if order >= 1:
        m = np.exp(-0.5 * z * z - 0.5 * np.log(2.0 * np.pi) - log_cdf)
        out += [m, m * (m - z)]
    return out[: order + 1]


def _event_terms(z, link: str, order: int) -> list:
    """a(z) = −log h(z) and its derivatives in z up to ``order`` (≤ 2)."""
    if link == "logit":
        p = special.expit(z)
        return [np.logaddexp(0.0, -z), p - 1.0, p * (1.0 - p)][: order + 1]
    if link == "cloglog":
        u = np.exp(z)
        with np.errstate(over="ignore"):
            em1 = np.expm1(u)
            r = u / em1  # → 0 as u → ∞, → 1 as u → 0
            return [-_log1mexp_neg(u), -r, -r + u * u / (em1 * -np.expm1(-u))][: order + 1]
    # probit: a(z) = −log Φ(z), a′ = −m(z), a″ = m(z)(z + m(z))
    log_cdf = special.log_ndtr(z)
    m = np.exp(-0.5 * z * z - 0.5 * np.log(2.0 * np.pi) - log_cdf)
    return [-log_cdf, -m, m * (z + m)][: order + 1]


def _weights(f: np.ndarray, data: DiscreteTimeData, link: str, order: int):
    """Per-(record, interval) derivative weights of ℓ in z, as (n, q) arrays, one per order 0 … order.

    Entry (i, s) is the derivative of record i's loss term at interval s (0 where s > kᵢ).
    """
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (data.dim,):
        raise ValueError(f"f must have length e + d = {data.dim}, got shape {f.shape}")
    gamma = data.basis @ f[: data.e]
    eta = data.X @ f[data.e :]
    rows = np.arange(data.n)
    at_risk = np.arange(data.q)[None, :] < data.interval[:, None]
    z_end = gamma[data.interval] + eta
    died = data.event == 1
    weights = []
    survive = _survive_terms(gamma[None, :] + eta[:, None], link, order)
    for c, a_end, c_end in zip(
        survive, _event_terms(z_end, link, order), _survive_terms(z_end, link, order), strict=True
    ):
        w = np.where(at_risk, c, 0.0)
        w[rows, data.interval] = np.where(died, a_end, c_end)
        weights.append(w)
    return weights


def record_loss_numpy(f, data: DiscreteTimeData, link: str = "logit") -> np.ndarray:
    """NumPy per-record losses ℓ(f; dᵢ), shape (n,); same values as :func:`record_loss`.

    Parameters
    ----------
    f : array_like, shape (e + d,)
        The parameters (α, β).
    data : DiscreteTimeData
        The records and the basis.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of the hazard.

    Returns
    -------
    numpy.ndarray
        The n per-record losses.

    Raises
    ------
    ValueError
        For an unknown link.
    """
    check_link(link)
    return _weights(f, data, link, 0)[0].sum(axis=1)


@parameters_from(record_loss_numpy)
def record_grad_numpy(f, data: DiscreteTimeData, link: str = "logit") -> np.ndarray:
    """Per-record gradients ∇_f ℓ(f; dᵢ), shape (n, e + d): (Σ_s w_is A_s, (Σ_s w_is) xᵢ).

    Returns
    -------
    numpy.ndarray
        The gradients, shape (n, e + d).

    Raises
    ------
    ValueError
        For an unknown link.
    """
    check_link(link)
    w = _weights(f, data, link, 1)[1]
    return np.hstack([w @ data.basis, w.sum(axis=1)[:, None] * data.X])


def loss_sums(f, data: DiscreteTimeData, link: str, hessian: bool):
    """(Σℓᵢ, Σ∇ℓᵢ[, Σ∇²ℓᵢ]) over the records of ``data``: the sums that partitions add."""
    weights = _weights(f, data, link, 2 if hessian else 1)
    A, X = data.basis, data.X
    w = weights[1]
    grad = np.concatenate([A.T @ w.sum(axis=0), X.T @ w.sum(axis=1)])
    if not hessian:
        return weights[0].sum(), grad
    v = weights[2]
    h_aa = (A.T * v.sum(axis=0)) @ A
    h_ab = A.T @ (v.T @ X)
    h_bb = (X.T * v.sum(axis=1)) @ X
    return weights[0].sum(), grad, np.block([[h_aa, h_ab], [h_ab.T, h_bb]])


def loss_and_grad(f, data: DiscreteTimeData, link: str = "logit", *, hessian: bool = False):
    """Mean loss (1/n)Σℓᵢ and its gradient (e + d,); with ``hessian=True`` also the Hessian.

    Gradient (1/n)(Aᵀ Wᵀ1, Xᵀ W1); Hessian blocks (1/n)(Aᵀ diag(Vᵀ1) A, Aᵀ VᵀX, Xᵀ diag(V1) X)
    with W, V the (n, q) first and second derivative weights.  Cost O(n·q·d), memory O(n·q).
    ``data`` may also be records held as Dask partitions (what
    :func:`pm_private.survival.output_perturbation` builds from Dask collections): each
    partition then returns its sums and the client adds them (Nguyên & Hui 2017a, Eq. 3).

    Parameters
    ----------
    f : array_like, shape (e + d,)
        The parameters (α, β).
    data : DiscreteTimeData or partitioned records
        The records and the basis.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of the hazard.
    hessian : bool, default False
        Also return the Hessian.

    Returns
    -------
    loss : float
        The mean loss.
    grad : numpy.ndarray
        Its gradient, shape (e + d,).
    hess : numpy.ndarray
        Its Hessian, shape (e + d, e + d); only with ``hessian=True``.

    Raises
    ------
    ValueError
        For an unknown link.
    """
    check_link(link)
    if isinstance(data, DiscreteTimeData):
        sums = loss_sums(f, data, link, hessian)
    else:
        sums = data.loss_sums(f, link, hessian)
    return tuple(total / data.n for total in sums)


def _check_identified(data: DiscreteTimeData) -> None:
    """Refuse baselines whose MLE does not exist (unpenalised fits only).

    For each basis column j with support S_j = {s : A_sj ≠ 0}: no record at risk in S_j (empty
    risk set) leaves α_j unidentified (a zero Hessian row); with entries of one sign, no event in
    S_j sends the hazard there to 0 and every at-risk record dying in S_j sends it to 1 (α_j → ∓∞).
    The free per-interval baseline (identity basis) is the common case: one interval per column.
    """
    at_risk = np.bincount(data.interval, minlength=data.q)[::-1].cumsum()[::-1]
    events = np.bincount(data.interval, weights=data.event, minlength=data.q)
    for j in range(data.e):
        column = data.basis[:, j]
        support = np.flatnonzero(column)
        where = f"interval {support[0]}" if support.size == 1 else f"intervals {support.tolist()}"
        if support.size == 0:
            raise ValueError(f"basis column {j} is zero: its coefficient is not identified")
        if at_risk[support].sum() == 0:
            raise ValueError(
                f"empty risk set: no record is at risk in {where} (baseline column {j}), so its effect "
                "is not identified; merge intervals, use a spline basis, or set l2 > 0"
            )
        if (column[support] > 0).all() or (column[support] < 0).all():
            if events[support].sum() == 0:
                raise ValueError(
                    f"no events in {where} (baseline column {j}): the maximum-likelihood hazard there is 0 "
                    "(coefficient → −∞); merge intervals, use a spline basis, or set l2 > 0"
                )
            if (events[support] == at_risk[support]).all():
                raise ValueError(
                    f"every record at risk in {where} (baseline column {j}) has its event there: the "
                    "maximum-likelihood hazard is 1 (coefficient → +∞); merge intervals or set l2 > 0"
                )


class FitResult(NamedTuple):
    """Minimiser of J(f) = (1/n)Σℓᵢ + (l2/2)‖f‖² + ⟨linear, f⟩/n and how well it converged.

    Parameters
    ----------
    f : numpy.ndarray
        The minimiser (α, β).
    objective : float
        J(f).
    grad_norm : float
        ‖∇J(f)‖.
    iterations : int
        The number of Newton iterations.
    converged : bool
        Whether ‖∇J(f)‖ ≤ ``gtol``.
    """

    f: np.ndarray
    objective: float
    grad_norm: float
    iterations: int
    converged: bool


def fit_discrete_time(
    data: DiscreteTimeData,
    link: str = "logit",
    *,
    l2: float = 0.0,
    linear=None,
    f0=None,
    gtol: float = 1e-9,
    max_iter: int = 100,
) -> FitResult:
    """Minimise J(f) = (1/n)Σᵢ ℓ(f; dᵢ) + (l2/2)‖f‖² + ⟨linear, f⟩/n (Nguyên & Hui 2017a, Eq. 5, Alg. 1–2).

    l2 = 0 and linear = None give the maximum-likelihood estimate.  Newton's method with the exact
    Hessian and backtracking line search instead of the paper's BFGS: the minimiser is the same
    (J is convex, strictly for l2 > 0) and is reached to ‖∇J‖ ≤ gtol in a few steps.

    Parameters
    ----------
    data : DiscreteTimeData or partitioned records
        The records and the basis.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of the hazard.
    l2 : float, default 0.0
        The ridge penalty, ≥ 0.
    linear : array_like, shape (e + d,), optional
        The linear term of the objective (the noise of objective perturbation).
    f0 : array_like, shape (e + d,), optional
        The starting point (default 0).
    gtol : float, default 1e-9
        The gradient-norm tolerance.
    max_iter : int, default 100
        The largest number of Newton iterations.

    Returns
    -------
    FitResult
        The minimiser and how well it converged.

    Raises
    ------
    ValueError
        For l2 = 0 when the MLE does not exist: a baseline column acting only on intervals with an
        empty risk set, or (for one-signed columns such as a free per-interval baseline) on
        intervals with no events or where every record at risk has its event; or when the
        Hessian is singular (e.g. collinear covariates); for an unknown link or l2 < 0.
    """
    check_link(link)
    l2 = float(l2)
    if not (np.isfinite(l2) and l2 >= 0):
        raise ValueError(f"l2 must be finite and ≥ 0, got {l2!r}")
    if l2 == 0 and isinstance(data, DiscreteTimeData):
        _check_identified(data)
    linear = np.zeros(data.dim) if linear is None else np.asarray(linear, dtype=np.float64) / data.n
    f = np.zeros(data.dim) if f0 is None else np.array(f0, dtype=np.float64)

    def evaluate(f):
        loss, grad, hess = loss_and_grad(f, data, link, hessian=True)
        return loss + 0.5 * l2 * f @ f + linear @ f, grad + l2 * f + linear, hess + l2 * np.eye(data.dim)

    value, grad, hess = evaluate(f)
    for iteration in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        try:
            step = np.linalg.solve(hess, -grad)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"singular Hessian at Newton iteration {iteration}: the model is not identified "
                "(collinear covariates or a degenerate baseline); set l2 > 0"
            ) from None
        size = 1.0
        while True:  # backtracking (Armijo) with a rounding slack of 1e-14·|J|
            trial = evaluate(f + size * step)
            if trial[0] <= value + 1e-4 * size * (grad @ step) + 1e-14 * abs(value) or size < 1e-12:
                break
            size /= 2
        f = f + size * step
        value, grad, hess = trial
        if np.linalg.norm(grad) <= gtol:
            break
    grad_norm = float(np.linalg.norm(grad))
    return FitResult(f, float(value), grad_norm, iteration, grad_norm <= gtol)
