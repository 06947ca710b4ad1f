"""Say that a first fit will compile, instead of going silent for a minute.

PyMC's samplers compile a model's log-density and gradient before their first draw (PyTensor's
graph rewrites, then Numba or C), which takes from seconds to minutes on a small machine and
prints nothing; the compiled functions are cached on disk under PyTensor's ``compiledir``, so a
later fit of a model of the same shape, in the same process or a new one, skips most of it.
:func:`announce_compilation` logs one line (logger ``pm_private``, level INFO, printed as PyMC
prints its own progress) the first time a model of a given family and shape is built on this
machine with these versions, until a sampler has compiled one: a marker named by a hash of them is
left in the compile directory once the log-density and gradient are compiled (PyMC's NUTS, through
the model's ``logp_dlogp_function``, or ``pm_private.sample``), not when the model is built, so a fit
interrupted while compiling is announced again.  ``pm.sample`` with nutpie compiles on every call and
leaves no marker: its builds keep saying so.
The line gives the family's cold first fit as the project's first-fit benchmark last measured it
(``first_fit_seconds.json`` beside this module, written by ``python -m benchmarks.bench_first_fit
--record``) beside a plain PyMC model of the same data, where the benchmark has that family.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from importlib import metadata
from pathlib import Path

__all__ = ["announce_compilation", "expected_first_fit", "record_compiled"]

_log = logging.getLogger("pm_private")
if not logging.root.handlers:  # as PyMC does for its own logger
    _log.setLevel(logging.INFO)
    if not _log.handlers:
        _log.addHandler(logging.StreamHandler())

_MESSAGE = (
    "pm_private: the first fit of this {family} model compiles its log-density and gradient, {expected} (see the "
    "Samplers page of the documentation); later fits of a model of this shape reuse PyTensor's disk cache, except "
    "pm.sample with nutpie (PyMC's default where nutpie is installed), which compiles on every call: "
    "pm_private.sample(model) compiles once per model and refits without compiling"
)
_UNMEASURED = "which can take minutes on a small machine"
_MEASURED = (
    "which took {cold:.0f} s on an empty cache in the project's first-fit benchmark ({machine}), where a plain "
    "PyMC {plain} of the same data took {plain_cold:.0f} s"
)

#: The benchmark's record of first fits (a missing or unreadable file: no figures in the notice).
RECORD = Path(__file__).with_name("first_fit_seconds.json")


@functools.cache
def _first_fit_record() -> dict:
    try:
        return json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def expected_first_fit(family: str) -> str:
    """The notice's clause on how long a first fit of ``family`` takes: the benchmark's figures
    where it measured the family, else a warning that it can take minutes.

    Parameters
    ----------
    family : str
        A family's name (as in :data:`pm_private.families.FAMILIES`).

    Returns
    -------
    str
        A clause starting with "which".
    """
    entry = _first_fit_record().get("families", {}).get(family)
    if not entry:
        return _UNMEASURED
    return _MEASURED.format(**entry)


def _versions() -> str:
    parts = []
    for name in ("pm_private", "pymc", "pytensor", "numba"):
        try:
            parts.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{name}=none")
    return ";".join(parts)


def model_key(model) -> str:
    """A hash of what the compiled functions depend on: the fit record, the value variables'
    names and shapes, the data's names and shapes, and the versions of the compiling packages."""
    point = model.initial_point()
    parts = [_versions(), *(f"{name}{tuple(v.shape)}" for name, v in sorted(point.items()))]
    for var in model.data_vars:
        value = var.get_value() if hasattr(var, "get_value") else getattr(var, "data", None)
        parts.append(f"{var.name}{tuple(getattr(value, 'shape', ()))}")
    if "fit_field" in model.coords:
        parts.extend(model.coords["fit_field"])
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:32]


def _marker(model) -> Path:
    import pytensor

    return Path(pytensor.config.compiledir) / "pm_private_models" / model_key(model)


def _leave(marker: Path) -> None:
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:  # a read-only cache: say it every time rather than fail the fit
        pass


def record_compiled(model) -> None:
    """Leave the marker that quiets the notice for models of this shape: call it once a sampler
    has compiled the model's log-density and gradient.

    Parameters
    ----------
    model : pymc.Model
        The model just compiled.
    """
    _leave(_marker(model))


class _RecordWhenCompiled:
    """A model's ``logp_dlogp_function`` (what PyMC's NUTS compiles) that leaves the marker once it
    has returned a compiled function."""

    def __init__(self, compile_function, marker: Path):
        self.compile_function, self.marker = compile_function, marker

    def __call__(self, *args, **kwargs):
        compiled = self.compile_function(*args, **kwargs)
        _leave(self.marker)
        return compiled


def announce_compilation(model, family: str, *, variant: str | None = None) -> bool:
    """Log that the first fit compiles, until a model of this shape has been compiled here.

    Parameters
    ----------
    model : pymc.Model
        A model just built.
    family : str
        Its family's name, for the message.
    variant : str, optional
        What sets the model apart from the family's default, which the benchmark measured (e.g.
        ``"Wishart covariates"``): named in the message, whose clause then gives no figure.

    Returns
    -------
    bool
        True when the message was logged (no model of this shape was compiled here before).
    """
    marker = _marker(model)
    if marker.exists():
        return False
    if variant is None:
        _log.info(_MESSAGE.format(family=family, expected=expected_first_fit(family)))
    else:
        _log.info(_MESSAGE.format(family=f"{family} ({variant})", expected=_UNMEASURED))
    model.logp_dlogp_function = _RecordWhenCompiled(model.logp_dlogp_function, marker)
    return True
