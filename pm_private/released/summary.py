"""One summary of a fit for every model family, in the layout of lifelines' ``print_summary``.

:func:`fit_summary` tabulates the coefficients of any pm_private posterior (``intercept`` and
``beta``) on one scale, named in the table: the release's original units by default, or the
public scale the model was fitted on; exp(coef) beside them where it reads as a ratio, with their
credible intervals and ArviZ's convergence diagnostics.  :func:`print_summary` prints it, in
blocks no wider than 100 columns, under a header that says what was released: the model, the
mechanism, (ε, δ), the neighbour relation, n, the public bounds and what the release says about
its clipping.  Both read the family and the public preprocessing that every model records in the
posterior's ``constant_data``; neither reads a record or spends budget.
"""

from __future__ import annotations

import itertools
import sys
import textwrap

import numpy as np
import pandas as pd
import xarray as xr

from .._engine.keywords import renamed_keywords
from ..privacy.relations import ADD_REMOVE
from ..privacy.units import PERSON, RECORD, neighbour_text
from ..privacy.validation import check_fraction
from .family import recorded_fit, recorded_preprocessing, recorded_warnings, registered_families

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
    """``pm.sample``'s DataTree, or a bare posterior Dataset as a tree that records nothing."""
    if isinstance(idata, xr.Dataset):
        return xr.DataTree.from_dict({"posterior": idata})
    if not isinstance(idata, xr.DataTree) or "posterior" not in idata.children:
        raise TypeError(f"idata: expected the DataTree that pm.sample returns, got {type(idata).__name__}")
    return idata


#: The coefficients a summary shows unless ``var_names`` names others.
COEFFICIENTS = ("intercept", "beta")

#: The kinds of credible interval: equal-tailed (quantiles) or highest density.
INTERVAL_KINDS = ("eti", "hdi")


def check_interval_kind(kind) -> str:
    """``kind`` if it is one of :data:`INTERVAL_KINDS`, else a ValueError naming the argument."""
    if not isinstance(kind, str) or kind not in INTERVAL_KINDS:
        raise ValueError(f"kind must be one of {INTERVAL_KINDS}, got {kind!r}")
    return kind


def _variables(posterior: xr.Dataset, var_names) -> list[str]:
    """The posterior variables to tabulate: ``var_names`` (a name or a list), or the coefficients."""
    if var_names is None:
        names = [name for name in COEFFICIENTS if name in posterior]
        if not names:
            raise ValueError(
                f"idata: the posterior has no 'intercept' or 'beta' (it has {list(posterior.data_vars)}); "
                "name the variables with var_names"
            )
        return names
    names = [var_names] if isinstance(var_names, str) else list(var_names)
    missing = [name for name in names if name not in posterior.data_vars]
    if missing:
        raise ValueError(f"var_names {missing} are not in the posterior (it has {list(posterior.data_vars)})")
    return names


def _ratio_name(record: dict | None) -> str | None:
    return None if record is None else _RATIOS.get(record["transform"])


#: The scales a summary can be on.
SCALES = ("original", "fitted")


def _units(tree: xr.DataTree, d: int) -> tuple[dict | None, bool]:
    """The public preprocessing to undo, (x_center, x_scale, y_center, y_scale), when the fit
    records one that maps a row to the fitted scale; and whether it records a map at all."""
    recorded = recorded_preprocessing(tree)
    if recorded is None:
        return None, False
    center = np.asarray(recorded["x_center"], dtype=np.float64)
    scale = np.asarray(recorded["x_scale"], dtype=np.float64)
    if center.shape != (d,) or scale.shape != (d,):
        return None, True  # a batched or per-cell fit: no single set of original units
    y_center = float(recorded.get("y_center", 0.0))
    y_scale = float(recorded.get("y_scale", 1.0))
    if np.all(center == 0.0) and np.all(scale == 1.0) and y_center == 0.0 and y_scale == 1.0:
        return None, False  # fitted on the original units
    return {"x_center": center, "x_scale": scale, "y_center": y_center, "y_scale": y_scale}, True


