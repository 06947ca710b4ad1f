"""Self-describing release files: what a data holder hands out after a private release.

A release file is JSON::

    {"format": "pm_private-release", "version": 1, "created": "<UTC time>",
     "releases": [<entry>, ...]}

Each entry describes one private release: ``kind`` (``"suff_stats"`` or ``"weibull"``),
``mechanism``, ``epsilon``, ``delta``, ``neighbours``, ``private`` (False when a seeded
generator drew the noise), the released values (``statistics`` Sxx, Sxy, Syy and n of
Honkela et al. 2018; or ``estimates`` p and λ of Nguyên & Hui 2017b), every public parameter
of the mechanism (bounds, budget split, sensitivities, noise scales, horizon, …: the fields of
:class:`~pm_private.linear.suffstats.SuffStatsRelease`,
:class:`~pm_private.linear.suffstats.GaussianSuffStatsRelease` (which of the two follows the
mechanism name) or :class:`~pm_private.survival.weibull.mechanisms.WeibullRelease`), and the caller's context (column
names, preprocessing).  No record and nothing computed from the records without noise is
written: the values are the noisy outputs, and n is public under replace-one neighbours.

:func:`release_to_dict` and :func:`release_from_dict` convert one release; they serialise the
dataclass fields generically, so fields added to a release type are written and, when known
to the reading version, read back (unknown fields are ignored).
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from .linear.preprocessing import Preprocessing
from .linear.suffstats import GAUSSIAN_MECHANISM, MECHANISM, GaussianSuffStatsRelease, SuffStats, SuffStatsRelease

__all__ = ["FORMAT", "VERSION", "read_release_file", "release_from_dict", "release_to_dict", "write_release_file"]

FORMAT = "pm_private-release"
VERSION = 1

_SUFF_STATS, _WEIBULL = "suff_stats", "weibull"
#: Record type of each sufficient-statistics mechanism, by its name in the file.
_SUFF_STATS_RELEASES = {MECHANISM: SuffStatsRelease, GAUSSIAN_MECHANISM: GaussianSuffStatsRelease}
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


def _suff_stats_release(info: dict):
    mechanism = info.get("mechanism")
    if mechanism not in _SUFF_STATS_RELEASES:
        raise ValueError(f"unknown sufficient-statistics mechanism {mechanism!r}")
    values = dict(info)
    if values.get("preprocessing") is not None:
        values["preprocessing"] = _build(Preprocessing, values["preprocessing"])
    return _build(_SUFF_STATS_RELEASES[mechanism], values)


def _weibull_release_type():
    # imported on demand: the survival package loads PyMC
    from .survival.weibull.mechanisms import WeibullRelease

    return WeibullRelease


def _is_weibull(release) -> bool:
    return type(release).__name__ == "WeibullRelease" and isinstance(release, _weibull_release_type())


def release_to_dict(release, **context) -> dict:
    """One release as a JSON-ready dict (see the module docstring).

    Parameters
    ----------
    release : SuffStats or WeibullRelease
        A private release (statistics with at least one private release in ``releases``).
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
    if isinstance(release, SuffStats):
        if release.is_exact:
            raise ValueError("exact statistics are not a private release: nothing to write")
        infos = [_fields(info) for info in release.releases]
        entry = {
            "kind": _SUFF_STATS,
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
    elif _is_weibull(release):
        values = _fields(release)
        entry = {
            "kind": _WEIBULL,
            "mechanism": values.pop("mechanism"),
            "epsilon": values.pop("epsilon"),
            "delta": values.pop("delta", 0.0),
            "neighbours": values.pop("neighbours"),
            "private": values.pop("private"),
            "estimates": {"shape": values.pop("shape"), "scale": values.pop("scale")},
            "parameters": values,
        }
    else:
        raise TypeError(f"release must be SuffStats or WeibullRelease, got {type(release).__name__}")
    entry.update({k: _jsonable(v) for k, v in context.items()})
    return entry


def release_from_dict(entry: dict):
    """Rebuild the release of an entry written by :func:`release_to_dict`.

    Returns
    -------
    SuffStats or WeibullRelease
    """
    kind = entry.get("kind")
    if kind == _SUFF_STATS:
        stats = entry["statistics"]
        releases = tuple(_suff_stats_release(info) for info in entry["releases"])
        return SuffStats(np.array(stats["xx"]), np.array(stats["xy"]), stats["yy"], stats["n"], releases)
    if kind == _WEIBULL:
        values = {**entry["parameters"], **entry["estimates"]}
        values.update({k: entry[k] for k in ("mechanism", "epsilon", "delta", "neighbours", "private") if k in entry})
        return _build(_weibull_release_type(), values)
    raise ValueError(f"unknown release kind {kind!r}")


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

    Raises ValueError naming the file if it is not a pm_private release file of a known version.
    """
    path = Path(os.fspath(path))
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a release file: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f'{path} is not a pm_private release file (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise ValueError(f"{path} has release-file version {document.get('version')!r}; this version reads {VERSION}")
    entries = []
    for number, entry in enumerate(document.get("releases", [])):
        try:
            entries.append({**entry, "release": release_from_dict(entry)})
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: release {number} is malformed ({type(error).__name__}: {error})") from None
    return entries
