"""One summary of a fit for every model family, in the layout of lifelines' ``print_summary``.

:func:`fit_summary` tabulates the coefficients of any pm_private posterior (``intercept`` and
``beta``) on the scale the model was fitted on and in the release's original units, with their
credible intervals and ArviZ's convergence diagnostics; :func:`print_summary` prints it under a
header that says what was released: the model, the mechanism, (ε, δ), the neighbour relation, n,
the public bounds and what the release says about its clipping.  Both read the family and the
public preprocessing that every model records in the posterior's ``constant_data``; neither reads
a record or spends budget.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import xarray as xr

from ..privacy.validation import check_fraction
from .family import recorded_fit, recorded_preprocessing, registered_families

__all__ = ["fit_summary", "print_summary"]

#: What exp(coef) is, by the transform a family records (the identity link has none).
_RATIOS = {
    "logit": "odds ratio",
    "log": "rate ratio",
    "survival": "hazard ratio",
    "weibull": "time ratio (accelerated failure time)",
    "discrete-time hazard": "odds ratio of the interval hazard (logit link) or hazard ratio (cloglog link)",
}


def _tree(idata) -> xr.DataTree:
    if not isinstance(idata, xr.DataTree) or "posterior" not in idata.children:
        raise TypeError(f"idata: expected the DataTree that pm.sample returns, got {type(idata).__name__}")
    return idata


def _ratio_name(record: dict | None) -> str | None:
    return None if record is None else _RATIOS.get(record["transform"])


def _units(tree: xr.DataTree, d: int) -> dict | None:
    """(x_center, x_scale, y_center, y_scale) of the public preprocessing, when the fit records one."""
    recorded = recorded_preprocessing(tree)
    if recorded is None:
        return None
    center = np.asarray(recorded["x_center"], dtype=np.float64)
    scale = np.asarray(recorded["x_scale"], dtype=np.float64)
    if center.shape != (d,) or scale.shape != (d,):
        return None  # a batched or per-cell fit: no single set of original units
    y_center = float(recorded.get("y_center", 0.0))
    y_scale = float(recorded.get("y_scale", 1.0))
    if np.all(center == 0.0) and np.all(scale == 1.0) and y_center == 0.0 and y_scale == 1.0:
        return None  # fitted on the original units
    return {"x_center": center, "x_scale": scale, "y_center": y_center, "y_scale": y_scale}


def _coefficient_draws(posterior: xr.Dataset) -> xr.Dataset:
    """``intercept`` and ``beta`` (one variable per scalar, ``beta[<feature>]``), as (chain, draw)."""
    names = [name for name in ("intercept", "beta") if name in posterior]
    if not names:
        raise ValueError(f"idata: the posterior has no 'intercept' or 'beta' (it has {list(posterior.data_vars)})")
    columns = {}
    if "intercept" in posterior:
        if posterior["intercept"].ndim != 2:
            raise ValueError("idata: a batched fit (one intercept per fit) has no single summary; select a fit first")
        columns["intercept"] = posterior["intercept"]
    if "beta" in posterior:
        beta = posterior["beta"]
        if beta.ndim != 3:
            raise ValueError("idata: a batched fit (one beta per fit) has no single summary; select a fit first")
        dim = beta.dims[-1]
        for label in beta[dim].values:
            columns[f"beta[{label}]"] = beta.sel({dim: label}, drop=True)
    broken = [name for name, draws in columns.items() if not np.isfinite(draws.values).all()]
    if broken:
        raise ValueError(
            f"idata: the posterior draws of {broken} hold NaN or infinite values (a failed or diverged "
            "run); a summary of them would be NaN: sample again, or drop the failed chains first"
        )
    return xr.Dataset(columns)


def _original_units(draws: xr.Dataset, units: dict) -> xr.Dataset:
    """β_orig = s_y·β/s_x, α_orig = c_y + s_y·(α − Σ β·c_x/s_x) (rows within the release's bounds)."""
    betas = [name for name in draws.data_vars if name.startswith("beta[")]
    out = {}
    shift = 0.0
    for j, name in enumerate(betas):
        slope = draws[name] / units["x_scale"][j]
        shift = shift + slope * units["x_center"][j]
        out[name] = units["y_scale"] * slope
    if "intercept" in draws:
        out = {"intercept": units["y_center"] + units["y_scale"] * (draws["intercept"] - shift), **out}
    return xr.Dataset(out)


def fit_summary(idata, *, prob: float = 0.95) -> pd.DataFrame:
    """The coefficients of a pm_private fit, a row each, in the layout of lifelines' ``print_summary``.

    Columns:

    ``coef``, ``se(coef)``, ``coef lower 95%``, ``coef upper 95%``
        posterior mean, sd and equal-tailed credible interval on the scale the model was fitted
        on (the public, preprocessed covariates and response);
    ``coef (original)``, ``lower 95% (original)``, ``upper 95% (original)``
        the same in the original units, when the release recorded a public preprocessing
        x̃ = (x − c)/s, ỹ = (y − c_y)/s_y: β_orig = s_y·β/s and α_orig = c_y + s_y·(α − Σⱼ βⱼcⱼ/sⱼ),
        draw by draw (the regression of y on x for rows inside the release's bounds);
    ``exp(coef)``, ``exp(coef) lower 95%``, ``exp(coef) upper 95%``
        for families whose exp(β) is read as a ratio (odds ratios of the logistic model, rate
        ratios of the Poisson model, hazard ratios of the survival models, time ratios of the
        Weibull model; in original units where they exist); ``attrs["ratio"]`` names it;
    ``r_hat``, ``ess_bulk``, ``ess_tail``
        ArviZ's rank-normalised R̂ and effective sample sizes (Vehtari et al. 2021).

    Parameters
    ----------
    idata : xarray.DataTree
        What ``pm.sample`` returned for a model built by pm_private (its ``posterior`` and
        ``constant_data``).
    prob : float, default 0.95
        The probability of the intervals, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        One row per coefficient (``intercept``, ``beta[<feature>]``); ``attrs``: ``family``,
        ``release`` (the kind the model recorded), ``ratio``, ``prob``.

    Raises
    ------
    TypeError
        If ``idata`` is not a DataTree with a posterior.
    ValueError
        If ``prob`` is not in (0, 1), or the posterior has no coefficients, is batched or holds
        NaN or infinite coefficient draws (named in the message).

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pm_private import fit_summary, logistic_model, release_logistic_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.uniform(size=2000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5])))
    >>> release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=0)
    >>> with logistic_model(release, feature_names=["a", "b"]):
    ...     idata = pm.sample(200, tune=200, chains=2, random_seed=1, progressbar=False,
    ...                       nuts_sampler="pymc")  # doctest: +SKIP
    >>> fit_summary(idata).index.tolist()  # doctest: +SKIP
    ['intercept', 'beta[a]', 'beta[b]']
    """
    import arviz as az

    prob = check_fraction("prob", prob, closed=False)
    tree = _tree(idata)
    posterior = tree["posterior"].dataset
    draws = _coefficient_draws(posterior)
    record = recorded_fit(tree)
    percent = f"{100 * prob:g}%"
    options = {"ci_kind": "eti", "ci_prob": prob, "round_to": "none"}
    bounds = [f"eti{100 * prob:g}_lb", f"eti{100 * prob:g}_ub"]
    stats = az.summary(draws, kind="stats", **options)
    columns = {
        "coef": stats["mean"],
        "se(coef)": stats["sd"],
        f"coef lower {percent}": stats[bounds[0]],
        f"coef upper {percent}": stats[bounds[1]],
    }
    units = _units(tree, sum(name.startswith("beta[") for name in draws.data_vars))
    scaled = draws
    if units is not None:
        scaled = _original_units(draws, units)
        original = az.summary(scaled, kind="stats", **options).reindex(stats.index)
        columns["coef (original)"] = original["mean"]
        columns[f"lower {percent} (original)"] = original[bounds[0]]
        columns[f"upper {percent} (original)"] = original[bounds[1]]
    ratio = _ratio_name(record)
    if ratio is not None:
        ratios = az.summary(np.exp(scaled), kind="stats", **options).reindex(stats.index)
        columns["exp(coef)"] = ratios["mean"]
        columns[f"exp(coef) lower {percent}"] = ratios[bounds[0]]
        columns[f"exp(coef) upper {percent}"] = ratios[bounds[1]]
    diagnostics = az.summary(draws, kind="diagnostics", round_to="none")
    for key in ("r_hat", "ess_bulk", "ess_tail"):
        columns[key] = diagnostics[key]
    table = pd.DataFrame(columns).astype(np.float64)
    table.index.name = "covariate"
    table.attrs.update(
        family=None if record is None else record["family"],
        release=None if record is None else record["release"],
        ratio=ratio,
        prob=prob,
    )
    return table


def _parts(release) -> list:
    """The releases a statistics record sums (``LinearStats.releases``), or the release itself."""
    return list(getattr(release, "releases", ())) or [release]


def _release_lines(release) -> list[tuple[str, str]]:
    """Header lines of a release: mechanism, (ε, δ), neighbours, n, bounds, clipping."""
    parts = _parts(release)
    lines = []
    for part in parts:
        if not hasattr(part, "epsilon"):
            continue
        lines.append(("mechanism", str(part.mechanism)))
        delta = getattr(part, "delta", 0.0)
        guarantee = f"ε = {part.epsilon:g}, δ = {delta:g}" if delta else f"ε = {part.epsilon:g} (pure)"
        if not getattr(part, "private", True):
            guarantee += " (seeded noise: reproducible, not private)"
        lines.append(("privacy", f"{guarantee}; neighbours: {part.neighbours}"))
    if not lines:
        lines.append(("privacy", "exact statistics (no release noise)"))
    if getattr(release, "n", None) is not None:
        lines.append(("n", f"{int(release.n)} (public)"))
    for part in [release, *parts]:
        bounds = [f"{name} = {getattr(part, name):g}" for name in ("x_bound", "y_bound") if getattr(part, name, None)]
        if bounds:
            lines.append(("bounds", ", ".join(bounds)))
            break
    lines.extend(("clipping", text) for text in _clip_lines(release, parts))
    return lines


def _clip_lines(release, parts: list) -> list[str]:
    """What the release (or each release in a sum, ``parts``) says of its clipping (``clip_lines()``)."""
    lines = [line for part in parts if hasattr(part, "clip_lines") for line in part.clip_lines()]
    if lines or any(hasattr(part, "clip_lines") for part in parts):
        return lines or ["no clipping counts released (clip_share=0)"]
    if getattr(release, "x_bound", None):
        return ["rows with ‖x‖ > Bx were projected onto the ball; their count is not released"]
    return []


def print_summary(idata, release=None, *, prob: float = 0.95, decimals: int = 3, file=None) -> None:
    """Print :func:`fit_summary` under a header, as lifelines' fitters' ``print_summary`` does.

    The header names the model (family and builder), the release kind it was fitted to, the
    draws and divergences, and, when ``release`` is given, its mechanism, (ε, δ), neighbour
    relation, n, public bounds and clipping (what the release's ``clip_lines()`` says: the linear
    releases' estimated clipped fractions, the survival regression's projected share; other
    releases do not release their clip counts).

    Parameters
    ----------
    idata : xarray.DataTree
        What ``pm.sample`` returned for a model built by pm_private.
    release : Release or statistics record, optional
        What the model was fitted to (a release, or ``LinearStats``).
    prob : float, default 0.95
        The probability of the intervals.
    decimals : int, default 3
        Decimals of the table.
    file : file-like, optional
        Where to print (default ``sys.stdout``).

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pm_private import linear_model, print_summary, release_linear_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = X @ [1.0, -0.5] + rng.normal(size=2000)
    >>> stats = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=4.0, rng=0)
    >>> with linear_model(stats):
    ...     idata = pm.sample(200, tune=200, chains=2, random_seed=1, progressbar=False,
    ...                       nuts_sampler="pymc")  # doctest: +SKIP
    >>> print_summary(idata, stats)  # doctest: +SKIP
    """
    table = fit_summary(idata, prob=prob)
    tree = _tree(idata)
    family = table.attrs["family"]
    builder = registered_families().get(family)
    lines = [("model", "unknown" if family is None else f"{family} ({builder.builder if builder else family})")]
    if table.attrs["release"]:
        lines.append(("fitted to", table.attrs["release"]))
    posterior = tree["posterior"].dataset
    draws = f"{posterior.sizes['chain']} chains × {posterior.sizes['draw']} draws"
    if "sample_stats" in tree.children and "diverging" in tree["sample_stats"].dataset:
        draws += f", {int(tree['sample_stats'].dataset['diverging'].sum())} divergent"
    lines.append(("draws", draws))
    if release is not None:
        lines.extend(_release_lines(release))
    if table.attrs["ratio"]:
        lines.append(("exp(coef)", table.attrs["ratio"]))
    out = sys.stdout if file is None else file
    width = max(len(key) for key, _ in lines)
    print("<pm_private fit summary>", file=out)
    for key, value in lines:
        print(f"{key:>{width}} = {value}", file=out)
    print("---", file=out)
    print(table.round(decimals).to_string(), file=out)
