"""Self-describing release files: what a data holder hands out after a private release.

A release file is JSON::

    {"format": "pm_private-release", "version": 2, "created": "<UTC time>",
     "releases": [<entry>, ...]}

Each entry describes one private release, in one of two shapes:

* a release of any mechanism: ``{"kind": <the release type's kind>, "mechanism", "epsilon",
  "delta", "neighbours", "private", "outputs": {...}, "parameters": {...}}``, where ``outputs``
  holds the fields the release type declares as the DP output and ``parameters`` its public
  fields (bounds, grids, noise scales, horizon, …);
* private sufficient statistics (a :class:`~pm_private.linear.LinearStats` that holds private
  releases, possibly added to exact public statistics): ``{"kind": "linear_stats", "mechanism",
  "epsilon", "delta", "neighbours", "private", "statistics": {Sxx, Sxy, Syy, n},
  "releases": [<the record of each release, with its own "kind">]}`` (Honkela et al. 2018).

``kind`` is the stable identifier a release type declares (``class …(Release, kind=…)``), and it
decides what the rest must be: the ``mechanism`` citation and the ``neighbours`` relation are the
constants of the kind, δ is 0 for a mechanism without one, a preprocessing is one the kind's
release function takes, and n agrees with the released counts where the release carries them
(:func:`release_from_dict`).  ``version`` changes whenever this layout does.  The caller's context
(column names, each named once, preprocessing) is written beside.  No record and nothing computed
from the records without noise is written: the values are the noisy outputs, and n is public
under replace-one neighbours.

:func:`release_to_dict` and :func:`release_from_dict` convert one release; they serialise the
dataclass fields generically, so fields added to a release type are written and, when known
to the reading version, read back (unknown fields are ignored).
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import math
import os
import pkgutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from .linear.stats import LinearStats
from .privacy.release import OUTPUT, PUBLIC, Release, check_fields, field_kinds, registered_release_types, release_type
from .privacy.tails import FALSE_REFUSAL, noise_sum_bound
from .released.preprocessing import Preprocessing

__all__ = [
    "FORMAT",
    "VERSION",
    "all_release_types",
    "read_release_file",
    "release_from_dict",
    "release_to_dict",
    "write_release_file",
]

FORMAT = "pm_private-release"
VERSION = 2

#: The entry kind of private sufficient statistics (a bundle of releases, not one release type).
SUFF_STATS = "linear_stats"
#: Modules that define no release type and are slow to import (the command line, the demo).
_NO_RELEASES = ("pm_private.cli", "pm_private.demo")
_COMMON = ("mechanism", "epsilon", "delta", "neighbours", "private")
_CONTEXT_KEYS = ("features", "target", "time", "event", "preprocessing")


def _jsonable(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields(value)
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"a release file cannot hold the non-finite value {value!r}")
        return value
    if isinstance(value, (str, type(None))):
        return value
    raise TypeError(f"cannot write a {type(value).__name__} to a release file")


def _fields(obj) -> dict:
    return {f.name: _jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _build(cls, values: dict):
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: _tuples(v) for k, v in values.items() if k in known})


def _build_release(cls, values: dict) -> Release:
    """A release type from the values read, every field checked against its declaration first."""
    if not isinstance(values, dict):
        raise ValueError(f"a release record must be an object, got {type(values).__name__}")
    checked = check_fields(cls, values)
    if checked.get("preprocessing") is not None:
        try:
            checked["preprocessing"] = _build(Preprocessing, checked["preprocessing"])
        except (TypeError, ValueError) as error:
            raise ValueError(f"field 'preprocessing': {error}") from None
    return cls(**checked)


def all_release_types() -> dict[str, type[Release]]:
    """Every release type of pm_private, by kind (imports every module that can define one; a new
    release type is found without being listed anywhere).

    Returns
    -------
    dict of str to type
        ``{kind: release type}``, e.g. ``"logistic_stats"`` to ``LogisticStatsRelease``.
    """
    import pm_private

    for info in pkgutil.walk_packages(pm_private.__path__, "pm_private."):
        if not info.name.startswith(_NO_RELEASES):
            importlib.import_module(info.name)
    return registered_release_types()


def _record(release: Release) -> dict:
    """A release's fields with its kind: the record of one release inside a linear_stats entry."""
    return {"kind": release.kind, **_fields(release)}


