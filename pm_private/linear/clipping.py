"""How much a release's bounds clipped: the privately released clipping counts as fractions.

Clipping is what bounds the sensitivity, and it changes the statistics: the coefficients they
describe are those of the clipped rows.  Both linear releases therefore also release, by default,
two counts in the same mechanism: the rows whose covariates the clipping changed and the
responses it clipped.  Each count moves by at most 1 when one record is replaced, so the pair has
ℓ1 and ℓ2 sensitivity 2 and √2.  They take the share ``clip_share`` (``CLIP_SHARE``, 5 %) of the
release's budget, so the accountant still sees one release of the caller's ε (and δ); a share
of 0 releases no counts.  :func:`clip_report` turns them into estimated fractions and warns
when they are large.
"""

from __future__ import annotations

import warnings

from .release import CLIP_WARNING, ClipReport
from .stats import LinearStats

__all__ = ["CLIP_WARNING", "ClipReport", "clip_report"]


def clip_report(stats, *, warn: bool = True) -> tuple[ClipReport, ...]:
    """Estimated fractions of clipped rows and responses of each private release in ``stats``.

    For a release that carries clipping counts c (rows whose covariates the clipping changed,
    responses clipped), the estimate is clip(c/n, 0, 1), with noise s.d. s/n where s is the
    noise s.d. of a count (√2·b for Laplace noise of scale b).  When clipping changed a large
    share of the rows, the statistics describe the clipped rows, not the population: the
    coefficients of a model fitted to them are biased (away from zero where covariates alone
    were projected, towards zero where responses were clipped), and their intervals are too
    narrow at large n.  A release that scaled whole rows
    (:func:`release_linear_stats`'s default) keeps the regression of y on x, so only its
    clipped responses bias the coefficients.

    Parameters
    ----------
    stats : LinearStats
        Released statistics (possibly summed with others); exact statistics give no report.
    warn : bool, default True
        Warn (``UserWarning``) for each release whose estimated fraction of clipped rows or
        responses exceeds ``CLIP_WARNING`` (10 %).

    Returns
    -------
    tuple of ClipReport
        One report per release that carries clipping counts, in release order (empty when none
        does: exact statistics, or releases made with ``clip_share=0``).

    Notes
    -----
    Privacy: post-processing of the released counts; spends no budget and reads no record.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.linear import clip_report, release_linear_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20_000, 2))
    >>> y = X @ [1.0, -0.5] + rng.normal(size=20_000)
    >>> stats = release_linear_stats(X, y, epsilon=1.0, delta=1e-7, x_bound=3.0, y_bound=2.0, rng=0)
    >>> (report,) = clip_report(stats, warn=False)
    >>> report.large  # a third of the responses exceed |y| = 2
    True
    """
    if not isinstance(stats, LinearStats):
        raise ValueError(f"stats must be LinearStats, got {type(stats).__name__}")
    reports = []
    for release in stats.releases:
        report = release.clip_estimate()
        if report is None:
            continue
        if warn and report.large:
            warnings.warn(
                f"{report}: the statistics describe the clipped data, so fitted coefficients are biased "
                "and their intervals too narrow; widen the bounds or use a model of the clipping",
                UserWarning,
                stacklevel=2,
            )
        reports.append(report)
    return tuple(reports)
