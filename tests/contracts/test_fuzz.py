"""Fuzz the public API with adversarial inputs: no crash, no hang, no silent NaN, no spend on failure.

Every call runs in a forked child process (a segmentation fault or a hang kills only the child)
with a per-call time limit and an address-space limit.  Release functions and the functions that
take records are called through *templates* (a mechanism's comes from its card in
tests/contracts/cards.py): a valid call, of which hypothesis replaces one argument by an
adversarial value (NaN, ±inf, 1e308, 1e-320, 0, negative, empty, wrong shape, strings,
booleans, None, huge sizes).  The contract checked for a template call:

* the child neither crashes nor runs past the limit;
* a returned result holds no NaN or infinite number (a non-finite release is never silent);
* an exception is a ValueError or TypeError whose message names the argument (or, for ε and δ,
  a refusal by the accountant), and the accountant's ``spent`` is unchanged after it.

Two outcomes are counted but allowed: a MemoryError for sizes beyond the child's address-space
limit (10¹² records), and a solver that does not converge after the noise was drawn (extreme but
valid ε or bounds; whether that spends the budget is the release protocol's rule).  ε and δ of
1e-320, subnormal or tiny values, strings and booleans are fuzzed only once ``check_epsilon``
refuses them (the accountant's validation owns those checks).

Every other public callable is called with junk positional arguments and must neither crash
nor hang.  ``FUZZ_EXAMPLES`` (default 6 per template) sets the number of hypothesis examples:
``FUZZ_EXAMPLES=200 FUZZ_REPORT=fuzz.json python -m pytest -p no:xdist -q tests/contracts/test_fuzz.py``
runs a long sweep and writes the counts of each outcome; ``FUZZ_STRICT=0`` records outcomes
without failing (to measure a sweep on code that does not meet the contract yet).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import pickle
import resource
import select
import signal
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from cards import CARD, CARDS, DATA, PACKAGES, D, MechanismCard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pm_private
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.release import Release
from pm_private.privacy.validation import check_epsilon
from pm_private.release_file import all_release_types

NON_CONVERGENCE = ("ConvergenceError", "RuntimeError")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
STRICT = os.environ.get("FUZZ_STRICT", "1") != "0"
CALL_LIMIT_S = float(os.environ.get("FUZZ_CALL_LIMIT_S", "60"))
MEMORY_LIMIT = 3 * 2**30  # address space a child may add to the parent's
OUTCOMES: Counter = Counter()
PROBLEMS: list = []
pytestmark = pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")

# --------------------------------------------------------------------------------------------
# Running one call in a child process
# --------------------------------------------------------------------------------------------


#: Result fields where +inf is a documented value, not a failure ("no horizon").
INFINITE_BY_DESIGN = {"horizon"}


def _non_finite(value, depth=0) -> str | None:
    """Path of the first NaN or infinite number in a result, or None."""
    if depth > 6 or value is None or isinstance(value, (str, bytes, bool, type)):
        return None
    if isinstance(value, (float, np.floating)):
        return None if math.isfinite(value) else "value"
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc" and not np.isfinite(value).all():
            return "array"
        return None
    if hasattr(value, "to_numpy") and hasattr(value, "dtypes"):  # pandas
        numeric = value.select_dtypes("number") if hasattr(value, "select_dtypes") else value
        array = np.asarray(numeric.to_numpy(), dtype=np.float64) if len(numeric) else np.zeros(0)
        return None if np.isfinite(array[~np.isnan(array)]).all() else "frame"  # missing data is NaN by design
    if dataclasses.is_dataclass(value):
        items = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        items = list(zip(value._fields, value, strict=True))
    elif isinstance(value, (list, tuple)):
        items = list(enumerate(value))
    elif isinstance(value, dict):
        items = list(value.items())
    elif type(value).__module__.startswith("pm_private") and hasattr(value, "__dict__"):
        items = [(k, v) for k, v in vars(value).items() if k.endswith("_")]  # fitted attributes
    else:
        return None
    for name, item in items:
        if name in INFINITE_BY_DESIGN and item == np.inf:
            continue
        found = _non_finite(item, depth + 1)
        if found:
            return f"{name}.{found}"
    return None


def _child(call: Callable[[PrivacyAccountant], Any]) -> dict:
    accountant = PrivacyAccountant(1e6, 0.5)  # made in the child: an accountant refuses to spend across a fork
    before = accountant.spent
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(accountant)
    except BaseException as error:  # noqa: BLE001  reported to the parent
        return {
            "kind": "error",
            "type": type(error).__name__,
            "budget": isinstance(error, BudgetExceededError),
            "value_or_type": isinstance(error, (ValueError, TypeError)),
            "memory": isinstance(error, MemoryError),
            "message": str(error)[:500],
            "spent": accountant.spent != before,
        }
    return {"kind": "result", "non_finite": _non_finite(result), "release_kinds": sorted(_release_kinds(result))}


def _release_kinds(result, depth: int = 0) -> set[str]:
    """Kinds of the releases in a result: itself, the records of statistics, an estimator's
    ``privacy_``, and releases nested in a release's fields."""
    if depth > 3:
        return set()
    found = set()
    if isinstance(result, Release):
        found.add(result.kind)
        for f in dataclasses.fields(result):
            found |= _release_kinds(getattr(result, f.name), depth + 1)
    for inner in (getattr(result, "releases", None), getattr(result, "privacy_", None)):
        if isinstance(inner, tuple):
            for item in inner:
                found |= _release_kinds(item, depth + 1)
        elif inner is not None:
            found |= _release_kinds(inner, depth + 1)
    return found


