"""The model builder of Bayesian linear regression on (private) sufficient statistics:
:func:`linear_model` puts the priors of Honkela et al. (2018) on the coefficients and the noise,
picks the covariate law (:mod:`pm_private.linear.covariates`) and the likelihood (exact,
:mod:`pm_private.linear.exact_likelihood`; noise-aware, :mod:`pm_private.linear.noise_aware`; or
integrated, :mod:`pm_private.linear.integrated`), and records the public prediction transform;
:func:`set_linear_stats` swaps the statistics of a built model."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from .._engine.compile_notice import announce_compilation
from .._engine.keywords import name_first
from ..released.covariates import check_wishart_prior, wishart_cholesky
from ..released.family import (
    check_stats,
    packed_preprocessing,
    record_fit,
    record_preprocessing,
    recorded_preprocessing,
)
from ..released.preprocessing import affine_vectors
from .covariates import (
    _check_x_cov,
    _default_x_scale,
    _integrated_x_chol,
    _release_x_chol,
    _release_x_cov,
    release_x_cov,
)
from .exact_likelihood import SuffStatRegression, _stack, gibbs_regression, project_psd, suff_stat_logp
from .integrated import (
    IntegratedCovariateRegression,
    integrated_data,
    set_integrated_stats,
    warn_if_noise_dominated,
)
from .noise_aware import NoisySuffStatRegression, likelihood_method, set_noisy_stats
from .priors import _intercept_prior, _prior_precision_rate, _whitened_coefficients
from .release import LINEAR
from .stats import LinearStats, stat_pairs

__all__ = [
    "SuffStatRegression",
    "gibbs_regression",
    "project_psd",
    "linear_model",
    "release_x_cov",
    "set_linear_stats",
    "statistic_labels",
    "suff_stat_logp",
]


@name_first("name")
def set_linear_stats(stats, model: pm.Model | None = None, *, name: str = "likelihood") -> None:
    """Replace the statistics of likelihood ``name`` (same shapes) in ``model``, without recompiling.

    Works for every likelihood :func:`linear_model` builds (:func:`SuffStatRegression`,
    :func:`pm_private.linear.noise_aware.NoisySuffStatRegression` and
    :func:`pm_private.linear.integrated.IntegratedCovariateRegression`); the plug-in or integrated
    covariate factor, the default rate of the slopes' prior (``prior_precision_rate``) and the
    public prediction transform (``preprocessing``) are recomputed from the new statistics.

    The setter of every family takes ``(stats, model=None)``; the old order
    ``set_linear_stats(name, stats, model)`` still works, with a ``FutureWarning``.

    Parameters
    ----------
    stats : LinearStats or sequence of LinearStats
        The new statistics, with the d (and, for a sequence, the length) the model was built for.
    model : pymc.Model, optional
        The model (default: the model of the current context).
    name : str, default "likelihood"
        Name of the likelihood (``"likelihood"`` in :func:`linear_model`; another name for a
        :func:`SuffStatRegression` of your own).

    Raises
    ------
    ValueError
        If the new statistics do not fit the likelihood (another d or batch, an intercept column
        where the model had none or the reverse, releases whose noise or clipping the likelihood
        cannot take).
    """
    model = pm.modelcontext(model)
    recorded = recorded_preprocessing(model)
    if recorded is not None:
        built = bool(np.any(recorded["intercept"]))
        batch = [stats] if isinstance(stats, LinearStats) else list(stats)
        if any(s.intercept != built for s in batch):
            raise ValueError(
                f"stats: the model was built {'with' if built else 'without'} an intercept column; "
                "statistics must agree with it"
            )
    if f"{name}_integrated" in model.named_vars:
        x_scale, x_dof = (float(v) for v in np.reshape(integrated_data(name, model)["prior"], (-1, 2))[0])
        prior = {"x_scale": x_scale, "x_dof": x_dof, "x_cov": _release_x_cov(stats)}
        set_integrated_stats(name, stats, model=model, **prior)
        pm.set_data({"x_cov_integrated_chol": _integrated_x_chol(stats, **prior)}, model=model)
    elif f"{name}_private_n" in model.named_vars:
        _check_public_n([stats] if isinstance(stats, LinearStats) else list(stats), "the model's covariate law")
        set_noisy_stats(name, stats, model)
        if "x_cov_release_chol" in model.named_vars:
            pm.set_data({"x_cov_release_chol": _release_x_chol(stats)}, model=model)
    else:
        pm.set_data({f"{name}_{key}": value for key, value in _stack(stats).items()}, model=model)
    single = isinstance(stats, LinearStats)
    if "prior_precision_rate" in model.named_vars:
        rate = _prior_precision_rate(None, [stats] if single else list(stats), not single)
        pm.set_data({"prior_precision_rate": rate}, model=model)
    pm.set_data({"preprocessing": packed_preprocessing(_prediction_arrays(stats), int(not single))}, model=model)


def _prediction_constants(stats: LinearStats) -> dict[str, np.ndarray]:
    """Public transform of new covariates and responses implied by the releases in ``stats``
    (``intercept`` 1 when the design's first column is the constant, which new rows get too)."""
    d = stats.d - stats.intercept
    preps = [r.preprocessing for r in stats.releases]
    prep = preps[0] if preps else None
    for other in preps[1:]:
        if not _same_preprocessing(prep, other):
            raise ValueError("the releases in stats use different preprocessing; fit them separately")
    center, scale = affine_vectors(prep, d)
    clip = max((r.x_bound for r in stats.releases if r.x_clip == "entry"), default=np.inf)
    norm_clip = max((r.x_bound for r in stats.releases if r.x_clip in ("row", "row-scaled")), default=np.inf)
    cube_scale = max((r.x_bound for r in stats.releases if r.x_clip == "entry-scaled"), default=np.inf)
    return {
        "x_center": center,
        "x_scale": scale,
        "x_clip": np.float64(clip),
        "x_norm_clip": np.float64(norm_clip),
        "x_cube_scale": np.float64(cube_scale),
        "y_center": np.float64(0.0 if prep is None else prep.y_center),
        "y_scale": np.float64(1.0 if prep is None else prep.y_scale),
        "intercept": np.float64(stats.intercept),
    }


def _same_preprocessing(a, b) -> bool:
    if a is None or b is None:
        return a is b
    fields = ("x_center", "x_scale", "y_center", "y_scale")
    return all(
        (getattr(a, f) is None) == (getattr(b, f) is None)
        and (getattr(a, f) is None or np.array_equal(getattr(a, f), getattr(b, f)))
        for f in fields
    )


def _prediction_arrays(stats) -> dict[str, np.ndarray]:
    batch = [stats] if isinstance(stats, LinearStats) else list(stats)
    parts = [_prediction_constants(s) for s in batch]
    arrays = {key: np.stack([p[key] for p in parts]) for key in parts[0]}
    if isinstance(stats, LinearStats):
        arrays = {key: value[0] for key, value in arrays.items()}
    return arrays


def statistic_labels(feature_names) -> list[str]:
    """Labels of the released statistics in release order (:func:`pm_private.linear.release.stat_pairs`):
    ``xx[a,b]`` for the upper triangle of Sxx, ``xy[a]`` for Sxy and ``yy``, with the feature names.

    Parameters
    ----------
    feature_names : sequence of str
        The d feature names.

    Returns
    -------
    list of str
        The (d+1)(d+2)/2 labels, the coordinates of the ``statistic`` dim of :func:`linear_model`.
    """
    names = [str(name) for name in feature_names]
    d = len(names)
    labels = []
    for a, b in zip(*stat_pairs(d), strict=True):
        if b < d:
            labels.append(f"xx[{names[a]},{names[b]}]")
        elif a < d:
            labels.append(f"xy[{names[a]}]")
        else:
            labels.append("yy")
    return labels


def _release_kinds(batch) -> str:
    """The release kinds in the statistics (``+``-joined, ``exact`` for exact statistics)."""
    kinds = sorted({release.kind for stats in batch for release in stats.releases})
    if any(stats.public is not None for stats in batch):
        kinds.append("exact")
    return "+".join(kinds)


def linear_model(
    stats,
    *,
    noise_aware: bool | None = None,
    feature_names=None,
    noise_precision_alpha: float = 2.0,
    noise_precision_beta: float = 2.0,
    prior_precision_alpha: float = 2.0,
    prior_precision_beta: float | None = None,
    intercept_sigma: float | None = None,
    x_cov=None,
    x_scale: float | None = None,
    x_dof: float | None = None,
    likelihood: str = "auto",
    clipping: str = "ignore",
) -> pm.Model:
    """Bayesian linear regression on sufficient statistics, noise-aware for private releases.

    The model of Honkela et al. (2018), shape-rate Gamma priors:

        β ~ N(0, I/λ₀),   λ ~ Gamma(a, b),   λ₀ ~ Gamma(a₀, b₀),   yᵢ | xᵢ ~ N(α + xᵢᵀβ, 1/λ),

    with α ~ N(0, s_α²) when the statistics have an intercept column (the releases' default;
    α = 0 otherwise), observed only through the statistics (Sxx, Sxy, Syy, n) of ``stats``.  The
    rate b₀ defaults to 2/(k·v̄) for k covariates of mean variance v̄, so that the prior mean of the
    variance the slopes explain, E[βᵀΣxβ] = k·v̄·b₀/(a₀ − 1) = 2 (a response whose variance is
    about 1), neither grows with k nor changes with the covariates' units (as weakly informative
    defaults scale by the covariates' spread; Gelman, Jakulin, Pittau & Su 2008).  On a public
    standardised scale v̄ = 1 and b₀ = 2/k: Honkela et al.'s Gamma(2, 2) for one covariate.
    Otherwise v̄ is that of exact (public) rows, or the release's own estimate where it stands out
    of the release noise by three noise standard deviations (post-processing), else 1.  Where the
    release's noise dominates, the intervals are this prior's: with unstandardised covariates and
    b₀ = 2/k they shrank the slopes towards 0 and under-covered.  With their b₀ = 2 the prior keeps
    every slope's scale near 1 whatever k (pass ``prior_precision_beta=2.0`` for their model as
    published).  With
    ``noise_aware=False`` the likelihood is the exact sufficient-statistic likelihood (Honkela et al.
    2018, Eq. 4.1; :func:`SuffStatRegression`) of the statistics, noisy ones first projected by
    :func:`project_psd` and then treated as exact.  With ``noise_aware=True`` the covariates are
    modelled as x ~ N(0, Σx) and the release noise is marginalised (Bernstein & Sheldon 2019):

        r ≈ N(n·m(C), n·V(C) + diag(v)),   C = Cov(x, y),

    the central-limit normal of the true statistics plus the release noise of known variances v
    (:func:`pm_private.linear.noise_aware.NoisySuffStatRegression`); public rows in
    ``public + release`` enter exactly.

    Parameters
    ----------
    stats : LinearStats or sequence of LinearStats
        Exact (:func:`pm_private.linear_stats`), private (:func:`pm_private.release_linear_stats`, either
        noise) or summed statistics.  A non-empty sequence
        of statistics sharing d gives independent fits along a leading dim ``fit``.
    noise_aware : bool or None, default None
        Model the release noise (True) or treat the statistics as exact (False).  None: True
        whenever ``stats`` contains a private release.
    feature_names : sequence of str, optional
        The d distinct coordinates of the ``feature`` dim.  Default: the column names the releases
        recorded from a data frame (:attr:`LinearStats.feature_names`, the same for every statistics
        of a sequence), else ``x0``, ``x1``, ….
    noise_precision_alpha : float, default 2.0
        Shape a of the Gamma prior of the noise precision λ = 1/σ² (``noise_precision``; Honkela et
        al. 2018 use 2 for all four prior parameters).
    noise_precision_beta : float, default 2.0
        Rate b of the Gamma prior of λ.
    prior_precision_alpha : float, default 2.0
        Shape a₀ of the Gamma prior of the prior precision λ₀ of β (``prior_precision``).
    prior_precision_beta : float, optional
        Rate b₀ of the Gamma prior of λ₀; default 2/(k·v̄) for k covariates of mean variance v̄
        (above), from the statistics the model is built with (the data variable
        ``prior_precision_rate``, renewed by :func:`set_linear_stats`).
    intercept_sigma : float, optional
        Prior standard deviation s_α of the intercept α (statistics with an intercept column).
        Default: the releases' public response bound By (|y| ≤ By, so the mean response lies
        within it), or for exact statistics 10·√(Syy/n).
    x_cov : array_like of shape (d, d), {"integrated", "wishart", "release"} or None, default None
        The covariate model of the noise-aware likelihood (unused with ``noise_aware=False``):

        - an array: a public Σx (finite, symmetric, positive definite), stored as
          ``pm.Data("x_cov_chol", chol(Σx))`` so that ``pm.set_data`` can swap it; for statistics
          with an intercept column it may cover the d − 1 covariates, completed to the rows'
          second moments with the released means;
        - ``"integrated"``: no covariate parameters; the likelihood conditions on the released Sxx and
          integrates Σx out, under the Wishart prior below, through a normal approximation
          (:mod:`pm_private.linear.integrated`).  d + 2 latent parameters and O(d³) per gradient for
          Gaussian and Laplace releases alike (for Laplace releases the noise on Sxx is bounded by an
          isotropic one, which errs on the wide side);
        - ``"wishart"``: Σx ~ Wishart(ν, (s²/ν)·I) with s = ``x_scale`` and ν = ``x_dof``, sampled
          through the latent variables ``x_cov_chi2`` and ``x_cov_offdiag`` (d(d+1)/2 more
          parameters);
        - ``"release"``: the plug-in :func:`release_x_cov` of each release's own Sxx
          (post-processing), stored as ``pm.Data("x_cov_release_chol")`` and recomputed by
          :func:`set_linear_stats`.  Fast, but it ignores the uncertainty of Σx, so its intervals are
          too narrow;
        - None: ``"integrated"``, or ``"wishart"`` where ``clipping="model"`` or a ``likelihood``
          other than ``"auto"`` needs a covariate model.
    x_scale : float, optional
        Scale s > 0 of the Wishart prior of Σx (``"wishart"`` and ``"integrated"``).  Default: 1 when
        the releases' public preprocessing standardises x, else the RMS of the public rows, else half
        the releases' clip bound per entry.
    x_dof : float, optional
        Degrees of freedom ν > d − 1 of the Wishart prior; default d + 2.
    likelihood : {"auto", "spectral", "dense"}, default "auto"
        The form of the noise-aware likelihood with a covariate model
        (:func:`pm_private.linear.noise_aware.NoisySuffStatRegression`'s ``method``): ``"auto"``
        takes the O(d³) spectral form (:func:`pm_private.linear.noise_aware.frobenius_stats_logp`)
        for Gaussian releases and the dense O(d⁶) one otherwise (Laplace releases, d ≤ 25); both
        give the same log-density.
    clipping : {"ignore", "model"}, default "ignore"
        ``"ignore"`` models the released statistics as those of unbounded rows, which is right for a
        release that scaled whole rows with their responses (the Gaussian release's default) as long
        as few responses were clipped.  ``"model"`` models them as those of the rows the release
        bounded, so that ``beta`` is the population's coefficient when the bounds bite, under
        Gaussian covariates (more costly per gradient; see :mod:`pm_private.linear.noise_aware`).

    Returns
    -------
    pymc.Model
        With coords ``feature`` (the covariates), ``column`` (the design's columns: ``intercept``
        first when the statistics have the constant column, then the covariates), ``statistic``
        (noise-aware model) and ``fit`` (a sequence of statistics), and:

        - ``intercept`` (statistics with the constant column: the regression's intercept α),
          ``beta`` (dims ``feature``), ``noise_precision`` λ and ``prior_precision`` λ₀.  The
          noise-aware model's sampler moves the design's coefficients whitened, γ = Lxᵀ(α, β),
          Lx = chol(Σx) of the rows' second moments (PyMC transforms: the same prior, better
          geometry for NUTS, and only ``intercept`` and ``beta`` in the posterior);
        - the covariate model: the variables ``x_cov_chi2`` and ``x_cov_offdiag`` (``"wishart"``) or
          the data ``x_cov_chol``, ``x_cov_release_chol`` or ``x_cov_integrated_chol``;
        - ``likelihood``: in the noise-aware model an observed variable holding the released
          statistics (dims ``statistic``, labelled by :func:`statistic_labels`; only Sxy and Syy
          with ``x_cov="integrated"``), whose random method simulates a release from the model; with
          ``noise_aware=False`` a ``pm.Potential``.  Its statistics are stored as ``pm.Data`` named
          ``likelihood_*``;
        - the public prediction transform of the releases as ``pm.Data`` ``preprocessing`` (dim
          ``preprocessing_entry``: ``x_center[j]``, ``x_scale[j]``, ``x_clip``, ``x_norm_clip``,
          ``x_cube_scale``, ``y_center``, ``y_scale``, ``intercept``), and
          ``fit_record`` (dim ``fit_field``: the model's family and release kind), both read by
          :func:`pm_private.linear.predict_linear`.

    Raises
    ------
    ValueError
        If ``stats`` (or an item of a sequence) is not a LinearStats (statistics of another
        family are refused naming their model builder), is an empty sequence, or its statistics
        differ in d or in preprocessing;
        ``feature_names`` are not d distinct names; ``x_cov`` is neither a known name nor a finite
        symmetric positive definite d × d matrix; ``x_cov="integrated"`` is combined with
        ``clipping="model"`` or an explicit ``likelihood``; ``likelihood`` or ``clipping`` is
        unknown; ``"spectral"`` is asked of a Laplace release or the dense likelihood of d > 25; the
        Wishart prior is invalid; or noisy statistics have no positive eigenvalue.

    Warns
    -----
    NoiseDominatedWarning
        When a release's noise dominates its covariate statistics (its ``gram_snr``,
        :func:`pm_private.linear.release_signal_to_noise`, is below the smallest value at which the
        calibration benchmark found the intervals calibrated): the fit is outside the validated
        range.

    See Also
    --------
    gibbs_regression : Exact Gibbs sampler of the model with ``noise_aware=False``.
    set_linear_stats : Swap the statistics of a built model without recompiling.
    pm_private.linear.predict_linear : Posterior mean and interval of x̃ᵀβ at new covariates.

    Notes
    -----
    Privacy: the model is post-processing of the release.  Building, sampling and predicting read
    only the released statistics and their public metadata, and spend no budget.  Where n is
    private (a release under add/remove neighbours, ``stats.n`` None) the released count stands
    for it, its noise marginalised in the integrated likelihood
    (:func:`pm_private.linear.noise_aware.noise_aware_arrays`); the covariate models, whose mean
    is n times the covariates' moments, refuse such statistics.

    Contract: the public names are the variables, dims and ``preprocessing`` data listed under
    Returns; swap the statistics with :func:`set_linear_stats` (same shapes), not through the
    ``likelihood_*`` data, whose layout may change.  The cost of a gradient does not depend on n.

    Sampling: run NUTS with a higher target acceptance than PyMC's default,
    ``pm.sample(target_accept=0.95)``, as divergences appear when the release noise dominates Sxx;
    a sequence of statistics can be fitted at once by ADVI (mean-field ADVI on a product of
    independent models is independent ADVI runs).  Building a noise-aware model limits BLAS to one
    thread in the process until the model is garbage-collected
    (:mod:`pm_private.linear.noise_aware`).  The model with ``noise_aware=False`` is conditionally
    conjugate: :func:`gibbs_regression` samples it exactly, without compilation.

    Checks and predictions: ``pm.sample_prior_predictive`` and ``pm.sample_posterior_predictive``
    draw replicated releases, a check of the noise model against the one release.  New rows are
    predicted with :func:`pm_private.linear.predict_linear` and
    :func:`pm_private.linear.posterior_predictive` (through ``pm.Data("X_new")``), which apply the
    release's public preprocessing and clipping.  Leave-one-out over records (``az.loo``) is not
    available: the model sees the records only through one release, a single observation; compare
    fits by predicting public held-out rows.  The documentation's model-selection page compares the
    covariate models (with their measured interval coverage) and the sampler settings.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import linear_model, release_linear_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = X @ [1.0, -0.5] + 0.1 * rng.normal(size=200)
    >>> stats = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=1.5, y_bound=2.0, rng=0)
    >>> model = linear_model(stats)
    >>> [rv.name for rv in model.free_RVs]
    ['prior_precision', 'noise_precision', 'beta', 'intercept']
    >>> model.coords["statistic"]
    ('xy[x0]', 'xy[x1]', 'yy')
    """
    batched, stats, batch = _checked_batch(stats)
    d = batch[0].d
    intercept, intercept_sigma = _intercept_prior(batch, intercept_sigma)
    names = _column_names(batch, feature_names, d, intercept)
    if noise_aware is None:
        noise_aware = any(not s.is_exact for s in batch)
    if noise_aware:
        notes = warn_if_noise_dominated(batch)
        covariates, x_chol, likelihood, x_scale, x_dof = _covariate_law(
            stats, batch, d, x_cov=x_cov, x_scale=x_scale, x_dof=x_dof, likelihood=likelihood, clipping=clipping
        )
    coords = {"feature": names[1:] if intercept else names, "column": names}
    if noise_aware:
        labels = statistic_labels(names)  # the integrated likelihood observes Sxy and Syy only
        coords["statistic"] = labels[-(d + 1) :] if covariates == "integrated" else labels
    if batched:
        coords["fit"] = np.arange(len(stats))
    batch_dims = ("fit",) if batched else ()
    with pm.Model(coords=coords) as model:
        record_fit(LINEAR, _release_kinds(batch), warnings=notes if noise_aware else ())
        rate = _prior_precision_rate(prior_precision_beta, batch, batched)
        if prior_precision_beta is None:  # from the statistics: data that set_linear_stats renews
            rate = pm.Data("prior_precision_rate", rate, dims=batch_dims)
        prior_precision = pm.Gamma("prior_precision", alpha=prior_precision_alpha, beta=rate, dims=batch_dims)
        noise_precision = pm.Gamma(
            "noise_precision", alpha=noise_precision_alpha, beta=noise_precision_beta, dims=batch_dims
        )
        scale = 1.0 / pt.sqrt(prior_precision)
        if noise_aware:
            _noise_aware_likelihood(
                stats,
                covariates,
                x_chol,
                scale=scale,
                noise_precision=noise_precision,
                d=d,
                slopes=d - intercept,
                intercept_sigma=intercept_sigma,
                batch_dims=batch_dims,
                likelihood=likelihood,
                clipping=clipping,
                wishart={"x_scale": x_scale, "x_dof": x_dof},
            )
        else:
            sigma = scale[..., None] if batched else scale
            beta = pm.Normal("beta", mu=0.0, sigma=sigma, dims=(*batch_dims, "feature"))
            if intercept:
                constant = pm.Normal("intercept", mu=0.0, sigma=intercept_sigma, dims=batch_dims)
                beta = pt.concatenate([pt.as_tensor(constant)[..., None], beta], axis=-1)
            SuffStatRegression("likelihood", stats, beta=beta, noise_precision=noise_precision)
        record_preprocessing(_prediction_arrays(stats), batch_dims=batch_dims)
    default = not noise_aware or (covariates == "integrated" and clipping == "ignore")
    announce_compilation(model, LINEAR.name, variant=None if default else _variant(covariates, clipping))
    return model


def _variant(covariates: str, clipping: str) -> str:
    """How a noise-aware linear model differs from the default the first-fit benchmark measures."""
    laws = {"wishart": "Wishart covariates", "release": "the release's covariance", "public": "a public covariance"}
    parts = [laws[covariates]] if covariates in laws else []
    return ", ".join(parts + (["modelled clipping"] if clipping == "model" else []))


def _checked_batch(stats) -> tuple[bool, object, list]:
    """(batched, stats, batch) of :func:`linear_model`'s ``stats``: a sequence made a list, every
    item checked as the linear family's statistics (another family's refused naming its builder)."""
    if not isinstance(stats, LinearStats) and hasattr(type(stats), "family"):
        check_stats(stats, LINEAR)  # a statistics record of another family: refused naming its builder
        raise ValueError(
            f"stats: linear_model takes LinearStats (what release_linear_stats returns), got a {type(stats).__name__}"
        )
    batched = not isinstance(stats, LinearStats)
    if batched:
        stats = list(stats)
        if not stats:
            raise ValueError("no statistics given: pass a LinearStats or a non-empty sequence of them")
    batch = stats if batched else [stats]
    for item in batch:
        check_stats(item, LINEAR)
    return batched, stats, batch


def _column_names(batch, feature_names, d: int, intercept: bool) -> list[str]:
    """The d names of the design's columns (``intercept`` first with the constant column): the
    given ``feature_names``, else those the releases recorded, else ``x0``, ``x1``, …."""
    if feature_names is None:
        recorded = {s.feature_names for s in batch}
        feature_names = recorded.pop() if len(recorded) == 1 else None
    if feature_names is None:
        names = [f"x{j}" for j in range(d - intercept)]
    else:
        names = [str(v) for v in feature_names]
    if intercept and len(names) == d - 1:  # the covariates' names: the constant column is named for them
        names = ["intercept", *names]
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"feature_names must be {d} distinct names, one per feature, got {len(names)}")
    return names