def _from_record(record: dict) -> Release:
    if not isinstance(record, dict):
        raise ValueError(f"a release record must be an object, got {type(record).__name__}")
    values = dict(record)
    return _build_release(_type_of(values.pop("kind", None)), values)


def _type_of(kind) -> type[Release]:
    if kind not in registered_release_types():
        all_release_types()
    return release_type(kind)


def release_to_dict(release, **context) -> dict:
    """One release as a JSON-ready dict (see the module docstring).

    Parameters
    ----------
    release : LinearStats or Release
        A private release: statistics with at least one private release in ``releases``, or
        the result of any mechanism.
    **context
        Public context written with it: ``features``, ``target``, ``time``, ``event`` (column
        names) and ``preprocessing`` (a dict describing what was done to the records).

    Returns
    -------
    dict
    """
    unknown = set(context) - set(_CONTEXT_KEYS)
    if unknown:
        raise TypeError(f"unknown context {sorted(unknown)}; allowed: {', '.join(_CONTEXT_KEYS)}")
    if "features" in context:  # refused here, not by the reader of a file already handed out
        _check_features(list(context["features"]) if isinstance(context["features"], tuple) else context["features"])
    if isinstance(release, LinearStats):
        if release.is_exact:
            raise ValueError("exact statistics are not a private release: nothing to write")
        infos = [_record(info) for info in release.releases]
        entry = {
            "kind": SUFF_STATS,
            "mechanism": " + ".join(dict.fromkeys(info["mechanism"] for info in infos)),
            "epsilon": math.fsum(info["epsilon"] for info in infos),
            "delta": math.fsum(info.get("delta", 0.0) for info in infos),
            "neighbours": " + ".join(dict.fromkeys(info["neighbours"] for info in infos)),
            "private": all(info["private"] for info in infos),
            "statistics": {
                "xx": _jsonable(release.xx),
                "xy": _jsonable(release.xy),
                "yy": _jsonable(release.yy),
                "n": release.n,
            },
            "releases": infos,
        }
    elif isinstance(release, Release):
        values = _fields(release)
        kinds = field_kinds(release)
        entry = {"kind": release.kind, **{key: values.pop(key) for key in _COMMON}}
        entry["outputs"] = {k: v for k, v in values.items() if kinds[k] == OUTPUT}
        entry["parameters"] = {k: v for k, v in values.items() if kinds[k] == PUBLIC}
    else:
        raise TypeError(f"release must be LinearStats or a Release, got {type(release).__name__}")
    entry.update({k: _jsonable(v) for k, v in context.items()})
    return entry


def release_from_dict(entry: dict):
    """Rebuild the release of an entry written by :func:`release_to_dict`, every field checked.

    Each record's fields are checked against their declarations and the limits of its mechanism
    (``pm_private.privacy.release.check_fields`` and the release type's own checks); a
    preprocessing must fit the covariates; a linear_stats entry's totals and texts must be those
    of its records, and its n at least theirs and, with an intercept, within the noise's bound of
    its constant column's Sxx[0][0] (``pm_private.privacy.tails.noise_sum_bound``).

    Parameters
    ----------
    entry : dict
        One entry, as read from JSON.

    Returns
    -------
    LinearStats or Release

    Raises
    ------
    ValueError
        Naming the first field that is missing, malformed, out of its limits or inconsistent.
    """
    if not isinstance(entry, dict):
        raise ValueError(f"an entry must be an object, got {type(entry).__name__}")
    kind = entry.get("kind")
    if kind == SUFF_STATS:
        stats, records = _part(entry, "statistics", dict), _part(entry, "releases", list)
        if not records:
            raise ValueError("field 'releases' must list the private releases of the statistics")
        releases = []
        for i, info in enumerate(records):
            try:
                releases.append(_from_record(info))
            except ValueError as error:
                raise ValueError(f"releases[{i}]: {error}") from None
        missing = [key for key in ("xx", "xy", "yy", "n") if key not in stats]
        if missing:
            raise ValueError(f"field 'statistics' lacks {', '.join(missing)}")
        for key in ("xx", "xy", "yy", "n"):
            if _holds_bool(stats[key]):
                raise ValueError(f"field 'statistics' holds a boolean in {key!r}, not a number")
        try:
            result = LinearStats(stats["xx"], stats["xy"], stats["yy"], stats["n"], tuple(releases))
        except (TypeError, ValueError) as error:
            raise ValueError(f"field 'statistics': {error}") from None
        _check_totals(entry, releases)
        _check_linear_n(result)
        for i, release in enumerate(releases):
            _check_preprocessing(release, result.d - int(bool(result.intercept)), f"releases[{i}]: ")
        return result
    cls = _type_of(kind)
    values = {**_part(entry, "parameters", dict), **_part(entry, "outputs", dict)}
    values.update({k: entry[k] for k in _COMMON if k in entry})
    release = _build_release(cls, values)
    _check_preprocessing(release, getattr(release, "d", None))
    return release


