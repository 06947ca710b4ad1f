"""Noise-aware regression with the covariate model integrated out: O(d³), d + 2 parameters.

The noise-aware model of :mod:`pm_private.linear.noise_aware` needs the covariates' covariance
Σx; with a Wishart prior that is d(d+1)/2 more latent parameters (2,080 at d = 64), which NUTS
explores slowly.  This module conditions on the released Sxx instead.

Factorisation.  Given the true Gram matrix Sxx = XᵀX of the private rows, the regression model
y = Xβ + e, e ~ N(0, σ²I), fixes the distribution of the rest of the statistics whatever Σx is:

    Sxy = Sxx·β + u,   Syy = βᵀSxx·β + 2βᵀu + eᵀe,   u = Xᵀe ~ N(0, σ²·Sxx),  eᵀe ~ σ²χ²ₙ,

and the released Sxx (true Sxx plus noise) does not depend on (β, σ).  So the posterior of (β, σ)
given the whole release R is proportional to the prior times

    p(Rxy, Ryy | Rxx, β, σ) = ∫ p(Rxy, Ryy | Sxx, β, σ) · p(Sxx | Rxx) dSxx

exactly; Σx enters only through p(Sxx | Rxx), which does not depend on (β, σ) and is computed once
per release.  It is approximated by a normal on the symmetric d×d matrices, centred on a positive
definite Ŝ:

* prior: the Wishart prior Σx ~ W(ν, (s²/ν)·I) of ``pm_private.released.covariates.wishart_cholesky``
  composed with Sxx | Σx ~ W(n, Σx) is approximated by Sxx ~ W(k, (n s²/k)·I), k = 1/(1/ν + 1/n),
  the Wishart with the same mean n s²·I and entry covariance 2n²s⁴(1/ν + 1/n) (Frobenius
  geometry); its log-density is (a₀/2)·log det Sxx − (k/(2n s²))·tr Sxx with a₀ = k − d − 1;
* likelihood: the released Sxx is Sxx + W, W ~ N(0, τ²·Id) (τ² the release's noise variance of a
  diagonal entry; exact for Gaussian releases, an upper bound for Laplace ones, whose
  off-diagonal noise is relatively smaller);
* the normal is the Laplace approximation of prior × likelihood, with the log-determinant's
  exponent a₀ replaced by a = k − ρ·(d + 1)/2 (at least 1; below), ρ = p/(p + τ²) the data's
  share of an entry's precision, p = 2n²s⁴/k the prior's variance of an entry (Frobenius).
  Both terms are invariant under rotations, so with R = released Sxx = U diag(r) Uᵀ the centre
  is Ŝ = U diag(x) Uᵀ with

      xₖ = ½·[(rₖ − cτ²) + √((rₖ − cτ²)² + 2aτ²)] > 0,   c = k/(2n s²),

  and the curvature in the basis {uₖuₗᵀ} is diagonal: the entries of UᵀSxxU are independent with
  variances vₖₗ = cₖₗ / (a/(2xₖxₗ) + 1/τ²).

Where the release noise is small (τ² ≪ xₖxₗ/a) Ŝ is the released Sxx and V the noise variance,
as before; where it dominates, the log-determinant keeps Ŝ positive definite and shrinks the
variance of the entries that touch a small eigenvalue (they cannot cross zero), which a normal
centred on the released Sxx cannot do: such a normal has an indefinite mean there, and raising
its eigenvalues afterwards biases E[Sxy] = Ŝβ and attenuates β.  The exponent:
the mode of the Wishart prior has a = a₀ = k − d − 1 and its mean a = k; a Laplace approximation
at the mode (a₀) is centred too low, and one with a = k too high, where data and prior weigh
alike.  The exponent a = k − ρ·(d + 1)/2 goes from the prior's mean and variance (a = k) where
the noise hides everything (ρ → 0) to half-way between mode and mean where the data dominate
(where the exponent hardly matters: a/(2xₖxₗ) ≪ 1/τ²).  How close it comes to the exact
p(Sxx | released Sxx) under the Wishart prior, and the calibration it gives, are measured on the
documentation's model-selection page.

(cₖₗ = 1 on the diagonal, ½ off it: the variance of an entry, not of a Frobenius coordinate).
Since Sxy and Syy are linear in Sxx and u's covariance is linear in it, their mean and covariance
under that normal are exact; with δ = Sxx − Ŝ, Q = U, b = Qᵀβ, V = (vₖₗ), and noise variances τ_xy, τ_yy
of the released Sxy and Syy,

    E = (Ŝβ, βᵀŜβ + nσ²),
    Cov(Rxy) = σ²Ŝ + Q[diag(V b²) + V ⊙ bbᵀ − diag(vₖₖbₖ²)]Qᵀ + diag(τ_xy),
    Cov(Rxy, Ryy) = 2σ²Ŝβ + Q[b ⊙ (2V b² − vₖₖbₖ²)],
    Var(Ryy) = 4σ²βᵀŜβ + 2nσ⁴ + 2(b²)ᵀV b² − Σₖ vₖₖbₖ⁴ + τ_yy,

and (Rxy, Ryy) is modelled as that (d+1)-variate normal (the central limit theorem, as in the
full model).  Exact public rows add their Gram matrix to Ŝ with no uncertainty.  Every gradient
costs two d×d matrix products and one (d+1)×(d+1) Cholesky factorisation, O(d³), and the model
has d + 2 latent parameters whatever d is.

What it gives up against the full model: the covariate covariance is not a parameter (its
uncertainty enters through V, with the sampling part folded into the Wishart's k), the
information that (Rxy, Ryy) carry about Σx is not used, and the normal approximation of
p(Sxx | Rxx) replaces the Wishart posterior's skewness.  :func:`release_signal_to_noise` gives
the figures that say which regime a release is in.  Calibration is checked by simulation in the
project's calibration benchmark.
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.tensor.linalg import cholesky, solve_triangular

from .._engine.packing import layout_of, pack, unpack
from .._engine.threads import hold_one_blas_thread_while
from ..released.family import NoiseDominatedWarning, noise_dominated_message
from ..released.likelihood import released_normal
from .integrated_ops import integrated_moments_op
from .noise_aware import _blas_gate, _register_numba, noise_aware_arrays
from .stats import LinearStats, frobenius_weights, stat_pairs

__all__ = [
    "IntegratedCovariateRegression",
    "gram_posterior",
    "integrated_arrays",
    "integrated_data",
    "integrated_moments",
    "integrated_stats_logp",
    "NoiseDominatedWarning",
    "VALIDATED_GRAM_SNR",
    "release_signal_to_noise",
    "set_integrated_stats",
    "signal_to_noise_warning",
]

#: The ``gram_snr`` (:func:`release_signal_to_noise`) below which the project's calibration
#: benchmarks found the default noise-aware intervals off their level; below it a fit warns.
VALIDATED_GRAM_SNR = 0.1


#: Relative eigenvalue floor of Ŝ (its eigenvalues are raised to this × its largest).
GRAM_FLOOR = 1e-9

#: Smallest exponent a of the log-determinant in the Laplace approximation of p(Sxx | Rxx).
GRAM_SHAPE_FLOOR = 1.0


def gram_shape(d: int, n: float, *, x_scale: float, x_dof: float, tau2: float) -> tuple[float, float]:
    """(k, a): the degrees of freedom k = 1/(1/ν + 1/n) of the Wishart approximation of the prior of
    Sxx, and the exponent a = max(k − ρ·(d + 1)/2, 1) of its log-determinant in the Laplace
    approximation, ρ = p/(p + τ²) the data's share with p = 2n²s⁴/k the prior's variance of an
    entry (module notes)."""
    k = 1.0 / (1.0 / float(x_dof) + 1.0 / float(n))
    prior_var = 2.0 * float(n) ** 2 * float(x_scale) ** 4 / k
    share = prior_var / (prior_var + float(tau2)) if tau2 > 0 else 1.0
    return k, max(k - share * (d + 1.0) / 2.0, GRAM_SHAPE_FLOOR)


def gram_laplace(released_xx, tau2: float, *, n: float, x_scale: float, x_dof: float):
    """The normal approximation of p(Sxx | released Sxx) of a private release (module notes).

    Parameters
    ----------
    released_xx : numpy.ndarray (d, d)
        The released Sxx of the private rows.
    tau2 : float
        Noise variance of a diagonal entry of it (off-diagonal entries: τ²/2).
    n : float
        The number of private rows.
    x_scale, x_dof : float
        s and ν of the Wishart prior Σx ~ W(ν, (s²/ν)·I).

    Returns
    -------
    gram : numpy.ndarray (d, d)
        Ŝ = U diag(x) Uᵀ, positive definite.
    basis : numpy.ndarray (d, d)
        U, the eigenvectors of the released Sxx.
    entry_var : numpy.ndarray (d, d)
        V, the variances of the entries of UᵀSxxU.
    """
    rxx = np.asarray(released_xx, dtype=np.float64)
    d = rxx.shape[0]
    k, a = gram_shape(d, n, x_scale=x_scale, x_dof=x_dof, tau2=tau2)
    rate = k / (2.0 * n * x_scale**2)
    values, basis = np.linalg.eigh((rxx + rxx.T) / 2)
    shifted = values - rate * tau2
    x = (shifted + np.sqrt(shifted**2 + 2.0 * a * tau2)) / 2.0
    # the root of (r − x)/τ² − c + a/(2x) = 0, written to avoid cancellation when r − cτ² ≪ 0
    small = shifted < 0
    x[small] = a * tau2 / (np.sqrt(shifted[small] ** 2 + 2.0 * a * tau2) - shifted[small])
    weight = np.where(np.eye(d, dtype=bool), 1.0, 0.5)
    entry_var = weight / (a / (2.0 * np.outer(x, x)) + 1.0 / tau2)
    return (basis * x) @ basis.T, basis, entry_var


def release_signal_to_noise(stats: LinearStats) -> dict[str, float]:
    """Signal-to-noise figures of a release's covariate statistics, from the released statistics and
    the public noise scales only (post-processing, no privacy cost).

    With R the released Sxx of the private rows (exact rows subtracted; without the constant
    column of statistics that have an intercept) and τ the noise s.d. of one of its diagonal
    entries (off-diagonal: τ/√2, the Gaussian release's; Laplace releases are bounded by it):

    * ``gram_snr`` = (tr R / d) / (τ·√(2d)): the mean eigenvalue of R over the half-width of the
      noise's spectrum (the semicircle radius of a symmetric noise matrix with these variances).
      Below about 1 the noise spreads R's eigenvalues further than their mean, R is typically
      indefinite, and the fit depends on the covariate model (the noise-dominated regime of
      :mod:`pm_private.linear.integrated`); above about 3 the released Gram matrix is accurate;
    * ``trace_snr`` = tr R / (τ·√d): the overall scale of the covariates against its noise;
    * ``negative_eigenvalues``: the number of eigenvalues of R that are ≤ 0;
    * ``xy_snr``: the RMS of the released Sxy (private rows) over the noise s.d. of an entry;
    * ``gram_noise_sd`` τ and ``gram_scale`` tr R / d, the figures behind them.

    Exact statistics have no noise: the ratios are infinite.

    Parameters
    ----------
    stats : LinearStats
        A private release, possibly plus exact public statistics; or exact statistics.

    Returns
    -------
    dict of str to float
    """
    d = stats.d
    m = d * (d + 1) // 2
    arrays = noise_aware_arrays(stats)
    if stats.is_exact:
        inf = float("inf")
        xx = np.asarray(stats.xx, dtype=np.float64)
        return {
            "gram_snr": inf,
            "trace_snr": inf,
            "negative_eigenvalues": 0,
            "xy_snr": inf,
            "gram_noise_sd": 0.0,
            "gram_scale": float(np.trace(xx) / d),
        }
    a, b = stat_pairs(d)
    rxx = np.zeros((d, d))
    rxx[a[:m], b[:m]] = rxx[b[:m], a[:m]] = arrays["private"][:m]
    tau = float(np.sqrt(np.max(arrays["noise_var"][:m] * frobenius_weights(d)[:m] ** 2)))
    first = int(stats.intercept)  # a constant first column is not a covariate
    rxx, xy = rxx[first:, first:], arrays["private"][m + first : m + d]
    d -= first
    scale = float(np.trace(rxx) / d)
    xy_sd = np.sqrt(np.mean(arrays["noise_var"][m + first : m + d + first]))
    return {
        "gram_snr": scale / (tau * np.sqrt(2.0 * d)),
        "trace_snr": scale * np.sqrt(d) / tau,
        "negative_eigenvalues": int(np.sum(np.linalg.eigvalsh(rxx) <= 0)),
        "xy_snr": float(np.sqrt(np.mean(xy**2)) / xy_sd),
        "gram_noise_sd": tau,
        "gram_scale": scale,
    }


def signal_to_noise_warning(figures: dict) -> str | None:
    """The warning a summary prints for these :func:`release_signal_to_noise` figures, or None
    inside the validated range (``gram_snr`` ≥ ``VALIDATED_GRAM_SNR``).

    Parameters
    ----------
    figures : dict
        What :func:`release_signal_to_noise` returned.

    Returns
    -------
    str or None
        The message, naming the figure, the validated range and what to do.
    """
    snr = figures["gram_snr"]
    if not snr < VALIDATED_GRAM_SNR:
        return None
    return noise_dominated_message(
        "its covariate statistics",
        f"gram_snr = {snr:.2g}",
        "below",
        VALIDATED_GRAM_SNR,
        "tighter public bounds, a larger ε or more rows raise it",
    )


def warn_if_noise_dominated(batch) -> list[str]:
    """Warn once (:class:`NoiseDominatedWarning`) when statistics of ``batch`` (a sequence of
    LinearStats) hold a release outside the validated range: the lowest ``gram_snr`` is named,
    with how many of the batch are below the range.  Returns the messages warned ([] or one), for
    the model's record (``print_summary`` repeats them)."""
    figures = [release_signal_to_noise(stats) for stats in batch if not stats.is_exact]
    low = [f for f in figures if signal_to_noise_warning(f) is not None]
    if not low:
        return []
    message = signal_to_noise_warning(min(low, key=lambda f: f["gram_snr"]))
    if len(batch) > 1:
        message = f"{len(low)} of {len(batch)} statistics: " + message
    warnings.warn(message, NoiseDominatedWarning, stacklevel=3)
    return [message]


def gram_posterior(stats: LinearStats, *, x_scale: float, x_dof: float, x_cov: np.ndarray) -> dict[str, np.ndarray]:
    """The normal approximation of p(Sxx | released Sxx) and the released (Sxy, Syy), as the
    arrays :func:`integrated_stats_logp` needs (see the module notes).

    Post-processing of the release (no privacy cost).

    Parameters
    ----------
    stats : LinearStats
        A private release, possibly plus exact public statistics; or exact statistics.
    x_scale, x_dof : float
        s and ν of the Wishart prior Σx ~ W(ν, (s²/ν)·I).
    x_cov : numpy.ndarray (d, d)
        A plug-in Σ̂ (:func:`pm_private.linear.model.release_x_cov`).  The approximation no longer
        depends on it (its eigenvectors are only the basis returned for exact statistics, whose V
        is 0); kept so that callers need not change.

    Returns
    -------
    dict
        ``basis`` Q (d, d), ``entry_var`` V (d, d), ``gram`` Ŝ (d, d, private plus exact rows),
        ``released`` (d + 1,) the released Sxy and Syy (private plus exact), ``noise_var`` (d + 1,)
        their noise variances, ``n`` the number of rows (private plus exact), ``residual_n`` the
        residuals' weight (Σcᵢ² of rows scaled with their responses, as released, plus the exact
        rows; n without scaling, :func:`pm_private.linear.noise_aware.noise_aware_arrays`) and
        ``residual_var`` the noise variance of that released weight.
    """
    d = stats.d
    m = d * (d + 1) // 2
    arrays = noise_aware_arrays(stats)
    exact = arrays["exact"]
    n = float(arrays["private_n"])
    residual_n = float(arrays["private_residual_share"]) * n + float(arrays["exact_n"])
    released = arrays["private"][m:] + np.append(exact[:d, d], exact[d, d])
    if stats.is_exact:
        basis = np.linalg.eigh(x_cov)[1]
        gram_private = np.zeros((d, d))
        entry_var = np.zeros((d, d))
        noise_var = np.zeros(d + 1)
    else:
        a, b = stat_pairs(d)
        rxx = np.zeros((d, d))
        rxx[a[:m], b[:m]] = rxx[b[:m], a[:m]] = arrays["private"][:m]
        tau2 = float(np.max(arrays["noise_var"][:m] * frobenius_weights(d)[:m] ** 2))
        gram_private, basis, entry_var = gram_laplace(rxx, tau2, n=n, x_scale=x_scale, x_dof=x_dof)
        noise_var = np.asarray(arrays["noise_var"][m:], dtype=np.float64)
    gram = gram_private + exact[:d, :d]
    gram = (gram + gram.T) / 2
    values, vectors = np.linalg.eigh(gram)
    if not values[-1] > 0:
        raise ValueError("stats: the covariates' Gram matrix has no positive eigenvalue; nothing to fit")
    gram = (vectors * np.maximum(values, GRAM_FLOOR * values[-1])) @ vectors.T
    return {
        "basis": basis,
        "entry_var": entry_var,
        "gram": (gram + gram.T) / 2,
        "released": released,
        "noise_var": noise_var,
        "n": np.float64(n + float(arrays["exact_n"])),
        "residual_n": np.float64(residual_n),
        "residual_var": np.float64(arrays["private_residual_var"]),
    }


def _diag_embed(vector):
    return vector[..., :, None] * pt.eye(vector.shape[-1])


def _matvec(matrix, vector):
    return (matrix @ vector[..., :, None])[..., 0]


def integrated_moments(beta, noise_precision, basis, entry_var, gram, noise_var, n, residual_var=0.0):
    """Mean E and covariance Cov of the released (Sxy, Syy) given the released Sxx (module notes),
    batched over leading axes.

    The residual sum of squares eᵀe enters Syy with mean n·σ² and variance 2n·σ⁴, where n is the
    residuals' weight (the number of rows, or Σcᵢ² for rows scaled with their responses); when n
    is itself a noisy release of variance ``residual_var``, its error adds σ⁴·``residual_var``
    to the variance of Syy.

    Parameters
    ----------
    beta : tensor (..., d)
    noise_precision : tensor (...)
        λ = 1/σ².
    basis, entry_var, gram : tensor (..., d, d)
        Q, V and Ŝ of :func:`gram_posterior`.
    noise_var : tensor (..., d + 1)
        Noise variances of the released (Sxy, Syy).
    n : tensor (...)
        The residuals' weight: the number of rows, or Σcᵢ² (``residual_n`` of :func:`gram_posterior`).
    residual_var : tensor (...), default 0
        Noise variance of a released ``n``.

    Returns
    -------
    mean : tensor (..., d + 1)
    cov : tensor (..., d + 1, d + 1)
    """
    beta = pt.as_tensor(beta)
    s2 = 1.0 / pt.as_tensor(noise_precision)
    rotated = _matvec(pt.swapaxes(basis, -1, -2), beta)  # b = Qᵀβ
    squared = rotated**2
    var_diag = pt.diagonal(entry_var, axis1=-2, axis2=-1)
    v_b2 = _matvec(entry_var, squared)
    middle = entry_var * rotated[..., :, None] * rotated[..., None, :] + _diag_embed(v_b2 - var_diag * squared)
    gram_beta = _matvec(gram, beta)
    quad = (beta * gram_beta).sum(axis=-1)
    cov_xy = s2[..., None, None] * gram + basis @ middle @ pt.swapaxes(basis, -1, -2) + _diag_embed(noise_var[..., :-1])
    cross = 2.0 * s2[..., None] * gram_beta + _matvec(basis, rotated * (2.0 * v_b2 - var_diag * squared))
    var_yy = (
        4.0 * s2 * quad
        + (2.0 * n + residual_var) * s2**2
        + 2.0 * (squared * v_b2).sum(axis=-1)
        - (var_diag * squared**2).sum(axis=-1)
        + noise_var[..., -1]
    )
    top = pt.concatenate([cov_xy, cross[..., :, None]], axis=-1)
    bottom = pt.concatenate([cross, var_yy[..., None]], axis=-1)[..., None, :]
    mean = pt.concatenate([gram_beta, (quad + n * s2)[..., None]], axis=-1)
    return mean, pt.concatenate([top, bottom], axis=-2)


def integrated_stats_logp(beta, noise_precision, basis, entry_var, gram, released, noise_var, n, residual_var=0.0):
    """log N((Rxy, Ryy) | E, Cov) with E, Cov from :func:`integrated_moments`, batched over leading
    axes.  O(d³) per evaluation.

    Parameters
    ----------
    beta, noise_precision, basis, entry_var, gram, noise_var, n, residual_var
        As for :func:`integrated_moments`.
    released : tensor (..., d + 1)
        The released Sxy and Syy.

    Returns
    -------
    tensor (...)
        The log-density.
    """
    mean, cov = integrated_moments(beta, noise_precision, basis, entry_var, gram, noise_var, n, residual_var)
    chol = cholesky(cov)
    z = solve_triangular(chol, (released - mean)[..., :, None], lower=True)[..., 0]
    log_det = pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    return -0.5 * (z**2).sum(axis=-1) - log_det - 0.5 * pt.cast(mean.shape[-1], "float64") * np.log(2 * np.pi)


def integrated_arrays(stats, *, x_scale, x_dof, x_cov) -> dict[str, np.ndarray]:
    """:func:`gram_posterior` of each statistics, stacked on a leading axis for a sequence.

    Parameters
    ----------
    stats : LinearStats or sequence of LinearStats
    x_scale, x_dof : float
        The Wishart prior of Σx.
    x_cov : array (d, d) or (B, d, d)
        The plug-in covariance of each statistics.

    Returns
    -------
    dict
        The arrays of :func:`gram_posterior`, with a leading axis B for a sequence.
    """
    batch = [stats] if isinstance(stats, LinearStats) else list(stats)
    covs = [x_cov] if isinstance(stats, LinearStats) else list(x_cov)
    parts = [gram_posterior(s, x_scale=x_scale, x_dof=x_dof, x_cov=c) for s, c in zip(batch, covs, strict=True)]
    arrays = {key: np.stack([p[key] for p in parts]) for key in parts[0]}
    if isinstance(stats, LinearStats):
        arrays = {key: value[0] for key, value in arrays.items()}
    return arrays


def _likelihood_arrays(stats, **prior) -> dict[str, np.ndarray]:
    """The arrays of :func:`integrated_arrays` the likelihood reads (the rows' count n only shapes
    the Gram posterior, already in them; the residuals' weight ``residual_n`` takes its place),
    and the prior (x_scale, x_dof) it was built with."""
    arrays = integrated_arrays(stats, **prior)
    del arrays["n"]
    batch = np.shape(arrays["residual_n"])
    arrays["prior"] = np.broadcast_to(np.array([prior["x_scale"], prior["x_dof"]], dtype=np.float64), (*batch, 2))
    return arrays


def integrated_data(name: str = "likelihood", model: pm.Model | None = None) -> dict[str, np.ndarray]:
    """The arrays of the integrated likelihood ``name`` as the model holds them now.

    :func:`IntegratedCovariateRegression` keeps them in two data nodes: the released vector
    ``{name}_integrated_released`` and everything else packed into ``{name}_integrated`` (dim
    ``{name}_integrated_entry``, labelled ``gram[i,j]``, ``residual_n``, …), so that a model graph
    shows the release once rather than every array computed from it.

    Parameters
    ----------
    name : str, default "likelihood"
        The likelihood's name.
    model : pymc.Model, optional
        The model (default: the model of the current context).

    Returns
    -------
    dict of str to numpy.ndarray
        ``released`` and the arrays of :func:`gram_posterior` (``basis``, ``entry_var``, ``gram``,
        ``noise_var``, ``residual_n``, ``residual_var``) and ``prior`` (x_scale, x_dof), each with
        the model's batch axis first when it has one.

    Raises
    ------
    ValueError
        If the model has no integrated likelihood ``name``.
    """
    model = pm.modelcontext(model)
    if f"{name}_integrated" not in model.named_vars:
        raise ValueError(f"name: the model has no integrated likelihood {name!r}")
    vector = np.asarray(model[f"{name}_integrated"].get_value())
    arrays = unpack(vector, layout_of(model.coords[f"{name}_integrated_entry"]), vector.shape[:-1])
    return {"released": np.asarray(model[f"{name}_integrated_released"].get_value()), **arrays}


def IntegratedCovariateRegression(name: str, stats, *, beta, noise_precision, x_scale, x_dof, x_cov, dims=None):
    """Add the released (Sxy, Syy) to the current model as an observed variable whose likelihood has
    the covariate model integrated out (module notes).

    The observed variable ``name`` is the normal N(E, Cov) of :func:`integrated_moments` at the
    released (Sxy, Syy) of private plus exact rows (a ``pm.MvNormal``), so its log-density is
    :func:`integrated_stats_logp` and ``pm.sample_prior_predictive`` and
    ``pm.sample_posterior_predictive`` draw replicated (Sxy, Syy) given the released Sxx: a check
    of the model of the response statistics and of their noise.

    Parameters
    ----------
    name : str
        Name of the observed variable; the released vector is stored as ``pm.Data``
        ``{name}_integrated_released`` and the arrays of :func:`gram_posterior` packed into
        ``{name}_integrated`` (:func:`integrated_data` reads them), so that
        :func:`set_integrated_stats` swaps them.
    stats : LinearStats or sequence of LinearStats
        A sequence gives B independent regressions (batch axis first).
    beta : tensor (d,) or (B, d)
    noise_precision : tensor () or (B,)
    x_scale, x_dof : float
        The Wishart prior of Σx.
    x_cov : array (d, d) or (B, d, d)
        The plug-in covariance of each release (:func:`pm_private.linear.model.release_x_cov`).
    dims : tuple of str, optional
        Dims of the observed variable (batch dims, then the d + 1 statistics').

    Returns
    -------
    The observed variable (cost of its log-density O(B·d³), independent of n).
    """
    model = pm.modelcontext(None)
    arrays = _likelihood_arrays(stats, x_scale=x_scale, x_dof=x_dof, x_cov=x_cov)
    lead = np.shape(arrays["residual_n"])
    released = pm.Data(f"{name}_integrated_released", arrays.pop("released"))
    vector, labels, layout = pack(arrays, len(lead))
    model.add_coord(f"{name}_integrated_entry", labels)
    packed = pm.Data(f"{name}_integrated", vector, dims=(*(dims or ())[: len(lead)], f"{name}_integrated_entry"))
    data = unpack(packed, layout, lead)
    del data["prior"]
    _register_numba()
    hold_one_blas_thread_while(model)
    residual_n = data.pop("residual_n")
    if lead:  # B independent regressions: the batched graph and PyMC's batched multivariate normal
        mean, cov = integrated_moments(_blas_gate(beta), noise_precision, **data, n=residual_n)
        return pm.MvNormal(name, mu=mean, cov=cov, observed=released, dims=dims)
    mean, cov = integrated_moments_op(beta, noise_precision, **data, n=residual_n)
    return released_normal(name, mean, cov, observed=released, dims=dims)


def set_integrated_stats(name: str, stats, *, x_scale, x_dof, x_cov, model: pm.Model | None = None) -> None:
    """Replace the statistics of :func:`IntegratedCovariateRegression` ``name`` (same d and batch),
    without recompiling.

    Parameters
    ----------
    name : str
        The likelihood's name.
    stats : LinearStats or sequence of LinearStats
        The new statistics.
    x_scale, x_dof : float
        The Wishart prior of Σx the model was built with.
    x_cov : array (d, d) or (B, d, d)
        The plug-in covariance of each new release.
    model : pm.Model, optional
        The model (default: the current context).

    Returns
    -------
    None
    """
    model = pm.modelcontext(model)
    arrays = _likelihood_arrays(stats, x_scale=x_scale, x_dof=x_dof, x_cov=x_cov)
    released = arrays.pop("released")
    vector, _, _ = pack(arrays, np.ndim(arrays["residual_n"]))
    pm.set_data({f"{name}_integrated_released": released, f"{name}_integrated": vector}, model=model)