def _covariate_law(stats, batch, d: int, *, x_cov, x_scale, x_dof, likelihood: str, clipping: str):
    """(covariates, x_chol, likelihood, x_scale, x_dof) of the noise-aware model: the covariate law
    (``"public"``, ``"release"``, ``"integrated"`` or ``"wishart"``), the Cholesky factor of a public
    Σx, the likelihood's form and the Wishart prior's scale and degrees of freedom, checked."""
    x_chol = None
    if x_cov is None:
        covariates = "integrated" if clipping == "ignore" and likelihood == "auto" else "wishart"
    elif isinstance(x_cov, str):
        if x_cov not in ("wishart", "release", "integrated"):
            raise ValueError(f"x_cov must be an array, 'wishart', 'release', 'integrated' or None, got {x_cov!r}")
        covariates = x_cov
    else:
        covariates = "public"
        x_chol = _check_x_cov(x_cov, d, batch)
    if covariates != "integrated":
        _check_public_n(batch, f"x_cov={x_cov!r:.20}" if isinstance(x_cov, str) else "an array x_cov")
        likelihood = likelihood_method(stats, likelihood)
    elif clipping != "ignore" or likelihood != "auto":
        raise ValueError(
            "x_cov='integrated' has its own likelihood: clipping='model' and likelihood='spectral' or "
            "'dense' need a covariate model (x_cov='wishart', 'release' or an array)"
        )
    if covariates in ("wishart", "integrated"):
        x_scale = float(np.median([_default_x_scale(s) for s in batch]) if x_scale is None else x_scale)
        x_dof = float(d + 2 if x_dof is None else x_dof)
        check_wishart_prior(d, x_scale, x_dof)
    return covariates, x_chol, likelihood, x_scale, x_dof


