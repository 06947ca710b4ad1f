"""The public inputs of a DP-SGLD chain (:func:`pm_private.sampling.dp_sgld`): its start point
(``initvals``) and its diagonal preconditioner (``scale``), checked against the model before
anything is read or spent.  Both must come from public knowledge, never from the data."""

from __future__ import annotations

import numpy as np

from ..privacy.validation import as_float_array

__all__ = ["scale_vector", "start_point"]

#: The range of a preconditioner's scales: wide enough for any parametrisation, narrow enough that
#: s² and s·(noise) stay finite.
_SCALE_RANGE = (1e-6, 1e6)


def _per_variable(argument: str, given, shapes: dict) -> dict[str, np.ndarray]:
    """``given`` ({free variable name: number or array}) checked against the model's free
    variables and broadcast to their ``shapes`` ({name: shape}); {} for None.  ValueError naming
    ``argument`` (nothing is read or spent)."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise ValueError(f"{argument} must be a dict of free variable names to values, got {type(given).__name__}")
    unknown = [repr(key) for key in given if key not in shapes]
    if unknown:
        raise ValueError(
            f"{argument} names {', '.join(unknown)}: not free variables of the model ({', '.join(shapes)})"
        )
    arrays = {}
    for name, value in given.items():
        label = f"{argument}[{name!r}]"
        if np.asarray(value).dtype == np.bool_:
            raise ValueError(f"{label} must be numbers, got booleans")
        try:
            arrays[name] = np.broadcast_to(as_float_array(value, label), shapes[name]).astype(np.float64)
        except ValueError as error:
            raise ValueError(f"{label} must be a number or an array of shape {shapes[name]}: {error}") from None
    return arrays


def scale_vector(model, point: dict, scale) -> np.ndarray | None:
    """The public preconditioner's scales s, one per unconstrained parameter in the chain's order
    (the model's value variables, whose values at the start ``point`` give their shapes), from
    ``{free variable name: scale}``; None without a preconditioner.  ValueError naming ``scale``."""
    if scale is None:
        return None
    shapes = {model.values_to_rvs[value].name: np.shape(point[value.name]) for value in model.value_vars}
    low, high = _SCALE_RANGE
    given = _per_variable("scale", scale, shapes)
    for name, part in given.items():
        if not ((part >= low) & (part <= high)).all():
            raise ValueError(f"scale[{name!r}] must lie in [{low:g}, {high:g}] (finite and > 0)")
    return np.concatenate([given.get(name, np.ones(shape)).ravel() for name, shape in shapes.items()])


def start_point(model, initvals) -> dict:
    """The chains' start on the unconstrained scale: the model's initial point with ``initvals``
    ({free variable name: value on the variable's own scale}) in place of the named variables'.
    ValueError naming ``initvals`` (nothing is read or spent)."""
    from pymc.initial_point import make_initial_point_fn

    if initvals is None:
        return model.initial_point()
    default = make_initial_point_fn(model=model, jitter_rvs=set(), return_transformed=False)(0)
    overrides = _per_variable("initvals", initvals, {rv.name: np.shape(default[rv.name]) for rv in model.free_RVs})
    point = make_initial_point_fn(model=model, overrides=overrides, jitter_rvs=set())(0)
    rv_of = {model.rvs_to_values[rv].name: rv.name for rv in model.free_RVs}
    outside = [rv_of[name] for name, value in point.items() if not np.isfinite(value).all()]
    if outside:
        raise ValueError(f"initvals place {', '.join(outside)} outside the variables' support (not finite there)")
    return point
