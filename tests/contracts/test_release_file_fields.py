"""Every field of every kind of release file is validated on read: an edited file is refused, naming the field.

Driven by the registry of release types: one file per kind, from the mechanisms' cards
(tests/contracts/cards.py; each written kind must be covered),
then every field of the file, at any depth, is replaced in turn by bad values (negative, zero,
NaN, Infinity, a string, null, a list, an object, a bool) or removed.  Reading the edited file
must either fail with a ValueError that names the field, or — only where the new value is valid
for that field (an output may be negative or zero; δ, an extra ridge or an elastic-net α may be
zero; a field with a default may be absent) — succeed.  Nothing else (KeyError, TypeError,
AttributeError, a silent NaN) may come out.  The command line turns the refusal into a usage
error (exit code 2).
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
import warnings

import numpy as np
import pandas as pd
import pytest
from cards import CARDS, DATA, D, release_of

from pm_private.cli import main
from pm_private.privacy.release import CONSTANT, OUTPUT, PUBLIC, RANGES, Release, field_kinds
from pm_private.privacy.tails import noise_sum_bound
from pm_private.release_file import (
    SUFF_STATS,
    all_release_types,
    read_release_file,
    release_to_dict,
    write_release_file,
)

#: The covariates as a data frame, for the mechanisms that record its column names (field ``features``).
COLUMNS = [f"x{j}" for j in range(D)]
FRAME = pd.DataFrame(DATA["X"], columns=COLUMNS)
#: Release kinds that cannot be written to a release file (their output is a fitted estimator).
NOT_WRITABLE = {card.release_kind for card in CARDS if card.not_in_files}
WRITTEN = [card for card in CARDS if card.release_kind and card.release_kind not in NOT_WRITABLE]


def _entry_kind(release_kind: str) -> str:
    """The kind of the file entry: the linear_stats_* releases travel in one linear_stats entry."""
    return SUFF_STATS if release_kind.startswith(f"{SUFF_STATS}_") else release_kind


#: One entry per kind, written from the first card that releases it (the linear statistics added up).
ENTRY_KINDS = list(dict.fromkeys(_entry_kind(card.release_kind) for card in WRITTEN))


def _release(card):
    if card.stand_in is not None:
        return card.stand_in()
    frame = "features" in field_kinds(all_release_types()[card.release_kind])
    return release_of(card.run(**({"X": FRAME} if frame else {})))


def _releases() -> dict:
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for card in WRITTEN:
            key = _entry_kind(card.release_kind)
            if key == SUFF_STATS:
                out[key] = out[key] + _release(card) if key in out else _release(card)
            elif key not in out:
                out[key] = _release(card)
    return out


@pytest.fixture(scope="module")
def entries() -> dict:
    out = {}
    for key, release in _releases().items():
        context = dict(features=COLUMNS, target="y") if key == SUFF_STATS else {}
        out[key] = json.loads(json.dumps(release_to_dict(release, **context)))
    return out


BAD = [-1.0, 0.0, "NaN", "Infinity", "-Infinity", "abc", None, [], {}, True, 1e400]


def _leaves(value, path=()):
    """Paths of every field (objects' keys and list items) below ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key)
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):  # the first items stand for the rest
            yield (*path, i)
            yield from _leaves(item, (*path, i))


def _field(entry: dict, path: tuple):
    """(the declared dataclass field at ``path`` or None, its annotation, the path below the field)."""
    record = entry
    if entry["kind"] == SUFF_STATS:
        if len(path) < 3 or path[0] != "releases":
            return None, None, path
        record, path = entry["releases"][path[1]], path[2:]
    elif path[0] in ("parameters", "outputs") and len(path) > 1:
        path = path[1:]
    cls = all_release_types()[record["kind"]]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if path[0] not in fields:
        return None, None, path
    return fields[path[0]], typing.get_type_hints(cls)[path[0]], path[1:]


def _in_range(field, value) -> bool:
    kind = field.metadata.get("kind")
    low, high, _ = RANGES[field.metadata.get("range", "positive" if kind == PUBLIC else "real")]
    return (value > low if low == 0 and "range" not in field.metadata and kind == PUBLIC else value >= low) and (
        value <= high
    )


