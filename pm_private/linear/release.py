"""Sufficient statistics of linear regression and their private release (Honkela et al. 2018, §Methods).

For rows xᵢ ∈ ℝᵈ and responses yᵢ the statistics are Sxx = Σ xᵢxᵢᵀ, Sxy = Σ xᵢyᵢ,
Syy = Σ yᵢ² and n; the Gaussian linear-regression likelihood depends on the data only
through them.  :func:`release_linear_stats` releases them with ε-DP by the Laplace mechanism
(``noise="laplace"``, Honkela et al. 2018) or with (ε, δ)-DP by one Gaussian mechanism (see its
docstring).  The Laplace release:

1. projection (clipping): xᵢⱼ ← clip(xᵢⱼ, −Bx, Bx), yᵢ ← clip(yᵢ, −By, By);
2. Laplace noise with budget split p₁ + p₂ + p₃ = 1 (sequential composition gives ε):
   Sxx + P, P symmetric with its d(d+1)/2 upper-triangle entries iid Laplace(0, d(d+1)Bx²/(2p₁ε)),
   Sxy + Q, Qⱼ iid Laplace(0, 2dBxBy/(p₂ε)), Syy + R, R ~ Laplace(0, By²/(p₃ε)).

The noise scales are ℓ1 sensitivity / (pₖε) under replace-one neighbours: each xⱼy ∈ [−BxBy,
BxBy] gives 2dBxBy and y² ∈ [0, By²] gives By².  For Sxx, Honkela et al. (2018) bound each of
the d(d+1)/2 entries' change by 2Bx², d(d+1)Bx² in all; that bound is twice the exact
sensitivity, d(d+1)Bx²/2 (a row on a corner of the box replaced by the zero row; proof in
:func:`sensitivities`), which the release uses: its Sxx noise is half the paper's at the same ε,
and the stated ε is exact.

How much was clipped
--------------------
Clipping is what bounds the sensitivity, and it changes the statistics: the coefficients they
describe are those of the clipped rows.  Both releases therefore also release, by default, two
counts in the same mechanism: the rows whose covariates the clipping changed and the responses
it clipped.  Each count moves by at most 1 when one record is replaced, so the pair has ℓ1 and
ℓ2 sensitivity 2 and √2.  They take the share ``clip_share`` (``CLIP_SHARE``, 5 %) of the
release's budget, so the accountant still sees one release of the caller's ε (and δ); a share
of 0 releases no counts.  :func:`clip_report` turns them into estimated fractions and warns
when they are large.

The intercept
-------------
Both releases prepend, by default, a constant column of ones to the covariates before they are
bounded (``intercept=True``): the statistics are then those of the design (1, xᵢ), holding n and
the first moments Σxᵢ, Σyᵢ besides the second moments, and a regression on them has an
intercept whatever public centring was applied.  The Gaussian release scales the constant with
its row (cᵢ·(1, xᵢ, yᵢ)), so the scaled rows keep both the intercept and the slopes; its row
then has ‖zᵢ‖² ≤ 1 + Bx² + By² and the sensitivity grows accordingly.  The Laplace release's
entrywise bound must then be at least 1 (the constant is never clipped) and its sensitivities
are those of d + 1 columns.
"""

from __future__ import annotations

import warnings

from ..privacy.validation import CLIP_SHARE
from .family import LINEAR
from .gaussian_release import release_linear_stats
from .release_checks import (
    check_release_arguments,
    finite_sensitivities,
    gaussian_release_vector,
    gaussian_sensitivity,
    sensitivities,
)
from .release_plan import linear_noise_plan
from .release_records import (
    CLIP_WARNING,
    GAUSSIAN_MECHANISM,
    MECHANISM,
    ClipReport,
    LinearStatsLaplaceRelease,
    LinearStatsRelease,
)

__all__ = [
    "CLIP_WARNING",
    "ClipReport",
    "LINEAR",
    "CLIP_SHARE",
    "GAUSSIAN_MECHANISM",
    "LinearStatsRelease",
    "MECHANISM",
    "LinearStatsLaplaceRelease",
    "check_release_arguments",
    "finite_sensitivities",
    "gaussian_release_vector",
    "gaussian_sensitivity",
    "linear_noise_plan",
    "release_linear_stats_laplace",
    "release_linear_stats",
    "sensitivities",
]


def release_linear_stats_laplace(
    X,
    y,
    *,
    epsilon: float,
    x_bound: float,
    y_bound: float,
    split=(0.60, 0.35, 0.05),
    accountant=None,
    rng=None,
    preprocessing=None,
    clip_share: float = CLIP_SHARE,
    scale_response: bool = False,
    intercept: bool = True,
    unit=None,
):
    """Deprecated spelling of ``release_linear_stats(X, y, noise="laplace", ...)``: the same ε-DP
    Laplace release (Honkela et al. 2018) with the same arguments, defaults and result, with a
    ``FutureWarning``; it will be removed in the next release.

    Parameters
    ----------
    X, y, epsilon, x_bound, y_bound, split, accountant, rng, preprocessing, clip_share, scale_response, intercept, unit
        As for :func:`release_linear_stats` with ``noise="laplace"``, with the same defaults.

    Returns
    -------
    LinearStats
        The release of ``release_linear_stats(X, y, noise="laplace", ...)``.

    Notes
    -----
    Privacy: that of :func:`release_linear_stats` with ``noise="laplace"`` (ε-DP under
    replace-one neighbours, the unit a row or with ``unit`` a person; exact).

    Examples
    --------
    >>> import numpy as np, warnings
    >>> from pm_private import release_linear_stats, release_linear_stats_laplace
    >>> X, y = np.random.default_rng(0).uniform(-1, 1, size=(100, 2)), np.zeros(100)
    >>> with warnings.catch_warnings(record=True):
    ...     old = release_linear_stats_laplace(X, y, epsilon=1.0, x_bound=1.0, y_bound=1.0, rng=0)
    >>> new = release_linear_stats(X, y, epsilon=1.0, x_bound=1.0, y_bound=1.0, noise="laplace", rng=0)
    >>> bool((old.xx == new.xx).all())
    True
    """
    warnings.warn(
        'release_linear_stats_laplace is now release_linear_stats(..., noise="laplace"); the old name will be '
        "removed in the next release",
        FutureWarning,
        stacklevel=2,
    )
    return release_linear_stats(
        X,
        y,
        noise="laplace",
        epsilon=epsilon,
        x_bound=x_bound,
        y_bound=y_bound,
        split=split,
        accountant=accountant,
        rng=rng,
        preprocessing=preprocessing,
        clip_share=clip_share,
        scale_response=scale_response,
        intercept=intercept,
        unit=unit,
    )