def _check_public_n(batch, law: str) -> None:
    """Refuse statistics whose n is private (a release under add/remove neighbours) for a
    likelihood with a covariate model, whose mean n·m(C) would need n exactly (ValueError)."""
    if any(s.private_n for s in batch):
        raise ValueError(
            f"stats: n is private (a release under add/remove neighbours), and {law} models the statistics' "
            "mean as n times the covariates' moments; fit it with x_cov='integrated' (the default), which "
            "marginalises the noisy n"
        )


def _noise_aware_likelihood(
    stats,
    covariates,
    x_chol,
    *,
    scale,
    noise_precision,
    d,
    slopes,
    intercept_sigma,
    batch_dims,
    likelihood,
    clipping,
    wishart,
) -> None:
    """The covariate law's variables or data, the whitened coefficients and the noise-aware
    likelihood (integrated, or :func:`NoisySuffStatRegression`) of :func:`linear_model`, in the
    model of the current context."""
    if covariates == "public":
        x_chol = pm.Data("x_cov_chol", x_chol)
    elif covariates == "release":
        x_chol = pm.Data("x_cov_release_chol", _release_x_chol(stats))
    elif covariates == "integrated":
        integrated = {**wishart, "x_cov": _release_x_cov(stats)}
        x_chol = pm.Data("x_cov_integrated_chol", _integrated_x_chol(stats, **integrated))
    else:
        x_chol = wishart_cholesky(
            "x_cov",
            d,
            scale=wishart["x_scale"],
            dof=wishart["x_dof"],
            dims=batch_dims,
            batch_shape=(len(stats),) if batch_dims else (),
            dim="column",
        )
    beta = _whitened_coefficients(x_chol, scale, slopes, intercept_sigma, batch_dims)
    dims = (*batch_dims, "statistic")
    if covariates == "integrated":
        IntegratedCovariateRegression(
            "likelihood", stats, beta=beta, noise_precision=noise_precision, dims=dims, **integrated
        )
    else:
        NoisySuffStatRegression(
            "likelihood",
            stats,
            beta=beta,
            noise_precision=noise_precision,
            x_chol=x_chol,
            method=likelihood,
            clipping=clipping,
            dims=dims,
        )
