"""The exponential mechanism (McSherry & Talwar 2007), sampled as report-noisy-max with Gumbel noise:
with the secure source on OpenDP's exact sampler, with a seeded source by numpy (not private)."""

from __future__ import annotations

import numpy as np

from .accountant import note_noise_drawn
from .mechanism_checks import (
    _check_source,
    _opendp,
    check_noise_scale,
)
from .noise import NoiseSource
from .validation import (
    as_float_array,
    check_count,
    check_epsilon,
    check_memory,
    check_positive,
)

# --------------------------------------------------------------------------------------------
# Exponential mechanism
# --------------------------------------------------------------------------------------------


def exponential_mechanism(
    scores,
    *,
    epsilon: float,
    sensitivity: float,
    source: NoiseSource,
    log_base=None,
    size: int | None = None,
):
    """Index i drawn with probability ∝ μᵢ·exp(ε·qᵢ/(2Δ)) (McSherry & Talwar 2007).

    ε-DP when every score qᵢ changes by at most Δ between neighbours and the base measure μ is
    public.  Sampled as report-noisy-max with Gumbel noise, argmaxᵢ(sᵢ/b + Gᵢ) with
    sᵢ = qᵢ + b·log μᵢ and b = 2Δ/ε, whose law is exactly the one above.

    Parameters
    ----------
    scores : array-like, shape (k,)
        Utilities qᵢ (finite).
    epsilon, sensitivity : float
        ε > 0 and the utility sensitivity Δ > 0.
    source : NoiseSource
        Secure or seeded (see below).
    log_base : array-like, shape (k,), optional
        log μᵢ of the base measure (default 0); −inf (μᵢ = 0) means never drawn.  The
        continuous exponential mechanism of Nguyên & Hui (2017b) passes the log-lengths of its
        levels here; its privacy argument is over the continuous domain (see
        :mod:`pm_private.survival.weibull.mechanisms`).
    size : int, optional
        Number of independent draws (an int array); one int when None.

    Returns
    -------
    int or numpy.ndarray
        The index drawn, or an int64 array of ``size`` indices.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is invalid, ``scores`` is empty, not 1-D or not
        finite, or ``log_base`` is malformed or −inf everywhere.
    RuntimeError
        If OpenDP certifies a larger privacy loss than ε (nothing is drawn).

    Notes
    -----
    Privacy: ε-DP (pure) per draw (``size`` draws cost ``size``·ε), when every score changes by
    at most ``sensitivity`` between neighbouring data sets (the caller proves it; pm_private's
    mechanisms use replace-one neighbours with n public).  Public: the candidates, the base
    measure μ, ε and Δ.  Exact: the law of the index drawn is exactly the one above.
    Floating-point safe with a secure source (OpenDP's exact Gumbel-max sampler); a seeded
    source is not private.  Reference: McSherry & Talwar 2007.

    Secure source: OpenDP's ``make_noisy_max`` with the zero-concentrated measure, which is
    report-noisy-max with Gumbel noise, samples the argmax exactly: the float scores sᵢ and the
    float scale b are taken as exact rationals and the Gumbel comparisons are resolved to the
    precision they need, so the selection has no floating-point leak beyond the scores
    themselves.  OpenDP's privacy map of that measurement, ρ = (2Δ/b)²/8, is checked to equal
    ε²/8 (the bounded-range bound, Cesar & Rogers 2021).  What remains floating point: the
    scores qᵢ and log μᵢ as the caller computed them, and sᵢ = qᵢ + b·log μᵢ (one rounding per
    score).  A seeded source draws the Gumbel variates as −log(−log U) from 53-bit uniforms
    (floating point, reproducible, not private).

    Examples
    --------
    >>> from pm_private.privacy import as_noise_source, exponential_mechanism
    >>> pick = exponential_mechanism([0.0, 1.0, 5.0], epsilon=1.0, sensitivity=1.0, source=as_noise_source(0))
    >>> pick in (0, 1, 2)
    True
    >>> exponential_mechanism(
    ...     [0.0, 1.0, 5.0], epsilon=1.0, sensitivity=1.0, source=as_noise_source(0), size=4
    ... ).shape
    (4,)
    """
    _check_source(source)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    check_noise_scale(2.0 * sensitivity, epsilon)
    if size is not None:
        size = check_count("size", size)
    scores = as_float_array(scores, "scores")
    check_memory("size and scores", 32.0 * (1 if size is None else size) * max(scores.size, 1))
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array, got shape {scores.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite")
    log_base = np.zeros_like(scores) if log_base is None else as_float_array(log_base, "log_base")
    if log_base.shape != scores.shape or np.isnan(log_base).any() or (log_base == np.inf).any():
        raise ValueError("log_base must have the shape of scores, with values in [−inf, inf)")
    candidates = np.flatnonzero(log_base > -np.inf)
    if candidates.size == 0:
        raise ValueError("log_base is −inf everywhere (the base measure is zero everywhere): nothing to draw")
    b = 2.0 * float(sensitivity) / epsilon
    shifted = scores[candidates] + b * log_base[candidates]
    count = 1 if size is None else int(size)
    if source.secure:
        measurement = _opendp_gumbel_max(candidates.size, b)
        rho = float(measurement.map(float(sensitivity)))
        if rho > epsilon**2 / 8 * (1 + 1e-9):
            raise RuntimeError(f"OpenDP certifies ρ = {rho!r} > ε²/8 for ε = {epsilon!r}")
        values = shifted.tolist()
        note_noise_drawn()
        picks = np.array([measurement(values) for _ in range(count)], dtype=np.int64)
    else:
        gumbel = -np.log(source.exponential((count, candidates.size)))
        picks = np.argmax(shifted / b + gumbel, axis=1)
    drawn = candidates[picks]
    return int(drawn[0]) if size is None else drawn


def _opendp_gumbel_max(k: int, scale: float):
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=k)
    return dp.m.make_noisy_max(domain, dp.linf_distance(T=float), dp.zero_concentrated_divergence(), scale=scale)