def _check_preprocessing(release, width: int | None, where: str = "") -> None:
    """A release's public map of the rows must fit its covariates: vector constants and kept
    public rows of the statistics' width (as the release function's ``transform_x`` requires)."""
    prep = getattr(release, "preprocessing", None)
    if prep is None or width is None:
        return
    sizes = {name: np.shape(getattr(prep, name))[-1:] for name in ("x_center", "x_scale", "x_public", "x_kinds")}
    for name, size in sizes.items():
        if getattr(prep, name) is not None and size and size[0] != width:
            what = {"x_public": "columns", "x_kinds": "kinds"}.get(name, "values")
            raise ValueError(
                f"{where}field 'preprocessing': {name} has {size[0]} {what} for the {width} covariates of the release"
            )


def _holds_bool(value) -> bool:
    if isinstance(value, list):
        return any(_holds_bool(item) for item in value)
    return isinstance(value, bool)


def _part(entry: dict, key: str, kind: type):
    if not isinstance(entry.get(key), kind):
        raise ValueError(f"field {key!r} is missing or not a JSON {'object' if kind is dict else 'list'}")
    return entry[key]


def _check_totals(entry: dict, releases) -> None:
    """The totals of a linear_stats entry must be those of its releases (an edited total is refused)."""
    epsilon = math.fsum(r.epsilon for r in releases)
    delta = math.fsum(r.delta for r in releases)
    for key, total in (("epsilon", epsilon), ("delta", delta)):
        value = entry.get(key)
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isclose(value, total)):
            raise ValueError(f"field {key!r} must be the total of the releases, {total!r}, got {value!r:.40}")
    for key in ("mechanism", "neighbours"):  # as release_to_dict derives them from the records
        derived = " + ".join(dict.fromkeys(getattr(r, key) for r in releases))
        if entry.get(key) != derived:
            raise ValueError(f"field {key!r} must be that of the releases, {derived!r}, got {entry.get(key)!r:.60}")
    if entry.get("private") is not all(r.private for r in releases):
        raise ValueError("field 'private' must be true exactly when every release is private")


def _check_linear_n(stats: LinearStats) -> None:
    """n of linear statistics bound to what their releases carry: at least the releases' own n and,
    with an intercept, Sxx[0, 0] = Σcᵢ² over the rows (cᵢ = 1, or the row's scale factor ≤ 1 when
    responses were scaled with their rows) plus the releases' noise on it, so within the noise's
    bound of n (exceeded with probability < ``FALSE_REFUSAL``; at most n + the bound when rows
    were scaled).  Where n is private (a release under add/remove neighbours) there is no n to
    bind (:class:`LinearStats` holds None exactly then)."""
    if stats.n is None:
        return
    records = sum(release.n for release in stats.releases)
    if stats.n < records:
        raise ValueError(f"field 'statistics' holds n = {stats.n}, fewer than the {records} people of its releases")
    if not stats.intercept:
        return
    share = FALSE_REFUSAL / len(stats.releases)  # a union bound over the releases' noise
    slack = 0.0
    for release in stats.releases:
        variance = float(release.noise_variance(stats.d)[0])
        laplace = release.kind == "linear_stats_laplace"
        scale = math.sqrt(variance / 2.0) if laplace else math.sqrt(variance)
        slack += noise_sum_bound("laplace" if laplace else "gaussian", scale, 1, share)
    gap = float(stats.xx[0, 0]) - stats.n
    scaled = any(getattr(release, "scale_response", False) for release in stats.releases)
    if gap > slack or (gap < -slack and not scaled):
        raise ValueError(
            f"field 'statistics' holds n = {stats.n} and, in the intercept's entry xx[0][0], {stats.xx[0, 0]:.6g}: "
            f"they must agree within ±{slack:.6g}, the releases' noise bound (exceeded with probability "
            f"< {FALSE_REFUSAL:g}){', xx[0][0] at most n' if scaled else ''}"
        )


