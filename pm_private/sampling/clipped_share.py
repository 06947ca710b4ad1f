"""The share of clipped gradients of a DP-SGLD run, released with its own slice of the run's budget.

Where a record's gradient is longer than the clip C, the chain follows the clipped score, whose
zero is not the posterior's mode: the more records are clipped, the further the draws move from
the posterior, in a direction the model decides (Chen, Wu & Hong 2020 show the bias for clipped
SGD): outwards for a logistic regression, whose clipped records are the badly fitted ones, which
pull the coefficients back; inwards for the intercept of a Poisson regression of overdispersed
counts, whose large counts are clipped; not at all for a symmetric one such as a normal mean.  The chain itself does not
tell the user how many were clipped, and a count read from the data would leak, so
:func:`pm_private.sampling.dp_sgld` releases it as part of its mechanism:

    cₖ = #{i : ‖sᵢ⊙∇ℓᵢ(θₖ)‖ > C},   c̃ₖ = cₖ + N(0, σ_c²),   k = 1 … chains,

at each chain's last point θₖ (itself a published draw, so public), over all n records, with the
chain's own preconditioning s.  Replacing one record changes each count by at most 1, so the
vector of counts has replace-one ℓ2 sensitivity √chains.  The report takes the share p
(``clip_share``) of the run's privacy loss in the zero-concentrated sense, as the linear
release's clipping counts do: with m = σ/Δ the noise multiplier of the Gaussian mechanism that is
(ε, δ)-DP alone (Balle & Wang 2018), whose zCDP cost is ρ = 1/(2m²) (Bun & Steinke 2016), the
counts get ρ_c = p·ρ, i.e. σ_c = √chains·m/√p.  The run's plan then composes this event with the
chains' steps (PLD) and solves for the steps' noise, so the run as a whole keeps its (ε, δ); the
report costs the steps about p/2 of their noise multiplier.  The released share is the chains'
mean c̃ₖ/n, whose noise s.d. is σ_c/(n·√chains) = m/(n·√p): about 0.2 % of the records at ε = 1,
δ = 10⁻⁵, p = 0.05 and n = 10⁴, and 2 % at n = 10³.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..privacy.budget import GAUSSIAN, NoiseEvent, gaussian_multiplier

__all__ = ["ClippingWarning", "clipped_counts", "release_clipped_share", "report_noise"]

#: A run warns when the released share of clipped gradients exceeds this by two noise s.d.s.
MOSTLY_CLIPPED = 0.5

#: Records per call of the per-record gradients when counting (bounds the Jacobian's memory).
_CHUNK = 4096


class ClippingWarning(UserWarning):
    """The released share of clipped gradients says most records were clipped: the draws follow
    the clipped score, not the posterior."""


def report_noise(epsilon: float, delta: float, share: float, chains: int) -> float | None:
    """σ_c of each chain's noisy count, √chains·m/√share with m the noise multiplier of the
    Gaussian mechanism that is (ε, δ)-DP alone by the ledger's PLD code (module notes: the share
    of the run's zCDP cost); None for share 0.

    Parameters
    ----------
    epsilon, delta : float
        The whole run's (ε, δ).
    share : float
        The report's share p of the run's zCDP cost (0, or in [0.001, 0.5]).
    chains : int
        The number of chains (counts).

    Returns
    -------
    float or None
    """
    if share == 0:
        return None
    return gaussian_multiplier(epsilon, delta) * math.sqrt(chains / share)


def report_event(sd: float, chains: int) -> NoiseEvent:
    """The report as a ledger event: N(0, σ_c²) on each of the chains' counts, sensitivity √chains."""
    return NoiseEvent(GAUSSIAN, sd, math.sqrt(chains))


def clipped_counts(gradients, points, n: int, clip: float, scale=None) -> np.ndarray:
    """For each chain's last point (rows of ``points``), the number of records whose gradient,
    times ``scale`` where the chain was preconditioned, is longer than ``clip``: the exact counts,
    private until noised by :func:`release_clipped_share`."""
    counts = np.zeros(len(points))
    for k, theta in enumerate(points):
        for first in range(0, n, _CHUNK):
            jacobian, _ = gradients(theta, np.arange(first, min(first + _CHUNK, n)))
            if scale is not None:
                jacobian = jacobian * scale
            counts[k] += np.count_nonzero(np.einsum("ij,ij->i", jacobian, jacobian) > clip * clip)
    return counts


def release_clipped_share(counts: np.ndarray, sd: float, n: int, source, clip: float) -> tuple[float, float]:
    """The released share of clipped gradients and its noise s.d.: the chains' mean of
    (count + N(0, σ_c²))/n, kept in [0, 1] (post-processing), and σ_c/(n·√chains).  Warns
    (:class:`ClippingWarning`) when the released share exceeds one half by two noise s.d.s: a
    statement about the released value, so it releases nothing more."""
    noisy = counts + sd * source.normal(counts.size)
    share = float(np.clip(noisy.mean() / n, 0.0, 1.0))
    share_sd = sd / (n * math.sqrt(counts.size))
    if share - 2.0 * share_sd > MOSTLY_CLIPPED:
        warnings.warn(
            f"about {share:.0%} (noise s.d. {share_sd:.1%}) of the records' gradients were longer than "
            f"clip = {clip:g} at the chains' last draws: the chains follow the clipped score, whose zero "
            "is not the posterior's mode, so the draws may be biased; a larger clip (it buys a shorter "
            "Langevin time) or a public preconditioner that shortens the gradients (scale) clips fewer",
            ClippingWarning,
            stacklevel=3,
        )
    return share, share_sd