def run_isolated(call: Callable[[PrivacyAccountant], Any], limit_s: float = CALL_LIMIT_S) -> dict:
    """Outcome of ``call(accountant)`` in a forked child: result, error, crash or hang."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read)
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            with open("/proc/self/statm") as statm:
                used = int(statm.read().split()[0]) * resource.getpagesize()
            resource.setrlimit(resource.RLIMIT_AS, (used + MEMORY_LIMIT, hard))
            payload = pickle.dumps(_child(call))
            with os.fdopen(write, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)
    os.close(write)
    chunks, outcome = [], None
    with os.fdopen(read, "rb") as pipe:
        deadline = limit_s
        while True:
            ready, _, _ = select.select([pipe], [], [], deadline)
            if not ready:
                os.kill(pid, signal.SIGKILL)
                outcome = {"kind": "hang"}
                break
            chunk = pipe.read1(1 << 16) if hasattr(pipe, "read1") else os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if outcome is None:
        if os.WIFSIGNALED(status) or not chunks:
            outcome = {"kind": "crash", "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}
        else:
            outcome = pickle.loads(b"".join(chunks))
    return outcome


# --------------------------------------------------------------------------------------------
# Templates: valid calls of the release and record-taking functions
# --------------------------------------------------------------------------------------------

X, TIME, EVENT = DATA["X"], DATA["time"], DATA["event"]
INTERVAL = np.minimum((TIME * 5).astype(int), 4)


def _in_model(build):
    """Call ``build`` inside a fresh ``pm.Model``."""

    def call(**kwargs):
        import pymc as pm

        with pm.Model():
            return build(**kwargs)

    return call


def _hazard(**kwargs):
    import pymc as pm

    from pm_private.survival import DiscreteTimeHazard, check_hazard_records

    beta, gamma = pm.Normal("beta", shape=D), pm.Normal("gamma", shape=5)
    X, interval, event = check_hazard_records(kwargs["X"], kwargs["interval"], kwargs["event"], 5)
    DiscreteTimeHazard("L", gamma, X @ beta, observed=np.column_stack([interval, event]))
    model = pm.modelcontext(None)
    return model.compile_logp(mode="FAST_COMPILE")(model.initial_point())  # runs the compiled kernel


def _weibull_model(**kwargs):
    from pm_private.survival import weibull_model

    weibull_model(**kwargs)


@dataclass
class Template:
    """A valid call: ``fn(**args)``; ``kinds`` says how each argument may be corrupted."""

    fn: Callable | str
    args: dict
    kinds: dict
    aliases: dict = field(default_factory=dict)
    accountant: bool = False
    work: set = field(default_factory=set)  # counts that are amounts of work: 10⁹ runs for hours

    def resolve(self) -> Callable:
        if callable(self.fn):
            return self.fn
        module, name = self.fn.rsplit(":", 1)
        return getattr(importlib.import_module(module), name)


A, S, INT, STR = "array", "scalar", "int", "str"
#: The fuzz's kind of each kind of argument of a card; arguments of the other kinds (objects,
#: flags, seeds, names, callables) are not fuzzed.
FUZZED = {
    **dict.fromkeys(("matrix", "records", "reals", "labels", "counts", "times", "events"), A),
    **dict.fromkeys(("query", "log weights", "split", "optional split", "penalties"), A),
    **dict.fromkeys(("epsilon", "delta", "sensitivity", "positive", "bound", "optional positive"), S),
    **dict.fromkeys(("fraction", "open fraction", "clip share"), S),
    **dict.fromkeys(("count", "optional count", "work"), INT),
    "choice": STR,
}


def _template(card: MechanismCard) -> Template:
    """A card's valid call, with the arguments of its valid call whose kind the fuzz corrupts."""
    valid = card.valid
    return Template(
        card.invoke,
        valid,
        {name: FUZZED[kind] for name, kind in card.kinds.items() if kind in FUZZED and name in valid},
        aliases={
            name: card.names.get(name, (name,)) + card.fuzz_names.get(name, ())
            for name in set(card.names) | set(card.fuzz_names)
        },
        accountant=card.takes_accountant,
        work={name for name, kind in card.kinds.items() if kind == "work"},
    )


