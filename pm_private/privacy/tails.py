"""How far a sum of independent noise draws may lie from 0: the checks that bind n to a release.

A release whose noisy entries are counts of people (the exit table of a survival study, the
constant column's Σ1 of linear statistics with an intercept) knows what they add up to: n,
which is public.  The released entries add up to n plus the sum S of their m noise draws, so a
release (built, or read from a file) whose entries lie farther from n than
:func:`noise_sum_bound` is refused: n or the counts were edited.  The bound is the smallest t
with P(|S| > t) ≤ :data:`FALSE_REFUSAL` by a Chernoff bound, so an unedited release is refused
with probability at most 10⁻⁹:

* Gaussian noise of s.d. σ (OpenDP's exact discrete Gaussian on a 2^k grid, which is
  σ²-sub-Gaussian, Canonne, Kamath & Steinke 2020, Cor. 9; or a seeded normal draw):
  P(|S| > t) ≤ 2·exp(−t²/(2mσ²)), so t = σ·√(2m·ln(2/p)), 6.54 s.d. of S at p = 10⁻⁹.
* Laplace noise of scale b: E e^{λL} = 1/(1 − λ²b²), so P(|S| > t) ≤ 2·inf_{0<u<1}
  e^{−ut/b}(1 − u²)^{−m}, the infimum at u = (√(m² + (t/b)²) − m)/(t/b); t is found by
  bisection: 12.0 s.d. of S (s.d. b√(2m)) for m = 3, 8.3 for m = 14, 6.9 for m = 100, tending to
  the Gaussian 6.54.  OpenDP's exact discrete Laplace on a 2^k grid (2^k ≤ 2⁻⁴⁰·b) is a
  difference of two geometric draws, each the floor of an exponential draw on the grid, so it
  differs from a continuous Laplace draw by less than 2^k: m·b·2⁻³⁹ is added to t.

Where some of the n people may be in no count (a person whose cell label is not among an exit
table's public cells is in no cell, and whether anyone is is private), the counts add up to at
most n, and only their excess over n is bounded.  The bound is one of the noise alone: it does
not depend on n or on the data.
"""

from __future__ import annotations

import math

__all__ = ["FALSE_REFUSAL", "check_counts_total", "noise_sum_bound"]

#: The probability with which :func:`check_counts_total` refuses an unedited release, at most.
FALSE_REFUSAL = 1e-9


def _laplace_tail(x: float, m: int) -> float:
    """Chernoff bound on P(S > x·b) for S the sum of m Laplace(b) draws (module notes)."""
    u = (math.sqrt(m * m + x * x) - m) / x
    return math.exp(-u * x - m * math.log1p(-u * u))


def noise_sum_bound(noise: str, scale: float, size: int, probability: float = FALSE_REFUSAL) -> float:
    """The t with P(|S| > t) ≤ ``probability`` for S the sum of ``size`` independent noise draws.

    Parameters
    ----------
    noise : {"gaussian", "laplace"}
        The noise distribution.
    scale : float
        Its s.d. σ (Gaussian) or scale b (Laplace), > 0.
    size : int
        The number m ≥ 1 of draws added up.
    probability : float, default ``FALSE_REFUSAL``
        The tail probability, in (0, 1).

    Returns
    -------
    float
        The bound t (module notes).

    Examples
    --------
    >>> round(noise_sum_bound("gaussian", 1.0, 1), 2)
    6.54
    >>> round(noise_sum_bound("laplace", 1.0, 3) / math.sqrt(2 * 3), 1)
    12.0
    """
    if noise == "gaussian":
        return scale * math.sqrt(2.0 * size * math.log(2.0 / probability))
    if noise != "laplace":
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r}")
    low, high = 0.0, math.sqrt(2.0 * size)
    while 2.0 * _laplace_tail(high, size) > probability:
        low, high = high, 2.0 * high
    for _ in range(100):  # the tail bound decreases in x: bisect to the float's resolution
        middle = 0.5 * (low + high)
        if 2.0 * _laplace_tail(middle, size) > probability:
            low = middle
        else:
            high = middle
    return scale * (high + size * 2.0**-39)


def check_counts_total(fields: str, total: float, n: int, slack: float, *, short: bool = False) -> None:
    """ValueError naming ``fields`` and ``'n'`` unless the counts' ``total`` lies within ``slack`` of n.

    Parameters
    ----------
    fields : str
        The fields the counts are in, quoted, for the message (e.g. ``"field 'counts'"``).
    total : float
        Their sum.
    n : int
        The release's number of people.
    slack : float
        0 for exact counts; :func:`noise_sum_bound` of the release's noise for noisy ones.
    short : bool, default False
        True when some of the n people may be in no count (a person whose cell label is not
        among a table's public cells): the total may then fall short of n by any amount, and only
        ``total ≤ n + slack`` is checked.

    Raises
    ------
    ValueError
        Saying how far the total may lie from n and with what probability an unedited release
        lies farther.
    """
    if total - n <= slack and (short or n - total <= slack):
        return
    if short:  # people in no count: only the upper side is known
        claim = f"at most 'n' = {n} people" + (f" + {slack:.6g}, the noise's bound" if slack else "")
    else:
        claim = f"'n' = {n} people" + (f" within ±{slack:.6g}, the noise's bound" if slack else "")
    odds = f" (exceeded with probability < {FALSE_REFUSAL:g})" if slack else ""
    raise ValueError(f"{fields} must add up to {claim}{odds}, got {total:.6g}")
