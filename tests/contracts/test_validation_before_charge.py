"""Every public argument of every mechanism is validated before any budget is reserved or noise drawn.

The mechanisms are found, not listed: every public callable of pm_private that takes an
``accountant`` (it charges a budget) or a ``source`` (it draws noise) is a mechanism, and must
have a card in ``CARDS`` (tests/contracts/cards.py): a valid call on tiny data and, for **each**
parameter of its signature, the kind of value it takes.  Each kind has at least 20 values that are invalid
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

import numpy as np
import pandas as pd
import pytest
from cards import CARD, CARDS, DATA, PACKAGES, MechanismCard

from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.release import Release
from pm_private.release_file import all_release_types

#: Accounting machinery that takes an accountant but releases nothing itself, and the noise
#: samplers that mechanisms call inside their guard (they release nothing on their own).
INFRASTRUCTURE = {
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
    # The choice of one row per person, which mechanisms make with their noise source inside
    # their own checks (swept through every mechanism's ``unit``).
    "rows_kept_per_unit",
    "rows_per_unit",
}
CALL_LIMIT_S = 20.0
COUNTS: Counter = Counter({"spends": 0, "reservations": 0, "noise draws": 0})

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
        case "optional bool":  # None means the mechanism's default
            return [v for v in values_of("bool", valid) if v is not None]
        case "optional split":  # None means the mechanism's default split
            return [v for v in values_of("split", valid) if v is not None] + [np.array([0.6, 0.3, 0.2])]
        case "no split":  # a split given to a mechanism that takes none (its default None): even a valid one
            return [v for v in values_of("split", valid) if v is not None] + [(0.6, 0.35, 0.05), (1 / 3, 1 / 3, 1 / 3)]
        case "scale map":  # {free variable name: public scale}; None and {} mean no preconditioner
            not_a_map = [v for v in NOT_A_NUMBER if v is not None and not (isinstance(v, dict) and not v)]
            name = next(iter(valid))
            return not_a_map + [{name: bad} for bad in NOT_A_NUMBER + NOT_POSITIVE + EXTREME]
        case "start map":  # {free variable name: a value in its support}; None and {} mean the model's start
            not_a_map = [v for v in NOT_A_NUMBER if v is not None and not (isinstance(v, dict) and not v)]
            name = next(iter(valid))
            return not_a_map + [{name: bad} for bad in NOT_A_NUMBER + [NAN, np.float32(NAN), INF, -INF]]
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
        case "unit":  # one hashable, non-missing identifier per record (None: the record is the unit)
            n = len(DATA["X"])
            ids = np.arange(n) // 2
            with_nan = ids.astype(float)
            with_nan[n // 2] = NAN
            return [
                "abc",
                b"ab",
                7.0,
                True,
                object(),
                {},
                [],
                ids[:-1],
                np.append(ids, 0),
                np.column_stack([ids, ids]),
                ids[None, :],
                [[i] for i in ids],
                [None] * n,
                with_nan,
                pd.Series([pd.NA] * n),
                np.array([{"a": 1}] * n, dtype=object),
                [*ids.tolist()[:-1], None],
                [*ids.tolist()[:-1], [1]],
                np.array([], dtype=int),
                pd.Series(ids[:-1]),
            ]
        case "labels":  # strings are labels too
            return [v for v in _vector(valid, [0.5, 2.0, -3.0]) if getattr(v, "dtype", np.dtype(float)).kind != "U"]
        case "counts":  # non-negative integers
            return _vector(valid, [0.5, -1.0, -3.0, 1e-9])
        case "times":
            return _vector(valid, [-0.5, -1e-300, 5.0])
        case "events":
            return _vector(valid, [0.5, 2.0, -1.0])
        case "follow-up times":  # finite and ≥ 0, any length of follow-up
            return _vector(valid, [-0.5, -1e-300])
        case "cell labels":  # one label per record (a label outside the public cells is in no cell, not refused)
            return [
                "abc",
                7.0,
                [],
                {},
                object(),
                None,
                1j,
                b"ab",
                {"a": 1},
                valid[:-1],
                valid[:1],
                np.array([]),
                np.append(valid, valid[:1]),
                np.tile(valid, 2),
                np.column_stack([valid, valid]),
                valid[None, :],
                valid[None, None, :],
                [*valid.tolist(), "a"],
                valid.tolist()[:-1],
                [[1.0], [2.0, 3.0]],
                pd.Categorical(valid, categories=["a", "b", "zzz"]),  # its schema declares a label outside cells
            ]
        case "edges":  # interval ends: finite, > 0, strictly increasing
            return [
                None,
                "abc",
                7j,
                [],
                {},
                object(),
                [0.0, 1.0],
                [-1.0, 1.0],
                [1.0, 0.5],
                [0.5, 0.5, 1.0],
                [NAN],
                [INF],
                [0.5, NAN],
                [0.5, INF],
                [[0.5, 1.0]],
                ["a", "b"],
                [None, 1.0],
                np.array([]),
                [-INF, 1.0],
                [5e-324, 0.0],
            ]
        case "cells":  # the public cell labels: distinct strings (a record's label outside them: in no cell)
            return [
                None,
                "ab",
                "a",
                [],
                (),
                {},
                object(),
                7,
                ["a", "a"],
                ["a", "a", "b"],
                ("a", "a"),
                [None],
                ["a", None],
                [b"a"],
                [["a"]],
                [1, 2],
                ["a", 1],
                [1.5],
                [NAN],
                [True],
                np.array([]),
                np.array([1, 2]),
                [object()],
                iter([]),
            ]
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
            return [None, "abc", 1, 1.0, NAN, True, [], (), {}, object(), b"x", 1j, np.array([1.0]), DATA["X"]] + [
                "logistic_loss",
                [len],
                (len,),
                {len: len},
                3,
                -1,
            ]
    raise KeyError(kind)


#: The mechanisms, from their cards: a valid call each, and the kind of every parameter.
MECHANISMS = CARD

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


def outcome(mechanism: MechanismCard, name: str, value, draws: Counter) -> list[str]:
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
    listed = {card.name for card in CARDS}
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


def _release_kinds(result) -> set[str]:
    items = (result, getattr(result, "privacy_", None), *getattr(result, "releases", ()))
    return {item.kind for item in items if isinstance(item, Release)}


@pytest.mark.parametrize("key", list(MECHANISMS))
def test_the_valid_call_succeeds(key, valid_calls):
    result, draws, spent = valid_calls[key]
    assert draws > 0 or spent > 0  # the sweep's calls would reach the charge or the noise
    assert _release_kinds(result) == {MECHANISMS[key].release_kind} - {None}, key  # the card says what it releases


def test_every_release_kind_comes_from_a_swept_mechanism(valid_calls):
    kinds = set().union(*(_release_kinds(result) for result, _, _ in valid_calls.values()))
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