def _coefficient_draws(posterior: xr.Dataset) -> xr.Dataset:
    """``intercept`` and ``beta``, one variable per scalar as (chain, draw), labelled by their
    other dims' coordinates as ArviZ labels them: ``beta[<feature>]``, ``intercept[<cell>]``."""
    columns = {}
    for name in (name for name in COEFFICIENTS if name in posterior):
        draws = posterior[name]
        if "fit" in draws.dims:  # the batch dim of a batched linear fit
            raise ValueError(f"idata: a batched fit (one {name} per fit) has no single summary; select a fit first")
        dims = [dim for dim in draws.dims if dim not in ("chain", "draw")]
        if not dims:
            columns[name] = draws
            continue
        for labels in itertools.product(*(draws[dim].values for dim in dims)):
            key = f"{name}[{', '.join(map(str, labels))}]"
            columns[key] = draws.sel(dict(zip(dims, labels, strict=True)), drop=True)
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


@renamed_keywords(prob="interval")
def fit_summary(
    idata, var_names=None, *, interval: float = 0.95, scale: str = "original", kind: str = "eti"
) -> pd.DataFrame:
    """The coefficients of a pm_private fit, a row each, in the layout of lifelines' ``print_summary``.

    The rows are ``intercept`` and ``beta[<feature>]`` (one per scalar coefficient), or the
    variables ``var_names`` names (``p``, the Weibull shape; ``alpha[<interval>]``, a baseline).
    Every coefficient is on one scale, ``attrs["scale"]``; other variables are as sampled:

    ``"original"`` (the default)
        the release's original units: where the release recorded a public preprocessing
        x̃ = (x − c)/s, ỹ = (y − c_y)/s_y, each draw is mapped back, β_orig = s_y·β/s and
        α_orig = c_y + s_y·(α − Σⱼ βⱼcⱼ/sⱼ) (the regression of y on x for rows inside the
        release's bounds), so a slope is per unit of its feature; without one the fitted scale
        is the original one;
    ``"fitted"``
        the public scale the model was fitted on (a slope per x_scale of its feature).  A
        batched or per-cell preprocessing has no single set of original units, so its summary is
        on this scale whatever ``scale`` asks.

    Columns, in lifelines' order:

    ``coef``, ``exp(coef)``, ``se(coef)``, ``coef lower 95%``, ``coef upper 95%``, ``exp(coef) lower 95%``, ``exp(coef) upper 95%``
        posterior mean, exp of it, posterior sd, the credible interval (equal-tailed or highest
        density, ``kind``) and exp of its bounds.  The exp columns are shown for families whose
        exp(β) is read as a ratio (odds ratios of the logistic model, rate ratios of the Poisson
        model, hazard ratios of the survival models, time ratios of the Weibull model, odds ratios
        of the interval hazard of the discrete-time logit model; ``attrs["ratio"]`` names it) and
        for a posterior that records no family, not for the linear model.  exp(coef) is exp of
        the ``coef`` column, as lifelines prints exp of its point estimate; the posterior mean of
        exp(β) is larger (Jensen's inequality) and is not shown.  Equal-tailed bounds of exp(β)
        are exactly exp of the coefficient's bounds (exp is increasing);
    ``r_hat``, ``ess_bulk``, ``ess_tail``
        ArviZ's rank-normalised R̂ and effective sample sizes (Vehtari et al. 2021) of the
        coefficients on the table's scale.

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        What ``pm.sample`` returned for a model built by pm_private (its ``posterior`` and
        ``constant_data``), or a posterior Dataset (which records no family or preprocessing).
    var_names : str or list of str, optional
        The posterior variables to tabulate, in this order (default ``intercept`` and ``beta``).
    interval : float, default 0.95
        The probability of the intervals, in (0, 1).
    scale : {"original", "fitted"}, default "original"
        The scale of the coefficients (above).
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed (quantile) or highest-density credible intervals.

    Returns
    -------
    pandas.DataFrame
        One row per scalar; ``attrs``: ``family``, ``release`` (the kind the model recorded),
        ``ratio``, ``interval``, ``kind``, ``scale``
        (``"original"`` or ``"fitted"``, the scale of the table) and ``preprocessed`` (whether the
        fit recorded a public preprocessing that is not the identity).

    Raises
    ------
    TypeError
        If ``idata`` is not a DataTree with a posterior or a Dataset.
    ValueError
        If ``interval`` is not in (0, 1), ``scale`` or ``kind`` is not one of its values, a name of
        ``var_names`` is not in the posterior, or the posterior has no coefficients, is batched or
        holds NaN or infinite coefficient draws (named in the message).

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

    interval = check_fraction("interval", interval, closed=False)
    if not isinstance(scale, str) or scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    kind = check_interval_kind(kind)
    tree = _tree(idata)
    record = recorded_fit(tree)
    draws, scale, preprocessed = _draws_on_scale(tree, var_names, scale)
    percent = f"{100 * interval:g}%"
    stats = az.summary(draws, kind="stats", ci_kind=kind, ci_prob=interval, round_to="none")
    lower, upper = stats[f"{kind}{100 * interval:g}_lb"], stats[f"{kind}{100 * interval:g}_ub"]
    ratio = _ratio_name(record)
    shows_exp = ratio is not None or record is None
    columns = {"coef": stats["mean"]}
    if shows_exp:
        columns["exp(coef)"] = np.exp(stats["mean"])
    columns.update({"se(coef)": stats["sd"], f"coef lower {percent}": lower, f"coef upper {percent}": upper})
    if shows_exp:
        columns.update({f"exp(coef) lower {percent}": np.exp(lower), f"exp(coef) upper {percent}": np.exp(upper)})
    diagnostics = az.summary(draws, kind="diagnostics", round_to="none").reindex(stats.index)
    for key in ("r_hat", "ess_bulk", "ess_tail"):
        columns[key] = diagnostics[key]
    table = pd.DataFrame(columns).astype(np.float64)
    table.index.name = "covariate"
    table.attrs.update(
        family=None if record is None else record["family"],
        release=None if record is None else record["release"],
        ratio=ratio,
        interval=interval,
        kind=kind,
        scale=scale,
        preprocessed=preprocessed,
    )
    return table


def _draws_on_scale(tree: xr.DataTree, var_names, scale: str) -> tuple[xr.Dataset, str, bool]:
    """The draws to tabulate, in the order of ``var_names``: the coefficients one variable per
    scalar (mapped to the original units where asked and recorded), any other variable as it is;
    with the scale the table is on and whether the fit recorded a preprocessing."""
    posterior = tree["posterior"].dataset
    names = _variables(posterior, var_names)
    coefficients = _coefficient_draws(posterior) if set(names) & set(COEFFICIENTS) else xr.Dataset()
    units, preprocessed = _units(tree, sum(name.startswith("beta[") for name in coefficients.data_vars))
    if units is not None and scale == "original":
        coefficients = _original_units(coefficients, units)
    elif preprocessed:
        scale = "fitted"
    columns = {}
    for name in names:
        if name in COEFFICIENTS:
            columns.update({key: coefficients[key] for key in coefficients.data_vars if key.split("[")[0] == name})
        else:
            columns[name] = posterior[name]
    return xr.Dataset(columns), scale, preprocessed


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
        relation = neighbour_text(part.neighbours, getattr(part, "unit", RECORD))
        lines.append(("privacy", f"{guarantee}; neighbours: {relation}"))
    if not lines:
        lines.append(("privacy", "exact statistics (no release noise)"))
    if any(getattr(part, "neighbours", "") == ADD_REMOVE for part in parts):
        lines.append(("n", "private (add/remove neighbours)"))
    elif getattr(release, "n", None) is not None:
        persons = any(getattr(part, "unit", RECORD) == PERSON for part in parts)
        lines.append(("n", f"{int(release.n)} {'persons ' if persons else ''}(public)"))
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


#: The widest line :func:`print_summary` writes (a terminal's 100 columns).
WIDTH = 100


def _scale_line(table: pd.DataFrame) -> str:
    """What the coefficients of ``table`` are per, in words."""
    if not table.attrs["preprocessed"]:
        return "the features as released (no public preprocessing recorded)"
    if table.attrs["scale"] == "original":
        return "original units (public centring and scaling undone): slopes per unit of each feature"
    return "the public scale fitted on, (x − x_center)/x_scale: slopes per x_scale of each feature"


def _as_text(table: pd.DataFrame, decimals: int) -> pd.DataFrame:
    """The cells as text: effective sample sizes as whole draws, the rest to ``decimals``."""
    text = {}
    for column in table.columns:
        values = table[column].to_numpy()
        if column.startswith("ess_"):
            text[column] = [str(int(v)) if np.isfinite(v) else "nan" for v in values]
        else:
            text[column] = [f"{v:.{decimals}f}" for v in values]
    return pd.DataFrame(text, index=table.index)


def _blocks(text: pd.DataFrame, width: int = WIDTH) -> list[str]:
    """The table in blocks of whole column groups (coef, exp(coef), diagnostics), each at most
    ``width`` wide where its row labels allow: as lifelines prints its columns in two sets."""
    groups: dict[str, list[str]] = {}
    for column in text.columns:
        key = (
            "exp" if column.startswith("exp(") else "diagnostics" if column in ("r_hat", "ess_bulk", "ess_tail") else ""
        )
        groups.setdefault(key, []).append(column)

    def render(columns: list[str]) -> list[str]:  # two spaces before each column
        table = text[columns].to_string(col_space={column: len(column) + 1 for column in columns})
        return [line.rstrip() for line in table.splitlines()]

    def fits(columns: list[str]) -> bool:
        return max(len(line) for line in render(columns)) <= width

    blocks: list[list[str]] = [[]]
    for group in groups.values():
        if blocks[-1] and not fits(blocks[-1] + group):
            blocks.append([])
        if fits(blocks[-1] + group):
            blocks[-1] += group
            continue
        for column in group:  # a group too wide for a block of its own is cut where it must be
            if blocks[-1] and not fits(blocks[-1] + [column]):
                blocks.append([])
            blocks[-1].append(column)
    return ["\n".join(render(block)) for block in blocks]


def _header(lines: list[tuple[str, str]], width: int = WIDTH) -> list[str]:
    """``key = value`` lines, keys right-aligned, long values wrapped under their start."""
    indent = max(len(key) for key, _ in lines) + 3
    return [
        textwrap.fill(
            value,
            width,
            initial_indent=f"{key:>{indent - 3}} = ",
            subsequent_indent=" " * indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        for key, value in lines
    ]


@renamed_keywords(prob="interval")
def print_summary(
    idata, release=None, *, interval: float = 0.95, scale: str = "original", decimals: int = 3, file=None
) -> None:
    """Print :func:`fit_summary` under a header, as lifelines' fitters' ``print_summary`` does.

    The header names the model (family and builder), the release kind it was fitted to, the
    draws and divergences, and, when ``release`` is given, its mechanism, (ε, δ), neighbour
    relation, n, public bounds and clipping (what the release's ``clip_lines()`` says: the linear
    releases' estimated clipped fractions, the survival regression's projected share; other
    releases do not release their clip counts), then the scale of the coefficients and what
    exp(coef) is, and the warnings the model's build raised (a release's noise that dominates, a
    covariate law on too few public rows), each with its figure.  The table follows in blocks of
    whole column groups (coef; exp(coef); R̂ and ESS), each at most 100 columns wide unless a row
    label alone is wider; effective sample sizes are printed as whole draws.

    Parameters
    ----------
    idata : xarray.DataTree
        What ``pm.sample`` returned for a model built by pm_private.
    release : Release or statistics record, optional
        What the model was fitted to (a release, or ``LinearStats``).
    interval : float, default 0.95
        The probability of the intervals.
    scale : {"original", "fitted"}, default "original"
        The scale of the coefficients (:func:`fit_summary`).
    decimals : int, default 3
        Decimals of the table.
    file : file-like, optional
        Where to print (default ``sys.stdout``).

    Raises
    ------
    TypeError, ValueError
        For the reasons of :func:`fit_summary`.

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
    table = fit_summary(idata, interval=interval, scale=scale)
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
    lines.append(("scale", _scale_line(table)))
    if table.attrs["ratio"]:
        lines.append(("exp(coef)", f"{table.attrs['ratio']}: exp of coef and of its interval's bounds"))
    lines.append(("intervals", f"{100 * table.attrs['interval']:g}% equal-tailed credible intervals"))
    lines.extend(("warning", message) for message in recorded_warnings(tree))
    out = sys.stdout if file is None else file
    print("<pm_private fit summary>", file=out)
    for line in _header(lines):
        print(line, file=out)
    print("---", file=out)
    print("\n\n".join(_blocks(_as_text(table, decimals))), file=out)
