"""Model families: which family a statistics record or a fitted posterior belongs to, so that no
builder or predictor answers for another family's data.

Every model family of pm_private (linear, logistic, Poisson, the survival models) declares one
:class:`Family`: its name, its release function, its model builder, its predictor and the
transform its predictor applies to the linear predictor xᵀβ (+ b).  Statistics records carry
their family as a class attribute ``family``; a model builder records the family, the release
kind and the transform in the model as the labelled constant ``fit_record`` (dim
``fit_field``, labels ``family=…``, ``release=…``, ``transform=…``), which ``pm.sample`` copies
into the ``constant_data`` group of the posterior it returns, whatever the sampler.  Builders
(:func:`check_stats`) and predictors (:func:`check_posterior`) refuse another family's input with
a message that names both families and the function to use instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "DISCRETE_TIME_HAZARD",
    "FIT_RECORD",
    "IDENTITY",
    "LOG",
    "LOGIT",
    "PRIOR_SUFFIXES",
    "PROPORTIONAL_HAZARDS",
    "WEIBULL_AFT",
    "Family",
    "Hook",
    "Link",
    "NoiseDominatedWarning",
    "check_posterior",
    "check_stats",
    "describe_family",
    "feature_coords",
    "noise_dominated_message",
    "record_fit",
    "packed_preprocessing",
    "record_preprocessing",
    "recorded_fit",
    "recorded_warnings",
    "recorded_preprocessing",
    "registered_families",
]

#: Name of the labelled constant in which a model records its family, and of its dim.
FIT_RECORD, FIT_FIELD = "fit_record", "fit_field"
#: Name of the labelled constant holding the release's public map of new rows, and of its dim.
PREPROCESSING, PREPROCESSING_ENTRY = "preprocessing", "preprocessing_entry"
_FIELDS = ("family", "release", "transform")
_REGISTRY: dict[str, Family] = {}


class Hook:
    """A function or class of a family, named by its module and imported on first use.

    A family object holds hooks, not the objects themselves, so that reading the registry (the
    command line's help, a message naming a family's builder) imports no model code and no PyMC.
    Calling a hook calls what it names; :meth:`resolve` returns it (the contract tests check the
    signature of every family's verbs on it).

    Parameters
    ----------
    path : str
        ``"package.module:name"``.
    """

    __slots__ = ("module", "name")

    def __init__(self, path: str):
        module, _, name = path.partition(":")
        if not module or not name:
            raise ValueError(f"path: expected 'package.module:name', got {path!r}")
        object.__setattr__(self, "module", module)
        object.__setattr__(self, "name", name)

    def resolve(self):
        """The object the hook names (imports its module).

        Returns
        -------
        object
            The function or class.
        """
        import importlib

        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __eq__(self, other) -> bool:
        return isinstance(other, Hook) and (self.module, self.name) == (other.module, other.name)

    def __hash__(self) -> int:
        return hash((self.module, self.name))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Hook('{self.module}:{self.name}')"


@dataclass(frozen=True)
class Link:
    """What a family's predictor applies to the linear predictor η = xᵀβ (+ b): the inverse of its
    link function (as scikit-learn's link objects own their ``inverse``).

    Parameters
    ----------
    name : str
        ``"identity"``, ``"logit"``, ``"log"``, ``"survival"`` (proportional hazards:
        S(t | x) = exp(−H₀(t)·e^η), given H₀(t)), ``"weibull"`` (accelerated failure time:
        S(t | x) = exp(−(t·e^{−η})^p), given t and p) or ``"discrete-time hazard"`` (hazards
        h_j = g⁻¹(η_j), S_j = Π_{i ≤ j} (1 − h_i)).
    inverse : callable
        ``inverse(eta, **given)`` with numpy arrays: the mean (or survival) for the linear predictor.
    """

    name: str
    inverse: Callable = field(compare=False, repr=False)


def _expit(eta):
    from scipy.special import expit

    return expit(eta)


def _proportional_hazards(eta, cumulative_hazard):
    """S = exp(−H₀·e^η), as exp(−exp(log H₀ + η)): S = 1 where H₀ = 0, whatever the finite η."""
    with np.errstate(divide="ignore"):
        return np.exp(-np.exp(np.log(cumulative_hazard) + eta))


def _weibull_aft(eta, time, shape):
    """S = exp(−(t·e^{−η})^p): the scale λ = e^η (accelerated failure time)."""
    with np.errstate(divide="ignore"):
        return np.exp(-np.exp(shape * (np.log(time) - eta)))


def _discrete_time_survival(eta, hazard_link: str = "logit"):
    """S_j = Π_{i ≤ j} (1 − h_i) along the last axis (the intervals), h = g⁻¹(η) for the hazard's
    link g: logit, cloglog (h = 1 − exp(−e^η)) or probit."""
    from scipy.special import expit, ndtr

    inverse = {"logit": expit, "cloglog": lambda z: -np.expm1(-np.exp(z)), "probit": ndtr}[hazard_link]
    return np.cumprod(1.0 - inverse(eta), axis=-1)


#: The links of the families, by name.
IDENTITY = Link("identity", np.asarray)
LOGIT = Link("logit", _expit)
LOG = Link("log", np.exp)
PROPORTIONAL_HAZARDS = Link("survival", _proportional_hazards)
WEIBULL_AFT = Link("weibull", _weibull_aft)
DISCRETE_TIME_HAZARD = Link("discrete-time hazard", _discrete_time_survival)


@dataclass(frozen=True)
class Family:
    """One model family: its hooks, read by the builders, the predictors, the command line, the
    contract tests and the documentation.

    Every family object states the same facts (as OpenDP's measurements do): how its statistics
    are released, which model is fitted to them, how new rows are predicted, and how the command
    line releases, fits and summarises it.  The verbs are hooks (:class:`Hook`): imported when
    used, so that the registry itself is cheap to read.  The prior defaults are the keyword
    defaults of ``builder``'s signature (:attr:`prior_defaults`), written once there.

    Parameters
    ----------
    name : str
        The family's name, e.g. ``"logistic"``: the spelling of every message, record and key.
    title : str
        What it fits, in prose: ``"logistic regression"``.
    link : Link
        What the predictor applies to the linear predictor.
    builder : Hook
        The model builder (``logistic_model``): a release (or exact statistics) to a PyMC model.
    predictor : Hook
        The predictor of new rows from a fitted posterior (``predict_logistic``).
    release : Hook or None
        The function that releases the statistics (``release_logistic_stats``); None for families
        fitted to records.
    release_type : Hook or None
        The class of its releases (``LogisticStatsRelease``).
    setter : Hook or None
        Swaps the statistics of a built model (``set_logistic_stats``), to refit without compiling.
    noise_plan : Hook or None
        The release's noise as a function of d and the public arguments only (the command line's
        dry run).
    kind : str or None
        The kind of its entries in a release file (``"logistic_stats"``).
    command : str or None
        The ``pm-private release`` subcommand that writes them (``"logistic-stats"``).
    start : str
        How PyMC's NUTS starts and adapts its mass matrix (the command line's fit):
        ``"laplace"`` (at the posterior mode, a dense adaptation started at the Laplace
        approximation there), ``"adapt_full"`` (PyMC's ``init="jitter+adapt_full"``: a dense
        adaptation started at the identity) or ``"adapt_diag"`` (PyMC's default, a diagonal one).
    nutpie_adaptation : str
        nutpie's mass-matrix adaptation for this family's models in :func:`pm_private.sample`
        (``"diag"``, nutpie's default, or ``"low_rank"``), unless the caller names one.
    target_accept : float
        NUTS's target acceptance rate for this family's models in :func:`pm_private.sample`, in
        (0, 1), unless the caller names one (0.8, the samplers' default, unless declared).
    description : str
        The model in one line, with its references (the posterior file's ``model`` attribute).
    constants : tuple of str
        The release's public preprocessing constants copied to a posterior file (for predictions).
    report : Hook or None
        A function of the release printed after the command line's summary.
    features : bool
        Whether the builder takes the release's ``feature_names``.
    statistics_of : str or None
        The family whose statistics its builder fits, when not its own: a model with another
        link on the same release (post-processing of it), e.g. a probit model of the logistic
        family's release, which then has no ``release`` of its own.
    """

    name: str
    title: str
    link: Link
    builder: Hook
    predictor: Hook
    release: Hook | None = None
    release_type: Hook | None = None
    setter: Hook | None = None
    noise_plan: Hook | None = None
    kind: str | None = None
    command: str | None = None
    start: str = "adapt_full"
    nutpie_adaptation: str = "diag"
    target_accept: float = 0.8
    description: str = ""
    constants: tuple[str, ...] = ()
    report: Hook | None = None
    features: bool = True
    statistics_of: str | None = None

    def __post_init__(self):
        if self.start not in ("laplace", "adapt_full", "adapt_diag"):
            raise ValueError(f"start: 'laplace', 'adapt_full' or 'adapt_diag', got {self.start!r}")
        if self.nutpie_adaptation not in ("diag", "low_rank"):
            raise ValueError(f"nutpie_adaptation: 'diag' or 'low_rank', got {self.nutpie_adaptation!r}")
        if not 0 < self.target_accept < 1:
            raise ValueError(f"target_accept: in (0, 1), got {self.target_accept!r}")
        if self.statistics_of is not None and self.release is not None:
            raise ValueError(f"statistics_of: a family that fits the {self.statistics_of} statistics has no release")
        if _REGISTRY.get(self.name, self) != self:
            raise TypeError(f"family {self.name!r} is already declared as {_REGISTRY[self.name]}")
        _REGISTRY[self.name] = self

    @classmethod
    def released(cls, name: str, package: str, **fields) -> Family:
        """A family fitted to released statistics, its hooks named by the library's one pattern.

        In ``package`` (``"pm_private.logistic"``): ``model:<name>_model`` and
        ``model:set_<name>_stats``, ``predict:predict_<name>``, ``release:release_<name>_stats``,
        ``release:<Name>StatsRelease`` and ``release:<name>_noise_plan``; release kind
        ``<name>_stats`` and command ``<name>-stats``.  A field given in ``fields`` replaces the
        pattern's (``command="survival"``).

        Parameters
        ----------
        name : str
            The family's name, e.g. ``"logistic"``.
        package : str
            The package holding its ``model``, ``predict`` and ``release`` modules.
        **fields
            The other fields (``title``, ``link``, …) and any hook that breaks the pattern.

        Returns
        -------
        Family

        Examples
        --------
        >>> from pm_private.families import FAMILIES
        >>> FAMILIES["poisson"].release_type
        Hook('pm_private.poisson.release:PoissonStatsRelease')
        """
        camel = name.title().replace("_", "")
        pattern = {
            "builder": Hook(f"{package}.model:{name}_model"),
            "setter": Hook(f"{package}.model:set_{name}_stats"),
            "predictor": Hook(f"{package}.predict:predict_{name}"),
            "release": Hook(f"{package}.release:release_{name}_stats"),
            "release_type": Hook(f"{package}.release:{camel}StatsRelease"),
            "noise_plan": Hook(f"{package}.release:{name}_noise_plan"),
            "kind": f"{name}_stats",
            "command": f"{name}-stats",
        }
        return cls(name=name, **(pattern | fields))

    @property
    def transform(self) -> str:
        """The name of :attr:`link` (recorded in a fitted model's ``fit_record``)."""
        return self.link.name

    @property
    def prior_defaults(self) -> dict[str, float]:
        """The builder's prior scales and their defaults (keywords ending ``_sigma``, ``_alpha``,
        ``_beta`` or ``_eta``), read from its signature."""
        import inspect

        return {
            name: parameter.default
            for name, parameter in inspect.signature(self.builder.resolve()).parameters.items()
            if name.endswith(PRIOR_SUFFIXES) and parameter.default is not inspect.Parameter.empty
        }


#: Suffixes of the prior-scale keywords of every builder: the parameter of the prior, as PyMC names it.
PRIOR_SUFFIXES = ("_sigma", "_alpha", "_beta", "_eta")


class NoiseDominatedWarning(UserWarning):
    """A release whose noise dominates what it releases, by the public figure its family's fit
    checks (linear: ``gram_snr`` of :func:`pm_private.linear.release_signal_to_noise`; logistic and
    Poisson: ``yx_noise_to_sampling`` of :func:`pm_private.released.glm_signal_to_noise`): the
    fit lies outside the range where the project's calibration benchmarks found the noise-aware
    intervals at their level."""


def noise_dominated_message(statistics: str, figure: str, side: str, limit: float, remedy: str) -> str:
    """The message of a :class:`NoiseDominatedWarning`: what the noise dominates, the figure
    (``"name = value"``) and on which ``side`` of the validated ``limit`` it lies, and the remedy."""
    return (
        f"the release's noise dominates {statistics} ({figure}, {side} {limit:g}, where the calibration "
        "benchmark found the noise-aware intervals off their level): the intervals lean on the priors and may "
        f"cover more or less than their level; {remedy}"
    )


def registered_families() -> dict[str, Family]:
    """The families declared so far (their modules imported), by name.

    Returns
    -------
    dict of str to Family
        A copy of the registry.
    """
    return dict(_REGISTRY)


def describe_family(name: str) -> str:
    """``the logistic family (logistic_model; predict with predict_logistic)``, or ``the <name>
    family`` when that family's module has not been imported.

    Parameters
    ----------
    name : str
        A family name.

    Returns
    -------
    str
        The description.
    """
    family = _REGISTRY.get(name)
    if family is None:
        return f"the {name} family"
    return f"the {name} family ({family.builder}; predict with {family.predictor})"


def check_stats(stats, family: Family) -> None:
    """ValueError unless ``stats`` is a statistics record of ``family``.

    Parameters
    ----------
    stats : object
        What a model builder was given.
    family : Family
        The builder's family.

    Raises
    ------
    ValueError
        Naming the builder, the statistics it needs, and the family (and its builder) that
        ``stats`` belongs to.
    """
    other = getattr(type(stats), "family", None)
    own = family.statistics_of or family.name
    if other == own:
        return
    release = _REGISTRY.get(own, family).release
    needs = f"{family.builder} needs {own} statistics" + (f" (from {release})" if release else "")
    if other is None:
        raise ValueError(f"stats: {needs}, got {type(stats).__name__}")
    builder = _REGISTRY[other].builder if other in _REGISTRY else f"the {other} model"
    raise ValueError(f"stats: {needs}, got a {type(stats).__name__} of the {other} family: build it with {builder}")


def record_fit(family: Family, release: str, warnings: Sequence[str] = ()) -> None:
    """Record the family, the release kind, the prediction transform and the build's warnings in
    the current model.

    Adds the dim ``fit_field`` with labels ``family=<name>``, ``release=<kind>``,
    ``transform=<transform>`` and one ``warning=<message>`` per warning, and the constant
    ``pm.Data("fit_record", zeros)`` on it, so that the posterior's ``constant_data`` carries the
    record (:func:`recorded_warnings` reads the warnings back for ``print_summary``).

    Parameters
    ----------
    family : Family
        The model's family.
    release : str
        The kind of the release the model was built on (``"exact"`` for exact statistics; kinds
        joined by ``+`` for a sum of releases).
    warnings : sequence of str, default ()
        The messages of the warnings the build raised (public figures only).
    """
    import pymc as pm

    model = pm.modelcontext(None)
    labels = [f"family={family.name}", f"release={release}", f"transform={family.transform}"]
    labels += [f"warning={message}" for message in warnings]
    model.add_coord(FIT_FIELD, labels)
    pm.Data(FIT_RECORD, np.zeros(len(labels)), dims=FIT_FIELD)


def recorded_fit(posterior) -> dict[str, str] | None:
    """The fit record of a sampled posterior or a model: ``{"family", "release", "transform"}``.

    Parameters
    ----------
    posterior : xarray.DataTree, pymc.Model or other
        The DataTree of ``pm.sample`` (its ``constant_data``), or the model.

    Returns
    -------
    dict of str to str or None
        The record, or None where ``posterior`` carries none (a bare ``posterior`` Dataset, an
        array of draws, a DataTree without ``constant_data``).
    """
    labels = _fit_labels(posterior)
    if labels is None:
        return None
    record = dict(str(label).split("=", 1) for label in labels)
    return {key: record.get(key, "") for key in _FIELDS}


def recorded_warnings(posterior) -> list[str]:
    """The messages of the warnings a model's build raised (:func:`record_fit`), from a sampled
    posterior or the model; [] where there were none or nothing was recorded.

    Parameters
    ----------
    posterior : xarray.DataTree, pymc.Model or other
        As for :func:`recorded_fit`.

    Returns
    -------
    list of str
        The messages, in the order they were raised.
    """
    labels = _fit_labels(posterior)
    return [] if labels is None else [str(v).split("=", 1)[1] for v in labels if str(v).startswith("warning=")]


def _fit_labels(posterior):
    """The ``fit_field`` labels of a sampled posterior (its ``constant_data``) or a model, or None."""
    import xarray as xr

    if isinstance(posterior, xr.DataTree):
        if "constant_data" in posterior.children and FIT_FIELD in posterior["constant_data"].dataset.coords:
            return posterior["constant_data"].dataset.coords[FIT_FIELD].values
        return None
    if FIT_RECORD in getattr(posterior, "named_vars", {}):
        return posterior.coords[FIT_FIELD]
    return None


def feature_coords(beta) -> list[str] | None:
    """The ``feature`` labels of posterior draws of β, when they carry names (not the defaults x0, x1, …).

    Parameters
    ----------
    beta : xarray.DataArray
        Draws of the coefficients.

    Returns
    -------
    list of str or None
        The names, or None for unnamed features.
    """
    if "feature" not in beta.coords:
        return None
    names = [str(v) for v in beta.coords["feature"].values]
    return None if names == [f"x{j}" for j in range(len(names))] else names


def check_posterior(posterior, family: Family) -> None:
    """ValueError if ``posterior`` records a family other than ``family``.

    A posterior that records no family (a bare Dataset, an array of draws) passes: there is
    nothing to check, and the predictor then checks the variables it needs.

    Parameters
    ----------
    posterior : object
        What a predictor was given.
    family : Family
        The predictor's family.

    Raises
    ------
    ValueError
        Naming the predictor, the model it needs and the family (with its builder and predictor)
        that ``posterior`` was fitted with.
    """
    record = recorded_fit(posterior)
    if record is None or record["family"] == family.name:
        return
    raise ValueError(
        f"idata: {family.predictor} needs a posterior of {family.builder}, got one of {describe_family(record['family'])}"
    )


def record_preprocessing(arrays: dict, *, batch_dims: tuple[str, ...] = ()) -> None:
    """Record the release's public map of new rows in the current model as one labelled constant.

    ``pm.Data("preprocessing", …)`` with dim ``preprocessing_entry`` labelled ``x_center[0]``,
    ``x_scale[0]``, …, ``y_scale`` (one entry per number), which ``pm.sample`` copies into the
    posterior's ``constant_data``: the predictors and summaries read it back with
    :func:`recorded_preprocessing`, and a model graph shows one node for it.

    Parameters
    ----------
    arrays : dict of str to array_like
        The map's arrays (``x_center``, ``x_scale``, …), each with the ``batch_dims`` leading.
    batch_dims : tuple of str, default ()
        The model's batch dims (one map per fit).
    """
    import pymc as pm

    from .._engine.packing import pack

    vector, labels, _ = pack(arrays, len(batch_dims))
    model = pm.modelcontext(None)
    model.add_coord(PREPROCESSING_ENTRY, labels)
    pm.Data(PREPROCESSING, vector, dims=(*batch_dims, PREPROCESSING_ENTRY))


def packed_preprocessing(arrays: dict, batch: int = 0) -> np.ndarray:
    """The vector :func:`record_preprocessing` stores for ``arrays`` (to swap it with ``pm.set_data``)."""
    from .._engine.packing import pack

    return pack(arrays, batch)[0]


def recorded_preprocessing(source) -> dict[str, np.ndarray] | None:
    """The public map of new rows a model or a sampled posterior recorded (:func:`record_preprocessing`).

    Parameters
    ----------
    source : xarray.DataTree or pymc.Model
        The DataTree of ``pm.sample`` (its ``constant_data``) or the model.

    Returns
    -------
    dict of str to numpy.ndarray or None
        The arrays by name (``x_center``, ``x_scale``, …, batch axes first), or None where
        ``source`` records none.  A posterior saved by an earlier version of pm_private, which
        kept one ``preprocessing_<name>`` array per name, is read too.
    """
    import xarray as xr

    from .._engine.packing import layout_of, unpack

    if isinstance(source, xr.DataTree):
        if "constant_data" not in source.children:
            return None
        dataset = source["constant_data"].dataset
        if PREPROCESSING not in dataset:
            prefix = f"{PREPROCESSING}_"
            separate = {
                str(k)[len(prefix) :]: np.asarray(v.values) for k, v in dataset.items() if str(k).startswith(prefix)
            }
            return separate or None
        data = dataset[PREPROCESSING]
        vector, labels = np.asarray(data.values), data[PREPROCESSING_ENTRY].values
    elif PREPROCESSING in getattr(source, "named_vars", {}):
        vector, labels = np.asarray(source[PREPROCESSING].get_value()), source.coords[PREPROCESSING_ENTRY]
    else:
        return None
    return unpack(vector, layout_of(labels), vector.shape[:-1])