def _key(card: MechanismCard) -> str:
    return f"{card.name}.fit" if isinstance(card.resolve(), type) else card.name  # an estimator: its fit is fuzzed


TEMPLATES = {_key(card): _template(card) for card in CARDS} | {
    "DiscreteTimeHazard": Template(
        _in_model(_hazard),
        dict(X=X, interval=INTERVAL, event=EVENT),
        dict(X=A, interval=A, event=A),
    ),
    "weibull_model": Template(
        _in_model(_weibull_model),
        dict(time=TIME, event=EVENT, X=X),
        dict(time=A, event=A, X=A),
    ),
    "simulate_gwas": Template(
        "pm_private.datasets.gwas:simulate_gwas",
        dict(
            n_cases=10,
            n_controls=10,
            n_snps=8,
            causal_maf=0.25,
            odds=(0.64, 0.91, 0.91, 2.73),
            ld_rho=0.9,
            block_mean=20.0,
            rng=0,
        ),
        dict(n_cases=INT, n_controls=INT, n_snps=INT, causal_maf=S, odds=A, ld_rho=S, block_mean=S),
    ),
    "simulate_weibull": Template(
        "pm_private.survival:simulate_weibull",
        dict(n=20, shape=1.5, scale=1.0, horizon=3.0, rng=0),
        dict(n=INT, shape=S, scale=S, horizon=S),
    ),
    "simulate_discrete_time": Template(
        "pm_private.survival:simulate_discrete_time",
        dict(n=20, alpha=np.array([-2.0, -1.0]), beta=np.array([0.5, -0.5]), q=5, censoring=0.3, rng=0),
        dict(n=INT, alpha=A, beta=A, q=INT, censoring=S),
    ),
    "make_gdsc_like": Template(
        "pm_private.datasets:make_gdsc_like",
        dict(n_cell_lines=20, n_genes=4, n_drugs=3, missing_fraction=0.2, seed=0),
        dict(n_cell_lines=INT, n_genes=INT, n_drugs=INT, missing_fraction=S),
    ),
    "check_survival": Template(
        "pm_private.survival:check_survival", dict(time=TIME, event=EVENT), dict(time=A, event=A)
    ),
    "scale_times": Template(
        "pm_private.survival:scale_times", dict(time=TIME, horizon=1.0, floor=0.0), dict(time=A, horizon=S, floor=S)
    ),
    "interval_index": Template(
        "pm_private.survival:interval_index",
        dict(t_scaled=TIME, q=5),
        dict(t_scaled=A, q=INT),
        aliases={"t_scaled": ("scaled times", "t_scaled", "time")},
    ),
    "scale_covariates": Template("pm_private.survival:scale_covariates", dict(X=X, bound=2.0), dict(X=A, bound=S)),
    "linear_stats": Template("pm_private.linear:linear_stats", dict(X=X, y=DATA["y"]), dict(X=A, y=A)),
    "weibull_mle": Template(
        "pm_private.survival:weibull_mle",
        dict(time=TIME, event=EVENT),
        dict(time=A, event=A),
        aliases={"time": ("time", "times")},
    ),
    "DiscreteTimeData": Template(
        "pm_private.survival:DiscreteTimeData",
        dict(X=X, interval=INTERVAL, event=EVENT, basis=np.eye(5)),
        dict(X=A, interval=A, event=A, basis=A),
        aliases={"basis": ("basis", "interval")},  # a basis with fewer rows leaves intervals out of range
    ),
    "interval_basis": Template("pm_private.survival:interval_basis", dict(q=5, e=3), dict(q=INT, e=INT)),
}

