"""Compiled (Numba) exit probabilities of one person under competing event and censoring hazards,
the log-likelihood of an exit table built from them, and their reverse-mode derivatives.

Within a cell a person leaves interval j by an event, by censoring, or is followed event-free to
the horizon (Kalbfleisch & Prentice 2002, §4.2).  With eⱼ = exp(a + ℓⱼ) the event's interval
cumulative hazard (ℓⱼ the log event increment, a a shift) and kⱼ the censoring's:

* continuous time (piecewise-constant hazards within an interval): rⱼ = eⱼ + kⱼ,
  Rⱼ = exp(−Σ_{i<j} rᵢ), π(event, j) = Rⱼ(1 − e^{−rⱼ})·eⱼ/rⱼ, π(censored, j) = Rⱼ(1 − e^{−rⱼ})·kⱼ/rⱼ,
  π(survivor) = exp(−Σ rⱼ);
* discrete time with the complementary log-log link (grouped proportional hazards, Prentice &
  Gloeckler 1978): hⱼ = 1 − exp(−eⱼ), kⱼ the censoring probability at the end of a survived
  interval, π(event, j) = Rⱼhⱼ, π(censored, j) = Rⱼ(1 − hⱼ)kⱼ, R_{j+1} = Rⱼ(1 − hⱼ)(1 − kⱼ).

The table of K cells with shares w_c has probabilities p = (w_c·πᶜ), clipped to [10⁻³⁰⁰, 1], and
its log-likelihood is either the normal approximation of the multinomial convolved with the
release's noise of variance v, with D = diag(n·p + v), e = r − n·p, s = Σₖ pₖvₖ/Dₖ and
q = Σₖ pₖeₖ/Dₖ (the matrix determinant lemma and Sherman–Morrison formula),

    log N = −½ (m·log 2π + Σₖ log Dₖ + log s + Σₖ eₖ²/Dₖ + n·q²/s),

or the multinomial Σₖ max(rₖ, 0)·log pₖ.  With ∂s/∂pₖ = vₖ²/Dₖ² and
∂q/∂pₖ = (eₖ − n·pₖ)/Dₖ − n·pₖeₖ/Dₖ², the derivative of the normal form in pₖ is

    −½ (n/Dₖ + (∂s/∂pₖ)/s − 2n·eₖ/Dₖ − n·eₖ²/Dₖ² + 2n·q/s·∂q/∂pₖ − n·q²/s²·∂s/∂pₖ),

and in n (latent when n is private, add/remove neighbours), with ∂Dₖ/∂n = pₖ = −∂eₖ/∂n,
∂s/∂n = −Σₖ pₖ²vₖ/Dₖ², ∂q/∂n = −Σₖ pₖ²(Dₖ + eₖ)/Dₖ², ∂(Σₖ eₖ²/Dₖ)/∂n = −Σₖ eₖpₖ(2Dₖ + eₖ)/Dₖ²,

    −½ (Σₖ pₖ/Dₖ + (∂s/∂n)/s + ∂(Σₖ eₖ²/Dₖ)/∂n + q²/s + 2n·q/s·∂q/∂n − n·q²/s²·∂s/∂n),

and the exits' adjoints follow the forward loop in reverse (Griewank & Walther 2008, ch. 3).
Every kernel is compiled once per machine (``cache=True``).

References
----------
Kalbfleisch, J. D. & Prentice, R. L. (2002). The Statistical Analysis of Failure Time Data, 2nd ed.
Wiley.

Prentice, R. L. & Gloeckler, L. A. (1978). Regression analysis of grouped survival data with
application to breast cancer data. Biometrics 34, 57–67.

Griewank, A. & Walther, A. (2008). Evaluating Derivatives, 2nd ed. SIAM.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["exit_table_logp_grad", "exit_table_probabilities", "exits_adjoint", "exits_adjoint_into", "exits_into"]

_LOG_2PI = math.log(2.0 * math.pi)

#: The clip of the table's probabilities (as the symbolic model's): log p stays finite.
_P_FLOOR = 1e-300


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def exits_into(shift, increments, cens, discrete, out):
    """The exit probabilities of one cell with the event's increments eⱼ = ``shift``·exp(ℓⱼ)
    (``increments`` = exp(ℓ), ``shift`` = exp(a)), into ``out`` (2J + 1): the events of each
    interval, the censorings of each interval, the survivors (module notes).  The at-risk
    probability is carried as a product, e^{−rⱼ} = 1 − (1 − e^{−rⱼ}): one exponential per interval."""
    J = increments.shape[0]
    at_risk = 1.0
    for j in range(J):
        event = shift * increments[j]
        if discrete:
            hazard = -math.expm1(-event)
            out[j] = at_risk * hazard
            out[J + j] = at_risk * (1.0 - hazard) * cens[j]
            at_risk *= (1.0 - hazard) * (1.0 - cens[j])
        else:  # rate: the interval's total cumulative hazard
            rate = event + cens[j]
            leave = -math.expm1(-rate)
            part = at_risk * leave / rate
            out[j] = part * event
            out[J + j] = part * cens[j]
            at_risk *= 1.0 - leave
    out[2 * J] = at_risk


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def exits_adjoint(shift, increments, cens, discrete, bar, lei_bar, cens_bar):
    """Reverse of :func:`exits_into`: the adjoint of a = log ``shift`` from that of the
    probabilities (``bar``); accumulates those of the log event increments ℓ and censoring terms."""
    return exits_adjoint_into(
        shift, increments, cens, discrete, bar, lei_bar, cens_bar, np.empty((4, increments.shape[0]))
    )


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def exits_adjoint_into(shift, increments, cens, discrete, bar, lei_bar, cens_bar, scratch):
    """:func:`exits_adjoint` with its four J-vectors of intermediates in ``scratch`` (4, J), for a
    caller that reverses many rows: no allocation per call."""
    J = increments.shape[0]
    event, at_risk, leave, rate = scratch[0], scratch[1], scratch[2], scratch[3]
    risk = 1.0
    for j in range(J):
        event[j] = shift * increments[j]
        at_risk[j] = risk
        if discrete:  # leave: the hazard
            leave[j] = -math.expm1(-event[j])
            risk *= (1.0 - leave[j]) * (1.0 - cens[j])
        else:
            rate[j] = event[j] + cens[j]
            leave[j] = -math.expm1(-rate[j])
            risk *= 1.0 - leave[j]
    survive = risk
    # rate_bar: the adjoint of log(stay) (discrete) or of the total hazard (continuous)
    later = 0.0
    a_bar = 0.0
    for j in range(J - 1, -1, -1):
        if discrete:
            hazard = leave[j]
            hazard_bar = (bar[j] - bar[J + j] * cens[j]) * at_risk[j]
            cens_bar[j] += bar[J + j] * at_risk[j] * (1.0 - hazard)
            part = (bar[j] * hazard + bar[J + j] * (1.0 - hazard) * cens[j]) * at_risk[j]
            rate_bar = later + bar[2 * J] * survive
            event_bar = -rate_bar + hazard_bar * (1.0 - hazard)
            cens_bar[j] -= rate_bar / (1.0 - cens[j])
        else:
            exits_bar = bar[j] * event[j] + bar[J + j] * cens[j]
            ratio = leave[j] / rate[j]
            part = exits_bar * ratio * at_risk[j]
            rate_bar = exits_bar * at_risk[j] * ((1.0 - leave[j]) / rate[j] - leave[j] / rate[j] ** 2)
            rate_bar -= later + bar[2 * J] * survive
            event_bar = bar[j] * ratio * at_risk[j] + rate_bar
            cens_bar[j] += bar[J + j] * ratio * at_risk[j] + rate_bar
        later += part
        lei_bar[j] += event_bar * event[j]
        a_bar += event_bar * event[j]
    return a_bar


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def exit_table_probabilities(lei, cens, share, discrete):
    """The table's probabilities p = (w_c·πᶜ), K(2J + 1) of them, cell by cell, unclipped.

    Parameters
    ----------
    lei, cens : float64 arrays (K, J)
        Log event increments ℓ and censoring terms k of each cell.
    share : float64 array (K,)
        The cells' shares w.
    discrete : bool
        Discrete time (complementary log-log) instead of continuous time.

    Returns
    -------
    numpy.ndarray (K(2J + 1),)
        Per cell: events of each interval, censorings of each interval, survivors.
    """
    K, J = lei.shape
    width = 2 * J + 1
    p = np.empty(K * width)
    for c in range(K):
        cell = p[c * width : (c + 1) * width]
        exits_into(1.0, np.exp(lei[c]), cens[c], discrete, cell)
        for i in range(width):
            cell[i] *= share[c]
    return p


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def _normal_table(value, p, n, noise):
    """The normal log-density of the module notes and its derivatives in p and in n."""
    m = p.size
    s, q, log_det, quad = 0.0, 0.0, 0.0, 0.0
    for k in range(m):
        diag = n * p[k] + noise[k]
        resid = value[k] - n * p[k]
        s += p[k] * noise[k] / diag
        q += p[k] * resid / diag
        log_det += math.log(diag)
        quad += resid * resid / diag
    logp = -0.5 * (m * _LOG_2PI + log_det + math.log(s) + quad + n * q * q / s)
    grad = np.zeros(m)
    if not math.isfinite(logp):
        return -np.inf, grad, 0.0
    dn_log_det, dn_s, dn_q, dn_quad = 0.0, 0.0, 0.0, 0.0
    for k in range(m):
        diag = n * p[k] + noise[k]
        resid = value[k] - n * p[k]
        ds = (noise[k] / diag) ** 2
        dq = (resid - n * p[k]) / diag - n * p[k] * resid / diag**2
        total = n / diag + ds / s - 2.0 * n * resid / diag - n * resid**2 / diag**2
        grad[k] = -0.5 * (total + 2.0 * n * q / s * dq - n * q * q / s**2 * ds)
        dn_log_det += p[k] / diag
        dn_s -= p[k] * p[k] * noise[k] / diag**2
        dn_q -= p[k] * p[k] * (diag + resid) / diag**2
        dn_quad -= resid * p[k] * (2.0 * diag + resid) / diag**2
    dn_last = q * q / s + 2.0 * n * q * dn_q / s - n * q * q * dn_s / s**2
    return logp, grad, -0.5 * (dn_log_det + dn_s / s + dn_quad + dn_last)


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def _multinomial_table(value, p):
    """Σ max(r, 0)·log p and its derivative in p."""
    logp = 0.0
    grad = np.empty(p.size)
    for k in range(p.size):
        count = max(value[k], 0.0)
        logp += count * math.log(p[k])
        grad[k] = count / p[k]
    return logp, grad, 0.0


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def exit_table_logp_grad(lei, cens, share, value, n, noise, discrete, normal):
    """The table's log-likelihood (module notes) and its gradient in ℓ, k, w and n.

    Parameters
    ----------
    lei, cens, share, discrete
        As for :func:`exit_table_probabilities`.
    value : float64 array (K(2J + 1),)
        The released (or exact) table, in the order of :func:`exit_table_probabilities`.
    n : float
        The number of people.
    noise : float64 array (K(2J + 1),)
        The noise variances of the entries (normal form only).
    normal : bool
        The normal form (a noisy release) instead of the multinomial (an exact table).

    Returns
    -------
    tuple
        (logp, ∂/∂ℓ, ∂/∂k, ∂/∂w, ∂/∂n); zero gradients where logp is −∞ (∂/∂n is 0 for the
        multinomial, whose n is the table's own total).
    """
    K, J = lei.shape
    width = 2 * J + 1
    raw = exit_table_probabilities(lei, cens, share, discrete)
    p = np.minimum(np.maximum(raw, _P_FLOOR), 1.0)
    logp, p_bar, n_bar = _normal_table(value, p, n, noise) if normal else _multinomial_table(value, p)
    lei_bar, cens_bar, share_bar = np.zeros((K, J)), np.zeros((K, J)), np.zeros(K)
    if not math.isfinite(logp):
        return -np.inf, lei_bar, cens_bar, share_bar, 0.0
    cell, cell_bar = np.empty(width), np.empty(width)
    for c in range(K):
        increments = np.exp(lei[c])
        exits_into(1.0, increments, cens[c], discrete, cell)
        for i in range(width):
            k = c * width + i
            bar = p_bar[k] if _P_FLOOR <= raw[k] <= 1.0 else 0.0  # the clip passes it inside its bounds
            share_bar[c] += bar * cell[i]
            cell_bar[i] = bar * share[c]
        exits_adjoint(1.0, increments, cens[c], discrete, cell_bar, lei_bar[c], cens_bar[c])
    return logp, lei_bar, cens_bar, share_bar, n_bar
