"""Mechanism cards: one per private mechanism, the one table the contract suite derives from.

A card says once what the five contract tables need of a mechanism: a valid cheap call
(``data``, the private records, taken from the shared records below, and ``params``, the public
parameters), the kind of value each argument of its signature takes, the kind of the release it
returns, and whether its docstring carries a runnable privacy example.  The tables are derived:

* tests/contracts/test_validation_before_charge.py sweeps invalid values of every ``kinds`` entry;
* tests/contracts/test_fuzz.py fuzzes the arguments of ``valid`` whose kind it can corrupt;
* tests/contracts/test_release_protocol.py runs each card with an accountant on neighbouring data
  sets (``neighbour=0`` and ``neighbour=1``: :data:`NEIGHBOUR` replaces record 0 of
  :data:`DATA` by a worst case at the corner of the public box);
* tests/contracts/test_release_file_fields.py writes one release of each ``release_kind``;
* tests/contracts/test_docstring_examples.py runs the examples of the cards with ``example``.

Adding a mechanism: one card in :data:`CARDS` (and, for a new kind of value, its invalid values
in ``values_of`` of the validation sweep).
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pm_private.privacy.noise import as_noise_source
from pm_private.sampling.sanitized import logistic_loss

# --------------------------------------------------------------------------------------------
# The records every card's valid call takes, and their neighbour
# --------------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
N, D = 40, 3
_X = RNG.uniform(-1, 1, size=(N, D)) / math.sqrt(D)  # rows in the unit ball (discrete-time mechanisms)
_LABELS = (_X[:, 0] + 0.3 * RNG.standard_normal(N) > 0).astype(int)
DATA = {
    "X": _X,
    "y": RNG.uniform(-1, 1, size=N),  # reals within the response bound 1 used by the cards
    "labels": _LABELS,
    "counts": RNG.poisson(1.5, size=N),
    "time": RNG.uniform(0.05, 0.95, size=N),  # within the horizon 1 used by the cards
    "event": (RNG.random(N) < 0.6).astype(int),
    "cell": np.random.default_rng(1).choice(["a", "b"], size=N),  # each person's (private) cell
}
DATA["records"] = (DATA["X"], 2.0 * DATA["labels"] - 1.0)  # (X, y ∈ {−1, 1}): a sanitized loss's data


def _neighbour() -> dict:
    """DATA with record 0 replaced: a covariate row on the unit sphere's corner, a response and
    a count beyond their bounds (1 and 3), so the clipping counts move too, and flipped labels
    and events at the horizon."""
    out = {name: value.copy() for name, value in DATA.items() if name != "records"}
    out["X"][0] = 1.0 / math.sqrt(D)
    out["y"][0] = 2.0
    out["labels"][0] = 1 - DATA["labels"][0]
    out["counts"][0] = 9
    out["time"][0] = 1.0
    out["event"][0] = 1 - DATA["event"][0]
    out["cell"][0] = "b" if DATA["cell"][0] == "a" else "a"
    out["records"] = (out["X"], 2.0 * out["labels"] - 1.0)
    return out


NEIGHBOUR = _neighbour()


def _normal_mean_model(y):
    """y ~ N(μ, 1), μ ~ N(0, 10²): a PyMC model whose records are ``y`` (DP-SGLD's data)."""
    import pymc as pm

    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=y)
    return model


DATA["model"], NEIGHBOUR["model"] = _normal_mean_model(DATA["y"]), _normal_mean_model(NEIGHBOUR["y"])