# --------------------------------------------------------------------------------------------
# Adversarial values
# --------------------------------------------------------------------------------------------


def _refuses(value) -> bool:
    try:
        check_epsilon(value)
    except (TypeError, ValueError):
        return True
    return False


#: ε type and range checks belong to the accountant's validation; fuzzed once it has them.
EPSILON_TYPES_CHECKED = all(_refuses(v) for v in ("1", True, 1e-320))

SCALARS = [np.nan, np.inf, -np.inf, 0.0, -1.0, 1e308, -1e308, 2.5, None, [1.0, 2.0], "abc", 10**12]
TINY = [5e-324, 1e-300]
TYPE_SENSITIVE = ["1", True, 1e-320, *TINY]  # fuzzed for ε and δ only when their checks refuse them


def _array_mutations(valid) -> list:
    if isinstance(valid, tuple) and all(isinstance(v, np.ndarray) for v in valid):  # a tuple of arrays
        first, *rest = valid
        return (
            [(m, *rest) for m in _array_mutations(first)]
            + [(first, *_array_mutations(rest[0])[i : i + 1]) for i in range(3, 9)]
            + [()]
        )
    a = np.asarray(valid)
    numeric = a.dtype.kind in "biuf"
    out = [None, "abc", 7.0, np.zeros((0,) + a.shape[1:]), np.array([["x"] * max(1, a.shape[-1] if a.ndim else 1)] * 3)]
    if numeric and a.size:
        flat = a.astype(np.float64).copy()
        for bad in (np.nan, np.inf, -np.inf, 1e308, -1e308):
            b = flat.copy()
            b.flat[a.size // 2] = bad
            out.append(b)
        out += [flat[:-1], flat[..., None], np.full_like(flat, 1e308), -flat, flat + 0.5, flat * 7]
        if a.ndim == 2:
            out += [flat[:, :-1], flat.ravel()]
        out.append(flat.astype(bool))
    return out


def _values(kind: str, name: str, valid) -> list:
    if kind == A:
        return _array_mutations(valid)
    if kind == STR:
        return ["nope", None, 1.0, ""]
    values = list(SCALARS) + ([] if name in ("epsilon", "delta") else TINY)
    if kind == INT:
        values += [0, -1, 3.5, True, 10**9]
    if name in ("epsilon", "delta") and EPSILON_TYPES_CHECKED:
        values += TYPE_SENSITIVE
    return values


#: Counts checked by the release protocol's ``check_count``; fuzzed with non-integers once it exists.
COUNTS_CHECKED = hasattr(importlib.import_module("pm_private.privacy.validation"), "check_count")
COUNT_OWNED = {
    ("weibull_private", "K"),
    ("weibull_sample_aggregate", "subset_size"),
    ("weibull_sample_aggregate", "subsets"),
}


def _names(template: Template, name: str) -> tuple[str, ...]:
    return template.aliases.get(name, (name,))


def _call(template: Template, args: dict):
    fn = template.resolve()

    def call(accountant):
        kwargs = dict(args)
        if template.accountant:
            kwargs["accountant"] = accountant
        return fn(**kwargs)

    return call


def check_outcome(template: Template, name: str, outcome: dict, label: str) -> None:
    """Record the outcome and assert the contract (module docstring)."""
    kind = outcome["kind"]
    problems = []
    if kind in ("crash", "hang"):
        problems.append(kind)
        kind = "crash or hang"
    elif kind == "result" and outcome["non_finite"]:
        problems.append("silent non-finite result")
    elif kind == "error" and outcome["memory"]:
        kind = "memory error"  # a size beyond the address-space limit: refused cleanly, no crash
    elif kind == "error" and outcome["type"] in NON_CONVERGENCE:
        kind = "non-convergence"  # after the noise: the release protocol decides whether it spends
    elif kind == "error":
        if outcome["spent"]:
            problems.append("spend on failure")
        named = any(alias.lower() in outcome["message"].lower() for alias in _names(template, name))
        refused_budget = outcome["budget"] and name in ("epsilon", "delta")
        if not (outcome["value_or_type"] and named) and not refused_budget:
            problems.append("error type or message")
    OUTCOMES[kind] += 1
    for problem in problems:
        OUTCOMES[problem] += 1
    if problems:
        PROBLEMS.append(f"{label}: {problems} {outcome}")
    if STRICT:
        assert not problems, f"{label}: {problems} {outcome}"


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    path = os.environ.get("FUZZ_REPORT")
    if path:
        with open(path, "w") as out:
            json.dump({"counts": dict(OUTCOMES), "problems": PROBLEMS}, out, indent=1, sort_keys=True)


@pytest.fixture(scope="module", autouse=True)
def _warm():
    """Import and compile in the parent once, so that children only run the call."""
    for template in TEMPLATES.values():
        template.resolve()
    for card in CARDS:
        card.resolve()
    import pymc  # noqa: F401

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        CARD["data_perturbation_sgd"].run(PrivacyAccountant(1e6, 0.5))  # the noise calibration is cached


@pytest.mark.parametrize("key", list(TEMPLATES))
def test_valid_template_call_succeeds(key):
    template = TEMPLATES[key]
    outcome = run_isolated(_call(template, template.args))
    assert outcome["kind"] == "result" and not outcome["non_finite"], outcome


def test_every_release_kind_is_fuzzed():
    """Driven by the registry of release types: a new mechanism without a template here fails."""
    kinds = set()
    for card in CARDS:
        template = TEMPLATES[_key(card)]
        kinds.update(run_isolated(_call(template, template.args)).get("release_kinds", ()))
    missing = set(all_release_types()) - kinds
    assert not missing, f"release kinds that no fuzz template produces: {sorted(missing)}"


@pytest.mark.parametrize("key", list(TEMPLATES))
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(data=st.data())
def test_adversarial_argument(key, data):
    template = TEMPLATES[key]
    name = data.draw(st.sampled_from(sorted(template.kinds)), label="argument")
    values = _values(template.kinds[name], name, template.args[name])
    if name in template.work:
        values = [v for v in values if not (isinstance(v, int) and v > 10**6)]
    if (key, name) in COUNT_OWNED and not COUNTS_CHECKED:
        values = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    value = data.draw(st.sampled_from(values), label="value")
    outcome = run_isolated(_call(template, template.args | {name: value}))
    check_outcome(template, name, outcome, f"{key}({name}={value!r:.80})")


# --------------------------------------------------------------------------------------------
# Every other public callable: junk arguments, no crash, no hang
# --------------------------------------------------------------------------------------------


def public_callables() -> dict[str, Callable]:
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "_NAMES", getattr(module, "__all__", ())):
            obj = getattr(module, name)
            if callable(obj) and not (isinstance(obj, type) and issubclass(obj, BaseException)):
                found.setdefault(f"{obj.__module__}.{name}", obj)
    return found