def _valid_anyway(entry, path, value) -> bool:
    """True where ``value`` is a valid value of the field at ``path``."""
    number = isinstance(value, float) and math.isfinite(value)
    if entry["kind"] == SUFF_STATS and path[0] == "statistics":
        return number and (path[1:] == ("yy",) or (path[1] == "xy" and len(path) == 3) or len(path) == 4)
    if entry["kind"] == SUFF_STATS and path in (("mechanism",), ("neighbours",)):
        return value == entry[path[0]]  # derived from the records
    field, hint, below = _field(entry, path)
    if field is None:
        return False
    if value is _MISSING:
        if below:  # one item fewer: valid for an output array or a tuple of any length
            variable = typing.get_args(hint)[1:] == (Ellipsis,) and len(_at(entry, path[:-1])) > 1
            return (hint is np.ndarray and field.metadata.get("kind") == OUTPUT) or variable
        return field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
    if field.metadata.get("kind") == CONSTANT:  # the mechanism's name, the neighbour relation: the kind's own
        return value == _at(entry, path) and not below
    if hint is str or (below and field.name == "features"):  # a string, or one column name
        return isinstance(value, str)
    if hint is bool:
        return isinstance(value, bool)
    if field.name == "preprocessing":  # None or {} (no preprocessing); its own fields are checked by it
        return (value is None or value == {}) and not below
    if value is None:  # an optional field (e.g. the clipped counts of a release without them)
        return type(None) in typing.get_args(hint) and not below
    if not number or hint is int:
        return False
    if not below and (hint is np.ndarray or typing.get_origin(hint) is tuple):
        return False  # a number where a list is declared
    return _in_range(field, value)


_MISSING = object()


def _at(entry: dict, path: tuple):
    for key in path:
        entry = entry[key]
    return entry


def _edit(entry: dict, path: tuple, value) -> str:
    document = json.loads(json.dumps(entry))
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is _MISSING:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    text = json.dumps({"format": "pm_private-release", "version": 2, "created": "now", "releases": [document]})
    for name in ("NaN", "Infinity", "-Infinity"):
        text = text.replace(f'"{name}"', name)  # a hand-edited file may hold JSON's non-standard constants
    return text


def test_every_writable_kind_is_covered(entries):
    kinds = set(entries) - {SUFF_STATS}
    kinds |= {record["kind"] for record in entries[SUFF_STATS]["releases"]}
    assert set(all_release_types()) - NOT_WRITABLE <= kinds, sorted(set(all_release_types()) - NOT_WRITABLE - kinds)


def test_unedited_files_are_read(entries, tmp_path):
    for key, entry in entries.items():
        path = tmp_path / f"{key}.json"
        write_release_file(path, [entry])
        assert read_release_file(path)[0]["kind"] == entry["kind"]


