"""The library's rule for the row bound of a survival-regression release, from public facts only."""

from __future__ import annotations

import math

from ..._engine.docstrings import parameters_from
from ...privacy.validation import check_count
from ...released.bounds import BOUNDS_PARAMETERS, GLMBounds, glm_bound_rule
from ..exits.outcomes import check_cells, check_edges
from .release import survival_regression_noise_plan

__all__ = ["survival_regression_bounds"]


@parameters_from(BOUNDS_PARAMETERS)
def survival_regression_bounds(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    *,
    edges,
    cells=None,
    public_X=None,
    max_projected: float = 0.05,
) -> GLMBounds:
    """The row bound Bx of a survival-regression release of standardised covariates: as loose as it
    can be while the privacy noise on an exit's covariate sum stays within that sum's own sampling
    spread; no private data is touched and no budget is spent.

    Why loose.  :func:`release_survival_regression_stats` projects rows beyond Bx onto the ball,
    which :func:`survival_regression_model` does not model: the projected rows' statistics describe
    another fit, a bias that is a fixed share of the statistics, O(n), against their O(√n)
    sampling spread, so at large n it dominates unless Bx grows.  A looser bound costs noise, which
    the model does see (it widens the intervals instead of biasing them).  The rule is that of
    :func:`pm_private.logistic_bounds` and :func:`pm_private.gaussian_bounds`, applied to this
    release.

    The rule.  The covariates are standardised by public constants (a
    :class:`pm_private.Preprocessing` fitted on public rows), so a row's norm is about √d.  The
    hazard regression reads the covariate sums of each exit (an event or a censoring in one of the
    J intervals, or event-free at the horizon; 2J + 1 exits in each of K cells); were the n people
    spread evenly over the K(2J + 1) exits, an exit's covariate sum would have sampling s.d.
    s = √(n / (K(2J + 1))) per standardised covariate.  With σ·Bx the noise s.d. of a released
    covariate sum (:func:`survival_regression_noise_plan`, σ for ℓ2 sensitivity √7), Bx = m√d with

        m = max(1, the largest m with σ·m√d ≤ s),

    so Bx grows like √(n/(K(2J + 1)))·ε/√d.  At small n or ε, m = 1: Bx = √d, the bound of Wang's
    (2018) AdaSSP on standardised rows.  With ``public_X``, Bx is then raised so that at most
    ``max_projected`` of the public rows are projected (the public rows take precedence, so the
    noise may then exceed the sampling spread; ``noise_sd`` says by how much).  This is a rule, not
    an optimum: exits are not equally full (the events of a short interval are few), so the noise
    dominates the sparse exits first.

    Privacy: a function of public arguments (n, d, ε, δ, the intervals and cells, public rows);
    nothing private is read and nothing is spent.

    Parameters
    ----------
    n : int
        Number of people (public).
    edges : array_like, shape (J,)
        The release's public interval ends (the last is the horizon).
    cells : sequence of str, optional
        The release's public cell labels (None: one cell).

    Returns
    -------
    GLMBounds
        The bound, the multiplier m, the noise s.d. of a covariate sum at the bound and the
        sampling s.d. s it was held to.

    Raises
    ------
    ValueError
        For invalid n, d, ε, δ, edges, cells, ``public_X`` or ``max_projected``, naming it.

    See Also
    --------
    release_survival_regression_stats : The release whose ``x_bound`` this chooses.
    pm_private.logistic_bounds : The same rule for the logistic release.

    References
    ----------
    Wang, Y.-X. (2018). Revisiting differentially private linear regression: optimal and adaptive
    prediction & estimation in unbounded domain. UAI.

    Examples
    --------
    >>> from pm_private.survival import survival_regression_bounds
    >>> survival_regression_bounds(2_000, 3, 1.0, 1e-6, edges=[1.0, 2.0, 3.0]).multiplier  # small n: Bx = √d
    1.0
    >>> bounds = survival_regression_bounds(20_000, 5, 1.0, 1e-6, edges=[1.0, 2.0, 3.0])
    >>> round(bounds.multiplier, 2), round(bounds.x_bound, 2), round(bounds.noise_sd / bounds.sampling_sd, 3)
    (1.99, 4.46, 1.0)
    """
    ends, labels = check_edges(edges), check_cells(cells)
    d = check_count("d", d)
    exits = len(labels) * (2 * ends.size + 1)

    def noise_sd(x_bound: float) -> float:
        plan = survival_regression_noise_plan(ends, labels, d=d, x_bound=x_bound, epsilon=epsilon, delta=delta)
        return plan.noise_sd["covariate sums"]

    return glm_bound_rule(
        n,
        d,
        noise_sd,
        noise_shape=lambda x_bound: x_bound,
        public_X=public_X,
        max_projected=max_projected,
        response_sd=1.0 / math.sqrt(exits),
    )