JUNK = [
    np.nan,
    np.inf,
    -1.0,
    0,
    1e308,
    1e-320,
    10**12,
    "abc",
    None,
    True,
    [],
    np.zeros((0, 3)),
    np.full((3, 2), np.nan),
]


def test_public_names_resolve_to_their_objects():
    for qualified, obj in public_callables().items():
        assert not isinstance(obj, type(pm_private)), qualified  # a submodule shadowing a function


@pytest.mark.parametrize("qualified", sorted(public_callables()))
@settings(max_examples=max(2, EXAMPLES // 3), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(args=st.lists(st.sampled_from(JUNK), min_size=0, max_size=3))
def test_junk_arguments_never_crash_or_hang(qualified, args):
    fn = public_callables()[qualified]

    def call(accountant):
        import pymc as pm

        with pm.Model():
            return fn(*args)

    outcome = run_isolated(call, limit_s=CALL_LIMIT_S)
    OUTCOMES[f"junk {outcome['kind']}"] += 1
    if outcome["kind"] in ("crash", "hang"):
        OUTCOMES[outcome["kind"]] += 1
        PROBLEMS.append(f"{qualified}{tuple(args)!r:.120}: {outcome}")
    if STRICT:
        assert outcome["kind"] not in ("crash", "hang"), (qualified, args, outcome)
