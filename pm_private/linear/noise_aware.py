"""Noise-aware likelihood of privately released sufficient statistics (Bernstein & Sheldon 2019).

A release (:func:`pm_private.release_linear_stats`, Laplace or Gaussian noise)
publishes r = s + w, where
s = Σᵢ t(xᵢ, yᵢ) are the true statistics of the n private rows, t(x, y) = upper triangle of
zzᵀ with z = (x, y) ∈ ℝᵈ⁺¹ (the d(d+1)/2 entries of xxᵀ, the d entries of xy, and y²), and
w is Laplace noise whose scales b₁, b₂, b₃ are in the release's metadata (or Gaussian noise of
standard deviation σ on the diagonal statistics and σ/√2 on the others).  Treating r as exact
(Honkela et al. 2018) ignores w and gives over-confident posteriors.

Model (Bernstein & Sheldon 2019, "Differentially private Bayesian linear regression"):

* data model: x ~ N(0, Σx) (covariates centred by a public centre), y | x ~ N(xᵀβ, σ²), so
  z ~ N(0, C) with C = [[Σx, Σxβ], [βᵀΣx, βᵀΣxβ + σ²]] = L_C L_Cᵀ,
  L_C = [[Lx, 0], [βᵀLx, σ]], Lx = chol(Σx);
* the true statistics, by the central limit theorem, s ≈ N(n·m(C), n·V(C)) with the Gaussian
  moments (Isserlis) m_(ab) = C_ab and V_(ab),(ce) = C_ac·C_be + C_ae·C_bc;
* the release noise w is independent of s with known variance 2bₖ² per entry.

Bernstein & Sheldon keep s latent and run a Gibbs sampler.  Here s is marginalised in closed
form after replacing Laplace noise by a Gaussian of the same variance (Gaussian noise enters
exactly):

    r ≈ N(n·m(C), n·V(C) + diag(v)),  v = 2b² (Laplace) or σ² (Gaussian),

a single multivariate normal of dimension k = (d+1)(d+2)/2 whose log-density is smooth, so it
runs with NUTS and ADVI inside any ``pm.Model`` whatever n is.  The model evaluates it, with the
exact term of public rows below, as one Op of Numba kernels with a hand-written gradient
(``pm_private.linear.released_stats_ops``), in one of two forms of the same density; the
PyTensor graphs ``frobenius_stats_logp`` and ``noisy_stats_logp`` write the same forms
symbolically (the Op's tests compare them):

* spectral, O(d³) (``frobenius_stats_logp``), for noise isotropic in the Frobenius geometry
  of the symmetric (d+1)×(d+1) matrices, i.e. v = σ² on the diagonal statistics and σ²/2 off
  it: the Gaussian release (:func:`pm_private.release_linear_stats`) and sums of such
  releases.  The CLT covariance of S is the operator A ↦ 2n·CAC and the noise's is σ²·Id; both
  are diagonal in the eigenbasis {uᵢuⱼᵀ} of C = UΛUᵀ, with eigenvalues 2nλᵢλⱼ + σ², so one
  eigendecomposition of C gives the density and a closed-form gradient (no divided
  differences of eigenvalues, so it is exact at repeated eigenvalues).
* dense, O(k³) = O(d⁶) (``noisy_stats_logp``), for any per-entry variances: the Laplace
  release (``noise="laplace"``), whose three blocks (Sxx, Sxy, Syy) have
  different scales, so the noise is not isotropic and the two covariances share no
  eigenbasis.  No exact fast path is known for it; an isotropic bound on the noise would be
  conservative but would change the model, so the dense form is kept and limited to
  d ≤ ``DENSE_MAX_D`` = 25 (k = 351), as its cost grows as k³.  Beyond that, Laplace
  releases are fitted by the O(d³) likelihood of :mod:`pm_private.linear.integrated`
  (``linear_model(..., x_cov="integrated")``), which conditions on the released Sxx and
  bounds its Laplace noise by an isotropic one (conservative: wider intervals); or release
  with the Gaussian mechanism, whose noise is also far smaller at d ≥ 5.

Exact (public) statistics S_pub of n_pub further rows enter through the exact Gaussian log-likelihood of those rows,
−(n_pub/2)·log|2πC| − ½·tr(C⁻¹S_pub), which depends on the rows only through S_pub.  With no
noise the model is the Gaussian model of (x, y) with s approximated by its CLT normal.

BLAS threads.  Building a model with :func:`NoisySuffStatRegression` (which
:func:`pm_private.linear.linear_model` does) limits BLAS to one thread in the process until
the last such model is garbage-collected, and a process that unpickles such a model (a
sampler's worker) takes the same limit: the gradients are small dense linear algebra, which
OpenBLAS's default threads slow down on a loaded machine.

Why this and not Ju et al. (2022): their data-augmentation MCMC keeps the n private records
latent and is exact for any record-additive statistic, but every sweep costs O(n) (it updates
records one by one) and needs a custom Gibbs sampler outside PyMC's gradient-based samplers;
the marginal model above is O(1) in n, differentiable, and its approximations (CLT for s,
Gaussian for the noise) are checked by the calibration benchmark.

Clipping.  The released statistics are those of the rows the release actually summed, projected
onto its public bounds.  By default (``clipping="ignore"``) the model treats them as statistics of
unprojected Gaussian rows, which is right only while the bounds rarely bite; when they do, β is
biased: the row-norm projection shrinks large covariate rows but not their responses, which
inflates β, and clipping the responses shrinks it.  ``clipping="model"`` replaces the moments of
z by those of the projected rows under the data model (``projected_second_moment``, by
quasi-Monte Carlo over fixed points), so that β and Σx are the population's; it costs O(M·d²) per
gradient with M = ``PROJECTION_DRAWS`` = 4096 and assumes Gaussian covariates, so for
covariates of another shape the correction is itself approximate.  Non-Gaussian covariates also
change the fourth moments V: bounded covariates (lighter tails) make V over-dispersed for Sxx,
which errs on the wide side.  The measured costs of both forms are on the documentation's
model-selection page.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pytensor.tensor.linalg import solve_triangular
from pytensor.tensor.type_other import NoneTypeT

from .._engine.threads import hold_one_blas_thread_while
from .frobenius import _blas_gate, _register_numba, frobenius_noise_variance, frobenius_stats_logp
from .projection_ops import X_CLIPS, projected_moment_cholesky
from .released_stats_ops import augmented_cholesky, released_stats_logp
from .stats import LinearStats, frobenius_weights, stat_pairs, stat_vector

__all__ = [
    "NoisySuffStatRegression",
    "augmented_cholesky",
    "noise_aware_arrays",
    "noisy_stats_logp",
    "frobenius_noise_variance",
    "frobenius_stats_logp",
    "exact_stats_logp",
    "likelihood_method",
    "projected_second_moment",
    "projection_draws",
    "set_noisy_stats",
]


def noise_aware_arrays(stats: LinearStats) -> dict[str, np.ndarray]:
    """Split ``stats`` into its private and exact parts, as the arrays the likelihood needs.

    Without a private release the private part is empty: ``private_n`` = 0, ``noise_var`` = 1 and
    the private term is switched off.  A release that scaled rows with their responses by
    cᵢ = min(1, Bx/‖xᵢ‖) holds residuals cᵢeᵢ, whose sum of squares has mean σ²·Σcᵢ², so the private
    rows' residual variance is σ²·w with w = Σcᵢ²/n.  Σcᵢ² is the release's noisy
    ``effective_rows``, kept in [1, n] (n for releases without it), summed over releases.  Where n
    is private (a release under add/remove neighbours) the release's noisy count ``n_noisy``
    (at least 1) stands for n, and, without ``effective_rows``, its noise variance joins the
    residual weight's: the residual sum of squares is linear in that weight, so its Gaussian
    noise is marginalised exactly in the integrated likelihood's Syy (a flat prior on n).

    Parameters
    ----------
    stats : LinearStats
        Exact statistics, private releases, or a sum of both.

    Returns
    -------
    dict of str to numpy.ndarray
        ``private`` (released vector of the private rows, exact part subtracted), ``private_n``
        (their count, or its noisy release), ``private_residual_share`` (w),
        ``private_residual_var`` (the summed noise variance of the released residual weights, Σcᵢ²
        or n, 0 without them), ``noise_var`` (per-entry noise variance summed over
        releases, from each release's ``noise_variance``: 2b² for Laplace noise), ``private_on``
        (1 with a private release, else 0), ``exact`` ((d+1)×(d+1) augmented matrix of the exact
        rows) and ``exact_n``.

    Raises
    ------
    ValueError
        If ``stats`` is not a LinearStats, or the row counts of its releases do not add up to its
        private part.
    """
    if not isinstance(stats, LinearStats):
        raise ValueError(f"stats must be LinearStats, got {type(stats).__name__}")
    d = stats.d
    k = (d + 1) * (d + 2) // 2
    exact = stats.public
    exact_aug = np.zeros((d + 1, d + 1))
    exact_n = 0
    if exact is not None:
        exact_aug[:d, :d] = exact.xx
        exact_aug[:d, d] = exact_aug[d, :d] = exact.xy
        exact_aug[d, d] = exact.yy
        exact_n = exact.n
    residual_n = residual_var = 0.0
    if stats.is_exact:
        private = np.zeros(k)
        private_n, noise_var = 0, np.ones(k)
    else:
        private = stat_vector(stats.xx, stats.xy, stats.yy) - stat_vector(
            exact_aug[:d, :d], exact_aug[:d, d], exact_aug[d, d]
        )
        private_n = sum(release.n_estimate for release in stats.releases)
        if stats.n is not None and private_n != stats.n - exact_n:
            raise ValueError("the row counts of the releases do not add up to the private part of stats")
        noise_var = sum(release.noise_variance(d) for release in stats.releases)
        for release in stats.releases:
            effective = getattr(release, "effective_rows", None)
            if effective is None:
                residual_n += release.n_estimate
                residual_var += 0.0 if release.n is not None else release.count_sd**2
            else:
                residual_n += min(max(effective, 1.0), release.n_estimate)
                residual_var += release.clip_noise**2
    return {
        "private": private,
        "private_n": np.float64(private_n),
        "private_residual_share": np.float64(residual_n / private_n if private_n else 1.0),
        "private_residual_var": np.float64(residual_var),
        "noise_var": noise_var,
        "private_on": np.float64(not stats.is_exact),
        "exact": exact_aug,
        "exact_n": np.float64(exact_n),
    }


def noisy_stats_logp(chol_c, private, private_n, noise_var, d: int):
    """log N(r | n·m(C), n·V(C) + diag(noise_var)) with C = L_C L_Cᵀ (see the module notes).

    chol_c (..., d+1, d+1); private (..., k); private_n (...); noise_var (..., k);
    k = (d+1)(d+2)/2.
    """
    a, b = stat_pairs(d)
    c = chol_c @ pt.swapaxes(chol_c, -1, -2)
    mean = c[..., a, b]
    caa = c[..., a[:, None], a[None, :]]
    cbb = c[..., b[:, None], b[None, :]]
    cab = c[..., a[:, None], b[None, :]]
    cba = c[..., b[:, None], a[None, :]]
    n = pt.as_tensor(private_n)[..., None, None]
    cov = n * (caa * cbb + cab * cba) + pt.as_tensor(noise_var)[..., None, :] * np.eye(a.size)
    chol = pt.linalg.cholesky(cov)
    resid = pt.as_tensor(private) - pt.as_tensor(private_n)[..., None] * mean
    white = solve_triangular(chol, resid[..., None], lower=True)[..., 0]
    log_det = pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return -0.5 * (white**2).sum(axis=-1) - log_det - 0.5 * a.size * np.log(2 * np.pi)


def exact_stats_logp(chol_c, exact, exact_n, d: int):
    """Exact log-likelihood of n_pub rows z ~ N(0, C) from their augmented matrix S = Σ zzᵀ:
    −(n_pub/2)·((d+1)·log 2π + log|C|) − ½·tr(C⁻¹S)."""
    d1 = d + 1
    inv_s = solve_triangular(chol_c, pt.as_tensor(exact), lower=True)
    whitened = solve_triangular(chol_c, pt.swapaxes(inv_s, -1, -2), lower=True)
    trace = pt.diagonal(whitened, axis1=-2, axis2=-1).sum(axis=-1)
    log_det = 2.0 * pt.log(pt.diagonal(chol_c, axis1=-2, axis2=-1)).sum(axis=-1)
    return -0.5 * exact_n * (d1 * np.log(2 * np.pi) + log_det) - 0.5 * trace


#: Number of fixed draws of :func:`projection_draws` (a power of two: the scrambled Sobol points
#: are then balanced).
PROJECTION_DRAWS = 4096

#: Clipping choices of :func:`NoisySuffStatRegression`.
CLIPPING = ("model", "ignore")


def projection_draws(d: int, size: int = PROJECTION_DRAWS) -> np.ndarray:
    """Fixed standard normal points w ∈ ℝ^(size × (d+1)) for ``projected_second_moment``.

    Scrambled Sobol points (seed 0, a data-independent constant) mapped through the normal
    quantile function, made antithetic (w and −w) and whitened so that wᵀw/size = I exactly: the
    moments of unprojected rows are then reproduced without error, and only the projection's
    correction carries quadrature error.

    Parameters
    ----------
    d : int
        Number of covariates.
    size : int
        Number of points (even).

    Returns
    -------
    numpy.ndarray (size, d + 1)
    """
    from scipy.stats import norm, qmc

    if size < 2 * (d + 1) or size % 2:
        raise ValueError(f"size must be even and at least 2(d + 1) = {2 * (d + 1)}, got {size}")
    half = norm.ppf(qmc.Sobol(d + 1, scramble=True, seed=0).random(size // 2))
    points = np.concatenate([half, -half])
    chol = np.linalg.cholesky(points.T @ points / size)
    return np.linalg.solve(chol, points.T).T


def projected_second_moment(chol_c, draws, x_bound, y_bound, x_clip: str):
    """Second moment C̃ = E[z̃z̃ᵀ] of rows projected as a release projects them, under z ~ N(0, C).

    z = (x, y) with C = L_C L_Cᵀ is mapped to z̃ = (π(x), clip(y, −By, By)) with
    π(x) = x·min(1, Bx/‖x‖₂) (``x_clip="row"``, the Gaussian release that projects covariates
    alone) or the entrywise clip(x, −Bx, Bx) (``x_clip="entry"``, the Laplace release), or to
    z̃ = (cx, clip(cy, −By, By)) with c = min(1, Bx/‖x‖₂) (``x_clip="row-scaled"``) or
    c = min(1, Bx/maxⱼ|xⱼ|) (``x_clip="entry-scaled"``), the releases that scale whole rows, and

        C̃ ≈ (1/M) Σₘ z̃(L_C wₘ) z̃(L_C wₘ)ᵀ

    over the fixed points wₘ of :func:`projection_draws` (quasi-Monte Carlo; the same points at
    every evaluation, so C̃ is a deterministic, continuous and almost-everywhere differentiable
    function of L_C, as NUTS needs).  Cost O(M·d²).

    Parameters
    ----------
    chol_c : tensor (..., d+1, d+1)
        A factor of C (``augmented_cholesky``).
    draws : array or tensor (M, d+1)
        The points of :func:`projection_draws` (a shared variable keeps them out of the compiled
        graph's constants).
    x_bound, y_bound : tensor (...)
        The release's public bounds Bx and By.
    x_clip : {"entry", "row", "row-scaled", "entry-scaled"}
        How the release clipped covariates (the release's ``x_clip``).

    Returns
    -------
    tensor (..., d+1, d+1)
        C̃.
    """
    if x_clip not in X_CLIPS:
        raise ValueError(f"x_clip must be one of {X_CLIPS}, got {x_clip!r}")
    chol_c = pt.as_tensor(chol_c)
    draws = pt.as_tensor(draws, dtype="float64")
    x_bound = pt.as_tensor(x_bound, dtype="float64")[..., None]
    y_bound = pt.as_tensor(y_bound, dtype="float64")[..., None]
    z = draws @ pt.swapaxes(chol_c, -1, -2)  # (..., M, d+1)
    x, y = z[..., :-1], z[..., -1]
    if x_clip == "entry":
        x = pt.clip(x, -x_bound[..., None], x_bound[..., None])
    else:
        size = pt.abs(x).max(axis=-1) if x_clip == "entry-scaled" else pt.sqrt((x * x).sum(axis=-1))
        factor = pt.minimum(1.0, x_bound / size)
        x = x * factor[..., None]
        if x_clip != "row":
            y = y * factor
    y = pt.clip(y, -y_bound, y_bound)
    projected = pt.concatenate([x, y[..., None]], axis=-1)
    return pt.swapaxes(projected, -1, -2) @ projected / draws.shape[0]


#: Largest d of the dense likelihood (``noisy_stats_logp``), used for releases whose noise is not
#: isotropic in the Frobenius geometry (Laplace releases): its k × k Cholesky factorisation,
#: k = (d+1)(d+2)/2, costs O(d⁶) per gradient: 4 ms at d = 20 (k = 231) on one BLAS thread of a
#: loaded 2-core machine, hence about 14 ms at d = 25, 40 ms at d = 30 and 0.8 s at d = 50; with the
#: 15–30 gradients of a NUTS iteration, a fit of 2 × 2,000 iterations takes a quarter of an hour
#: or more at d = 25 and hours beyond.
DENSE_MAX_D = 25

#: Likelihood choices of :func:`NoisySuffStatRegression`.
METHODS = ("auto", "spectral", "dense")


def _frobenius_arrays(arrays: dict[str, np.ndarray], d: int) -> dict[str, np.ndarray] | None:
    """The arrays of ``frobenius_stats_logp`` (released vector, n, σ²), or None when the noise
    is not isotropic in the Frobenius geometry.  Without a private part the term is switched off
    and σ² = 1 is a placeholder."""
    if arrays["private_on"]:
        noise_var = frobenius_noise_variance(arrays["noise_var"], d)
        if noise_var is None:
            return None
    else:
        noise_var = 1.0
    return {
        "private": arrays["private"],
        "private_n": arrays["private_n"],
        "private_residual_share": arrays["private_residual_share"],
        "frobenius_noise_var": np.float64(noise_var),
        "private_on": arrays["private_on"],
        "exact": arrays["exact"],
        "exact_n": arrays["exact_n"],
    }


def _stack_arrays(stats, method: str = "dense") -> tuple[dict[str, np.ndarray], str]:
    """The likelihood's arrays for ``stats`` (a leading batch axis for a sequence) and the method
    they are for: ``"spectral"`` or ``"dense"`` (``"auto"``: spectral when every release's noise is
    isotropic in the Frobenius geometry)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    batch = [stats] if isinstance(stats, LinearStats) else list(stats)
    if not batch:
        raise ValueError("no statistics given")
    if len({s.d for s in batch}) != 1:
        raise ValueError(f"statistics must share d, got {sorted({s.d for s in batch})}")
    d = batch[0].d
    parts = [noise_aware_arrays(s) for s in batch]
    if method != "dense":
        spectral = [_frobenius_arrays(p, d) for p in parts]
        if all(p is not None for p in spectral):
            parts, method = spectral, "spectral"
        elif method == "spectral":
            raise ValueError(
                "method='spectral' needs releases whose noise is isotropic in the Frobenius geometry "
                "(Gaussian releases, release_linear_stats); these stats contain others"
            )
        else:
            method = "dense"
    if method == "dense" and d > DENSE_MAX_D:
        raise ValueError(
            f"stats: the noise-aware likelihood of releases whose noise is not isotropic in the Frobenius "
            f"geometry (Laplace releases) costs O(d⁶) per gradient and is limited to d ≤ {DENSE_MAX_D}, got "
            f"d = {d}; use linear_model(..., x_cov='integrated') (O(d³)) or release with "
            "release_linear_stats, whose likelihood costs O(d³)"
        )
    # The count noise of Σcᵢ² is left out here: this likelihood plugs in the share w.
    arrays = {key: np.stack([p[key] for p in parts]) for key in parts[0] if key != "private_residual_var"}
    if isinstance(stats, LinearStats):
        arrays = {key: value[0] for key, value in arrays.items()}
    return arrays, method


def likelihood_method(stats, method: str = "auto") -> str:
    """The likelihood :func:`NoisySuffStatRegression` uses for ``stats``: ``"spectral"`` or
    ``"dense"`` (ValueError where neither applies, see its ``method``)."""
    return _stack_arrays(stats, method)[1]


def _projection_arrays(stats) -> tuple[dict[str, np.ndarray], str]:
    """The public bounds (Bx, By) of the releases in ``stats`` (a leading batch axis for a
    sequence) and how they clip covariates; ValueError unless every release of a fit shares them."""
    batch = [stats] if isinstance(stats, LinearStats) else list(stats)
    bounds, clips = [], set()
    for s in batch:
        own = {(r.x_bound, r.y_bound, r.x_clip) for r in s.releases}
        if len(own) != 1:
            raise ValueError(
                "clipping='model' needs one private release per fit, or releases sharing x_bound, y_bound and "
                "the covariate clipping rule"
            )
        ((x_bound, y_bound, x_clip),) = own
        bounds.append((x_bound, y_bound))
        clips.add(x_clip)
    if len(clips) != 1:
        raise ValueError("clipping='model' needs every fit's releases to clip covariates the same way")
    values = np.asarray(bounds, dtype=np.float64)
    if isinstance(stats, LinearStats):
        values = values[0]
    return {"x_bound": values[..., 0], "y_bound": values[..., 1]}, clips.pop()


def NoisySuffStatRegression(
    name: str,
    stats,
    *,
    beta,
    noise_precision,
    x_chol,
    method: str = "auto",
    clipping: str = "ignore",
    dims=None,
):
    """Add the released statistics to the current model as an observed variable with the noise-aware
    likelihood (Bernstein & Sheldon 2019; the marginal Gaussian form of the module notes).

    The observed variable ``name`` holds the released statistics of the private rows, the
    (d+1)(d+2)/2 entries upper(Sxx), Sxy, Syy in release order
    (:func:`pm_private.linear.release.stat_pairs`; the exact public part subtracted).  Its
    log-density is

        log N(r | n·m(C), n·V(C) + diag(v)) + log p(public rows | C),

    the noise-aware density of the module notes plus the exact Gaussian log-likelihood of the
    public rows (``exact_stats_logp``, zero without them); with ``clipping="ignore"`` the private
    rows' C has residual variance σ²·w, w = Σcᵢ²/n of a release that scaled rows with their
    responses (1 otherwise; :func:`noise_aware_arrays`), and its random method draws released
    statistics from the same model: the central-limit normal of the true statistics,
    n·C + √n·L_C H L_Cᵀ with H a symmetric matrix of independent N(0, 2) diagonal and N(0, 1)
    off-diagonal entries (so that Cov(S_ab, S_ce) = n·(C_ac·C_be + C_ae·C_bc)), plus Gaussian noise of
    the release's per-entry variances v (for a Laplace release, the Gaussian of the same variance
    the likelihood assumes).  ``pm.sample_prior_predictive`` and ``pm.sample_posterior_predictive``
    therefore give prior and posterior predictive checks of the statistics, i.e. of the noise
    model; the public rows are conditioned on, not simulated.  There is one observation (the
    release): leave-one-out over records cannot be computed from it.

    Parameters
    ----------
    name : str
        Name of the observed variable; the statistics are stored as ``pm.Data`` named
        ``{name}_private`` (the observed vector), ``{name}_private_n``,
        ``{name}_private_residual_share`` (w of :func:`noise_aware_arrays`), ``{name}_private_on``,
        ``{name}_exact``, ``{name}_exact_n`` and ``{name}_frobenius_noise_var`` (σ², spectral
        likelihood) or ``{name}_noise_var`` (dense), so that :func:`set_noisy_stats` can swap them
        without recompiling.
    stats : LinearStats or sequence of LinearStats
        Private releases, possibly plus exact public statistics (``public + release``: the
        public part enters exactly).  Noise variances are read from the release metadata.
        A sequence gives B independent regressions (batch axis first).
    beta : tensor (d,) or (B, d)
        Regression coefficients (any PyMC variable or expression).
    noise_precision : tensor () or (B,)
        λ = 1/σ².
    x_chol : tensor (d, d) or (B, d, d)
        Cholesky factor of the covariate covariance Σx (a prior from
        ``pm_private.released.covariates.wishart_cholesky``,
        or a constant from public data).
    method : {"auto", "spectral", "dense"}
        ``"spectral"``: the form of ``frobenius_stats_logp``, O(d³), for releases whose noise is isotropic
        in the Frobenius geometry (Gaussian releases and sums of them; ValueError otherwise);
        ``"dense"``: the form of ``noisy_stats_logp``, O(d⁶), any noise, d ≤ ``DENSE_MAX_D``;
        ``"auto"``: spectral whenever it applies.  Both give the same log-density.
    clipping : {"ignore", "model"}
        ``"ignore"``: the released statistics are modelled as those of rows z ~ N(0, C), as if
        the release's clipping never bit.  ``"model"``: as those of the rows the release
        actually summed, projected onto its public bounds: the mean of S is n·C̃ and its CLT
        covariance 2n·C̃(·)C̃ with C̃ = ``projected_second_moment`` (the second moment of
        projected rows under the data model, by quasi-Monte Carlo with fixed points), so
        that ``beta`` and Σx are the population's, not the clipped rows'.  The fourth moments
        are those of a Gaussian with second moment C̃ (projected rows have lighter tails, so
        this errs on the wide side).  Costs O(M·d²) more per gradient, M =
        ``PROJECTION_DRAWS``.  Needs every fit's releases to share their bounds; the exact
        public part stays unprojected.  The random method draws from the same moments.
    dims : tuple of str, optional
        Dims of the observed variable (batch dims, then the statistics'), e.g.
        ``("fit", "statistic")``; None: none.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The observed variable (cost of its log-density O(B·d³) spectral, O(B·d⁶) dense,
        independent of n; of one random draw O(B·d³)).
    """
    if clipping not in CLIPPING:
        raise ValueError(f"clipping must be one of {CLIPPING}, got {clipping!r}")
    arrays, method = _stack_arrays(stats, method)
    d = arrays["exact"].shape[-1] - 1
    if clipping == "model":
        bounds, x_clip = _projection_arrays(stats)
        arrays.update(bounds, x_clip_code=np.float64(X_CLIPS.index(x_clip)))
    data = {key: pm.Data(f"{name}_{key}", value) for key, value in arrays.items()}
    _register_numba()
    hold_one_blas_thread_while(pm.modelcontext(None))
    chol_c = _blas_gate(augmented_cholesky(beta, noise_precision, x_chol))
    if clipping == "ignore":  # scaled rows' residuals cᵢeᵢ: variance σ²·w (the model of the clipping has its own)
        residual_share = data["private_residual_share"]
        chol_private = _blas_gate(augmented_cholesky(beta, noise_precision / residual_share, x_chol))
    if clipping == "model":
        # the points as a shared variable, not a constant baked into the graph: the compiled
        # log-density then stays in the disk cache for a new process
        draws = pytensor.shared(projection_draws(d), name=f"{name}_projection_draws")
        chol_private = projected_moment_cholesky(chol_c, draws, data["x_bound"], data["y_bound"], x_clip)
    spectral = method == "spectral"
    if spectral:  # per-entry variances σ²/w² (the last entry, Syy, has weight 1: σ² is recovered there)
        noise = data["frobenius_noise_var"][..., None] / frobenius_weights(d) ** 2
    else:
        noise = data["noise_var"]
    return pm.CustomDist(
        name,
        chol_private,
        chol_c,
        data["private_n"],
        noise,
        data["private_on"],
        data["exact"],
        data["exact_n"],
        logp=partial(_released_stats_logp, spectral=spectral),
        dist=partial(_released_stats_dist, d=d),
        signature="(p,p),(p,p),(),(k),(),(p,p),()->(k)",
        observed=data["private"],
        dims=dims,
    )


def _released_stats_logp(value, chol_private, chol_c, private_n, noise, private_on, exact, exact_n, *, spectral):
    """Log-density of the observed variable of :func:`NoisySuffStatRegression` (batched): one Op of
    Numba kernels, in the spectral or the dense form (the module notes give the formulas)."""
    return released_stats_logp(
        chol_private, chol_c, value, private_n, noise, private_on, exact, exact_n, spectral=spectral
    )


def _released_stats_dist(chol_private, chol_c, private_n, noise, private_on, exact, exact_n, size, *, d):
    """The generative graph of the observed variable of :func:`NoisySuffStatRegression`: released
    statistics S + w with S = n·C + √n·L_C H L_Cᵀ (H symmetric, N(0, 2) diagonal and N(0, 1) off
    it) and w ~ N(0, diag(v)), in release order."""
    if isinstance(size.type, NoneTypeT):
        batch = pt.broadcast_shape(chol_private[..., 0, 0], private_n, noise[..., 0])
    else:
        batch = tuple(size[i] for i in range(size.type.shape[0]))
    d1, k = d + 1, (d + 1) * (d + 2) // 2
    chol = pt.broadcast_to(chol_private, (*batch, d1, d1))
    n = pt.broadcast_to(private_n, batch)[..., None, None]
    h = pm.Normal.dist(pt.zeros_like(chol), 1.0)
    h = (h + pt.swapaxes(h, -1, -2)) / np.sqrt(2.0)
    upper = pt.swapaxes(chol, -1, -2)
    stats = n * (chol @ upper) + pt.sqrt(n) * (chol @ h @ upper)
    a, b = stat_pairs(d)
    noise_sd = pt.sqrt(pt.broadcast_to(noise, (*batch, k)))
    return stats[..., a, b] + noise_sd * pm.Normal.dist(pt.zeros_like(noise_sd), 1.0)


def set_noisy_stats(name: str, stats, model: pm.Model | None = None) -> None:
    """Replace the statistics of :func:`NoisySuffStatRegression` ``name``, without recompiling.

    Parameters
    ----------
    name : str
        Name of the likelihood.
    stats : LinearStats or sequence of LinearStats
        The new statistics: the same d and batch as the model's and, for the spectral likelihood,
        noise isotropic in the Frobenius geometry (Gaussian releases).
    model : pymc.Model, optional
        The model (default: the model of the current context).

    Raises
    ------
    ValueError
        If the new statistics do not fit the likelihood, or (``clipping="model"``) clip covariates
        unlike those the model was built for.
    """
    model = pm.modelcontext(model)
    method = "spectral" if f"{name}_frobenius_noise_var" in model.named_vars else "dense"
    arrays, _ = _stack_arrays(stats, method)
    if f"{name}_x_bound" in model.named_vars:
        bounds, x_clip = _projection_arrays(stats)
        if float(model[f"{name}_x_clip_code"].get_value()) != X_CLIPS.index(x_clip):
            raise ValueError(f"stats clip covariates by {x_clip!r}, unlike the statistics the model was built for")
        arrays.update(bounds)
    pm.set_data({f"{name}_{key}": value for key, value in arrays.items()}, model=model)