@pytest.mark.parametrize(
    "key", [kind for kind in ENTRY_KINDS if not any(c.file_edits_unswept for c in WRITTEN if c.release_kind == kind)]
)
def test_every_edited_field_is_refused_naming_it(entries, key, tmp_path):
    entry = entries[key]
    problems, edits = [], 0
    for path in _leaves(entry):
        if path[-1] == "kind" or path[0] in ("features", "target") or "cells" in path[:2]:  # labels: names
            continue
        for value in [*BAD, _MISSING]:
            edits += 1
            file = tmp_path / "edited.json"
            file.write_text(_edit(entry, path, value), encoding="utf-8")
            label = f"{'.'.join(map(str, path))} = {'<missing>' if value is _MISSING else repr(value)}"
            try:
                read_release_file(file)
            except ValueError as error:
                original = _at(entry, path)
                names = {p for p in path if isinstance(p, str)} | set(original if isinstance(original, dict) else ())
                if not any(repr(name) in str(error) or f"{name}[" in str(error) for name in names):
                    problems.append(f"{label}: message does not name {path}: {error}")
                continue
            except Exception as error:  # noqa: BLE001  anything else is a defect
                problems.append(f"{label}: {type(error).__name__}: {error}")
                continue
            if not _valid_anyway(entry, path, value):
                problems.append(f"{label}: accepted")
    assert edits > 100
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize("scale", [0.0, -1.0, "NaN", None])
def test_fit_refuses_edited_noise_scales_with_exit_2(entries, tmp_path, capsys, scale):
    path = tmp_path / "edited.json"
    path.write_text(_edit(entries[SUFF_STATS], ("releases", 0, "noise_scales", 1), scale), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", str(path), "--draws", "10", "--tune", "10", "--chains", "1", "--no-progress"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "noise_scales" in err and "Traceback" not in err


def _nonsymmetric(entry: dict, key: str) -> list:
    matrix = json.loads(json.dumps(entry["outputs"][key]))
    matrix[0][-1] += 1.0
    return matrix


#: Edits within the declared types and ranges but beyond a mechanism's own limits: each is refused
#: by the check the mechanism applies to its arguments, naming the field.
OUT_OF_LIMITS = [
    ("poisson_stats", ("parameters", "y_bound"), 10**9, "y_bound"),  # MAX_Y_BOUND = 1000
    ("poisson_stats", ("parameters", "y_bound"), 1001, "y_bound"),
    ("poisson_stats", ("delta",), 2.0, "delta"),
    ("poisson_stats", ("delta",), 0.0, "delta"),  # a Gaussian release has δ > 0
    ("poisson_stats", ("epsilon",), 1e3, "epsilon"),  # the exact Gaussian mechanism's ε ≤ 700
    ("poisson_stats", ("parameters", "sensitivity"), 1.0, "sensitivity"),
    ("poisson_stats", ("parameters", "x_bound"), 1e60, "x_bound"),
    ("poisson_stats", ("outputs", "xx"), "nonsymmetric", "xx"),
    ("logistic_stats", ("delta",), 2.0, "delta"),
    ("logistic_stats", ("epsilon",), 1e3, "epsilon"),
    ("logistic_stats", ("parameters", "sensitivity"), 1.0, "sensitivity"),
    ("logistic_stats", ("parameters", "x_bound"), 1e-60, "x_bound"),
    ("logistic_stats", ("outputs", "xx"), "nonsymmetric", "xx"),
    (SUFF_STATS, ("releases", 0, "x_bound"), 1e60, "x_bound"),
    (SUFF_STATS, ("releases", 0, "epsilon"), 1e-9, "epsilon"),
    ("laplace", ("parameters", "scale"), 1e3, "scale"),  # b = Δ/ε
    ("gaussian", ("epsilon",), 1e3, "epsilon"),
    ("gaussian", ("parameters", "scale"), 1e-3, "scale"),  # σ ≥ Δ·c(ε, δ)
    ("adassp", ("parameters", "rho"), 1.5, "rho"),  # ρ ∈ (0, 1)
    ("adassp", ("parameters", "y_bound"), 1e60, "y_bound"),
    ("adassp", ("parameters", "noise_multiplier"), 1.0, "noise_multiplier"),
    ("adassp", ("delta",), 0.0, "delta"),
    ("elastic_net", ("parameters", "alpha"), 1.0, "extra_ridge"),  # the ridge no longer covers convex_min
    ("elastic_net", ("parameters", "noise"), "l3", "noise"),
    ("elastic_net", ("parameters", "convex_min"), 1e-3, "convex_min"),
    ("data_perturbation", ("parameters", "noise_std"), 1.0, "noise_std"),
    ("data_perturbation", ("parameters", "x_bound"), 1e60, "x_bound"),
    ("weibull", ("parameters", "omega"), 1e3, "omega"),  # e^−ω underflows
    ("weibull", ("parameters", "subsets"), 10**6, "subsets"),  # m ≤ n
    ("weibull", ("parameters", "epsilon_shape"), 0.25, "epsilon_scale"),  # the parts must add up to ε
    ("discrete_time", ("parameters", "e"), 1, "e"),  # e ≥ 2 knots
    ("discrete_time", ("parameters", "regularization"), 1e60, "regularization"),
    ("discrete_time", ("parameters", "sensitivity"), 1e3, "sensitivity"),
]


@pytest.mark.parametrize(("key", "path", "value", "name"), OUT_OF_LIMITS, ids=lambda v: str(v)[:20])
def test_fields_beyond_a_mechanisms_limits_are_refused_naming_them(entries, tmp_path, key, path, value, name):
    entry = json.loads(json.dumps(entries[key]))
    if value == "nonsymmetric":
        value = _nonsymmetric(entry, path[-1])
    if key == SUFF_STATS and path[-1] == "epsilon":  # keep the entry's total consistent, to reach the record
        entry["epsilon"] += value - entry["releases"][0]["epsilon"]
    file = tmp_path / "edited.json"
    file.write_text(_edit(entry, path, value), encoding="utf-8")
    with pytest.raises(ValueError, match=f"'{name}'"):
        read_release_file(file)


def test_a_release_object_beyond_its_mechanisms_limits_cannot_be_built(entries):
    release = read_release_file_entry(entries["poisson_stats"])
    for changes, name in (
        (dict(y_bound=10**9), "y_bound"),
        (dict(delta=2.0), "delta"),
        (dict(xx=release.xx + np.triu(np.ones_like(release.xx), 1)), "xx"),
        (dict(x_sum=release.x_sum[:-1]), "x_sum"),
        (dict(yx=release.yx[:-1]), "yx"),
    ):
        with pytest.raises(ValueError, match=f"'{name}'"):
            dataclasses.replace(release, **changes)


def read_release_file_entry(entry):
    from pm_private.release_file import release_from_dict

    return release_from_dict(json.loads(json.dumps(entry)))


def test_fit_refuses_a_count_bound_beyond_the_limit_with_exit_2(entries, tmp_path, capsys):
    """Audit: a count bound of 10⁹ was read, and poisson_model then tried to allocate 7.45 GiB."""
    path = tmp_path / "edited.json"
    path.write_text(_edit(entries["poisson_stats"], ("parameters", "y_bound"), 10**9), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["fit", str(path), "--draws", "10", "--tune", "10", "--chains", "1", "--no-progress"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "y_bound" in err and "Traceback" not in err


#: Public numbers a release accepts at 10³⁰⁰ (the mechanism sets no upper limit and nothing else is
#: derived from them), by (kind, field).
HUGE_ALLOWED = {
    ("adassp", "n"): "n enters no recorded noise scale",
    ("linear_stats_laplace", "n"): "n enters no recorded noise scale",
    ("linear_stats_gaussian", "n"): "n enters no recorded noise scale",
    ("logistic_stats", "n"): "n enters no recorded noise scale",
    ("poisson_stats", "n"): "n enters no recorded noise scale",
    ("data_perturbation", "steps"): "the multiplier's calibration needs n, which is not recorded",
    ("data_perturbation", "batch_size"): "bounded by n, which is not recorded",
    ("data_perturbation", "noise_multiplier"): "its calibration needs n, which is not recorded",
    ("weibull", "n"): "n enters no recorded noise scale",
    (
        "survival_stats",
        "n",
    ): "with public cells the counts bound n from below only (a person of another label is in no cell)",
}
#: Edits of every public number of every card's release: below, at and far beyond the limits.
EDITS = (-1.0, 0.0, 1e300)


def _public_numbers(release):
    """(field, index or None, hint) of each public number of ``release`` (the first item of a tuple)."""
    hints = typing.get_type_hints(type(release))
    for f in dataclasses.fields(release):
        if f.metadata.get("kind") != PUBLIC:
            continue
        hint = hints[f.name]
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        if hint in (float, int):
            yield f, None, hint
        elif typing.get_origin(hint) is tuple and inner and inner[0] in (float, int):
            yield f, 0, inner[0]
        elif inner == [float] and getattr(release, f.name) is not None:  # float | None
            yield f, None, float


def _edited(release, field, index, value):
    if index is None:
        return {field.name: value}
    items = list(getattr(release, field.name))
    items[index] = value
    return {field.name: tuple(items)}


#: Kinds whose release types check only some public fields on construction (none today).
UNCHECKED_FIELDS: dict[str, str] = {}


@pytest.mark.parametrize(
    "card",
    [
        pytest.param(c, marks=pytest.mark.xfail(reason=UNCHECKED_FIELDS[c.release_kind], strict=True))
        if c.release_kind in UNCHECKED_FIELDS
        else c
        for c in CARDS
        if c.release_kind
    ],
    ids=lambda c: c.name.split(":")[-1],
)
def test_every_public_number_of_every_release_is_checked_against_its_mechanism(card):
    """Card-derived: each public number of each mechanism's release, edited to −1, 0 and 10³⁰⁰ on
    the release object, is refused naming the field, unless its declared range holds the value
    (0 for δ, an extra ridge, …: either outcome) or HUGE_ALLOWED says why 10³⁰⁰ stands."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = _release(card)
    if not isinstance(release, Release):  # linear statistics: the sum of their releases
        release = release.releases[0]
    problems, edits = [], 0
    for field, index, hint in _public_numbers(release):
        for value in EDITS:
            value = int(value) if hint is int else value
            edits += 1
            label = f"{card.release_kind}.{field.name}{'' if index is None else f'[{index}]'} = {value:g}"
            try:
                dataclasses.replace(release, **_edited(release, field, index, value))
            except ValueError as error:
                if f"'{field.name}'" not in str(error) and f"{field.name}[" not in str(error):
                    problems.append(f"{label}: message does not name the field: {error}")
                continue
            except Exception as error:  # noqa: BLE001  anything else is a defect
                problems.append(f"{label}: {type(error).__name__}: {error}")
                continue
            huge = value >= 1e300
            if not _in_range(field, value) or (huge and (card.release_kind, field.name) not in HUGE_ALLOWED):
                problems.append(f"{label}: accepted")
    assert edits >= 3
    assert not problems, "\n".join(problems[:40])


# --------------------------------------------------------------------------------------------
# Fields that change what a release means: refused when edited, even to a value of their type
# --------------------------------------------------------------------------------------------

#: Fields written beside the parameters and outputs of an entry of one release.
COMMON = ("mechanism", "epsilon", "delta", "neighbours", "private")


def _records(entry: dict):
    """(path of the record's fields, release type) of each release record of an entry: a
    linear_stats entry's records, or the entry itself."""
    if entry["kind"] == SUFF_STATS:
        return [(("releases", i), all_release_types()[r["kind"]]) for i, r in enumerate(entry["releases"])]
    return [((), all_release_types()[entry["kind"]])]


def _path_of(entry: dict, prefix: tuple, name: str) -> tuple | None:
    """Where field ``name`` of the record at ``prefix`` is written (None: not written)."""
    path = (*prefix, name) if entry["kind"] == SUFF_STATS or name in COMMON else ("parameters", name)
    try:
        _at(entry, path)
    except (KeyError, IndexError):
        return None
    return path


def _refusal(entry: dict, path: tuple, value, tmp_path) -> str | None:
    """The message with which the file of ``entry`` edited at ``path`` is refused (None: read)."""
    file = tmp_path / "edited.json"
    file.unlink(missing_ok=True)
    file.write_text(_edit(entry, path, value), encoding="utf-8")
    try:
        read_release_file(file)
    except ValueError as error:
        return str(error)
    return None


@pytest.mark.parametrize("key", ENTRY_KINDS)
def test_an_edited_constant_is_refused_naming_it(entries, key, tmp_path):
    """Card-derived: the mechanism's name (and every other constant a release type declares and
    writes) is that of its kind, and the neighbour relation one of the library's; any other text
    is refused naming the field, and so are a linear_stats entry's texts that are not its records'."""
    entry, problems, edits = entries[key], [], 0
    paths = [("mechanism",), ("neighbours",)] if key == SUFF_STATS else [("neighbours",)]
    for prefix, cls in _records(entry):
        for field in dataclasses.fields(cls):
            path = _path_of(entry, prefix, field.name)
            if field.metadata.get("kind") == CONSTANT and path is not None:
                paths.append(path)
    for path in paths:
        for value in ("edited", f"{_at(entry, path)} (reworded)"):
            edits += 1
            message = _refusal(entry, path, value, tmp_path)
            if message is None or f"'{path[-1]}'" not in message:
                problems.append(f"{'.'.join(map(str, path))} = {value!r:.40}: {message or 'accepted'}")
    assert edits >= 4
    assert not problems, "\n".join(problems)


def test_a_delta_on_a_pure_mechanism_is_refused(entries, tmp_path):
    """Card-derived: a record whose mechanism has no δ (δ = 0 as released) is refused with any
    δ > 0 (it would claim, and charge, a guarantee the mechanism does not give)."""
    pure, problems = set(), []
    for key, entry in entries.items():
        for prefix, cls in _records(entry):
            path = (*prefix, "delta")
            if _at(entry, path) != 0:
                continue
            pure.add(cls.kind)
            edited = json.loads(json.dumps(entry))
            if key == SUFF_STATS:
                edited["delta"] += 1e-6  # the entry's total stays that of its records
            message = _refusal(edited, path, 1e-6, tmp_path)
            if message is None or "'delta'" not in message:
                problems.append(f"{cls.kind}: {message or 'accepted'}")
    assert {"laplace", "linear_stats_laplace", "elastic_net", "weibull", "discrete_time"} <= pure
    assert not problems, "\n".join(problems)


#: Preprocessings of a record, each given to the release function of its card too.
PREPROCESSINGS = {
    "response rescaled": dict(y_center=0.5, y_scale=2.0),
    "a centre of d + 1 values": dict(x_center=[0.0] * (D + 1)),
    "a scale of d + 1 values": dict(x_scale=[1.0] * (D + 1)),
}


@pytest.mark.parametrize("case", PREPROCESSINGS)
@pytest.mark.parametrize(
    "card",
    [c for c in WRITTEN if "preprocessing" in c.kinds and c.stand_in is None],
    ids=lambda c: c.name,
)
def test_a_preprocessing_is_read_exactly_when_its_release_function_takes_it(entries, tmp_path, card, case):
    """Card-derived: a record's preprocessing is within the limits its release function enforces
    (logistic, Poisson and survival regression releases do not rescale the response; vector
    constants have one value per covariate): the file is refused, naming 'preprocessing',
    exactly when the release function refuses the same preprocessing (before anything is spent)."""
    from pm_private.released.preprocessing import Preprocessing

    values = PREPROCESSINGS[case]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            card.run(preprocessing=Preprocessing(**values))
        taken = True
    except ValueError:
        taken = False
    key = _entry_kind(card.release_kind)
    entry = entries[key]
    (prefix,) = [p for p, cls in _records(entry) if cls.kind == card.release_kind][:1]
    path = (*prefix, "preprocessing") if key == SUFF_STATS else ("parameters", "preprocessing")
    message = _refusal(
        entry, path, {"x_center": None, "x_scale": None, "y_center": 0.0, "y_scale": 1.0} | values, tmp_path
    )
    if taken:
        assert message is None, message
    else:
        assert message is not None and "'preprocessing'" in message, message or "accepted"


#: Releases whose noisy counts add up to n (each person counted once, in no cell when the label
#: is not among the public cells), with the bound on their noise's sum: n is bound to them.
COUNTED = {
    "survival_stats": lambda r: noise_sum_bound(r.noise, r.noise_scale, r.K * (2 * r.J + 1)),
    "survival_regression_stats": lambda r: noise_sum_bound("gaussian", r.noise_scale, r.counts.size),
}
#: The tables without and with public cells (then a person may be in no cell).
CELLS = {"no cells": dict(cell=None, cells=None), "cells": dict(cell=DATA["cell"], cells=["a", "b"])}


@pytest.mark.parametrize("cells", CELLS)
@pytest.mark.parametrize("card", [c for c in WRITTEN if c.release_kind in COUNTED], ids=lambda c: c.name)
def test_n_is_bound_to_the_released_counts(tmp_path, card, cells):
    """Card-derived: n above the counts' total by more than the noise's bound (exceeded by chance
    with probability < 1e-9) is refused naming 'n'; so is n below it, unless the table has public
    cells (a person whose label is not among them is counted in n only).  The bound is about 6.5
    s.d. of the noise's sum for Gaussian noise: n moved by 7 s.d. was read before."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = release_of(card.run(**CELLS[cells]))
    entry = json.loads(json.dumps(release_to_dict(release)))
    counts = release.counts if hasattr(release, "counts") else release.table()
    total, bound = float(np.sum(counts)), COUNTED[card.release_kind](release)
    sd = release.noise_scale * math.sqrt(counts.size)
    assert 6.0 * sd < bound < 7.0 * sd
    short = cells == "cells"
    for n, refused in (
        (math.ceil(total - bound) - 1, True),
        (round(total - 7.0 * sd), True),
        (math.floor(total + bound) + 1, not short),
        (round(total + 7.0 * sd), not short),
        (math.ceil(total - bound) + 1, False),
        (math.floor(total + bound) - 1, False),
    ):
        if n >= 1:
            message = _refusal(entry, ("parameters", "n"), n, tmp_path)
            assert (message is not None and "'n'" in message) if refused else message is None, f"n = {n}: {message}"


@pytest.mark.parametrize("card", [c for c in WRITTEN if c.release_kind in COUNTED], ids=lambda c: c.name)
def test_a_table_with_people_in_no_cell_is_released_and_read_back(tmp_path, card):
    """Card-derived: half the people with a label outside the public cells (counted in n, in no
    cell) is a valid release, and its file reads back; the total's check no longer refuses it
    after the budget is spent (it took the counts to add up to n)."""
    from pm_private import PrivacyAccountant

    size = 2000  # 1000 in no cell: beyond 12 s.d. of the noise's sum, which the check once allowed
    rng = np.random.default_rng(11)
    records = dict(time=rng.uniform(0.05, 0.95, size), event=rng.integers(0, 2, size))
    if "X" in card.data:
        records["X"] = rng.uniform(-1, 1, (size, D)) / math.sqrt(D)
    label = np.where(np.arange(size) % 2 == 0, "a", "elsewhere")
    accountant = PrivacyAccountant(10.0, 1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release = release_of(card.run(accountant=accountant, cell=label, cells=["a", "b"], **records))
    assert release.n == size and accountant.spent.epsilon == card.params["epsilon"]
    file = tmp_path / "release.json"
    write_release_file(file, [release_to_dict(release)])
    assert read_release_file(file)[0]["release"].n == size


def test_n_of_linear_statistics_is_bound_to_the_intercept_entry(entries, tmp_path):
    """With an intercept, Sxx[0][0] counts the rows (Σcᵢ² ≤ n when rows were scaled with their
    responses, as the Gaussian card's are): n below it by more than the noise's bound is refused,
    and so is an n smaller than its releases' own."""
    entry = entries[SUFF_STATS]
    stats = read_release_file_entry(entry)
    assert stats.intercept
    records = sum(r.n for r in stats.releases)
    xx00 = float(stats.xx[0, 0])
    for n in (records - 1, math.floor(xx00) - 10_000):
        if n >= 1:
            message = _refusal(entry, ("statistics", "n"), n, tmp_path)
            assert message is not None and "'statistics'" in message, f"n = {n}: {message or 'accepted'}"
    assert _refusal(entry, ("statistics", "n"), records, tmp_path) is None


@pytest.mark.parametrize(
    "card",
    [
        c
        for c in CARDS
        if "X" in c.data and c.release_kind and "features" in field_kinds(all_release_types()[c.release_kind])
    ],
    ids=lambda c: c.name,
)
def test_duplicate_column_names_are_refused_before_anything_is_spent(card):
    """Card-derived: a release that records the column names of a data frame X refuses one that
    repeats a name (the names could not be told apart, and its file could not be read back),
    naming X, before anything is spent."""
    from pm_private import PrivacyAccountant

    accountant = PrivacyAccountant(100.0, 0.5)
    frame = pd.DataFrame(DATA["X"], columns=["x0", "x0", "x1"])
    with pytest.raises(ValueError, match="X: the data frame repeats the columns"):
        card.run(accountant=accountant, X=frame)
    assert accountant.spent.epsilon == 0.0