# --------------------------------------------------------------------------------------------
# The card
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MechanismCard:
    """One private mechanism, as the contract suite sees it.

    ``call``: "module:name" of the public callable (a class is an estimator: its constructor
    takes the parameters and ``fit`` the records).  ``data``: argument -> name of its records in
    :data:`DATA`.  ``params``: the public parameters of a valid cheap call.  ``kinds``: argument ->
    kind of value, for **every** parameter of the signature (``values_of`` in the validation
    sweep lists each kind's invalid values).  ``release_kind``: the kind of the Release its
    result carries (None: no Release).  ``example``: its docstring must carry a ``Privacy:``
    paragraph and a runnable example.

    Per-mechanism special cases: ``names`` (argument -> words any of which its error messages
    may use instead of the argument's name), ``fuzz_names`` (further words for the fuzz, which
    reaches states the sweep does not), ``in_model`` (built inside a fresh ``pm.Model`` with a
    parameter vector ``f`` of size D as ``params``), ``not_in_files`` (why its release cannot be
    written to a release file), ``file_edits_unswept`` (why edits of its release file's fields
    are not swept: a known gap of the reader), ``stand_in`` (builds its release directly, for tests that need
    only the release's fields, where the valid call is slow).
    """

    call: str
    data: dict
    params: dict
    kinds: dict
    release_kind: str | None = None
    example: bool = True
    names: dict = field(default_factory=dict)
    fuzz_names: dict = field(default_factory=dict)
    in_model: bool = False
    not_in_files: str | None = None
    file_edits_unswept: str | None = None
    stand_in: Callable | None = None
    add_remove: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.call.split(":")[1]

    @property
    def valid(self) -> dict:
        """The keyword arguments of the valid call (accountant aside)."""
        return self.on(0)

    def on(self, neighbour: int) -> dict:
        """The valid call's arguments on neighbouring data set 0 (:data:`DATA`) or 1 (:data:`NEIGHBOUR`)."""
        records = (DATA, NEIGHBOUR)[neighbour]
        return {arg: records[column] for arg, column in self.data.items()} | self.params

    def resolve(self):
        module, name = self.call.split(":")
        return getattr(importlib.import_module(module), name)

    def parameters(self) -> set[str]:
        obj = self.resolve()
        params = set(inspect.signature(obj).parameters)
        if isinstance(obj, type):
            params |= set(inspect.signature(obj.fit).parameters) - {"self"}
        return params

    @property
    def takes_accountant(self) -> bool:
        return "accountant" in self.kinds

    def invoke(self, **kwargs):
        """Call the mechanism with ``kwargs`` (an estimator is built and fitted; a model term is
        built inside a fresh model)."""
        obj = self.resolve()
        if isinstance(obj, type):
            fit = set(inspect.signature(obj.fit).parameters) - {"self"}
            model = obj(**{k: v for k, v in kwargs.items() if k not in fit})
            return model.fit(**{k: v for k, v in kwargs.items() if k in fit})
        if self.in_model:
            import pymc as pm

            with pm.Model():
                kwargs.setdefault("params", pm.Flat("f", shape=D))
                return obj(**kwargs)
        return obj(**kwargs)

    def run(self, accountant=None, neighbour: int = 0, **overrides):
        """The valid call on neighbour 0 or 1, with ``overrides`` and the accountant (if it takes one)."""
        kwargs = self.on(neighbour) | overrides
        if self.takes_accountant:
            kwargs.setdefault("accountant", accountant)
        return self.invoke(**kwargs)


def release_of(result):
    """The release a mechanism's result carries (a fitted estimator's ``privacy_``)."""
    return getattr(result, "privacy_", result)


def _data_perturbation_release():
    # Calibrating the SGD's noise takes seconds; only the release's fields matter to a release file.
    from pm_private.logistic.data_perturbation import MECHANISM, DataPerturbationRelease

    return DataPerturbationRelease(
        coef=np.linspace(0.5, -0.25, D),
        intercept=0.1,
        x_bound=1.0,
        noise_multiplier=1.5,
        noise_std=3.0,
        sensitivity=2.0,
        steps=4,
        batch_size=10,
        epsilon=1.0,
        delta=1e-5,
        mechanism=MECHANISM,
        private=False,
    )


# --------------------------------------------------------------------------------------------
# The cards
# --------------------------------------------------------------------------------------------

RECORDS = dict(X="matrix")  # the kinds of the records' arguments
SURVIVAL = dict(time="times", event="events")  # times on [0, 1]: the discrete-time mechanisms' fixed domain
FOLLOW_UP = dict(time="follow-up times", event="events")  # any time ≥ 0: later ones censored at the horizon
CHARGED = dict(accountant="object", rng="rng")  # what a mechanism with an accountant also takes
PERSONS = dict(unit="unit")  # an optional identifier of each record's person

