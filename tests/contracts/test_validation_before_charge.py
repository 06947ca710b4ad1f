"""Every public argument of every mechanism is validated before any budget is reserved or noise drawn.

The mechanisms are found, not listed: every public callable of pm_private that takes an
``accountant`` (it charges a budget) or a ``source`` (it draws noise) is a mechanism, and must
have an entry in :data:`MECHANISMS` below: a valid call on tiny data and, for **each** parameter
of its signature, the kind of value it takes.  Each kind has at least 20 values that are invalid
for every argument of that kind (wrong type, strings, None where not allowed, NaN, ±inf, 0,
negative, huge, tiny, bool where a number is meant, wrong-shape arrays).  Each invalid value
replaces its argument in the valid call, and the call must

* raise a ValueError or TypeError whose message names the argument (for ε and δ a refusal by
  the accountant, BudgetExceededError, also counts: it happens before any reservation);
* leave the accountant's ledger empty: nothing spent, and nothing reserved even for a moment
  (a released reservation is still an entry);
* draw no noise (every ``note_noise_drawn`` hook of the package is counted).

``SWEEP_REPORT=sweep.json python -m pytest -p no:xdist -q tests/contracts/test_validation_before_charge.py``
writes the counts (mechanisms × arguments × values, spends, reservations, noise draws).
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import signal
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.release import Release
from pm_private.release_file import all_release_types

PACKAGES = [
    "pm_private",
    "pm_private.privacy",
    "pm_private.linear",
    "pm_private.poisson",
    "pm_private.logistic",
    "pm_private.sampling",
    "pm_private.survival",
    "pm_private.datasets",
]
#: Accounting machinery that takes an accountant but releases nothing itself, and the noise
#: samplers that mechanisms call inside their guard (they release nothing on their own).
INFRASTRUCTURE = {
    "charge",
    "check_accountant",
    "release_guard",
    "Reservation",
    "PrivacyAccountant",
    "laplace_vector",
    "l2_gamma_vector",
    "add_gaussian_noise",  # a sampler, like the two above: the mechanisms calling it are swept
    # Charges for published sampler draws; its arguments (draws, model, accountant, private) are
    # checked before any charge in tests/sampling/test_publish.py, on a sampled model.
    "publishable",
}
CALL_LIMIT_S = 20.0
COUNTS: Counter = Counter({"spends": 0, "reservations": 0, "noise draws": 0})

# --------------------------------------------------------------------------------------------
# Tiny data
# --------------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
N, D = 30, 2
X = RNG.uniform(-1, 1, size=(N, D)) / math.sqrt(D)
LABELS = np.arange(N) % 2
YPM = 2.0 * LABELS - 1.0
COUNT_DATA = np.arange(N) % 5
Y = RNG.uniform(-1, 1, size=N)
TIME = RNG.uniform(0.05, 0.95, size=N)
EVENT = (np.arange(N) % 3 != 0).astype(int)

# --------------------------------------------------------------------------------------------
# Invalid values by kind of argument (each value is invalid for every argument of its kind)
# --------------------------------------------------------------------------------------------

NAN, INF = math.nan, math.inf
#: Not a number at all: strings, None, containers, objects, complex, booleans.
NOT_A_NUMBER = [
    "abc",
    "1",
    "",
    None,
    b"1",
    [1.0],
    (1.0,),
    {},
    {"x": 1.0},
    object(),
    1j,
    np.array([1.0, 2.0]),
    np.ones((2, 2)),
    True,
    False,
    np.bool_(True),
]
#: Never a valid positive real.
NOT_POSITIVE = [NAN, np.float32(NAN), INF, -INF, 0, 0.0, -0.0, -1, -1.0, -1e308, -5e-324]
#: Huge or tiny bounds: their squares, products or noise scales overflow or underflow.
EXTREME = [1e308, 1e200, 1e152, 1e-200, 1e-300, 5e-324]


def _not_a_count():
    return [v for v in NOT_A_NUMBER if v is not None] + [NAN, INF, -INF, 0, -1, -5, 2.5, 3.0, np.float64(3.0), 1e308]


def _object_values():
    """Invalid for an argument that takes one object of a given type (or None)."""
    return [
        "abc",
        "",
        0,
        1,
        1.0,
        NAN,
        INF,
        True,
        False,
        [],
        (),
        {},
        set(),
        object(),
        b"x",
        1j,
        np.array([1.0]),
        np.float64(1.0),
        int,
        lambda: None,
    ]


def _matrix(valid: np.ndarray) -> list:
    values = [
        None,
        "abc",
        7.0,
        True,
        [],
        {},
        object(),
        np.zeros((0, valid.shape[1])),
        np.zeros((valid.shape[0], 0)),
        valid.ravel(),
        valid[None],
        valid[:-1],
        valid.astype(str),
        valid.astype(complex),
        [list(row) for row in valid[:-1]] + [[1.0]],  # ragged
        np.array([["x"] * valid.shape[1]] * valid.shape[0]),
    ]
    for bad in (NAN, INF, -INF):
        corrupted = valid.astype(np.float64).copy()
        corrupted[len(valid) // 2, 0] = bad
        values.append(corrupted)
    values.append(np.full(valid.shape, NAN))
    return values


def _vector(valid: np.ndarray, domain: list) -> list:
    """Invalid vectors: types and shapes, non-finite entries, and entries outside ``domain``."""
    values = [
        None,
        "abc",
        7.0,
        True,
        [],
        {},
        object(),
        valid[:-1],
        np.append(valid, valid[:1]),
        np.column_stack([valid, valid]),
        valid[None, :],
        valid.astype(str),
        valid.astype(complex),
        np.array(["x"] * len(valid)),
        [[1.0], [2.0, 3.0]],
        np.array([None] * len(valid)),
        [*valid.tolist(), "x"],
        valid[None, None, :],
    ]
    for bad in (NAN, INF, -INF, *domain):
        corrupted = valid.astype(np.float64).copy()
        corrupted[len(valid) // 2] = bad
        values.append(corrupted)
    return values


def values_of(kind: str, valid) -> list:
    """The invalid values of an argument of ``kind`` whose valid value is ``valid``."""
    match kind:
        case "epsilon":
            return NOT_A_NUMBER + NOT_POSITIVE + [1e-7, 1e-300, 5e-324, 1e308, 1e200, 1e16]
        case "delta":
            return NOT_A_NUMBER + NOT_POSITIVE + [1.0, 1.5, 2, 1e308, 1e-320, 5e-324]
        case "sensitivity":  # finite and > 0; Δ/ε and the noise scale must stay finite and > 0
            return NOT_A_NUMBER + NOT_POSITIVE + [1e308, 1e306, 5e-324, 1e-320]
        case "positive":  # a public scale: finite and > 0
            return NOT_A_NUMBER + NOT_POSITIVE
        case "bound":  # a clipping bound or range: also refused when huge or tiny
            return NOT_A_NUMBER + NOT_POSITIVE + EXTREME
        case "optional positive":  # None means "default"
            return [v for v in NOT_A_NUMBER if v is not None] + NOT_POSITIVE + EXTREME
        case "fraction":  # in [0, 1]
            return NOT_A_NUMBER + [NAN, INF, -INF, -1, -1e-9, -5e-324, 1.0 + 1e-9, 1.5, 2, 1e308, -1e308]
        case "clip share":  # 0 (no counts) or in [0.001, 0.5]
            return NOT_A_NUMBER + [NAN, INF, -INF, -1, -5e-324, 1e-4, 0.0009, 0.51, 1, 1.0, 1.5, 1e308]
        case "open fraction":  # in (0, 1)
            return NOT_A_NUMBER + [NAN, INF, -INF, 0, 0.0, -1, -5e-324, 1, 1.0, 1.5, 1e308]
        case "count":  # a positive integer of modest size
            return _not_a_count() + [None, 10**12, 2**63]
        case "optional count":  # None means one
            return _not_a_count() + [10**12, 2**63]
        case "work":  # an amount of work (iterations): any positive integer
            return _not_a_count() + [None]
        case "bool":
            return ["no", "yes", "True", "False", "", None, 0, 1, 2, -1, 0.0, 1.0, NAN, INF] + [
                [True],
                (True,),
                np.array([True, False]),
                b"1",
                {},
                object(),
                "true",
                1j,
            ]
        case "choice":
            return [
                "nope",
                "",
                " ",
                f"{valid} ",
                valid.upper() + "X",
                f"{valid}\x00",
                None,
                0,
                1,
                1.0,
                NAN,
                True,
                False,
                valid.encode(),
                [valid],
                (valid,),
                {valid},
                {},
                object(),
                np.array([valid]),
                1j,
            ]
        case "rng":
            return [
                "abc",
                "",
                -1,
                -5,
                True,
                False,
                np.bool_(False),
                1.5,
                NAN,
                INF,
                [1, 2],
                (1,),
                {},
                object(),
                b"1",
                1j,
                np.array([1]),
                np.float64(1.0),
                np.random.RandomState(0),
                np.random.default_rng,
            ]
        case "object":  # an accountant, a preprocessing, a noise source, a model
            return _object_values()
        case "matrix":
            return _matrix(valid)
        case "records":  # a tuple of arrays whose first is the n × d matrix
            first, *rest = valid
            return [None, "abc", 7.0, ()] + [(bad, *rest) for bad in _matrix(first)]
        case "reals":
            return _vector(valid, [])
        case "query":  # any shape of finite reals is a valid query
            return [None, "abc", "1.0", b"ab", {}, {"a": 1.0}, set(), object(), lambda: None, [[1.0], [2.0, 3.0]]] + [
                valid.astype(str),
                valid.astype(complex),
                np.array([None] * len(valid)),
                [*valid.tolist(), "x"],
                np.array(["x"] * len(valid)),
                [NAN],
                [INF],
                np.full(valid.shape, NAN),
                *[np.where(np.arange(valid.size) == 0, bad, valid) for bad in (NAN, INF, -INF)],
            ]
        case "log weights":  # −inf (weight 0) is allowed, but not everywhere
            values = _vector(valid, [])[1:]  # None: no base measure
            del values[19]  # the vector with one −inf
            return values + [np.full(valid.shape, -INF), np.full(valid.shape, INF)]
        case "labels":  # strings are labels too
            return [v for v in _vector(valid, [0.5, 2.0, -3.0]) if getattr(v, "dtype", np.dtype(float)).kind != "U"]
        case "counts":  # non-negative integers
            return _vector(valid, [0.5, -1.0, -3.0, 1e-9])
        case "times":
            return _vector(valid, [-0.5, -1e-300, 5.0])
        case "events":
            return _vector(valid, [0.5, 2.0, -1.0])
        case "split":
            return [
                None,
                "abc",
                1.0,
                True,
                {},
                object(),
                [],
                (0.5, 0.5),
                (0.6, 0.35, 0.05, 0.0),
                (0.5, 0.5, 0.5),
                (1.0, 0.0, 0.0),
                (NAN, 0.5, 0.5),
                (INF, 0.5, 0.5),
                (-0.2, 0.6, 0.6),
                ("a", "b", "c"),
                (1e-9, 0.5, 0.5 - 1e-9),
                (5e-324, 0.5, 0.5),
                (1e308, -1e308, 1.0),
                np.array([[0.6], [0.35], [0.05]]),
                (True, False, False),
            ]
        case "penalties":
            return [
                None,
                "abc",
                True,
                {},
                object(),
                [],
                ["x", "y"],
                [NAN, 1.0],
                [INF, 1.0],
                [-1.0, 1.0],
                [0.0, 1.0],
                [1e308, 1.0],
                [5e-324, 1.0],
                [1e-300, 1.0],
                [[0.5, 1.0], [0.5, 1.0]],
                [True, False],
                [1j, 1.0],
                np.array([]),
                [None, 1.0],
                [-INF, 1.0],
            ]
        case "classes":
            return [
                "ab",
                1.0,
                True,
                {},
                object(),
                [],
                [0],
                [0, 1, 2],
                [0, 0],
                [NAN, 1],
                [2, 3],
                ["a", "b"],
                [[0, 1]],
                np.array([[0], [1]]),
                [None, 1],
                [INF, 0],
                [1j, 0],
                (7,),
                [0.5, 1],
                [-1, 1],
            ]
        case "name":
            return [None, 0, 1, -1, 1.0, NAN, INF, True, False, b"U", ["U"], ("U",), {}, set(), object(), 1j] + [
                np.array(["U"]),
                str,
                "",
                "f",  # the name of the parameter: a duplicate name in the model
            ]
        case "params":  # model parameters: a tensor or array of d reals
            return [
                None,
                "abc",
                "",
                b"x",
                {},
                set(),
                object(),
                int,
                1j,
                [],
                (),
                ["x", "y"],
                [None, None],
                {"a": 1.0},
                np.array(["a", "b"]),
                lambda: None,
                np.array([1j, 1j]),
                {"x"},
                (None,),
                Ellipsis,
            ]
        case "callable":
            return [None, "abc", 1, 1.0, NAN, True, [], (), {}, object(), b"x", 1j, np.array([1.0]), X] + [
                "logistic_loss",
                [len],
                (len,),
                {len: len},
                3,
                -1,
            ]
    raise KeyError(kind)


# --------------------------------------------------------------------------------------------
# The mechanisms: a valid call each, and the kind of every parameter
# --------------------------------------------------------------------------------------------


@dataclass
class Mechanism:
    """``call(**valid)`` succeeds; ``kinds[name]`` says which invalid values to sweep for ``name``."""

    target: str  # "module:qualified name" of the public callable
    valid: dict
    kinds: dict
    names: dict = field(default_factory=dict)  # argument -> words any of which its errors may use
    call: Callable | None = None  # when the public callable is not called directly (estimators, models)

    def resolve(self):
        module, name = self.target.split(":")
        obj = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj

    def parameters(self) -> set[str]:
        obj = self.resolve()
        params = set(inspect.signature(obj).parameters)
        if isinstance(obj, type):
            params |= set(inspect.signature(obj.fit).parameters) - {"self"}
        return params

    def run(self, accountant, **kwargs):
        args = self.valid | kwargs
        if "accountant" in self.parameters():
            args.setdefault("accountant", accountant)
        return (self.call or self.resolve())(**args)


def _estimator(target: str):
    def call(X, y, **params):
        module, name = target.split(":")
        return getattr(importlib.import_module(module), name)(**params).fit(X, y)

    return call


def _in_model(target: str):
    def call(**kwargs):
        import pymc as pm

        module, name = target.split(":")
        with pm.Model():
            f = pm.Flat("f", shape=D)
            kwargs.setdefault("params", f)
            return getattr(importlib.import_module(module), name)(**kwargs)

    return call


def _logistic_loss():
    from pm_private.sampling.sanitized import logistic_loss

    return logistic_loss


SURVIVAL = dict(time="times", event="events")
MECHANISMS = {
    "laplace_mechanism": Mechanism(
        "pm_private.privacy.primitives:laplace_mechanism",
        dict(values=np.array([0.5, -1.0]), sensitivity=1.0, epsilon=1.0, source=as_noise_source(0)),
        dict(values="query", sensitivity="sensitivity", epsilon="epsilon", source="object"),
    ),
    "gaussian_mechanism": Mechanism(
        "pm_private.privacy.primitives:gaussian_mechanism",
        dict(values=np.array([0.5, -1.0]), sensitivity=1.0, epsilon=1.0, delta=1e-5, source=as_noise_source(0)),
        dict(values="query", sensitivity="sensitivity", epsilon="epsilon", delta="delta", source="object"),
    ),
    "exponential_mechanism": Mechanism(
        "pm_private.privacy.primitives:exponential_mechanism",
        dict(
            scores=np.array([0.0, 1.0, 2.0]),
            epsilon=1.0,
            sensitivity=1.0,
            source=as_noise_source(0),
            log_base=np.zeros(3),
            size=None,
        ),
        dict(
            scores="query",
            epsilon="epsilon",
            sensitivity="sensitivity",
            source="object",
            log_base="log weights",
            size="optional count",
        ),
    ),
    "release_linear_stats_laplace": Mechanism(
        "pm_private.linear:release_linear_stats_laplace",
        dict(X=X, y=Y, epsilon=1.0, x_bound=1.0, y_bound=1.0, split=(0.6, 0.35, 0.05), rng=0, preprocessing=None),
        dict(
            X="matrix",
            y="reals",
            epsilon="epsilon",
            x_bound="bound",
            y_bound="bound",
            split="split",
            accountant="object",
            rng="rng",
            preprocessing="object",
            clip_share="clip share",
            scale_response="bool",
        ),
    ),
    "release_linear_stats": Mechanism(
        "pm_private.linear:release_linear_stats",
        dict(X=X, y=Y, epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=1.0, rng=0, preprocessing=None),
        dict(
            X="matrix",
            y="reals",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            y_bound="bound",
            accountant="object",
            rng="rng",
            preprocessing="object",
            clip_share="clip share",
            scale_response="bool",
        ),
    ),
    "adassp": Mechanism(
        "pm_private.linear:adassp",
        dict(X=X, y=Y, epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=1.0, rho=0.05, rng=0),
        dict(
            X="matrix",
            y="reals",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            y_bound="bound",
            rho="open fraction",
            accountant="object",
            rng="rng",
        ),
    ),
    "release_logistic_stats": Mechanism(
        "pm_private.glm:release_logistic_stats",
        dict(X=X, y=LABELS, epsilon=1.0, delta=1e-5, x_bound=1.0, rng=0),
        dict(X="matrix", y="labels", epsilon="epsilon", delta="delta", x_bound="bound", accountant="object", rng="rng"),
    ),
    "release_poisson_stats": Mechanism(
        "pm_private.glm:release_poisson_stats",
        dict(X=X, y=COUNT_DATA, epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=3, rng=0),
        dict(
            X="matrix",
            y="counts",
            epsilon="epsilon",
            delta="delta",
            x_bound="bound",
            y_bound="count",
            accountant="object",
            rng="rng",
        ),
    ),
    "DPElasticNetLogisticRegression": Mechanism(
        "pm_private.logistic:DPElasticNetLogisticRegression",
        dict(
            X=X,
            y=LABELS,
            epsilon=1.0,
            lam=0.5,
            alpha=0.5,
            norm_bound=1.0,
            noise="laplace",
            fit_intercept=True,
            too_weak="add_ridge",
            tol=1e-10,
            max_iter=1000,
            rng=0,
            classes=None,
        ),
        dict(
            X="matrix",
            y="labels",
            epsilon="epsilon",
            lam="positive",
            alpha="fraction",
            norm_bound="bound",
            noise="choice",
            fit_intercept="bool",
            too_weak="choice",
            tol="positive",
            max_iter="work",
            accountant="object",
            rng="rng",
            classes="classes",
        ),
        names=dict(y=("y", "label", "target", "classes"), classes=("classes", "label")),
        call=_estimator("pm_private.logistic:DPElasticNetLogisticRegression"),
    ),
    "select_penalty": Mechanism(
        "pm_private.logistic:select_penalty",
        dict(
            X=X,
            y=LABELS,
            lams=[0.5, 1.0],
            alpha=0.5,
            epsilon=1.0,
            delta=1e-5,
            norm_bound=1.0,
            selection_share=0.5,
            validation_fraction=0.3,
            noise="laplace",
            fit_intercept=True,
            tol=1e-10,
            max_iter=1000,
            rng=0,
        ),
        dict(
            X="matrix",
            y="labels",
            lams="penalties",
            alpha="fraction",
            epsilon="epsilon",
            delta="delta",
            norm_bound="bound",
            selection_share="open fraction",
            validation_fraction="open fraction",
            noise="choice",
            fit_intercept="bool",
            tol="positive",
            max_iter="work",
            accountant="object",
            rng="rng",
        ),
        names=dict(y=("y", "label", "target"), lams=("lams", "lam")),
    ),
    "data_perturbation_sgd": Mechanism(
        "pm_private.logistic:data_perturbation_sgd",
        dict(
            X=X,
            y=LABELS,
            epsilon=1e4,
            delta=1e-5,
            norm_bound=1.0,
            batch_size=10,
            epochs=1,
            learning_rate=0.5,
            l2=1e-3,
            fit_intercept=True,
            influence_threshold=None,
            rng=0,
        ),
        dict(
            X="matrix",
            y="labels",
            epsilon="epsilon",
            delta="delta",
            norm_bound="bound",
            batch_size="count",
            epochs="work",
            learning_rate="positive",
            l2="positive",
            fit_intercept="bool",
            influence_threshold="optional positive",
            accountant="object",
            rng="rng",
        ),
        names=dict(y=("y", "label")),
    ),
    "sanitized_loss": Mechanism(
        "pm_private.sampling.sanitized:sanitized_loss",
        dict(name="U", loss=None, data=(X, YPM), epsilon=1.0, v=None, sigma=None, model=None),
        dict(
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
        call=_in_model("pm_private.sampling.sanitized:sanitized_loss"),
    ),
    "weibull_private": Mechanism(
        "pm_private.survival:weibull_private",
        dict(time=TIME, event=EVENT, epsilon=1.0, horizon=1.0, K=10, gamma=10.0, omega=6.0, rng=0),
        SURVIVAL
        | dict(
            epsilon="epsilon", horizon="bound", K="count", gamma="bound", omega="bound", accountant="object", rng="rng"
        ),
    ),
    "weibull_laplace": Mechanism(
        "pm_private.survival:weibull_laplace",
        dict(time=TIME, event=EVENT, epsilon=1.0, horizon=1.0, gamma=10.0, omega=6.0, rng=0),
        SURVIVAL
        | dict(epsilon="epsilon", horizon="bound", gamma="bound", omega="bound", accountant="object", rng="rng"),
    ),
    "weibull_sample_aggregate": Mechanism(
        "pm_private.survival:weibull_sample_aggregate",
        dict(time=TIME, event=EVENT, epsilon=1.0, horizon=1.0, subset_size=10, gamma=10.0, omega=6.0, rng=0),
        SURVIVAL
        | dict(
            epsilon="epsilon",
            horizon="bound",
            subset_size="count",
            gamma="bound",
            omega="bound",
            accountant="object",
            rng="rng",
        ),
    ),
    "output_perturbation": Mechanism(
        "pm_private.survival:output_perturbation",
        dict(X=X, time=TIME, event=EVENT, epsilon=1.0, regularization=0.1, q=5, e=2, rng=0),
        SURVIVAL
        | dict(
            X="matrix",
            epsilon="epsilon",
            regularization="bound",
            q="count",
            e="count",
            accountant="object",
            rng="rng",
        ),
    ),
    "objective_perturbation": Mechanism(
        "pm_private.survival:objective_perturbation",
        dict(X=X, time=TIME, event=EVENT, epsilon=1.0, regularization=0.1, q=5, e=2, rng=0),
        SURVIVAL
        | dict(
            X="matrix",
            epsilon="epsilon",
            regularization="bound",
            q="count",
            e="count",
            accountant="object",
            rng="rng",
        ),
    ),
}
MECHANISMS["sanitized_loss"].valid["loss"] = _logistic_loss()

# --------------------------------------------------------------------------------------------
# Discovery, noise counting, one checked call
# --------------------------------------------------------------------------------------------


def discovered_mechanisms() -> set[str]:
    """Public callables that take an ``accountant`` or a noise ``source``: "module:name"."""
    found = set()
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "_NAMES", getattr(module, "__all__", ())):
            obj = getattr(module, name)
            if not callable(obj) or name in INFRASTRUCTURE:
                continue
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            source = params.get("source")
            if "accountant" in params or (source is not None and "NoiseSource" in str(source.annotation)):
                found.add(name)
    return found


class _Hang(Exception):
    pass


@pytest.fixture(scope="module")
def noise_draws():
    """A counter of noise draws: every ``note_noise_drawn`` bound in a pm_private module is wrapped."""
    from pm_private.privacy import accountant as accountant_module

    original = accountant_module.note_noise_drawn
    draws = Counter()

    def counted():
        draws["draws"] += 1
        original()

    patched = []
    for name, module in list(sys.modules.items()):
        if name.startswith("pm_private") and getattr(module, "note_noise_drawn", None) is original:
            module.note_noise_drawn = counted
            patched.append(module)
    assert len(patched) >= 3  # the accountant, the noise source and the OpenDP primitives
    yield draws
    for module in patched:
        module.note_noise_drawn = original


def _alarm(signum, frame):
    raise _Hang


def outcome(mechanism: Mechanism, name: str, value, draws: Counter) -> list[str]:
    """Problems of one invalid call (empty: refused cleanly before any reservation or noise)."""
    accountant = PrivacyAccountant(1.7e308, 0.5)  # a huge ε reaches the mechanism's own checks
    before = draws["draws"]
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
    error = None
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            mechanism.run(accountant, **{name: value})
    except _Hang:
        return [f"ran past {CALL_LIMIT_S:g} s"]
    except Exception as caught:  # noqa: BLE001  judged below
        error = caught
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    problems = []
    if accountant.history:
        statuses = Counter(entry.status for entry in accountant.history)
        COUNTS["reservations"] += 1
        COUNTS["spends"] += statuses.get("spent", 0) + statuses.get("reserved", 0)
        problems.append(f"ledger entries {dict(statuses)}")
    if draws["draws"] != before:
        COUNTS["noise draws"] += 1
        problems.append("noise drawn")
    words = mechanism.names.get(name, (name,))
    if error is None:
        problems.append("accepted")
    elif isinstance(error, BudgetExceededError) and name in ("epsilon", "delta"):
        pass
    elif not isinstance(error, (ValueError, TypeError)):
        problems.append(f"{type(error).__name__}: {str(error)[:160]}")
    elif not any(word.lower() in str(error).lower() for word in words):
        problems.append(f"message does not name {name!r}: {type(error).__name__}: {str(error)[:160]}")
    return problems


def _cases() -> list[tuple[str, str]]:
    return [(key, name) for key, mechanism in MECHANISMS.items() for name in mechanism.kinds]


# --------------------------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------------------------


def test_every_mechanism_has_an_entry():
    """Driven by the public API: a new mechanism (it takes an accountant or a noise source) needs an entry."""
    listed = {m.target.split(":")[1].split(".")[0] for m in MECHANISMS.values()}
    assert discovered_mechanisms() <= listed, sorted(discovered_mechanisms() - listed)


@pytest.mark.parametrize("key", list(MECHANISMS))
def test_every_parameter_is_swept(key):
    mechanism = MECHANISMS[key]
    assert mechanism.parameters() - {"kwargs", "args"} == set(mechanism.kinds), key


@pytest.fixture(scope="module")
def valid_calls(noise_draws) -> dict:
    """Each mechanism's valid call, made once: (result, noise draws, ε spent)."""
    out = {}
    for key, mechanism in MECHANISMS.items():
        accountant = PrivacyAccountant(1e5, 0.5)
        before = noise_draws["draws"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = mechanism.run(accountant)
        out[key] = (result, noise_draws["draws"] - before, accountant.spent[0])
    return out


@pytest.mark.parametrize("key", list(MECHANISMS))
def test_the_valid_call_succeeds(key, valid_calls):
    _, draws, spent = valid_calls[key]
    assert draws > 0 or spent > 0  # the sweep's calls would reach the charge or the noise


def test_every_release_kind_comes_from_a_swept_mechanism(valid_calls):
    kinds = set()
    for result, _, _ in valid_calls.values():
        for item in (result, getattr(result, "privacy_", None), *getattr(result, "releases", ())):
            if isinstance(item, Release):
                kinds.add(item.kind)
    assert not set(all_release_types()) - kinds, sorted(set(all_release_types()) - kinds)


@pytest.mark.parametrize(("key", "name"), _cases())
def test_invalid_argument_is_refused_before_any_charge(key, name, noise_draws):
    mechanism = MECHANISMS[key]
    values = values_of(mechanism.kinds[name], mechanism.valid.get(name))
    assert len(values) >= 20, (key, name, len(values))
    failures = []
    for value in values:
        COUNTS["calls"] += 1
        problems = outcome(mechanism, name, value, noise_draws)
        if problems:
            failures.append(f"{name}={value!r:.60}: {problems}")
    COUNTS["mechanisms"] = len(MECHANISMS)
    COUNTS["arguments"] += 1
    assert not failures, f"{key}: " + "\n".join(failures)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    path = os.environ.get("SWEEP_REPORT")
    if path:
        with open(path, "w") as out:
            json.dump(dict(COUNTS), out, indent=1, sort_keys=True)