def write_release_file(target, entries) -> None:
    """Write entries (from :func:`release_to_dict`) as a release file.

    Parameters
    ----------
    target : str, os.PathLike or text file
        A path (must not exist: a release is never overwritten) or an open text file.
    entries : sequence of dict
    """
    document = {
        "format": FORMAT,
        "version": VERSION,
        "created": datetime.now(UTC).isoformat(),
        "releases": [_jsonable(entry) for entry in entries],
    }
    text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if isinstance(target, io.TextIOBase):
        target.write(text)
        return
    with open(Path(os.fspath(target)), "x", encoding="utf-8") as handle:
        handle.write(text)


def read_release_file(path) -> list[dict]:
    """Entries of a release file, each with its rebuilt release under the key ``"release"``.

    Parameters
    ----------
    path : str or os.PathLike
        A release file written by :func:`write_release_file` (or ``pm-private release``).

    Returns
    -------
    list of dict
        Its entries, in the file's order, each with its release rebuilt and checked
        (:func:`release_from_dict`) under ``"release"``.

    Raises
    ------
    ValueError
        Naming the file if it is not a pm_private release file of a known version, or naming the
        entry and the field that fails its checks.
    """
    path = Path(os.fspath(path))
    try:
        document = json.loads(path.read_text(encoding="utf-8"))  # NaN or Infinity: refused by the field checks
    except ValueError as error:  # undecodable text, malformed JSON
        raise ValueError(f"{path} is not a release file: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f'{path} is not a pm_private release file (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise ValueError(f"{path} has release-file version {document.get('version')!r}; this version reads {VERSION}")
    if not isinstance(document.get("releases"), list) or not document["releases"]:
        raise ValueError(f'{path}: field "releases" must be a non-empty list')
    entries = []
    for number, entry in enumerate(document["releases"]):
        try:
            release = release_from_dict(entry)
            _check_context(entry, release)
            entries.append({**entry, "release": release})
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: release {number} is malformed: {error}") from None
    return entries


def _check_context(entry: dict, release) -> None:
    """The public context beside a release: column names are strings, one per feature."""
    for key in ("target", "time", "event"):
        if key in entry and not isinstance(entry[key], str):
            raise ValueError(f"field {key!r} must be a column name (a string), got {entry[key]!r:.40}")
    if "features" in entry:
        features = entry["features"]
        d = getattr(release, "d", None)
        if d is not None and getattr(release, "intercept", False):
            d -= 1  # the column names of X: the constant column is the release's own
        _check_features(features)
        if d is not None and len(features) != d:
            raise ValueError(f"field 'features' must name the {d} features of the statistics, got {len(features)}")
    if "preprocessing" in entry and not isinstance(entry["preprocessing"], dict):
        raise ValueError("field 'preprocessing' must be an object describing what was done to the records")


def _check_features(features) -> None:
    """The context ``features``: distinct column names (a model's feature coordinates)."""
    if not (isinstance(features, list) and all(isinstance(f, str) for f in features)):
        raise ValueError("field 'features' must be a list of column names (strings)")
    repeated = sorted(name for name, count in Counter(features).items() if count > 1)
    if repeated:
        raise ValueError(f"field 'features' must name each column once, got {repeated} more than once")