CARDS = [
    MechanismCard(
        "pm_private.privacy:laplace_mechanism",
        data={},
        params=dict(values=np.array([0.5, -1.0]), sensitivity=1.0, epsilon=1.0, source=as_noise_source(0)),
        kinds=dict(values="query", sensitivity="sensitivity", epsilon="epsilon", source="object"),
        release_kind="laplace",
    ),
    MechanismCard(
        "pm_private.privacy:gaussian_mechanism",
        data={},
        params=dict(values=np.array([0.5, -1.0]), sensitivity=1.0, epsilon=1.0, delta=1e-5, source=as_noise_source(0)),
        kinds=dict(values="query", sensitivity="sensitivity", epsilon="epsilon", delta="delta", source="object"),
        release_kind="gaussian",
    ),
    MechanismCard(
        "pm_private.privacy:exponential_mechanism",
        data={},
        params=dict(
            scores=np.array([0.0, 1.0, 2.0]),
            epsilon=1.0,
            sensitivity=1.0,
            source=as_noise_source(0),
            log_base=np.zeros(3),
            size=None,
        ),
        kinds=dict(
            scores="query",
            epsilon="epsilon",
            sensitivity="sensitivity",
            source="object",
            log_base="log weights",
            size="optional count",
        ),
    ),
    MechanismCard(  # before release_linear_stats: their sum is written as one linear_stats entry in this order
        # The deprecated spelling of release_linear_stats(noise="laplace"): its sweeps are the Laplace release's.
        "pm_private.linear:release_linear_stats_laplace",
        data=dict(X="X", y="y"),
        params=dict(
            epsilon=1.0,
            x_bound=1.0,
            y_bound=1.0,
            split=(0.6, 0.35, 0.05),
            clip_share=0.05,
            rng=0,
            preprocessing=None,
        ),
        kinds=RECORDS
        | PERSONS
        | CHARGED
        | dict(
            y="reals",
            epsilon="epsilon",
            x_bound="bound",
            y_bound="bound",
            split="optional split",
            preprocessing="object",
            clip_share="clip share",
            scale_response="optional bool",
            intercept="bool",
        ),
        release_kind="linear_stats_laplace",
    ),
    MechanismCard(
        "pm_private.linear:release_linear_stats",
        data=dict(X="X", y="y"),
        params=dict(
            epsilon=1.0,
            delta=1e-5,
            x_bound=1.0,
            y_bound=1.0,
            noise="gaussian",
            clip_share=0.05,
            rng=0,
            preprocessing=None,
            relation="replace-one",
            max_rows=1,
        ),
        kinds=RECORDS
        | PERSONS
        | CHARGED
        | dict(
            y="reals",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            y_bound="bound",
            noise="choice",
            split="no split",
            preprocessing="object",
            clip_share="clip share",
            scale_response="optional bool",
            intercept="bool",
            relation="choice",
            max_rows="count",
        ),
        release_kind="linear_stats_gaussian",
    ),
    MechanismCard(
        "pm_private.linear:adassp",
        data=dict(X="X", y="y"),
        params=dict(epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=1.0, rho=0.05, rng=0, relation="replace-one"),
        kinds=RECORDS
        | PERSONS
        | CHARGED
        | dict(
            y="reals",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            y_bound="bound",
            rho="open fraction",
            relation="choice",
        ),
        release_kind="adassp",
    ),
    MechanismCard(
        "pm_private.logistic:release_logistic_stats",
        data=dict(X="X", y="labels"),
        params=dict(
            epsilon=1.0, delta=1e-5, x_bound=1.0, rng=0, preprocessing=None, relation="replace-one", max_rows=1
        ),
        kinds=RECORDS
        | PERSONS
        | CHARGED
        | dict(
            y="labels",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            preprocessing="object",
            relation="choice",
            max_rows="count",
        ),
        release_kind="logistic_stats",
    ),
    MechanismCard(
        "pm_private.poisson:release_poisson_stats",
        data=dict(X="X", y="counts"),
        params=dict(
            epsilon=1.0,
            delta=1e-5,
            x_bound=1.0,
            y_bound=3,
            rng=0,
            preprocessing=None,
            relation="replace-one",
            max_rows=1,
        ),
        kinds=RECORDS
        | PERSONS
        | CHARGED
        | dict(
            y="counts",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            y_bound="count",
            preprocessing="object",
            relation="choice",
            max_rows="count",
        ),
        release_kind="poisson_stats",
    ),
    MechanismCard(
        "pm_private.logistic:DPElasticNetLogisticRegression",
        data=dict(X="X", y="labels"),
        params=dict(
            epsilon=1.0,
            lam=0.5,
            alpha=0.5,
            x_bound=1.0,
            noise="laplace",
            fit_intercept=True,
            too_weak="add_ridge",
            tol=1e-10,
            max_iter=1000,
            rng=0,
            classes=None,
        ),
        kinds=RECORDS
        | CHARGED
        | dict(
            y="labels",
            epsilon="epsilon",
            lam="positive",
            alpha="fraction",
            x_bound="bound",
            norm_bound="bound",  # the former name of x_bound, accepted with a FutureWarning
            noise="choice",
            fit_intercept="bool",
            too_weak="choice",
            tol="positive",
            max_iter="work",
            classes="classes",
        ),
        release_kind="elastic_net",
        example=False,
        names=dict(y=("y", "label", "target", "classes"), classes=("classes", "label")),
    ),
    MechanismCard(
        "pm_private.logistic:select_penalty",
        data=dict(X="X", y="labels"),
        params=dict(
            lams=[0.5, 1.0],
            alpha=0.5,
            epsilon=1.0,
            delta=1e-5,
            x_bound=1.0,
            selection_share=0.5,
            validation_fraction=0.3,
            noise="laplace",
            fit_intercept=True,
            tol=1e-10,
            max_iter=1000,
            rng=0,
        ),
        kinds=RECORDS
        | CHARGED
        | dict(
            y="labels",
            lams="penalties",
            alpha="fraction",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            selection_share="open fraction",
            validation_fraction="open fraction",
            noise="choice",
            fit_intercept="bool",
            tol="positive",
            max_iter="work",
        ),
        release_kind="penalty_selection",
        example=False,
        names=dict(y=("y", "label", "target"), lams=("lams", "lam")),
        not_in_files="it holds the fitted estimator of the selected penalty (a Python object)",
    ),
    MechanismCard(
        "pm_private.logistic:data_perturbation_sgd",
        data=dict(X="X", y="labels"),
        params=dict(
            epsilon=1e4,
            delta=1e-5,
            x_bound=1.0,
            batch_size=10,
            epochs=1,
            learning_rate=0.5,
            l2=1e-3,
            fit_intercept=True,
            influence_threshold=None,
            rng=0,
        ),
        kinds=RECORDS
        | CHARGED
        | PERSONS
        | dict(
            y="labels",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            batch_size="count",
            epochs="work",
            learning_rate="positive",
            l2="positive",
            fit_intercept="bool",
            influence_threshold="optional positive",
        ),
        release_kind="data_perturbation",
        example=False,
        names=dict(y=("y", "label")),
        stand_in=_data_perturbation_release,
    ),
    MechanismCard(
        "pm_private.sampling:dp_sgld",
        data=dict(model="model"),
        params=dict(
            epsilon=1.0,
            delta=1e-5,
            sampling_rate=0.2,
            clip=1.0,
            draws=5,
            tune=5,
            chains=1,
            rng=0,
            progressbar=False,
            scale={"mu": 2.0},
            initvals={"mu": 0.5},
            clip_share=0.05,
            thin=1,
        ),
        kinds=CHARGED
        | dict(
            model="object",
            epsilon="epsilon",
            delta="delta",
            sampling_rate="open fraction",
            clip="positive",
            draws="count",
            tune="count",
            chains="count",
            progressbar="bool",
            scale="scale map",
            initvals="start map",
            clip_share="clip share",
            thin="optional count",
        ),
    ),
    MechanismCard(
        "pm_private.sampling:sanitized_loss",
        data=dict(data="records"),
        params=dict(name="U", loss=logistic_loss, epsilon=1.0, v=None, sigma=None, model=None),
        kinds=dict(
            name="name",
            loss="callable",
            params="params",
            data="records",
            epsilon="epsilon",
            v="optional positive",
            sigma="optional positive",
            accountant="object",
            model="object",
        ),
        fuzz_names=dict(data=("loss",)),  # 3-d records make the loss return a matrix
        in_model=True,
    ),
    MechanismCard(
        "pm_private.survival:release_survival_stats",
        data=dict(time="time", event="event", cell="cell"),
        params=dict(
            edges=[0.25, 0.5, 0.75, 1.0],
            cells=["a", "b"],
            epsilon=1.0,
            delta=1e-5,
            noise="gaussian",
            rng=0,
            relation="replace-one",
        ),
        kinds=CHARGED
        | PERSONS
        | dict(
            time="follow-up times",
            event="events",
            cell="cell labels",
            edges="edges",
            cells="cells",
            epsilon="epsilon",
            delta="delta",
            noise="choice",
            relation="choice",
        ),
        names=dict(cells=("cells", "cell")),
        release_kind="survival_stats",
    ),
    MechanismCard(
        "pm_private.survival:release_survival_regression_stats",
        data=dict(time="time", event="event", X="X"),
        params=dict(edges=[0.25, 0.5, 0.75, 1.0], x_bound=1.0, epsilon=1.0, delta=1e-5, rng=0, relation="replace-one"),
        kinds=CHARGED
        | PERSONS
        | dict(
            time="follow-up times",
            event="events",
            X="matrix",
            cell="object",
            edges="edges",
            cells="object",
            x_bound="bound",
            epsilon="epsilon",
            delta="delta",
            preprocessing="object",
            relation="choice",
        ),
        release_kind="survival_regression_stats",
    ),
    MechanismCard(  # the first weibull card: its release is the one written to a release file
        "pm_private.survival:weibull_private",
        data=dict(time="time", event="event"),
        params=dict(epsilon=1.0, horizon=1.0, K=10, gamma=10.0, omega=6.0, rng=0, relation="replace-one"),
        kinds=FOLLOW_UP
        | CHARGED
        | PERSONS
        | dict(epsilon="epsilon", horizon="bound", K="count", gamma="bound", omega="bound", relation="choice"),
        release_kind="weibull",
    ),
    MechanismCard(
        "pm_private.survival:weibull_laplace",
        data=dict(time="time", event="event"),
        # ε 10: on 40 records the noise of ε 1 clamps the estimates to their range, where neighbours cannot move them
        params=dict(epsilon=10.0, horizon=1.0, gamma=10.0, omega=6.0, rng=0, relation="replace-one"),
        kinds=FOLLOW_UP
        | CHARGED
        | PERSONS
        | dict(epsilon="epsilon", horizon="bound", gamma="bound", omega="bound", relation="choice"),
        release_kind="weibull",
    ),
    MechanismCard(
        "pm_private.survival:weibull_sample_aggregate",
        data=dict(time="time", event="event"),
        # ε 10: on 40 records the noise of ε 1 clamps the estimates to their range, where neighbours cannot move them
        params=dict(
            epsilon=10.0, horizon=1.0, subset_size=None, subsets=4, gamma=10.0, omega=6.0, rng=0, relation="replace-one"
        ),
        kinds=FOLLOW_UP
        | CHARGED
        | PERSONS
        | dict(
            epsilon="epsilon",
            horizon="bound",
            subset_size="optional count",
            subsets="optional count",
            gamma="bound",
            omega="bound",
            relation="choice",
        ),
        release_kind="weibull",
    ),
    # the two discrete-time perturbations take the same arguments (Nguyên & Hui 2017a, Alg. 1 and 2)
    *(
        MechanismCard(
            f"pm_private.survival:{name}",
            data=dict(X="X", time="time", event="event"),
            params=dict(epsilon=1.0, regularization=0.1, q=5, e=2, rng=0, public_size=None, relation="replace-one"),
            add_remove=dict(public_size=100),
            kinds=RECORDS
            | SURVIVAL
            | CHARGED
            | PERSONS
            | dict(
                epsilon="epsilon",
                regularization="bound",
                q="count",
                e="count",
                public_size="optional count",
                relation="choice",
            ),
            release_kind="discrete_time",
        )
        for name in ("output_perturbation", "objective_perturbation")
    ),
]
CARD = {card.name: card for card in CARDS}
assert len(CARD) == len(CARDS), "two cards for one mechanism"


def public_packages() -> list[str]:
    """``pm_private`` and every subpackage that exports names lazily (``_NAMES``), found by walking
    the package: a new family folder is picked up by every registry-driven test without a list to edit."""
    import importlib
    import pkgutil

    import pm_private

    found = ["pm_private"]
    for info in pkgutil.iter_modules(pm_private.__path__):
        if info.ispkg and not info.name.startswith("_"):
            module = importlib.import_module(f"pm_private.{info.name}")
            if hasattr(module, "_NAMES"):
                found.append(module.__name__)
    return found


#: The packages whose public names the contract tests walk.
PACKAGES = public_packages()
