"""One protocol for what a mechanism returns: a frozen :class:`Release`.

Every private mechanism of pm_private returns (or, for an estimator, stores in ``privacy_``) a
frozen dataclass derived from :class:`Release`.  Each carries

* ``epsilon``, ``delta``: the guarantee (ε, δ) charged to the accountant;
* ``neighbours``: the neighbour relation of the guarantee (``"replace-one"``: bounded DP, n public;
  ``"add-remove"``: unbounded DP, n private);
* ``mechanism``: one constant string per mechanism, citing its source by author and year; the
  accountant's ledger entry for the release carries the same string;
* ``private``: False when a seeded generator drew the noise (reproducible, **no** guarantee).

Only the release leaves a mechanism
-----------------------------------
A mechanism is a randomised function M(D) of the private data D.  Whatever it hands back is
published, so everything in its result must be one of (Dwork & Roth 2014, §2.3; post-processing,
Prop. 2.1):

``"output"``
    the DP output itself or a function of it alone (post-processing);
``"public"``
    a public input (ε, δ, bounds, n, grids, whether a seed was passed) or a function of public
    inputs only;
``"constant"``
    a data-independent constant (the mechanism's name).

Each field declares its kind in its dataclass metadata (with the field constructors
``output()``, ``public()`` and ``constant()`` of this module), and the test suite walks every
subclass of :class:`Release` and checks that (a) every field declares a kind and (b) on two
neighbouring data sets with the same seed every field that is not an ``"output"`` is identical.  Un-noised solver metadata (iteration counts,
convergence flags, objective values, gradient norms computed before the noise) is therefore
never part of a release: it is a function of the data, not of the output, and can single out a
record (a gradient norm computed before output perturbation tells D from a neighbour D′ with
certainty).

Data-dependent failures
-----------------------
A step inside a mechanism that can fail depending on the data (an optimiser that does not
converge) must not be retriable for free: the failure bit is itself data-dependent, and each
retry would draw fresh noise.  pm_private **reserves** the budget: :func:`release_guard` records
the spend when such a step raises :class:`ConvergenceError` inside the mechanism (the error
message then carries no private value), so a failed release costs what a successful one costs.
(The accountant's reservation protocol already keeps a release spent when it fails after noise
was drawn; the guard extends this to failures before the noise, such as the fit that output
perturbation perturbs afterwards.)  Spending makes the failure non-retriable; it does not make
the failure bit itself part of the ε guarantee: for the strongly convex problems solved here
its probability is negligible and acts as an additive δ.  Bad *input* (wrong shape, NaN,
ε ≤ 0) is checked before the guard and spends nothing.

Every mechanism charges its accountant through :func:`release_guard` with its module's mechanism
constant, and its result carries the same constant, so a ledger entry and the result it describes
always agree.  :func:`pm_private.sanitized_loss` is the one charged call that returns no
release: it adds a term to a model, and what is published is a sampler's draws from it
(approximately ε-DP, see :mod:`pm_private.sampling.sanitized`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import types
import typing
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._engine.docstrings import SharedParameterDocs
from .accountant import PrivacyAccountant, Reservation, check_accountant
from .budget import REPLACE_ONE, NoiseEvent
from .relations import RELATIONS
from .reservation import NoiseWatch
from .units import RECORD, UNITS, neighbour_text

__all__ = [
    "OUTPUT",
    "PUBLIC",
    "CONSTANT",
    "RANGES",
    "ChargedRefusal",
    "ConvergenceError",
    "NoAccountantWarning",
    "Release",
    "check_fields",
    "constant",
    "field_kinds",
    "output",
    "public",
    "release_guard",
    "release_type",
    "registered_release_types",
]

#: Field kinds of a release (see the module docstring).
OUTPUT, PUBLIC, CONSTANT = "output", "public", "constant"
_KINDS = (OUTPUT, PUBLIC, CONSTANT)


#: Ranges a numeric field may declare (``public(range="nonnegative")``), checked by
#: :func:`check_fields` when a release is read back.  A public number is ``"positive"`` unless it
#: declares otherwise (ε, bounds, noise scales, sensitivities, counts), an output ``"real"``.
RANGES = {
    "real": (-math.inf, math.inf, "finite"),
    "positive": (0.0, math.inf, "> 0"),
    "nonnegative": (0.0, math.inf, "≥ 0"),
    "fraction": (0.0, 1.0, "in [0, 1]"),
}


def _declared(kind: str, *, range: str | None = None, choices: tuple | None = None, **kwargs):
    metadata = dict(kwargs.pop("metadata", {}), kind=kind)
    if choices is not None:
        metadata["choices"] = tuple(choices)
    if range is not None:
        if range not in RANGES:
            raise ValueError(f"range must be one of {sorted(RANGES)}, got {range!r}")
        metadata["range"] = range
    return field(metadata=metadata, **kwargs)


def output(**kwargs):
    """``dataclasses.field`` declared as the DP output or a function of it alone."""
    return _declared(OUTPUT, **kwargs)


def public(**kwargs):
    """``dataclasses.field`` declared as a public input or a function of public inputs only."""
    return _declared(PUBLIC, **kwargs)


def constant(**kwargs):
    """``dataclasses.field`` declared as a data-independent constant."""
    return _declared(CONSTANT, **kwargs)


def _number(value, integer: bool) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, np.integer) if integer else (int, float, np.integer, np.floating))


def _holds_bool(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(item) for item in value)
    return isinstance(value, (bool, np.bool_))


def _checked(name: str, hint, value, range_: str):
    """``value`` checked against the annotation ``hint`` and the declared range (ValueError naming the field)."""
    low, high, words = RANGES[range_]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in (float, int):
        if not _number(value, hint is int):
            raise ValueError(f"field {name!r} must be {'an integer' if hint is int else 'a number'}, got {value!r:.40}")
        lowest = low if hint is float else (1 if range_ == "positive" else low)
        if not (math.isfinite(value) and (value > low if range_ == "positive" else value >= lowest) and value <= high):
            raise ValueError(f"field {name!r} must be {words}, got {value!r}")
        return value
    if hint is bool and not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"field {name!r} must be true or false, got {value!r:.40}")
    if hint is str and not isinstance(value, str):
        raise ValueError(f"field {name!r} must be a string, got {value!r:.40}")
    if hint is np.ndarray:
        if _holds_bool(value):
            raise ValueError(f"field {name!r} must be an array of numbers, not booleans")
        try:
            array = np.asarray(value)
            if array.dtype.kind not in "biuf" or array.dtype.kind == "b":
                raise TypeError
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"field {name!r} must be an array of numbers") from None
        if (
            array.ndim == 0
            or array.size == 0
            or not np.all(np.isfinite(array))
            or not np.all((array >= low) & (array <= high))
        ):
            raise ValueError(f"field {name!r} must be a non-empty array of numbers {words}")
        return array
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"field {name!r} must be a list, got {value!r:.40}")
        if len(args) == 2 and args[1] is Ellipsis:
            if not value:
                raise ValueError(f"field {name!r} must not be empty")
            hints = [args[0]] * len(value)
        elif len(value) != len(args):
            raise ValueError(f"field {name!r} must hold {len(args)} values, got {len(value)}")
        else:
            hints = list(args)
        return tuple(_checked(f"{name}[{i}]", h, v, range_) for i, (h, v) in enumerate(zip(hints, value, strict=True)))
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _checked(name, inner, value, range_)
    if dataclasses.is_dataclass(hint) and not isinstance(value, (dict, hint)):
        raise ValueError(f"field {name!r} must be a record of {hint.__name__}, got {value!r:.40}")
    return value


def check_fields(cls: type, values: dict) -> dict:
    """The values of a release's fields, checked against their declarations (a release file read back).

    Every field without a default must be present; each value must have its annotated type
    (numbers finite, not booleans; integers integral; tuples of the declared length; arrays of
    finite numbers) and lie in its declared range (:data:`RANGES`; public numbers are > 0 unless
    declared otherwise) or among its declared ``choices``.  A ``"constant"`` field with a default
    (the mechanism's name; a primitive's sensitivity ball) must hold that default: it is a constant of the
    release type, so another value would change what the record says without changing the
    record.  A field recorded under a former name (the type's ``renamed_fields``) is read under its
    new one.  Unknown keys are dropped.

    Parameters
    ----------
    cls : type
        A :class:`Release` subclass (or any dataclass whose fields declare kinds).
    values : dict
        ``{field name: value}`` as read from JSON.

    Returns
    -------
    dict
        The checked values of the fields present (arrays as float64 arrays, lists as tuples).

    Raises
    ------
    ValueError
        Naming the first field that is missing, of the wrong type, out of range, or a constant
        other than the release type's.
    """
    values = dict(values)
    for old, new in getattr(cls, "renamed_fields", {}).items():
        if old in values and new not in values:
            values[new] = values.pop(old)
    hints = typing.get_type_hints(cls)
    checked = {}
    for f in dataclasses.fields(cls):
        if f.name not in values:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"field {f.name!r} is missing")
            continue
        kind = f.metadata.get("kind")
        range_ = f.metadata.get("range", "positive" if kind == PUBLIC else "real")
        checked[f.name] = _checked(f.name, hints[f.name], values[f.name], range_)
        choices = f.metadata.get("choices")
        if choices is not None and checked[f.name] not in choices:
            raise ValueError(f"field {f.name!r} must be one of {choices}, got {values[f.name]!r:.40}")
        if kind == CONSTANT and f.default is not dataclasses.MISSING and checked[f.name] != f.default:
            raise ValueError(
                f"field {f.name!r} must be {f.default!r}, a constant of the {getattr(cls, 'kind', cls.__name__)} "
                f"release, got {values[f.name]!r:.60}"
            )
    return checked


def field_kinds(result) -> dict[str, str | None]:
    """The declared kind of every field of a release.

    Parameters
    ----------
    result : Release or type
        A release type or instance (any dataclass).

    Returns
    -------
    dict of str to str or None
        ``{field name: "output", "public" or "constant"}``, None where a field declares no kind.
    """
    return {f.name: f.metadata.get("kind") for f in dataclasses.fields(result)}


class ChargedRefusal(ValueError):
    """A release refused because of what a check found in the private data, after its budget was spent.

    A check that reads private data (public rows found among the private rows) cannot refuse for
    free: the refusal bit is a fact about the data, and free refusals can be repeated until they
    have read it out.  Raised through :func:`release_guard` (``refusal=``), inside the
    reservation, so a refused release costs what a released one costs and the budget bounds the
    number of probes; the message names no private value, row or count.
    """


class ConvergenceError(RuntimeError):
    """A data-dependent step of a mechanism failed after the noise was drawn.

    Raised through :func:`release_guard`, so the budget of the release has been spent (a free
    retry would leak the failure bit and draw fresh noise).  The message names no private value.
    """


#: Every release type by its ``kind``, filled as the classes are defined.
_REGISTRY: dict[str, type[Release]] = {}


@dataclass(frozen=True, kw_only=True)
class Release(SharedParameterDocs):
    """Base of every result a private mechanism returns (see the module docstring).

    Subclasses are frozen keyword-only dataclasses whose every field is declared with
    ``output()``, ``public()`` or ``constant()``, and each declares a stable identifier,
    ``class MyRelease(Release, kind="my_release")``: the key of its records in release files,
    registered when the class is defined (:func:`release_type`).  The ``mechanism`` field is the
    human-readable citation and may be reworded; ``kind`` never changes.  A subclass's docstring
    describes its own fields; the entries below are appended to its ``Parameters`` section for
    each field it does not describe itself.

    Parameters
    ----------
    epsilon : float
        The ε of the guarantee, as charged to the accountant (public).
    delta : float, default 0
        The δ of the guarantee (public).
    neighbours : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation of the guarantee (public): replace-one with n public, or add/remove
        with n private (:mod:`pm_private.privacy.relations`).
    mechanism : str
        The mechanism's name, citing its source by author and year (constant); the ledger entry
        of the release carries the same string.
    private : bool
        False when a seeded generator drew the noise: reproducible, and no guarantee (public).
    unit : {"record", "person"}, default "record"
        What the guarantee protects (public): one record, or one person with all their records
        (:func:`pm_private.privacy.rows_kept_per_unit`).
    """

    kind: ClassVar[str]
    #: Former names of fields, ``{old: new}``: a record written under an old name reads back.
    renamed_fields: ClassVar[dict[str, str]] = {}

    epsilon: float = public()
    delta: float = public(default=0.0, range="nonnegative")
    neighbours: str = public(default=REPLACE_ONE, choices=RELATIONS)
    mechanism: str = constant()
    private: bool = public()
    unit: str = public(default=RECORD, choices=UNITS)

    def __init_subclass__(cls, *, kind: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if not (isinstance(kind, str) and kind.isidentifier()):
            raise TypeError(f"{cls.__name__} must declare its kind: class {cls.__name__}(Release, kind='name')")
        if _REGISTRY.get(kind, cls) is not cls:
            raise TypeError(f"kind {kind!r} of {cls.__name__} is already {_REGISTRY[kind].__name__}'s")
        cls.kind = kind
        _REGISTRY[kind] = cls
        if "__repr__" not in cls.__dict__:  # kept by @dataclass, which adds its own repr only when absent
            cls.__repr__ = Release.__repr__

    def __repr__(self) -> str:
        # Whether the release is private comes first: a seeded release carries no guarantee.
        parts = ["private=True"] if self.private else ["not private (seeded)", "private=False"]
        parts += [
            f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr and f.name != "private"
        ]
        return f"{type(self).__name__}({', '.join(parts)})"


def release_type(kind: str) -> type[Release]:
    """The release type registered under ``kind`` (its module must have been imported).

    Parameters
    ----------
    kind : str
        The identifier a release type declares, e.g. ``"linear_stats_gaussian"``.

    Returns
    -------
    type
        The :class:`Release` subclass.

    Raises
    ------
    ValueError
        If no release type of that kind is registered.
    """
    try:
        return _REGISTRY[kind]
    except (KeyError, TypeError):
        raise ValueError(f"unknown release kind {kind!r}") from None


def registered_release_types() -> dict[str, type[Release]]:
    """Every release type defined so far, by kind.

    Returns
    -------
    dict of str to type
        ``{kind: release type}`` of the release types of the modules imported so far
        (``pm_private.release_file.all_release_types`` imports them all).
    """
    return dict(_REGISTRY)


class NoAccountantWarning(UserWarning):
    """A private release was made without an accountant: no ledger records its spend.

    Warned once per process and mechanism, when the release drew secure (private) noise (a
    seeded release, which is not private, is not warned about).  Pass ``accountant=`` to record
    the spend, or filter the warning
    (``warnings.simplefilter("ignore", NoAccountantWarning)``) where it is deliberate.
    """


#: (process id, mechanisms already warned about in it).
_WARNED: tuple[int, set[str]] = (0, set())


def _warn_no_accountant(mechanism: str) -> None:
    global _WARNED
    if _WARNED[0] != os.getpid():
        _WARNED = (os.getpid(), set())
    if mechanism in _WARNED[1]:
        return
    _WARNED[1].add(mechanism)
    warnings.warn(
        f"{mechanism}: a private release was made without an accountant, so no ledger records its "
        "privacy spend and nothing stops further releases from exceeding a budget; pass "
        "accountant=PrivacyAccountant(...) (or PrivacyAccountant.open(path, ...)) to record it "
        "(warned once per mechanism and process)",
        NoAccountantWarning,
        stacklevel=5,
    )


@contextmanager
def release_guard(
    accountant: PrivacyAccountant | None,
    mechanism: str,
    epsilon: float,
    delta: float = 0.0,
    *,
    neighbours: str = REPLACE_ONE,
    label: str = "",
    noise: tuple[NoiseEvent, ...] = (),
    refusal: str | None = None,
    unit: str = RECORD,
) -> Iterator[Reservation | None]:
    """Charge one release: refused before the body if over budget, recorded when the body returns.

    The one door by which every pm_private mechanism spends (see
    :mod:`pm_private.privacy.accountant`): ``with release_guard(accountant, ...) as reservation:``
    is :meth:`PrivacyAccountant.charge` (reserve on entry; commit when the body returns or raises
    after noise was drawn; release when it raises before any noise), or nothing at all when
    ``accountant`` is None, except that a :class:`ConvergenceError` raised by the body (a
    data-dependent failure after noise was drawn) is always recorded as spent before it propagates.

    Without an accountant, a body that draws secure (private) noise through a
    :class:`~pm_private.privacy.noise.NoiseSource` or OpenDP warns :class:`~pm_private.privacy.release.NoAccountantWarning`,
    once per process and mechanism: no ledger records that spend (seeded noise is not warned
    about: it is not private).

    Parameters
    ----------
    accountant : PrivacyAccountant or None
        Charged (None: nothing is recorded).
    mechanism : str
        The mechanism's name, as its release carries it.
    epsilon, delta : float
        The (ε, δ) of the release.
    neighbours : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation of the guarantee; an add/remove release is charged as the
        replace-one release it also is (:func:`pm_private.privacy.as_replace_one`).
    label : str, optional
        A note for the ledger entry.
    noise : tuple of NoiseEvent, default ()
        The release's noise draws, stored for tight composition (e.g.
        ``gaussian_noise_event`` of ``pm_private.privacy.primitives``); empty: basic composition.
    refusal : str, optional
        The message of a refusal that a check of the private data decided before the guard
        (e.g. ``public_rows_refusal`` of ``pm_private.released.preprocessing``): raised as
        :class:`ChargedRefusal` inside the reservation, instead of the body, and spent.
    unit : {"record", "person"}, default "record"
        The unit the release protects; the ledger entry records the relation with it
        (``"replace-one person"`` for a person, :func:`~pm_private.privacy.neighbour_text`).

    Yields
    ------
    Reservation or None
        The reservation the body runs inside (None without an accountant).

    Warns
    -----
    NoAccountantWarning
        Without an accountant, when the body drew secure noise (once per process and mechanism).

    Raises
    ------
    TypeError
        On entering the ``with`` block, if ``accountant`` is neither None nor a
        :class:`PrivacyAccountant`.
    ValueError
        Before the body, when ``noise`` does not give (ε, δ) (see
        :meth:`PrivacyAccountant.reserve`).
    BudgetExceededError
        Before the body, when (ε, δ) does not fit in the remaining budget.
    ChargedRefusal
        With ``refusal``, once (ε, δ) is spent.
    """
    watch = None
    if check_accountant(accountant) is None:
        guard = watch = NoiseWatch()
    else:
        relation = neighbour_text(neighbours, unit)
        guard = accountant.charge(mechanism, epsilon, delta, neighbours=relation, label=label, noise=noise)
    failure = None
    with guard as reservation:
        if refusal is not None:  # spent with nothing drawn; the body does not run
            failure = ChargedRefusal(refusal)
        else:
            try:
                yield None if watch is not None else reservation
            except ConvergenceError as error:
                failure = error
    if watch is not None and watch.secure:
        _warn_no_accountant(mechanism)
    if failure is not None:
        raise failure
