"""Choosing the budget split and clip bounds on auxiliary synthetic data (Honkela et al. 2018, §4.3).

Honkela et al. (2018), Methods §4.3 "Robust private linear regression", pick the budget split
(p₁, p₂, p₃) and the projection thresholds Bx = ωx·σx, By = ωy·σy (their Eqs. 11–12) by
simulating the whole release on *auxiliary synthetic data of the same size* drawn from the
model itself (their Eq. 10, precisions fixed to the prior means λ = λ₀ = 1):

    xᵢ ~ N(0, I_d),  β ~ N(0, I_d),  yᵢ = xᵢᵀβ + N(0, 1),

so the auxiliary data's scales are known analytically: σx_aux = 1 and σy_aux = √(d + 1)
(Var yᵢ = E‖β‖² + 1).  A candidate ω clips the auxiliary data at ω·σ_aux and, once chosen, is
transferred to the real data as B = ω·(public scale), which assumes data standardised like the
auxiliary model (x_scale ≈ 1), as in the paper.  ``_tune_release`` implements that
procedure for the reproduction of the paper's robust private LR (``pm-private demo``); it
never sees the private data, so it spends **no** privacy budget.  It is not part of the public
API: where the privacy noise dominates, its Spearman score rewards clipping as hard as its grid
allows (clipping hard scales Sxx down until the prior term I outweighs the noisy Sxx + P, and β̂
tends to the noisy clipped Sxy, a sign-correlation estimator whose ranking is robust), which
leaves the noise-aware model little signal.  The split it picks is identifiable only where the
mean Spearman clearly exceeds its Monte Carlo error (``TuneResult.score_se``).  What the
procedure found in measurements is on the documentation's model-selection page.
:func:`tune_bounds` tunes the bounds for the noise-aware model's predictions or coefficients.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..privacy.validation import (
    check_bool,
    check_clip_share,
    check_count,
    check_epsilon,
    check_fraction,
    check_positive,
)
from .release import CLIP_SHARE, sensitivities
from .row_bounds import GaussianBounds, _check_public_y, _min_omega_y, gaussian_bounds
from .tuning_scores import _aux_scores, _mean_scores, _workers

__all__ = ["GaussianBounds", "TuneResult", "gaussian_bounds", "tune_bounds"]

# Number of ω values per axis in the stage-1 (split-choosing) sub-grid.
_COARSE_POINTS = 4


@dataclass(frozen=True)
class TuneResult:
    """Outcome of :func:`tune_bounds`: pass ``split``, ``x_bound`` and ``y_bound`` to
    :func:`pm_private.release_linear_stats` with ``noise="laplace"``.

    ``split`` lies on the tuning grid and sums to 1 (to within 1e-12); ``x_bound`` =
    ``omega_x``·x_scale and ``y_bound`` = ``omega_y``·y_scale; ``score`` is the mean Spearman
    correlation on the auxiliary data at the chosen (ωx, ωy) (the maximum of the stage-2 grid,
    hence optimistically biased as an estimate of accuracy).  ``score_grid[i, j]`` is the
    stage-2 mean Spearman for ωx = ``omegas[i]``, ωy = ``omegas[j]`` (read-only, for plots);
    ``score_se`` its standard error over the stage-2 aux sets (NaN with one aux set): grid
    differences of a few ``score_se`` are Monte Carlo noise; ``split_score`` is the stage-1
    score (best coarse ω pair) of the chosen split.

    Parameters
    ----------
    split : tuple of float
        The chosen budget shares of Sxx, Sxy, Syy.
    x_bound, y_bound : float
        The chosen clipping bounds.
    omega_x, omega_y : float
        The chosen bounds in units of the covariate and response scales.
    score : float
        The mean Spearman correlation at the chosen bounds.
    score_se : float, default nan
        Its standard error over the stage-2 auxiliary sets.
    split_score : float, default nan
        The stage-1 score of the chosen split.
    omegas : numpy.ndarray, optional
        The stage-2 grid of ω.
    score_grid : numpy.ndarray, optional
        The stage-2 mean Spearman on the ``omegas`` × ``omegas`` grid.
    """

    split: tuple[float, float, float]
    x_bound: float
    y_bound: float
    omega_x: float
    omega_y: float
    score: float
    score_se: float = float("nan")
    split_score: float = float("nan")
    omegas: np.ndarray = field(default=None, repr=False, compare=False)
    score_grid: np.ndarray = field(default=None, repr=False, compare=False)


def _check_omegas(omegas) -> np.ndarray:
    try:
        grid = np.array(omegas, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"omegas must be a 1-D sequence of numbers, got {omegas!r}") from None
    if grid.ndim != 1 or grid.size == 0:
        raise ValueError(f"omegas must be a non-empty 1-D sequence, got shape {grid.shape}")
    if not (np.isfinite(grid).all() and (grid > 0).all()):
        raise ValueError("omegas must be finite and > 0")
    grid = np.sort(grid)
    if (np.diff(grid) == 0).any():
        raise ValueError("omegas must not contain duplicates")
    grid.flags.writeable = False
    return grid


def _split_grid(step: float, max_share: float) -> np.ndarray:
    """All (k₁, k₂, k₃) with kᵢ ≥ 1, kᵢ·step ≤ max_share and k₁ + k₂ + k₃ = 1/step.

    Ordered by k₃ ascending, then k₁ descending: ``argmax`` takes the first of tied scores, so
    exact ties (e.g. when the noise is negligible) go to the split that wastes least on Syy
    (which the score does not use) and gives most to Sxx.
    """
    if not 1e-3 <= step <= 1.0 / 3.0 + 1e-9:  # K ≤ 1000: the grid has O(K²) splits to score
        raise ValueError(f"split_grid_step must be 1/K for an integer K in [3, 1000], got {step!r}")
    total = round(1.0 / step)
    if total < 3 or abs(total * step - 1.0) > 1e-9:
        raise ValueError(f"split_grid_step must be 1/K for an integer K ≥ 3, got {step!r}")
    k_max = min(total - 2, math.floor(max_share * total + 1e-9))
    combos = [
        (k1, total - k1 - k3, k3)
        for k3 in range(1, k_max + 1)
        for k1 in range(k_max, 0, -1)
        if 1 <= total - k1 - k3 <= k_max
    ]
    if not combos:
        raise ValueError(f"no split on the {step!r} grid has every share ≤ max_share = {max_share!r} and sum 1")
    return np.array(combos, dtype=np.int64)


def _coarse_indices(size: int) -> np.ndarray:
    """Indices of ≤ 4 evenly spaced grid points ending at the largest (0.5, 1, 1.5, 2 by default)."""
    if size <= _COARSE_POINTS:
        return np.arange(size)
    return np.unique(np.round(size * np.arange(1, _COARSE_POINTS + 1) / _COARSE_POINTS).astype(int) - 1)


def _tune_release(
    n: int,
    d: int,
    epsilon: float,
    x_scale: float,
    y_scale: float,
    *,
    omegas=np.arange(1, 21) / 10,  # noqa: B008 (never mutated: _check_omegas copies it)
    split_grid_step: float = 0.05,
    max_share: float = 0.90,
    n_datasets: int = 5,
    n_noise: int = 5,
    n_datasets_final: int | None = None,
    n_noise_final: int | None = None,
    rng=0,
) -> TuneResult:
    """Budget split and clip bounds for ``release_linear_stats(noise="laplace")``, tuned on synthetic data by
    Honkela et al.'s (2018) procedure (internal: the paper's robust private LR in
    ``pm-private demo``; the public choice is :func:`tune_bounds`).

    Honkela et al. (2018), Methods §4.3 and §4.5.  **No private data is
    touched and no privacy budget is spent**: everything below runs on auxiliary data simulated
    from the model, and the only inputs are public (n, d, ε and the public scales).  The noise
    is therefore simulated with a seeded numpy generator (``rng``, default 0: reproducible);
    these draws are never released.

    Auxiliary data (Eq. 10, λ = λ₀ = 1): xᵢ ~ N(0, I_d), β ~ N(0, I_d), yᵢ = xᵢᵀβ + N(0, 1), of
    the same size n as the real data, with analytic scales σx_aux = 1, σy_aux = √(d + 1).
    For a split (p₁, p₂, p₃) and a pair (ωx, ωy) one simulated release clips the aux data at
    Bx = ωx·σx_aux, By = ωy·σy_aux and adds Laplace noise with exactly the scales of
    :func:`pm_private.linear.release.sensitivities` / (pₖε): symmetric P on Sxx (upper triangle iid
    Laplace(d(d+1)Bx²/(2p₁ε)), mirrored) and Q on Sxy (iid Laplace(2dBxBy/(p₂ε))).  The estimate
    is the posterior mean with the precisions fixed at λ = λ₀ = 1 (paper Eqs. 3–4),

        β̂ = (Sxx + P + I)⁻¹ (Sxy + Q),

    and the score is Spearman's rank correlation between the aux y and X·β̂ (unclipped X, the
    paper's "error with respect to the original values").  Syy does not enter β̂, so p₃ goes to
    the smallest share, as the paper found (Fig. 5) — where the split is identifiable at all
    (see the module notes: in noise-dominated regimes the choice is Monte Carlo noise).

    Procedure (paper §4.3, §4.5):

    1. *Split*: every (p₁, p₂, p₃) on the ``split_grid_step`` grid with each share in
       [step, ``max_share``] and sum 1 (171 splits by default) is scored by its best (ωx, ωy),
       each pair's score averaged over ``n_datasets`` aux sets × ``n_noise`` noise draws.
       Deviation for speed: stage 1 searches ω on a coarse sub-grid of ``omegas`` (4 evenly
       spaced points ending at the largest, {0.5, 1.0, 1.5, 2.0}² by default) instead of all
       400 pairs, and uses the closed-form β̂ where the paper fitted ADVI for this stage (the
       paper itself used the closed form for stage 2).  Exact ties go to the smallest p₃, then
       the largest p₁.
    2. *Bounds*: with the chosen split, all of ``omegas`` × ``omegas`` (20 × 20) is scored,
       averaged over ``n_datasets_final`` fresh aux sets × ``n_noise_final`` noise draws
       (default 4× ``n_datasets`` and 4× ``n_noise``: the paper's 20 × 20), and the best pair
       (ωx, ωy) is returned as Bx = ωx·``x_scale``, By = ωy·``y_scale``.

    Common random numbers: within one aux set and noise draw, every split and ω uses the same
    standard Laplace draws (scaled by its own noise scale), so comparisons between candidates
    are not swamped by independent noise.  A noisy Sxx + I may be indefinite or nearly
    singular; the systems are solved by LU and a singular one (or non-finite predictions)
    scores −1.  Speed: one batched LU per (aux set, ωx, noise draw, distinct p₁) with every ωy
    and the unit noise as right-hand sides, p₂ entering only as a scalar multiple (β̂ is linear
    in b_xy), and ranks from an integer-key sort of blocks of predictions run on a few threads.

    Parameters
    ----------
    n, d : int
        Size of the private data set (public; n ≥ 2) and number of features (≥ 1).
    epsilon : float
        Total budget the release will use, > 0 (only sets the simulated noise; nothing is spent).
    x_scale, y_scale : float
        **Public** scales σx, σy of the real data (assumed, or from non-private data; never the
        private data's own std, which would leak).  Finite and > 0.
    omegas : 1-D array
        Candidate multipliers ω (paper: 0.1, 0.2, …, 2.0); sorted internally.
    split_grid_step : float
        Grid spacing of the shares; 1/step must be an integer.
    max_share : float
        Largest share any one statistic may get (paper: 0.90).
    n_datasets, n_noise : int
        Aux sets and noise draws per aux set averaged in stage 1 (paper: 5 and 5).
    n_datasets_final, n_noise_final : int, optional
        The same for stage 2; default 4·n_datasets and 4·n_noise (paper: 20 and 20).
    rng : int, numpy.random.Generator or None
        Seed of the simulation (default 0: the same inputs give the same result; None draws a
        fresh seed).  Not a privacy parameter: nothing simulated here is released.

    Returns
    -------
    TuneResult
        The chosen split and bounds, with their scores.

    Raises
    ------
    ValueError
        For invalid settings: ε, scales, the ω grid (or one whose sensitivities overflow or
        underflow), the split grid step or ``max_share``.
    """
    n = check_count("n", n, minimum=2)
    d = check_count("d", d)
    epsilon = check_epsilon(epsilon)
    x_scale = check_positive("x_scale", x_scale)
    y_scale = check_positive("y_scale", y_scale)
    grid = _check_omegas(omegas)
    try:
        sensitivities(d, grid * x_scale, grid * y_scale)
    except ValueError:
        raise ValueError(
            "omegas, x_scale and y_scale give clip bounds whose sensitivities overflow or underflow"
        ) from None
    step = check_positive("split_grid_step", split_grid_step)
    max_share = check_positive("max_share", max_share)
    if max_share > 1:
        raise ValueError(f"max_share must be ≤ 1, got {max_share!r}")
    n_datasets = check_count("n_datasets", n_datasets)
    n_noise = check_count("n_noise", n_noise)
    n_datasets_final = check_count("n_datasets_final", 4 * n_datasets if n_datasets_final is None else n_datasets_final)
    n_noise_final = check_count("n_noise_final", 4 * n_noise if n_noise_final is None else n_noise_final)
    combos = _split_grid(step, max_share)
    generator = np.random.default_rng(rng)
    split_scores, best, split, stage2, stage2_se = _two_stage_scores(
        generator, n, d, epsilon, grid, combos, (n_datasets, n_noise), (n_datasets_final, n_noise_final)
    )
    stage2, stage2_se = stage2[0], stage2_se[0]
    stage2.flags.writeable = False
    ix, iy = np.unravel_index(int(np.argmax(stage2)), stage2.shape)
    omega_x, omega_y = float(grid[ix]), float(grid[iy])
    return TuneResult(
        split=split,
        x_bound=omega_x * x_scale,
        y_bound=omega_y * y_scale,
        omega_x=omega_x,
        omega_y=omega_y,
        score=float(stage2[ix, iy]),
        score_se=float(stage2_se[ix, iy]),
        split_score=float(split_scores[best]),
        omegas=grid,
        score_grid=stage2,
    )


def _two_stage_scores(generator, n, d, epsilon, grid, combos, sizes, final_sizes):
    """The two stages of :func:`_tune_release`: (split scores, best split's index, the split, the
    stage-2 mean and s.e. grids).  Stage 1 scores every split by its best (ωx, ωy) on the coarse
    sub-grid with ``sizes`` = (data sets, noise draws); stage 2 scores the full ω grid for the chosen
    split with fresh aux data and ``final_sizes``."""
    n_datasets, n_noise = sizes
    n_datasets_final, n_noise_final = final_sizes
    total = int(combos[0].sum())
    with ThreadPoolExecutor(_workers()) as pool:
        # Stage 1: the split, each scored by its best (ωx, ωy) on the coarse sub-grid.
        coarse = grid[_coarse_indices(grid.size)]
        stage1, _ = _mean_scores(
            generator,
            n,
            d,
            epsilon,
            combos[:, 0] / total,
            combos[:, 1] / total,
            coarse,
            n_datasets,
            n_noise,
            pool,
        )
        split_scores = stage1.reshape(len(combos), -1).max(axis=1)
        best = int(np.argmax(split_scores))
        split = tuple(float(k) / total for k in combos[best])

        # Stage 2: the bounds, on the full ω grid for the chosen split, with fresh aux data.
        stage2, stage2_se = _mean_scores(
            generator,
            n,
            d,
            epsilon,
            np.array([split[0]]),
            np.array([split[1]]),
            grid,
            n_datasets_final,
            n_noise_final,
            pool,
        )
    return split_scores, best, split, stage2, stage2_se


#: What :func:`tune_bounds` can optimise.
GOALS = ("prediction", "coefficients")


def tune_bounds(
    n: int,
    d: int,
    epsilon: float,
    x_scale: float,
    y_scale: float,
    *,
    goal: str = "prediction",
    max_y_clip: float = 0.05,
    public_y=None,
    clip_share: float = CLIP_SHARE,
    omegas=2.0 ** np.arange(-1, 2.25, 0.25),  # noqa: B008 (an immutable-in-use default grid)
    min_omega: float = 0.5,
    split_grid_step: float = 0.05,
    p3_values=(0.05, 0.1),
    n_datasets: int = 8,
    n_noise: int = 8,
    max_extend: int = 4,
    intercept: bool = True,
    rng=0,
) -> TuneResult:
    """Clip bounds and budget split for a noise-aware fit, tuned on synthetic data for prediction
    (expected held-out R²) or for coefficient inference (expected error of β); no private data is
    touched and no budget is spent.

    The auxiliary model is the public-scale data model of the noise-aware likelihood
    (Bernstein & Sheldon 2019): standardised covariates x ~ N(0, I_d), β ~ N(0, I/d),
    y = xᵀβ + N(0, 1) (signal-to-noise 1, R² = 0.5 without privacy, σy_aux = √2).  A candidate
    (ωx, ωy, p₁, p₂, p₃) clips at Bx = ωx, By = ωy·√2, adds Laplace noise of the release's exact
    scales (for the statistics' share (1 − ``clip_share``)·ε of the budget), and estimates
    β̂ = (Sxx + P + ρI)⁻¹(Sxy + Q) with ρ = 2√(2d)·b_xx + 1 (about the spectral norm of the Sxx
    noise, so the system stays positive definite, as the noise-aware posterior does by
    marginalising the noise).  It **optimises** the mean over aux sets × noise draws of

    * ``goal="prediction"``: the held-out R² = 1 − E(y − clip(x)ᵀβ̂)²/Var y, with covariates
      clipped at the same bound, as :func:`pm_private.linear.predict_linear` does, against unclipped
      responses; a bound that is too small loses signal (bias), one too large inflates the
      noise (∝ Bx²);
    * ``goal="coefficients"``: 1 − ‖β̂ − β‖²/‖β‖², the relative error of the coefficients
      against the aux population's β (not the clipped rows'), so the bias that clipping puts
      into β counts in full, where prediction forgives it when the clipped rows predict well.

    Whatever the goal, the response bound never clips more than ``max_y_clip`` of the responses:
    By ≥ Φ⁻¹(1 − ``max_y_clip``/2)·(the response scale), which clips that share of Gaussian
    responses, and, given a public sample ``public_y``, By is also at least the
    (1 − ``max_y_clip``) quantile of its |y|, so at most that share of the public responses is
    clipped.

    Unlike the Spearman score of Honkela et al.'s own procedure (Honkela et al. 2018), R² depends on the scale
    of the predictions, so shrinking the data until the prior dominates does not score well, and
    the bound is not left on the edge of the grid: when the best ωx or ωy is the largest or
    smallest value, the grid is extended in that direction (up to ``max_extend`` times) and
    rescored, except below ``min_omega`` (default 0.5 public standard deviations).  That floor is
    a modelling constraint, not a grid artefact: the noise-aware likelihood assumes Gaussian,
    essentially unclipped covariates, and below about half a standard deviation clipping changes
    more than 60 % of the entries, turning x into nearly a sign vector; the proxy estimator then
    still gains (sign-like covariates carry most of the ranking information at a fraction of the
    noise), but the noise-aware posterior does not (its data model no longer holds and NUTS meets
    a badly scaled posterior).  A choice at ``min_omega`` therefore means "clip as hard as the
    model allows".  Shares are on the ``split_grid_step`` grid with p₃ in ``p3_values``
    (Syy only informs σ²).  The returned bounds are Bx = ωx·``x_scale``, By = ωy·``y_scale``
    (public scales; for data standardised by a public :class:`Preprocessing` both are 1).

    Parameters
    ----------
    n, d : int
        Size of the private data (public) and number of features.
    epsilon : float
        Budget the release will use (> 0; only sets the simulated noise).
    x_scale, y_scale : float
        Public scales of the covariates and the response.
    goal : {"prediction", "coefficients"}
        What to optimise: held-out R², or the relative error of the coefficients.
    max_y_clip : float, default 0.05
        Largest share of responses the bound may clip, in (0, 1).
    public_y : array_like, shape (m,), optional
        Public responses on the release's scale (after the same public preprocessing, so that
        the bound is on |y|); none is clipped beyond the ``max_y_clip`` share.  They must be
        public: nothing here can tell them from the private responses.
    clip_share : float, default 0.05
        The share of ε the release spends on its clipping counts (as in
        ``release_linear_stats(noise="laplace")``); the statistics' noise is simulated for the rest.
    omegas : 1-D array
        Initial grid of multipliers (default 2^(−1 … 2) in quarter-octave steps).
    min_omega : float
        Smallest multiplier considered (grid values below it are dropped, extensions stop there).
    split_grid_step, p3_values
        Split grid: p₁, p₂ multiples of the step, p₃ from ``p3_values``, all > 0, sum 1.
    n_datasets, n_noise : int
        Aux sets and noise draws per candidate (common random numbers across candidates).
    max_extend : int
        Most grid extensions at an edge.
    intercept : bool, default True
        Tune for a release with the intercept's constant column (as
        ``release_linear_stats(noise="laplace")`` makes by default): the statistics have d + 1
        columns and the x bound is at least 1 (ωx ≥ 1/``x_scale``), so that the constant is never
        clipped.
    rng : seed or Generator
        Seed of the simulation (not a privacy parameter).

    Returns
    -------
    TuneResult
        ``score`` is the mean aux score at the choice (the maximum of the grid: optimistic),
        ``score_grid`` the (ωx, ωy) score grid of the chosen split (``omegas`` holds the ωx
        values; the ωy axis starts at the smallest ωy allowed by ``max_y_clip``).

    Raises
    ------
    ValueError
        For invalid settings: ε, scales, goal, ``max_y_clip``, ``public_y``, ``clip_share``,
        the ω grid, the split grid step or the shares of Syy.

    Examples
    --------
    >>> from pm_private import tune_bounds
    >>> res = tune_bounds(200, 3, 0.5, 1.0, 1.0, goal="coefficients", n_datasets=2, n_noise=2)
    >>> res.omega_y >= 1.959  # at most 5 % of N(0, 1) responses clipped
    True
    """
    n = check_count("n", n, minimum=2)
    d = check_count("d", d)
    epsilon = check_epsilon(epsilon)
    x_scale = check_positive("x_scale", x_scale)
    y_scale = check_positive("y_scale", y_scale)
    if goal not in GOALS:
        raise ValueError(f"goal must be one of {GOALS}, got {goal!r}")
    max_y_clip = check_fraction("max_y_clip", max_y_clip, closed=False)
    public_y = _check_public_y(public_y)
    clip_share = check_clip_share(clip_share, epsilon)
    min_omega = check_positive("min_omega", min_omega)
    intercept = check_bool("intercept", intercept)
    y_floor = max(min_omega, _min_omega_y(max_y_clip, public_y, y_scale))
    grid = np.array(_check_omegas(omegas))
    if not (grid >= min_omega).any():
        raise ValueError(f"omegas has no value ≥ min_omega = {min_omega!r}")
    if intercept:  # the Laplace release's constant column must lie inside Bx = ωx·x_scale
        min_omega = max(min_omega, 1.0 / x_scale)
    grid = grid[grid >= min_omega] if (grid >= min_omega).any() else np.array([min_omega])
    grid_y = np.concatenate([[y_floor], grid[grid > y_floor]])
    step = check_positive("split_grid_step", split_grid_step)
    n_datasets = check_count("n_datasets", n_datasets)
    n_noise = check_count("n_noise", n_noise)
    max_extend = check_count("max_extend", max_extend, minimum=0)
    splits = _candidate_splits(step, split_grid_step, p3_values)
    seed = np.random.default_rng(rng).integers(2**63)
    stats_epsilon = (1.0 - clip_share) * epsilon
    scores, ses, (s, ix, iy), grid, grid_y = _extended_search(
        seed, n, d + intercept, stats_epsilon, splits, grid, grid_y, min_omega, (n_datasets, n_noise), goal, max_extend
    )
    split = tuple(float(p) for p in splits[s])
    score_grid = scores[s]
    score_grid.flags.writeable = False
    return TuneResult(
        split=split,
        x_bound=float(grid[ix]) * x_scale,
        y_bound=float(grid_y[iy]) * y_scale,
        omega_x=float(grid[ix]),
        omega_y=float(grid_y[iy]),
        score=float(scores[s, ix, iy]),
        score_se=float(ses[s, ix, iy]),
        split_score=float(scores[s].max()),
        omegas=grid,
        score_grid=score_grid,
    )


def _candidate_splits(step: float, split_grid_step, p3_values) -> np.ndarray:
    """The budget splits (p₁, p₂, p₃) of :func:`tune_bounds`: p₁ on the grid of ``step`` = 1/K
    (checked), p₃ each of ``p3_values``, p₂ the rest (positive)."""
    total = round(1.0 / step)
    if total < 3 or abs(total * step - 1.0) > 1e-9:
        raise ValueError(f"split_grid_step must be 1/K for an integer K ≥ 3, got {split_grid_step!r}")
    p3_list = [float(p) for p in p3_values]
    if not p3_list or not all(0 < p < 1 for p in p3_list):
        raise ValueError(f"p3_values must be shares in (0, 1), got {p3_values!r}")
    splits = np.array(
        [(k1 * step, 1 - p3 - k1 * step, p3) for p3 in p3_list for k1 in range(1, total) if 1 - p3 - k1 * step > 1e-9]
    )
    return splits


def _extended_search(seed, n, d, stats_epsilon, splits, grid, grid_y, min_omega, sizes, goal, max_extend):
    """The aux scores of :func:`tune_bounds` on (split, ωx, ωy), the grids extended by up to
    ``max_extend`` times where the best score lies on their edge: (scores, s.e., the best index
    (s, ix, iy), the ωx grid, the ωy grid)."""
    n_datasets, n_noise = sizes
    ratio = grid[1] / grid[0] if grid.size > 1 else 2.0
    for _ in range(max_extend + 1):
        scores, ses = _aux_scores(
            np.random.default_rng(seed),
            n,
            d,
            stats_epsilon,
            splits[:, 0],
            splits[:, 1],
            grid,
            grid_y,
            n_datasets,
            n_noise,
            goal,
        )
        s, ix, iy = np.unravel_index(int(np.argmax(scores)), scores.shape)
        low_x = ix == 0 and grid[0] > min_omega  # the ωy axis starts at its floor: never extended down
        high_x, high_y = ix == grid.size - 1, iy == grid_y.size - 1
        if min(grid.size, grid_y.size) < 3 or not (low_x or high_x or high_y):
            break
        if high_x:
            grid = np.concatenate([grid, grid[-1] * ratio ** np.arange(1, 5)])
        if high_y:
            grid_y = np.concatenate([grid_y, grid_y[-1] * ratio ** np.arange(1, 5)])
        if low_x:
            below = grid[0] / ratio ** np.arange(4, 0, -1)
            grid = np.concatenate([below[below >= min_omega] if (below >= min_omega).any() else [min_omega], grid])
    return scores, ses, (s, ix, iy), grid, grid_y
